package claudecode

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/spawngate/spawngate/internal/agent"
	"github.com/spawngate/spawngate/internal/document"
	"github.com/spawngate/spawngate/internal/host/hosttest"
)

// The fuzz target reads any bytes as a definition and holds the reader to
// the invariants every host's reader keeps (hosttest.Reading), and to
// Claude Code's own:
//
//   - Every definition is skipped (Skipped != ""), broken or usable, and
//     resolve tells them apart by Skipped and Err alone. A usable one has
//     the non-empty string Fields["name"] as its Name, without ':' or a
//     leading '-', and a non-empty string description.
//   - Settings come only from a frontmatter the strict reader read, so
//     Fields != nil means Err == nil; a broken file that is not skipped is
//     one the host would load, so it has the Name the lenient reading
//     found (unless a "---" inside the frontmatter ends it early for the
//     host: then no name may be found, and the file refuses every type of
//     its folder); a file that does not start with "---" is skipped.
//   - A child's facts say what the definition and the call say: its
//     permission mode (bypassPermissions in a session that bypasses
//     permissions; a mode the gate cannot read kept as written), the model
//     CLAUDE_CODE_SUBAGENT_MODEL forces, and every tool from the
//     definition's tools, its memory (Write, Edit), its MCP servers
//     (mcp__NAME) or its hooks (hooks).

func FuzzReadClaude(f *testing.F) { reading.Fuzz(f, claudeSeeds(f)) }

// TestFuzzReadClaudeShort runs FuzzReadClaude's property over inputs
// mutated from its seeds.
func TestFuzzReadClaudeShort(t *testing.T) { reading.Short(t, claudeSeeds(t)) }

// reading is ReadClaude, and what the fuzz target holds it to.
var reading = hosttest.Reading{
	Host: Name,
	File: "/repo/" + filepath.ToSlash(Folder) + "/agent.md",
	Read: func(file string, data []byte) *agent.Definition {
		return ReadClaude(context.Background(), file, data, document.DefaultLimits)
	},
	NameField:   "name",
	Definition:  checkDefinition,
	DefaultType: DefaultType,
	Spawns: func(typ string) []hosttest.Spawn {
		return []hosttest.Spawn{
			fuzzSpawn(call{Call: agent.Call{Host: Name, Type: typ, Paths: []string{"/repo"}, Budget: "1000"}}),
			fuzzSpawn(call{Call: agent.Call{Host: Name, Type: DefaultType, Paths: []string{"/repo"}, Brief: "b", ID: "id", Caller: "lead"}, SessionMode: "bypassPermissions", Model: "call-model", EnvModel: "env-model", EnvForce: true}),
		}
	},
}

func claudeSeeds(tb testing.TB) [][]byte {
	var seeds [][]byte
	for _, tc := range claudeCases {
		seeds = append(seeds, []byte(tc.data))
	}
	for _, tc := range translateCases {
		if tc.def != "" {
			seeds = append(seeds, []byte(tc.def))
		}
	}
	seeds = append(seeds, hosttest.ExampleDefinitions(tb, Name, Folder, "*.md")...)
	return append(seeds,
		[]byte(md("tools: mcp__github__get, Bash(git diff:*)\ndisallowedTools: [mcp__github, 'mcp__*', 'mcp__x__*']\npermissionMode: manual\nmodel: inherit\nbudget_tokens: 10\n")),
		[]byte(md("tools: Read\nmemory: project\nmcpServers: [github, {slack: {command: s}}, 5]\nhooks: {Stop: []}\n")),
		[]byte("---\r\nname: a\r\ndescription: d\r\ntools:\r\n  - Read\r\n---"),
	)
}

