package copilot

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/spawngate/spawngate/internal/agent"
	"github.com/spawngate/spawngate/internal/document"
	"github.com/spawngate/spawngate/internal/host"
	"github.com/spawngate/spawngate/internal/host/hosttest"
)

// def is a definition file with the frontmatter given and a body.
func def(front string) string { return "---\n" + front + "---\nDo the work.\n" }

// project writes a repository with its folders of definitions, and a home,
// and returns the repository's root and the home.
func project(t *testing.T, files map[string]string) (repo, home string) {
	t.Helper()
	base := hosttest.OutsideRepo(t)
	repo, home = filepath.Join(base, "repo"), filepath.Join(base, "home")
	hosttest.WriteTree(t, base, map[string]string{"repo/.git/": "", "home/": ""})
	hosttest.WriteTree(t, base, files)
	return repo, home
}

// spawn runs the adapter on a camelCase task payload from cwd.
func spawn(t *testing.T, cwd, home string, args map[string]any, extra map[string]any) (*host.Spawn, error) {
	t.Helper()
	payload := map[string]any{"sessionId": "s1", "timestamp": json.Number("1"), "cwd": cwd, "toolName": "task", "toolArgs": args}
	for k, v := range extra {
		payload[k] = v
	}
	return Adapter{}.Spawn(context.Background(), payload, host.Env{Home: home, Getenv: func(string) string { return "" }, Limits: document.DefaultLimits, Budget: "1000"})
}

func child(t *testing.T, sp *host.Spawn) (map[string]any, map[string]any) {
	t.Helper()
	if sp == nil || len(sp.Children) != 1 {
		t.Fatalf("want one child, got %+v", sp)
	}
	c := sp.Children[0].Child
	facts, _ := c["agent"].(map[string]any)
	return c, facts
}

func showJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// TestResolvePrecedence: the definition that runs for a name, as observed
// on Copilot CLI 1.0.102: the user's folder, then .github/agents closest
// first, then .claude/agents closest first; built-ins before any.
func TestResolvePrecedence(t *testing.T) {
	reader := def("description: d\ntools: [read]\n")
	repo, home := project(t, map[string]string{
		"home/.copilot/agents/u.agent.md":      reader,
		"repo/.github/agents/u.agent.md":       reader,
		"repo/.github/agents/g.agent.md":       reader,
		"repo/sub/.github/agents/g.agent.md":   reader,
		"repo/sub/.claude/agents/c.md":         reader,
		"repo/.github/agents/c.agent.md":       reader,
		"repo/.claude/agents/cc.md":            reader,
		"repo/sub/.claude/agents/cc.md":        reader,
		"repo/.github/agents/explore.agent.md": def("description: d\ntools: [read]\n"),
		"repo/.github/agents/deep/x/d.md":      reader,
		"repo/.github/agents/named.agent.md":   def("name: Other\ndescription: d\ntools: [read]\n"),
	})
	sub := filepath.Join(repo, "sub")
	for _, tc := range []struct{ typ, want string }{
		{"u", filepath.Join(home, ".copilot/agents/u.agent.md")},
		{"g", filepath.Join(repo, "sub/.github/agents/g.agent.md")},
		{"c", filepath.Join(repo, ".github/agents/c.agent.md")},
		{"cc", filepath.Join(repo, "sub/.claude/agents/cc.md")},
		{"explore", "built-in:explore"},
		{"d", filepath.Join(repo, ".github/agents/deep/x/d.md")},
		{"Other", filepath.Join(repo, ".github/agents/named.agent.md")},
	} {
		sp, err := spawn(t, sub, home, map[string]any{"agent_type": tc.typ, "prompt": "p"}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, facts := child(t, sp); facts["definition"] != tc.want {
			t.Errorf("%s: definition %v, want %s (problem %v)", tc.typ, facts["definition"], tc.want, facts["problem"])
		}
	}
	for _, typ := range []string{"named", "other", "U"} {
		sp, _ := spawn(t, sub, home, map[string]any{"agent_type": typ}, nil)
		if _, facts := child(t, sp); facts["definition"] != nil || !strings.Contains(facts["problem"].(string), "not defined in any agents folder") {
			t.Errorf("%s: %v", typ, facts)
		}
	}
}

// TestResolveAsCopilotLoads: files Copilot skips fall through to the next
// definition of the name; files the gate cannot read, two of a name in
// one folder and an uninvocable one refuse.
func TestResolveAsCopilotLoads(t *testing.T) {
	good := def("description: d\ntools: [read]\n")
	repo, home := project(t, map[string]string{
		"home/.copilot/agents/nodesc.md":      def("name: nodesc\ntools: [read, shell]\n"),
		"repo/.github/agents/nodesc.agent.md": good,
		"home/.copilot/agents/nullt.md":       def("name: nullt\ndescription: d\ntools:\n"),
		"repo/.github/agents/nullt.agent.md":  good,
		"home/.copilot/agents/plain.md":       "no frontmatter here\n",
		"repo/.github/agents/plain.agent.md":  good,
		"home/.copilot/agents/dup.md":         def("name: dupkey\ndescription: d\ntools: [read]\ntools: [shell]\n"),
		"repo/.github/agents/dupkey.agent.md": good,
		"repo/.github/agents/a.agent.md":      def("name: twice\ndescription: d\n"),
		"repo/.github/agents/b.agent.md":      def("name: twice\ndescription: d\n"),
		"home/.copilot/agents/quiet.md":       def("description: d\ninfer: false\n"),
		"repo/.github/agents/quiet.agent.md":  good,
		"repo/.github/agents/dmi.agent.md":    def("description: d\ndisable-model-invocation: true\n"),
	})
	for _, tc := range []struct{ typ, def, problem string }{
		{"nodesc", filepath.Join(repo, ".github/agents/nodesc.agent.md"), ""},
		{"nullt", filepath.Join(repo, ".github/agents/nullt.agent.md"), ""},
		{"plain", filepath.Join(repo, ".github/agents/plain.agent.md"), ""},
		{"dupkey", "", "does not parse"},
		{"twice", "", "is defined twice"},
		{"quiet", "", "infer: false, so Copilot refuses a task call"},
		{"dmi", "", "disable-model-invocation: true"},
	} {
		sp, err := spawn(t, repo, home, map[string]any{"agent_type": tc.typ}, nil)
		if err != nil {
			t.Fatal(err)
		}
		_, facts := child(t, sp)
		if tc.def != "" {
			if facts["definition"] != tc.def {
				t.Errorf("%s: definition %v, want %s (%v)", tc.typ, facts["definition"], tc.def, facts["problem"])
			}
			continue
		}
		if facts["definition"] != nil || !strings.Contains(facts["problem"].(string), tc.problem) {
			t.Errorf("%s: %v, want a problem with %q", tc.typ, facts, tc.problem)
		}
	}
}

// TestTranslate: what a child is really offered for a definition's tools
// (the aliases as observed), its model, its MCP servers and hooks, and
// which of its tools write or spawn.
func TestTranslate(t *testing.T) {
	for _, tc := range []struct {
		name, front string
		args        map[string]any
		tools       string // JSON, "" for none (inherits)
		model       any
		write       string
		spawn       string
	}{
		{"read search", "tools: [read, search]\nmodel: gpt-5-mini\n", nil, `["view","grep","glob"]`, "gpt-5-mini", "", ""},
		{"comma string any case", "tools: Read, SHELL\n", nil, `["view","bash","read_bash","stop_bash","list_bash"]`, nil, `["bash"]`, ""},
		{"edit write create", "tools: [edit, write, create]\n", nil, `["create","edit"]`, nil, `["create","edit"]`, ""},
		{"agent", "tools: [agent]\n", nil, `["task","read_agent","list_agents","write_agent"]`, nil, "", `["task","write_agent"]`},
		{"empty", "tools: []\n", nil, `[]`, nil, "", ""},
		{"omitted", "", nil, "", nil, "", ""},
		{"star", "tools: [read, \"*\"]\n", nil, "", nil, "", ""},
		{"mcp", "tools: [\"SRV/Echo\", \"gh/*\"]\nmcp-servers:\n  db: {command: x}\n", nil, `["mcp__srv__echo","mcp__gh","mcp__db"]`, nil, "", ""},
		{"unknown counts as both", "tools: [teleport]\n", nil, `["teleport"]`, nil, `["teleport"]`, `["teleport"]`},
		{"hooks", "tools: [read]\nhooks:\n  preToolUse: [{type: command, bash: x}]\n", nil, `["view","hooks"]`, nil, `["hooks"]`, ""},
		{"call model wins", "tools: [read]\nmodel: gpt-5-mini\n", map[string]any{"model": "o3"}, `["view"]`, "o3", "", ""},
		{"list: the first", "tools: [read]\nmodel: [a, b]\n", nil, `["view"]`, "a", "", ""},
		{"required list keeps its own", "tools: [read]\nmodel: [a, b]\nmodel-policy: required\n", map[string]any{"model": "o3"}, `["view"]`, "a", "", ""},
		{"required list takes a listed call", "tools: [read]\nmodel: [a, b]\nmodel-policy: required\n", map[string]any{"model": "b"}, `["view"]`, "b", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			repo, home := project(t, map[string]string{"repo/.github/agents/x.agent.md": def("description: d\n" + tc.front)})
			args := map[string]any{"agent_type": "x", "prompt": "p"}
			for k, v := range tc.args {
				args[k] = v
			}
			sp, err := spawn(t, repo, home, args, nil)
			if err != nil {
				t.Fatal(err)
			}
			c, facts := child(t, sp)
			if tc.tools == "" {
				if facts["inherits_tools"] != true || c["tools"] != nil {
					t.Errorf("want every tool inherited, got %v, tools %v", facts["inherits_tools"], c["tools"])
				}
			} else if got := showJSON(c["tools"]); got != tc.tools {
				t.Errorf("tools %s, want %s", got, tc.tools)
			}
			if c["model"] != tc.model {
				t.Errorf("model %v, want %v", c["model"], tc.model)
			}
			for key, want := range map[string]string{"write_tools": tc.write, "spawn_tools": tc.spawn} {
				if got := showJSON(facts[key]); want == "" && facts[key] != nil || want != "" && got != want {
					t.Errorf("%s %s, want %q", key, got, want)
				}
			}
			if sp.Brief != "p" || c["brief"] != "p" {
				t.Errorf("brief %q %v", sp.Brief, c["brief"])
			}
		})
	}
}

