package codex

import (
	"bytes"
	"context"
	"testing"

	"github.com/spawngate/spawngate/internal/agent"
	"github.com/spawngate/spawngate/internal/document"
	"github.com/spawngate/spawngate/internal/host/hosttest"
	"github.com/spawngate/spawngate/internal/plan"
)

const codexFile = "/repo/.codex/agents/x.toml"

// readDef reads a definition that must be one the gate can judge.
func readDef(t *testing.T, text string) *agent.Definition {
	t.Helper()
	d := ReadCodex(codexFile, []byte(text))
	if d.Err != nil || d.Skipped != "" {
		t.Fatalf("the test's definition is not one to judge: %v %s\n%s", d.Err, d.Skipped, text)
	}
	return d
}

// codexTOML is a Codex definition named reader with the given settings,
// from line 3 on.
func codexTOML(settings string) string {
	return "name = \"reader\"\ndescription = \"Reads.\"\n" + settings
}

type translateCase struct {
	name    string
	def     string // the definition; "" for none
	problem string // the problem passed with no definition
	call    call   // Host is Codex's; Paths ["/w"] and Budget 5000 unless set
	child   string // the child wanted, as JSON; {F} is the definition file
	lines   map[string]int
	// issues are the fields of the child the schema refuses, in order.
	issues []string
}

