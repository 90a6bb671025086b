package gemini

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spawngate/spawngate/internal/document"
	"github.com/spawngate/spawngate/internal/host"
	"github.com/spawngate/spawngate/internal/host/hosttest"
)

// def is a definition file with the frontmatter given and a body.
func def(front string) string { return "---\n" + front + "---\nDo the work.\n" }

// ack is the acknowledgments file that accepts each project definition
// given (name to its file's text) for project.
func ack(project string, defs map[string]string) string {
	names := map[string]string{}
	for name, text := range defs {
		sum := sha256.Sum256([]byte(text))
		names[name] = hex.EncodeToString(sum[:])
	}
	b, _ := json.Marshal(map[string]any{project: names})
	return string(b)
}

// setup writes a project and a home, and returns them.
func setup(t *testing.T, files func(project string) map[string]string) (project, home string) {
	t.Helper()
	base := hosttest.OutsideRepo(t)
	project, home = filepath.Join(base, "proj"), filepath.Join(base, "home")
	hosttest.WriteTree(t, base, map[string]string{"proj/": "", "home/": ""})
	hosttest.WriteTree(t, base, files(project))
	return project, home
}

func spawnOf(t *testing.T, project, home, name string) map[string]any {
	t.Helper()
	payload := map[string]any{"session_id": "s", "cwd": project, "hook_event_name": "BeforeTool", "tool_name": "invoke_agent",
		"tool_input": map[string]any{"agent_name": name, "prompt": "p"}}
	sp, err := Adapter{}.Spawn(context.Background(), payload, host.Env{Home: home, Limits: document.DefaultLimits, Root: filepath.Join(home, "no-root")})
	if err != nil {
		t.Fatal(err)
	}
	if sp == nil || len(sp.Children) != 1 || sp.Brief != "p" || sp.Event != "BeforeTool" {
		t.Fatalf("spawn %+v", sp)
	}
	return sp.Children[0].Child
}

func factsOf(c map[string]any) map[string]any { return c["agent"].(map[string]any) }

// TestResolve: built-ins first, then the project's acknowledged
// definitions, the user's, an extension's; what Gemini CLI leaves out
// falls through; what the gate cannot read refuses.
func TestResolve(t *testing.T) {
	reader := def("name: reader\ndescription: d\ntools: [read_file]\n")
	projReader := def("name: reader\ndescription: project's\ntools: [read_file]\n")
	stale := def("name: stale\ndescription: d\ntools: [read_file]\n")
	project, home := setup(t, func(project string) map[string]string {
		return map[string]string{
			"proj/.gemini/agents/reader.md":                   projReader,
			"proj/.gemini/agents/stale.md":                    stale,
			"proj/.gemini/agents/new.md":                      def("name: new\ndescription: d\n"),
			"proj/.gemini/agents/_hidden.md":                  def("name: hidden\ndescription: d\n"),
			"proj/.gemini/agents/sub/deep.md":                 def("name: deep\ndescription: d\n"),
			"proj/.gemini/agents/generalist.md":               def("name: generalist\ndescription: d\ntools: [read_file]\n"),
			"home/.gemini/acknowledgments/agents.json":        ack(project, map[string]string{"reader": projReader, "stale": "old text", "generalist": def("name: generalist\ndescription: d\ntools: [read_file]\n")}),
			"home/.gemini/agents/reader.md":                   reader,
			"home/.gemini/agents/stale.md":                    stale,
			"home/.gemini/agents/new.md":                      def("name: new\ndescription: user's\n"),
			"home/.gemini/agents/odd.md":                      def("name: odd\ndescription: d\nfoo: bar\n"),
			"home/.gemini/agents/broken.md":                   def("name: broken\ndescription: d\ntools: [a]\ntools: [b]\n"),
			"home/.gemini/agents/far.md":                      def("name: far\ndescription: d\nkind: remote\nagent_card_url: https://x\n"),
			"home/.gemini/extensions/e/gemini-extension.json": "{}",
			"home/.gemini/extensions/e/agents/ext.md":         def("name: ext\ndescription: d\n"),
			"home/.gemini/extensions/e/agents/odd.md":         def("name: odd\ndescription: ext's\n"),
			"home/.gemini/extensions/off/agents/gone.md":      def("name: gone\ndescription: d\n"),
		}
	})
	for _, tc := range []struct{ name, want, problem string }{
		{"reader", filepath.Join(project, ".gemini/agents/reader.md"), ""},
		{"stale", filepath.Join(home, ".gemini/agents/stale.md"), ""},
		{"new", filepath.Join(home, ".gemini/agents/new.md"), ""},
		{"generalist", "built-in:generalist", ""},
		{"codebase_investigator", "built-in:codebase_investigator", ""},
		{"odd", filepath.Join(home, ".gemini/extensions/e/agents/odd.md"), ""},
		{"ext", filepath.Join(home, ".gemini/extensions/e/agents/ext.md"), ""},
		{"far", filepath.Join(home, ".gemini/agents/far.md"), ""},
		{"broken", "", "does not parse"},
		{"hidden", "", "not defined"},
		{"deep", "", "not defined"},
		{"gone", "", "not defined"},
		{"Reader", "", "not defined"},
	} {
		facts := factsOf(spawnOf(t, project, home, tc.name))
		if tc.want != "" {
			if facts["definition"] != tc.want {
				t.Errorf("%s: definition %v, want %s (%v)", tc.name, facts["definition"], tc.want, facts["problem"])
			}
			continue
		}
		if facts["definition"] != nil || !strings.Contains(facts["problem"].(string), tc.problem) {
			t.Errorf("%s: %v, want a problem with %q", tc.name, facts, tc.problem)
		}
	}
	if facts := factsOf(spawnOf(t, project, home, "far")); facts["isolation"] != "remote" {
		t.Errorf("a remote agent: %v", facts)
	}
}