// TestBuiltins: a built-in runs whatever a definition of its name says;
// explore holds its own tools (bash among them), the others every tool.
func TestBuiltins(t *testing.T) {
	repo, home := project(t, nil)
	for _, typ := range []string{"explore", "task", "general-purpose", "code-review", "research", "security-review", "rubber-duck"} {
		sp, err := spawn(t, repo, home, map[string]any{"agent_type": typ}, nil)
		if err != nil {
			t.Fatal(err)
		}
		c, facts := child(t, sp)
		if facts["definition"] != "built-in:"+typ {
			t.Errorf("%s: definition %v", typ, facts["definition"])
		}
		if explore := typ == "explore"; explore != (facts["inherits_tools"] == false) {
			t.Errorf("%s: inherits_tools %v", typ, facts["inherits_tools"])
		}
		if typ == "explore" && !slices.Contains(c["tools"].([]any), any("bash")) || c["model"] != nil {
			t.Errorf("explore: %v", c)
		}
	}
	sp, _ := spawn(t, repo, home, map[string]any{"agent_type": "explore", "model": "gpt-5-mini"}, nil)
	if c, _ := child(t, sp); c["model"] != "gpt-5-mini" {
		t.Errorf("the call's model does not win over explore's: %v", c["model"])
	}
}

// TestPayloadShapes: the camelCase and PascalCase payloads, a nested call,
// a call that starts nothing, and payloads the adapter cannot read.
func TestPayloadShapes(t *testing.T) {
	repo, home := project(t, map[string]string{
		"repo/.github/agents/lead.agent.md":   def("description: d\ntools: [read, agent]\n"),
		"repo/.github/agents/reader.agent.md": def("description: d\ntools: [read, search]\n"),
	})
	env := host.Env{Home: home, Limits: document.DefaultLimits}
	pascal := map[string]any{"hook_event_name": "PreToolUse", "session_id": "s2", "cwd": repo, "tool_name": "Agent",
		"tool_input": map[string]any{"agent_type": "reader", "prompt": "p"}, "agent_id": "a1", "agent_type": "lead"}
	sp, err := Adapter{}.Spawn(context.Background(), pascal, env)
	if err != nil {
		t.Fatal(err)
	}
	if sp.Event != "PreToolUse" || sp.Session != "s2" {
		t.Errorf("event %q session %q", sp.Event, sp.Session)
	}
	if got := showJSON(sp.Parent); got != `{"depth":1,"paths":["`+repo+`"],"role":"lead","tools":["view","task","read_agent","list_agents","write_agent"]}` {
		t.Errorf("parent %s", got)
	}
	sp, err = spawn(t, repo, home, map[string]any{"agent_type": "reader"}, map[string]any{"agentId": "a9", "agentType": "ghost"})
	if err != nil {
		t.Fatal(err)
	}
	if _, facts := child(t, sp); facts["definition"] != nil || !strings.Contains(facts["problem"].(string), `the caller's own definition cannot be found (agentId "a9")`) {
		t.Errorf("unknown caller: %v", facts)
	}
	sp, err = spawn(t, repo, home, map[string]any{"agent_type": "reader", "mode": "background"}, nil)
	if err != nil || sp.Event != "preToolUse" {
		t.Fatalf("background: %v %v", sp, err)
	}
	sp, err = Adapter{}.Spawn(context.Background(), map[string]any{"cwd": repo, "toolName": "view", "toolArgs": map[string]any{}}, env)
	if sp != nil || err != nil {
		t.Errorf("a view call: %v %v", sp, err)
	}
	sp, err = Adapter{}.Spawn(context.Background(), map[string]any{"cwd": repo, "toolName": "run_dynamic_workflow", "toolArgs": map[string]any{"name": "wf"}}, env)
	if err != nil {
		t.Fatal(err)
	}
	if c, facts := child(t, sp); c["role"] != "workflow:wf" || facts["definition"] != nil {
		t.Errorf("a workflow: %v", c)
	}
	for _, tc := range []struct {
		payload map[string]any
		pointer string
	}{
		{map[string]any{"cwd": repo, "toolName": "task", "toolArgs": "x"}, "/toolArgs"},
		{map[string]any{"cwd": repo, "toolName": 3, "toolArgs": map[string]any{}}, "/toolName"},
		{map[string]any{"cwd": repo, "toolName": "task", "toolArgs": map[string]any{}}, "/toolArgs/agent_type"},
		{map[string]any{"cwd": repo, "toolName": "task", "toolArgs": map[string]any{"agent_type": 1}}, "/toolArgs/agent_type"},
		{map[string]any{"cwd": "rel", "toolName": "task", "toolArgs": map[string]any{"agent_type": "reader"}}, "/cwd"},
		{map[string]any{"hook_event_name": "PreToolUse", "cwd": repo, "tool_name": "Agent", "tool_input": []any{}}, "/tool_input"},
	} {
		_, err := Adapter{}.Spawn(context.Background(), tc.payload, env)
		var pe *document.Error
		if !errors.As(err, &pe) || pe.Pointer != tc.pointer {
			t.Errorf("%v: error %v, want one at %s", tc.payload, err, tc.pointer)
		}
	}
}

