package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/spawngate/spawngate/internal/plan"
)

func jsonNumber(s string) json.Number { return json.Number(s) }

// Folder is where a host keeps agent definitions, relative to a project
// or a home directory.
func Folder(host Host) string {
	if host == Codex {
		return filepath.Join(".codex", "agents")
	}
	return filepath.Join(".claude", "agents")
}

// SearchDirs lists the folders a host looks for agent definitions in, in
// the host's order of precedence: the project's folder in cwd and in each
// directory above it up to the repository root (the directory holding
// .git; cwd alone when there is none), closest first, then the user's
// folder in home ("" for none).
func SearchDirs(host Host, cwd, home string) []string {
	var dirs []string
	root := repoRoot(cwd)
	for dir := cwd; ; dir = filepath.Dir(dir) {
		dirs = append(dirs, filepath.Join(dir, Folder(host)))
		if root == "" || dir == root || dir == filepath.Dir(dir) {
			break
		}
	}
	if home != "" {
		dirs = append(dirs, filepath.Join(home, Folder(host)))
	}
	return dirs
}

// repoRoot is the closest directory at or above dir that holds .git, or "".
func repoRoot(dir string) string {
	for {
		if _, err := os.Lstat(filepath.Join(dir, ".git")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		dir = parent
	}
}

// RepoRoot is the repository the directory lies in (the closest directory
// at or above it that holds .git), or the directory itself outside one.
func RepoRoot(dir string) string {
	if root := repoRoot(dir); root != "" {
		return root
	}
	return dir
}

// Catalog is every definition found in a host's folders, by folder, in the
// host's order of precedence.
type Catalog struct {
	Host    Host
	Dirs    []string
	folders [][]*Definition
}

// Load reads every definition in the folders: Claude Code's *.md files,
// in subfolders too, and Codex's *.toml files. A folder that does not
// exist holds none; one that exists and cannot be read is an error, since
// the definition a spawn names might be in it.
func Load(ctx context.Context, host Host, dirs []string, lim plan.Limits) (*Catalog, error) {
	c := &Catalog{Host: host, Dirs: dirs}
	for _, dir := range dirs {
		files, err := definitionFiles(host, dir)
		if err != nil {
			return nil, err
		}
		var defs []*Definition
		for _, f := range files {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			defs = append(defs, ReadFile(ctx, host, f, lim))
		}
		c.folders = append(c.folders, defs)
	}
	return c, nil
}

// ReadFile reads one definition file; a file that cannot be read is a
// definition with Err set.
func ReadFile(ctx context.Context, host Host, file string, lim plan.Limits) *Definition {
	data, err := plan.ReadFile(file, lim.MaxBytes)
	if err != nil {
		d := &Definition{Host: host, File: file, Lines: map[string]int{}}
		var pe *plan.Error
		if errors.As(err, &pe) {
			d.Err = pe
		} else {
			d.Err = &plan.Error{Source: file, Msg: plan.OneLine(err.Error())}
		}
		return d
	}
	if host == Codex {
		return ReadCodex(file, data)
	}
	return ReadClaude(ctx, file, data, lim)
}

// definitionFiles lists the definition files in a folder, in name order.
func definitionFiles(host Host, dir string) ([]string, error) {
	info, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, nil
	case err != nil:
		return nil, &plan.Error{Source: dir, Msg: "agents folder cannot be read: " + plan.Reason(err)}
	case !info.IsDir():
		return nil, &plan.Error{Source: dir, Msg: "agents folder is not a directory"}
	}
	var files []string
	if host == Codex {
		entries, err := os.ReadDir(dir)
		if err != nil {
			return nil, &plan.Error{Source: dir, Msg: "agents folder cannot be read: " + plan.Reason(err)}
		}
		for _, e := range entries {
			if !e.IsDir() && strings.HasSuffix(e.Name(), ".toml") {
				files = append(files, filepath.Join(dir, e.Name()))
			}
		}
		return files, nil
	}
	err = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return &plan.Error{Source: path, Msg: "agents folder cannot be read: " + plan.Reason(err)}
		}
		if !d.IsDir() && strings.HasSuffix(d.Name(), ".md") {
			files = append(files, path)
		}
		return nil
	})
	sort.Strings(files)
	return files, err
}

// Builtin lists the agent types a host brings without a definition file.
// Each inherits every tool unless an agents folder defines it.
func Builtin(host Host) []string {
	if host == Codex {
		return []string{"default", "worker", "explorer"}
	}
	return []string{"general-purpose", "explore", "plan", "statusline-setup", "output-style-setup", "claude-code-guide", "fork"}
}

// DefaultType is the type a spawn that names none asks for.
func DefaultType(host Host) string {
	if host == Codex {
		return "default"
	}
	return "general-purpose"
}

// normalize reads a type as the host matches it: Claude Code matches case
// and separators loosely ("Code Reviewer" is code-reviewer); Codex matches
// names exactly.
func normalize(host Host, name string) string {
	if host == Codex {
		return name
	}
	var b strings.Builder
	sep := false
	for _, r := range strings.ToLower(strings.TrimSpace(name)) {
		if r == ' ' || r == '_' || r == '-' {
			sep = true
			continue
		}
		if sep && b.Len() > 0 {
			b.WriteByte('-')
		}
		sep = false
		b.WriteRune(r)
	}
	return b.String()
}

// Definitions lists every file found, in folder order, then file order.
func (c *Catalog) Definitions() []*Definition {
	var out []*Definition
	for _, defs := range c.folders {
		out = append(out, defs...)
	}
	return out
}

// Resolve finds the definition of an agent type, as the host would, or
// says why none can be judged: the type is defined twice in the folder
// that would win, its definition does not parse, a file in that folder or
// one that comes first does not parse and may define it, or it is built in,
// or unknown.
func (c *Catalog) Resolve(typ string) (*Definition, string) {
	want := normalize(c.Host, typ)
	for i, defs := range c.folders {
		var found, unnamed []*Definition
		for _, d := range defs {
			switch {
			case d.Skipped != "":
			case d.Name == "":
				unnamed = append(unnamed, d)
			case normalize(c.Host, d.Name) == want:
				found = append(found, d)
			}
		}
		switch {
		case len(found) > 1:
			return nil, fmt.Sprintf("agent type %q is defined twice in %s (%s and %s): the host would pick one by file order; keep one", typ, c.Dirs[i], found[0].File, found[1].File)
		case len(found) == 1 && found[0].Err != nil:
			return nil, fmt.Sprintf("the definition of agent type %q in %s does not parse: %s", typ, found[0].File, found[0].ParseProblem())
		case len(unnamed) > 0:
			// Also in the folder that defines the type: the file may define
			// it a second time, and the host might pick that one.
			return nil, fmt.Sprintf("agent type %q may be defined by %s, which does not parse: %s", typ, unnamed[0].File, unnamed[0].ParseProblem())
		case len(found) == 1:
			return found[0], ""
		}
	}
	for _, b := range Builtin(c.Host) {
		if normalize(c.Host, b) == want {
			return nil, fmt.Sprintf("agent type %q is built in and no agents folder defines it, so it would inherit every tool: define %s in an agents folder with the tools it may use", typ, typ)
		}
	}
	return nil, fmt.Sprintf("agent type %q is not defined in any agents folder (looked in %s)", typ, strings.Join(c.Dirs, ", "))
}