var translateCases = []translateCase{
	{
		name: "a Codex sandbox and MCP server become tools",
		def:  codexTOML("developer_instructions = \"Read.\"\nmodel = \"gpt-5.1-codex\"\nsandbox_mode = \"read-only\"\n\n[mcp_servers.github]\ncommand = \"github-mcp-server\"\n"),
		call: call{Call: agent.Call{Type: "reader"}},
		child: `{"role": "reader", "paths": ["/w"], "budget_tokens": 5000, "model": "gpt-5.1-codex", "tools": ["sandbox:read-only", "mcp__github"],
			"agent": {"host": "codex", "type": "reader", "definition": "{F}", "sandbox_mode": "read-only", "permission_mode": "default"}}`,
		lines: map[string]int{"/tools": 5, "/tools/0": 5, "/tools/1": 7, "/agent/sandbox_mode": 5, "/tools/5": 5},
	},
	{
		name: "MCP servers in name order, after the sandbox",
		def:  codexTOML("sandbox_mode = \"workspace-write\"\n[mcp_servers.zeta]\ncommand = \"z\"\n[mcp_servers.alpha]\ncommand = \"a\"\n"),
		call: call{Call: agent.Call{Type: "reader"}},
		child: `{"role": "reader", "paths": ["/w"], "budget_tokens": 5000, "tools": ["sandbox:workspace-write", "mcp__alpha", "mcp__zeta"],
			"agent": {"host": "codex", "type": "reader", "definition": "{F}", "sandbox_mode": "workspace-write", "permission_mode": "default"}}`,
		lines: map[string]int{"/tools/0": 3, "/tools/1": 6, "/tools/2": 4},
	},
	{
		name: "no sandbox_mode: the fact is null",
		def:  codexTOML("[mcp_servers.github]\ncommand = \"gh\"\n"),
		call: call{Call: agent.Call{Type: "reader"}},
		child: `{"role": "reader", "paths": ["/w"], "budget_tokens": 5000, "tools": ["mcp__github"],
			"agent": {"host": "codex", "type": "reader", "definition": "{F}", "sandbox_mode": null, "permission_mode": "default"}}`,
		lines: map[string]int{"/tools": 0, "/tools/0": 3, "/agent/sandbox_mode": 0},
	},
	{
		name: "no sandbox_mode and no servers: no tools",
		def:  codexTOML("model = \"o4-mini\"\n"),
		call: call{Call: agent.Call{Type: "reader"}},
		child: `{"role": "reader", "paths": ["/w"], "budget_tokens": 5000, "model": "o4-mini", "tools": [],
			"agent": {"host": "codex", "type": "reader", "definition": "{F}", "sandbox_mode": null, "permission_mode": "default"}}`,
		issues: []string{"/tools"},
	},
	{
		name: "danger-full-access is a tool like the others",
		def:  codexTOML("sandbox_mode = \"danger-full-access\"\n"),
		call: call{Call: agent.Call{Type: "reader"}},
		child: `{"role": "reader", "paths": ["/w"], "budget_tokens": 5000, "tools": ["sandbox:danger-full-access"],
			"agent": {"host": "codex", "type": "reader", "definition": "{F}", "sandbox_mode": "danger-full-access", "permission_mode": "default"}}`,
	},
	{
		name: "an unknown sandbox is a fact, not a tool",
		def:  codexTOML("sandbox_mode = \"yolo\"\n"),
		call: call{Call: agent.Call{Type: "reader"}},
		child: `{"role": "reader", "paths": ["/w"], "budget_tokens": 5000, "tools": [],
			"agent": {"host": "codex", "type": "reader", "definition": "{F}", "sandbox_mode": "yolo", "permission_mode": "default"}}`,
		lines:  map[string]int{"/agent/sandbox_mode": 3, "/tools": 3},
		issues: []string{"/tools"},
	},
	{
		name: "a sandbox that is not a string",
		def:  codexTOML("sandbox_mode = 5\n"),
		call: call{Call: agent.Call{Type: "reader"}},
		child: `{"role": "reader", "paths": ["/w"], "budget_tokens": 5000, "tools": [],
			"agent": {"host": "codex", "type": "reader", "definition": "{F}", "sandbox_mode": 5, "permission_mode": "default"}}`,
		issues: []string{"/agent/sandbox_mode", "/tools"},
	},
	{
		name: "a Codex budget and model; the definition's model wins over the call's",
		def:  codexTOML("model = \"o4-mini\"\nsandbox_mode = \"read-only\"\nbudget_tokens = 777\n"),
		call: call{Call: agent.Call{Type: "reader"}, Model: "gpt-5.1-codex"},
		child: `{"role": "reader", "paths": ["/w"], "budget_tokens": 777, "model": "o4-mini", "tools": ["sandbox:read-only"],
			"agent": {"host": "codex", "type": "reader", "definition": "{F}", "sandbox_mode": "read-only", "permission_mode": "default"}}`,
		lines: map[string]int{"/budget_tokens": 5, "/model": 3},
	},
	{
		name: "an infinite Codex budget is a string the schema refuses",
		def:  codexTOML("sandbox_mode = \"read-only\"\nbudget_tokens = inf\n"),
		call: call{Call: agent.Call{Type: "reader"}},
		child: `{"role": "reader", "paths": ["/w"], "budget_tokens": "+Inf", "tools": ["sandbox:read-only"],
			"agent": {"host": "codex", "type": "reader", "definition": "{F}", "sandbox_mode": "read-only", "permission_mode": "default"}}`,
		issues: []string{"/budget_tokens"},
	},
	{
		name: "a Codex session that bypasses permissions passes it on",
		def:  codexTOML("sandbox_mode = \"read-only\"\n"),
		call: call{Call: agent.Call{Type: "reader", Caller: "lead"}, SessionMode: "bypassPermissions"},
		child: `{"role": "reader", "paths": ["/w"], "budget_tokens": 5000, "tools": ["sandbox:read-only"],
			"agent": {"host": "codex", "type": "reader", "definition": "{F}", "sandbox_mode": "read-only", "permission_mode": "bypassPermissions", "caller": "lead"}}`,
	},

	// No definition.
	{
		name: "no definition and no problem given",
		call: call{Call: agent.Call{Type: DefaultType, Brief: "b", ID: "call_1"}, SessionMode: "acceptEdits"},
		child: `{"role": "default", "paths": ["/w"], "budget_tokens": 5000, "brief": "b", "id": "call_1",
			"agent": {"host": "codex", "type": "default", "definition": null, "problem": "no definition applies", "permission_mode": "default"}}`,
		issues: []string{"/tools"},
	},
	{
		name:    "no definition: the problem is a fact",
		problem: `agent type "worker" is built in`,
		call:    call{Call: agent.Call{Type: "worker", Paths: []string{"/elsewhere"}, Caller: "lead"}, SessionMode: "bypassPermissions", Model: "o3"},
		child: `{"role": "worker", "paths": ["/elsewhere"], "budget_tokens": 5000, "model": "o3",
			"agent": {"host": "codex", "type": "worker", "definition": null, "problem": "agent type \"worker\" is built in", "permission_mode": "bypassPermissions", "caller": "lead"}}`,
		lines:  map[string]int{"/tools": 0, "/agent": 0, "": 0},
		issues: []string{"/tools"},
	},
}

func TestTranslate(t *testing.T) {
	for _, tc := range translateCases {
		t.Run(tc.name, func(t *testing.T) {
			c := tc.call
			c.Call = hosttest.TableCall(c.Call, Name)
			var def *agent.Definition
			want := hosttest.WantChild{Child: tc.child, Lines: tc.lines, Issues: tc.issues}
			if tc.def != "" {
				def = readDef(t, tc.def)
				want.File = def.File
			}
			hosttest.Translated(t, translate(c, def, tc.problem), want)
		})
	}
}