// TestTranslate: the tools a child gets, what writes, its MCP servers and
// its model, the settings' override of it included.
func TestTranslate(t *testing.T) {
	for _, tc := range []struct {
		name, front, settings string
		tools, write, spawn   string
		model                 any
	}{
		{"reader", "tools: [read_file, grep_search]\nmodel: gemini-2.5-flash\n", "", `["read_file","grep_search"]`, "", "", "gemini-2.5-flash"},
		{"writer", "tools: [read_file, write_file, replace, run_shell_command]\n", "", `["read_file","write_file","replace","run_shell_command"]`, `["write_file","replace","run_shell_command"]`, "", nil},
		{"every tool", "", "", "", "", "", nil},
		{"star", "tools: [\"*\"]\n", "", "", "", "", nil},
		{"unknown counts as both", "tools: [teleport]\n", "", `["teleport"]`, `["teleport"]`, `["teleport"]`, nil},
		{"mcp", "tools: [read_file]\nmcp_servers:\n  db: {command: x}\n", `{"agents": {"overrides": {"x": {"mcpServers": {"gh": {}}}}}}`, `["read_file","mcp__db","mcp__gh"]`, "", "", nil},
		{"override model wins", "tools: [read_file]\nmodel: gemini-2.5-flash\n", "// a comment\n{\"agents\": {\"overrides\": {\"x\": {\"modelConfig\": {\"model\": \"gemini-2.5-pro\"}}}}}", `["read_file"]`, "", "", "gemini-2.5-pro"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			text := def("name: x\ndescription: d\n" + tc.front)
			project, home := setup(t, func(project string) map[string]string {
				files := map[string]string{"proj/.gemini/agents/x.md": text, "home/.gemini/acknowledgments/agents.json": ack(project, map[string]string{"x": text})}
				if tc.settings != "" {
					files["proj/.gemini/settings.json"] = tc.settings
				}
				return files
			})
			c := spawnOf(t, project, home, "x")
			facts := factsOf(c)
			if tc.tools == "" {
				if facts["inherits_tools"] != true {
					t.Errorf("want every tool: %v", c)
				}
			} else if got, _ := json.Marshal(c["tools"]); string(got) != tc.tools {
				t.Errorf("tools %s, want %s", got, tc.tools)
			}
			for key, want := range map[string]string{"write_tools": tc.write, "spawn_tools": tc.spawn} {
				got, _ := json.Marshal(facts[key])
				if want == "" && facts[key] != nil || want != "" && string(got) != want {
					t.Errorf("%s %s, want %q", key, got, want)
				}
			}
			if c["model"] != tc.model {
				t.Errorf("model %v, want %v", c["model"], tc.model)
			}
		})
	}
}

// TestPayload: a call that starts nothing, and payloads that cannot be
// read.
func TestPayload(t *testing.T) {
	env := host.Env{Limits: document.DefaultLimits}
	sp, err := Adapter{}.Spawn(context.Background(), map[string]any{"cwd": "/p", "tool_name": "read_file", "tool_input": map[string]any{}}, env)
	if sp != nil || err != nil {
		t.Errorf("read_file: %v %v", sp, err)
	}
	for _, tc := range []struct {
		payload map[string]any
		pointer string
	}{
		{map[string]any{"cwd": "/p", "tool_name": "invoke_agent", "tool_input": "x"}, "/tool_input"},
		{map[string]any{"cwd": "/p", "tool_name": "invoke_agent", "tool_input": map[string]any{}}, "/tool_input/agent_name"},
		{map[string]any{"cwd": "p", "tool_name": "invoke_agent", "tool_input": map[string]any{"agent_name": "r"}}, "/cwd"},
		{map[string]any{"cwd": "/p", "tool_name": 1}, "/tool_name"},
	} {
		_, err := Adapter{}.Spawn(context.Background(), tc.payload, env)
		var pe *document.Error
		if !errors.As(err, &pe) || pe.Pointer != tc.pointer {
			t.Errorf("%v: %v, want an error at %s", tc.payload, err, tc.pointer)
		}
	}
}

// TestDeny: the one answer Gemini CLI reads as a refusal.
func TestDeny(t *testing.T) {
	var got map[string]any
	if err := json.Unmarshal(Adapter{}.Deny("BeforeTool", "no"), &got); err != nil || got["decision"] != "deny" || got["reason"] != "no" || len(got) != 2 {
		t.Errorf("%v %v", got, err)
	}
}