// TestDeny: the one answer Copilot reads as a refusal on both events.
func TestDeny(t *testing.T) {
	for _, event := range append([]string{""}, Adapter{}.Events()...) {
		var got map[string]any
		if err := json.Unmarshal(Adapter{}.Deny(event, "no"), &got); err != nil {
			t.Fatal(err)
		}
		if len(got) != 2 || got["permissionDecision"] != "deny" || got["permissionDecisionReason"] != "no" {
			t.Errorf("%q: %v", event, got)
		}
	}
}

// TestAudit: spawngate agents judges each definition of a folder as a
// task call of its name; a skipped file says why.
func TestAudit(t *testing.T) {
	repo, _ := project(t, map[string]string{
		"repo/.github/agents/reader.agent.md": def("description: d\ntools: [read]\n"),
		"repo/.github/agents/nodesc.md":       def("tools: [read]\n"),
	})
	out, err := Adapter{}.Audit(context.Background(), filepath.Join(repo, ".github/agents"), host.Env{Cwd: repo, Limits: document.DefaultLimits})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]agent.Translation{}
	for _, a := range out {
		got[filepath.Base(a.File)] = a.Translation
	}
	if f := got["reader.agent.md"].Child["agent"].(map[string]any); f["problem"] != nil {
		t.Errorf("reader: %v", f)
	}
	if f := got["nodesc.md"].Child["agent"].(map[string]any); !strings.Contains(f["problem"].(string), "has no description") || got["nodesc.md"].Child["role"] != "nodesc" {
		t.Errorf("nodesc: %v", got["nodesc.md"].Child)
	}
}

// TestCopilotHome: COPILOT_HOME replaces ~/.copilot for agents, a relative
// one read against the session's folder (observed).
func TestCopilotHome(t *testing.T) {
	reader := def("description: d\ntools: [read]\n")
	repo, home := project(t, map[string]string{
		"home/.copilot/agents/u.agent.md": reader,
		"repo/ch/agents/c.agent.md":       reader,
	})
	for _, tc := range []struct{ copilotHome, typ, want string }{
		{"", "u", filepath.Join(home, ".copilot/agents/u.agent.md")},
		{"ch", "c", filepath.Join(repo, "ch/agents/c.agent.md")},
		{filepath.Join(repo, "ch"), "c", filepath.Join(repo, "ch/agents/c.agent.md")},
		{"ch", "u", ""},
	} {
		env := host.Env{Home: home, Limits: document.DefaultLimits, Getenv: func(k string) string {
			if k == "COPILOT_HOME" {
				return tc.copilotHome
			}
			return ""
		}}
		payload := map[string]any{"cwd": repo, "toolName": "task", "toolArgs": map[string]any{"agent_type": tc.typ}}
		sp, err := Adapter{}.Spawn(context.Background(), payload, env)
		if err != nil {
			t.Fatal(err)
		}
		_, facts := child(t, sp)
		if want := any(tc.want); tc.want == "" && facts["definition"] != nil || tc.want != "" && facts["definition"] != want {
			t.Errorf("COPILOT_HOME %q, %s: definition %v, want %q", tc.copilotHome, tc.typ, facts["definition"], tc.want)
		}
	}
}