func TestTranslatePermissionMode(t *testing.T) {
	for _, tc := range []struct{ session, want string }{
		{"", "default"},
		{"bypassPermissions", "bypassPermissions"},
		{"acceptEdits", "default"},
		{"auto", "default"},
		{"plan", "default"},
	} {
		def := readDef(t, codexTOML("sandbox_mode = \"read-only\"\n"))
		c := call{Call: agent.Call{Host: Name, Type: "t"}, SessionMode: tc.session}
		got := translate(c, def, "").Child["agent"].(map[string]any)["permission_mode"]
		if got != tc.want {
			t.Errorf("session %q: %v, want %q", tc.session, got, tc.want)
		}
		// Without a definition, the child's own mode is the default.
		none := translate(c, nil, "p").Child["agent"].(map[string]any)["permission_mode"]
		if none != tc.want {
			t.Errorf("no definition in session %q: %v, want %q", tc.session, none, tc.want)
		}
	}
}

func TestTranslateModel(t *testing.T) {
	for _, tc := range []struct {
		name  string
		model string // the definition's model; "-" for no definition
		call  string
		want  string // "" for no model in the child
		line  int    // LineOf("/model")
	}{
		{name: "Codex's model", model: "gpt-5.1-codex", want: "gpt-5.1-codex", line: 4},
		{name: "Codex, the definition's model over the call's", model: "gpt-5.1-codex", call: "o4-mini", want: "gpt-5.1-codex", line: 4},
		{name: "no definition, the call's model", model: "-", call: "o3", want: "o3"},
		{name: "no definition, no model", model: "-"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var def *agent.Definition
			if tc.model != "-" {
				def = readDef(t, codexTOML("sandbox_mode = \"read-only\"\nmodel = \""+tc.model+"\"\n"))
			}
			tr := translate(call{Call: agent.Call{Host: Name, Type: "t"}, Model: tc.call}, def, "")
			got, set := tr.Child["model"]
			if tc.want == "" && set || tc.want != "" && got != tc.want {
				t.Errorf("model = %v (set %v), want %q", got, set, tc.want)
			}
			if line := tr.LineOf("/model"); line != tc.line {
				t.Errorf("LineOf(/model) = %d, want %d", line, tc.line)
			}
		})
	}
}

// TestPlanBytes pins the plan document of a Codex spawn: JSON, keys in
// order, indented, with nothing escaped for HTML, its MCP servers in name
// order, the same on every call.
func TestPlanBytes(t *testing.T) {
	const text = "sandbox_mode = \"read-only\"\nbudget_tokens = 900\n[mcp_servers.b]\ncommand = \"b\"\n[mcp_servers.a]\ncommand = \"a\"\n[mcp_servers.c]\ncommand = \"c\"\n"
	c := call{Call: agent.Call{Host: Name, Type: "reader", Paths: []string{"/w"}, Brief: "<a & b>", ID: "x", Budget: "5"}}
	got := translate(c, readDef(t, codexTOML(text)), "").Plan()
	want := `{
  "plan": [
    {
      "agent": {
        "definition": "/repo/.codex/agents/x.toml",
        "host": "codex",
        "permission_mode": "default",
        "sandbox_mode": "read-only",
        "type": "reader"
      },
      "brief": "<a & b>",
      "budget_tokens": 900,
      "id": "x",
      "paths": [
        "/w"
      ],
      "role": "reader",
      "tools": [
        "sandbox:read-only",
        "mcp__a",
        "mcp__b",
        "mcp__c"
      ]
    }
  ]
}
`
	if string(got) != want {
		t.Errorf("Plan() =\n%s\nwant\n%s", got, want)
	}
	for range 20 {
		if b := translate(c, readDef(t, codexTOML(text)), "").Plan(); !bytes.Equal(b, got) {
			t.Fatalf("a second translation gives other bytes:\n%s", b)
		}
	}
}

// TestTranslateExamples translates a spawn of every example definition
// and has the gate's loader read each plan.
func TestTranslateExamples(t *testing.T) {
	loader, err := plan.NewLoader(document.DefaultLimits)
	if err != nil {
		t.Fatal(err)
	}
	c, err := load(context.Background(), testEnv, []string{"../../../examples/codex/" + Folder})
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range c.Definitions() {
		def, problem := resolve(c, nil, d.Name)
		tr := translate(call{Call: agent.Call{Host: Name, Type: d.Name, Paths: []string{"/w"}, Budget: "1000"}}, def, problem)
		if (def == nil) != (d.Err != nil) {
			t.Errorf("%s: resolved to %v, %q", d.File, def, problem)
		}
		if _, err := loader.Plan(context.Background(), "spawn.json", tr.Plan()); err != nil {
			t.Errorf("%s: %v", d.File, err)
		}
	}
}