// checkDefinition checks Claude Code's own invariants of a definition
// read from data.
func checkDefinition(d *agent.Definition, data []byte) error {
	if d.Skipped == "" && d.Err == nil {
		name, _ := d.Fields["name"].(string)
		desc, isString := d.Fields["description"].(string)
		switch {
		case !isString:
			return fmt.Errorf("a usable definition with the description %v", d.Fields["description"])
		case desc == "" || strings.Contains(name, ":") || strings.HasPrefix(name, "-"):
			return fmt.Errorf("Claude Code would skip the definition named %q, described %q", name, desc)
		}
	}
	starts := bytes.HasPrefix(data, []byte("---\n")) || bytes.HasPrefix(data, []byte("---\r\n"))
	earlyEnd := strings.Contains(d.ParseProblem(), `Claude Code ends this frontmatter at another "---"`)
	switch {
	case d.Fields != nil && d.Err != nil:
		return fmt.Errorf("fields of a frontmatter that does not parse: %v", d.Err)
	case d.Err != nil && d.Skipped == "" && d.Name == "" && !earlyEnd:
		return fmt.Errorf("broken, not skipped, and unnamed: %v", d.Err)
	case !starts && d.Skipped == "" && !earlyEnd && !strings.HasPrefix(d.ParseProblem(), "line 1: the frontmatter is written oddly"):
		// Almost frontmatter (a byte-order mark, spaces after ---) is
		// refused under its name rather than skipped; so is one that
		// Claude Code, reading past a byte-order mark, ends early.
		return errors.New("no frontmatter, not skipped")
	}
	return nil
}

// fuzzSpawn is a spawn of c for the property, with Claude Code's checks
// of its facts.
func fuzzSpawn(c call) hosttest.Spawn {
	return hosttest.Spawn{
		Call:      c.Call,
		Translate: func(def *agent.Definition, problem string) agent.Translation { return translate(c, def, problem) },
		Check:     func(tr agent.Translation, def *agent.Definition) error { return checkFacts(tr, c, def) },
	}
}

// checkFacts checks the facts of a translation of a spawn of def (nil for
// none) that are Claude Code's own.
func checkFacts(tr agent.Translation, c call, def *agent.Definition) error {
	facts := tr.Child["agent"].(map[string]any)
	mode, _ := facts["permission_mode"].(string)
	if unreadableMode(c, def) {
		// A mode the gate cannot read is kept as written for the schema
		// to refuse: it is neither dropped nor read as the default.
		mode = "as written"
		if !reflect.DeepEqual(facts["permission_mode"], def.Fields["permissionMode"]) {
			return fmt.Errorf("permission_mode %v, written %v", facts["permission_mode"], def.Fields["permissionMode"])
		}
	}
	switch {
	case mode == "":
		return fmt.Errorf("permission_mode %v", facts["permission_mode"])
	case c.SessionMode == "bypassPermissions" && mode != "bypassPermissions":
		return fmt.Errorf("a session bypassing permissions, a child in %q", mode)
	case c.EnvModel != "" && c.EnvForce && tr.Child["model"] != c.EnvModel:
		return fmt.Errorf("model %v, forced %q", tr.Child["model"], c.EnvModel)
	case def == nil:
		return nil
	}
	tools, listed := tr.Child["tools"].([]any)
	inherits, _ := facts["inherits_tools"].(bool)
	_, hasTools := tr.Child["tools"]
	if inherits == hasTools || hasTools && !listed {
		return fmt.Errorf("inherits_tools %v with tools %v", facts["inherits_tools"], tr.Child["tools"])
	}
	granted := grants(def)
	for _, tool := range tools {
		if !slices.ContainsFunc(granted, func(g any) bool { return reflect.DeepEqual(g, tool) }) {
			return fmt.Errorf("tool %v comes from nothing the definition grants (%v)", tool, granted)
		}
	}
	return nil
}

// grants lists every tool a definition can give its child: its tools, and
// what its memory, MCP servers and hooks add.
func grants(def *agent.Definition) []any {
	out, _ := agent.ToolList(def.Fields["tools"], def.Lines, "tools")
	if m, ok := def.Fields["memory"]; ok && m != nil && m != false {
		out = append(out, "Write", "Edit")
	}
	var servers func(v any)
	servers = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			for name := range v {
				out = append(out, "mcp__"+name)
			}
		case []any:
			for _, s := range v {
				if name, ok := s.(string); ok {
					out = append(out, "mcp__"+name)
					continue
				}
				if obj, ok := s.(map[string]any); ok {
					servers(obj)
					continue
				}
				out = append(out, s)
			}
		case nil:
		default:
			out = append(out, v)
		}
	}
	servers(def.Fields["mcpServers"])
	if h, ok := def.Fields["hooks"]; ok && h != nil {
		out = append(out, "hooks")
	}
	return out
}

// unreadableMode says whether def sets a permissionMode that is not a
// string (null included) and the session does not override it.
func unreadableMode(c call, def *agent.Definition) bool {
	if def == nil {
		return false
	}
	raw, set := def.Fields["permissionMode"]
	_, isString := raw.(string)
	return set && !isString && sessionMode(c, "") == ""
}
