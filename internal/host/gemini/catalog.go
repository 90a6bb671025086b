package gemini

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/spawngate/spawngate/internal/agent"
	"github.com/spawngate/spawngate/internal/document"
	"github.com/spawngate/spawngate/internal/host"
)

// projectFolder is where a project keeps its definitions.
var projectFolder = filepath.Join(".gemini", "agents")

// level is one place Gemini CLI takes definitions from: a folder, and, for
// the project's, the acknowledgments a definition needs to load.
type level struct {
	dir string
	// acked, when not nil, are the project's acknowledged definitions:
	// name to the sha256 of the file the user accepted.
	acked map[string]string
}

// geminiHome is the folder that holds the user's .gemini: GEMINI_CLI_HOME
// when set, else the home folder; "" when neither is known.
func geminiHome(env host.Env) string {
	if env.Getenv != nil {
		if d := env.Getenv("GEMINI_CLI_HOME"); d != "" {
			return d
		}
	}
	return env.Home
}

// levels are the places Gemini CLI takes definitions from, highest
// precedence first (observed): the project's .gemini/agents (only the
// definitions the user acknowledged, by the file's hash), the user's
// ~/.gemini/agents, then each extension's agents folder. Built-ins come
// before all of them (resolve).
func levels(ctx context.Context, env host.Env, project string) ([]level, error) {
	if env.AgentsDirs != nil {
		var out []level
		for _, d := range env.AgentsDirs {
			out = append(out, level{dir: d})
		}
		return out, nil
	}
	var out []level
	home := geminiHome(env)
	acked := map[string]string{}
	if home != "" {
		var err error
		if acked, err = acknowledged(env, filepath.Join(home, ".gemini", "acknowledgments", "agents.json"), project); err != nil {
			return nil, err
		}
	}
	out = append(out, level{dir: filepath.Join(project, projectFolder), acked: acked})
	if home == "" {
		return out, nil
	}
	out = append(out, level{dir: filepath.Join(home, ".gemini", "agents")})
	extensions := filepath.Join(home, ".gemini", "extensions")
	entries, err := os.ReadDir(extensions)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, &document.Error{Source: extensions, Msg: "cannot be read: " + document.Reason(err)}
	}
	for _, e := range entries {
		if _, err := os.Stat(filepath.Join(extensions, e.Name(), "gemini-extension.json")); err == nil {
			out = append(out, level{dir: filepath.Join(extensions, e.Name(), "agents")})
		}
	}
	return out, ctx.Err()
}

// acknowledged reads the project's acknowledged definitions.
func acknowledged(env host.Env, file, project string) (map[string]string, error) {
	if _, err := os.Stat(file); errors.Is(err, fs.ErrNotExist) {
		return map[string]string{}, nil
	}
	data, err := document.ReadFile(file, env.Limits.MaxBytes)
	if err != nil {
		return nil, err
	}
	var all map[string]map[string]string
	if err := json.Unmarshal(data, &all); err != nil {
		return nil, &document.Error{Source: file, Msg: "Gemini CLI's acknowledged agents cannot be read, so which project agents it loads is not known: " + document.OneLine(err.Error())}
	}
	if all[project] == nil {
		return map[string]string{}, nil
	}
	return all[project], nil
}

// load reads the definitions of every level of a session in project.
func load(ctx context.Context, env host.Env, project string) (*agent.Catalog, error) {
	lv, err := levels(ctx, env, project)
	if err != nil {
		return nil, err
	}
	return loadFolders(ctx, env, lv)
}

// loadFolders reads each level as Gemini CLI does: the *.md files right
// in the folder (no subfolder), not starting with _, and only files, not
// links (it lists the folder and keeps its files alone).
func loadFolders(ctx context.Context, env host.Env, lv []level) (*agent.Catalog, error) {
	c := &agent.Catalog{}
	for _, l := range lv {
		f := agent.Folder{Dir: l.dir}
		entries, err := os.ReadDir(l.dir)
		switch {
		case errors.Is(err, fs.ErrNotExist):
		case err != nil:
			return nil, &document.Error{Source: l.dir, Msg: "cannot be read: " + document.Reason(err)}
		default:
			f.Walked = []string{l.dir}
		}
		for _, e := range entries {
			if !e.Type().IsRegular() || strings.HasPrefix(e.Name(), "_") || !strings.HasSuffix(e.Name(), ".md") {
				continue
			}
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			file := filepath.Join(l.dir, e.Name())
			def := agent.ReadFile(ctx, file, env.Limits, func(ctx context.Context, file string, data []byte) *agent.Definition {
				d := ReadGemini(ctx, file, data, env.Limits)
				if l.acked != nil && d.Skipped == "" && d.Err == nil && d.Fields["kind"] != "remote" {
					sum := sha256.Sum256(data)
					if l.acked[d.Name] != hex.EncodeToString(sum[:]) {
						d.Skipped = "the user has not acknowledged this version of it, so Gemini CLI does not load it"
					}
				}
				return d
			})
			f.Defs = append(f.Defs, def)
		}
		c.Folders = append(c.Folders, f)
	}
	return c, nil
}

// resolve finds the definition an invoke_agent call of typ runs, as
// Gemini CLI does: a built-in first (a definition of its name is
// ignored), then the first level that defines the exact name.
func resolve(c *agent.Catalog, typ string) (*agent.Definition, string) {
	if b, ok := builtins[typ]; ok {
		return b.definition(typ), ""
	}
	def, problem, found := c.Find(typ, func(d *agent.Definition) bool { return d.Name == typ })
	if !found {
		return nil, fmt.Sprintf("agent type %q is not defined in any agents folder (looked in %s)", typ, strings.Join(c.Dirs(), ", "))
	}
	return def, problem
}

// builtin is a built-in agent: its tools as the client gives them (nil:
// every tool of the session but invoke_agent).
type builtin struct{ tools []string }

// builtins are the agents Gemini CLI 0.61.0 brings (read from its code):
// generalist gets every tool; codebase_investigator reads; cli_help reads
// the client's own documentation. Their models are the client's choice,
// by the session's model, which the hook cannot see.
var builtins = map[string]builtin{
	"generalist":            {},
	"codebase_investigator": {tools: []string{"list_directory", "read_file", "glob", "grep_search"}},
	"cli_help":              {tools: []string{"get_internal_docs"}},
}

// definition is the built-in as a definition the gate can translate.
func (b builtin) definition(name string) *agent.Definition {
	fields := map[string]any{"name": name}
	if b.tools != nil {
		tools := make([]any, len(b.tools))
		for i, t := range b.tools {
			tools[i] = t
		}
		fields["tools"] = tools
	}
	return &agent.Definition{File: "built-in:" + name, Name: name, Fields: fields, Lines: map[string]int{}}
}
