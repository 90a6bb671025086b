package claudecode

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/spawngate/spawngate/internal/agent"
	"github.com/spawngate/spawngate/internal/document"
	"github.com/spawngate/spawngate/internal/host"
	"github.com/spawngate/spawngate/internal/host/hosttest"
	"github.com/spawngate/spawngate/internal/plan"
)

const claudeFile = "/repo/.claude/agents/x.md"

// readDef reads a definition that must be one the gate can judge.
func readDef(t *testing.T, text string) *agent.Definition {
	t.Helper()
	d := ReadClaude(context.Background(), claudeFile, []byte(text), document.DefaultLimits)
	if d.Err != nil || d.Skipped != "" {
		t.Fatalf("the test's definition is not one to judge: %v %s\n%s", d.Err, d.Skipped, text)
	}
	return d
}

// md is a Claude Code definition named reviewer with the given settings,
// from line 4 on.
func md(settings string) string {
	return "---\nname: reviewer\ndescription: Reviews.\n" + settings + "---\nYou review.\n"
}

type translateCase struct {
	name    string
	def     string // the definition; "" for none
	problem string // the problem passed with no definition
	call    call   // Host is Claude Code's; Paths ["/w"] and Budget 5000 unless set
	child   string // the child wanted, as JSON; {F} is the definition file
	lines   map[string]int
	// issues are the fields of the child the schema refuses, in order.
	issues []string
}

var translateCases = []translateCase{
	// Tools.
	{
		name:  "comma-separated tools",
		def:   md("tools: Read, Grep\nmodel: sonnet\n"),
		call:  call{Call: agent.Call{Type: "reviewer"}},
		child: `{"role": "reviewer", "paths": ["/w"], "budget_tokens": 5000, "model": "sonnet", "tools": ["Read", "Grep"], "agent": {"host": "claude-code", "type": "reviewer", "definition": "{F}", "inherits_tools": false, "permission_mode": "default"}}`,
		lines: map[string]int{"/tools": 4, "/tools/0": 4, "/tools/1": 4, "/model": 5, "/agent/permission_mode": 0, "/role": 0, "/budget_tokens": 0, "": 0},
	},
	{
		name:  "a block list: each tool on its own line",
		def:   md("tools:\n  - Read\n  - Grep\n"),
		call:  call{Call: agent.Call{Type: "Reviewer"}},
		child: `{"role": "reviewer", "paths": ["/w"], "budget_tokens": 5000, "tools": ["Read", "Grep"], "agent": {"host": "claude-code", "type": "Reviewer", "definition": "{F}", "inherits_tools": false, "permission_mode": "default"}}`,
		lines: map[string]int{"/tools": 4, "/tools/0": 5, "/tools/1": 6, "/tools/9": 4, "/model": 0},
	},
	{
		name:   "tools omitted: every tool is inherited",
		def:    md("model: haiku\n"),
		call:   call{Call: agent.Call{Type: "reviewer"}},
		child:  `{"role": "reviewer", "paths": ["/w"], "budget_tokens": 5000, "model": "haiku", "agent": {"host": "claude-code", "type": "reviewer", "definition": "{F}", "inherits_tools": true, "permission_mode": "default"}}`,
		lines:  map[string]int{"/tools": 0, "/model": 4},
		issues: []string{"/tools"},
	},
	{
		name:   "tools written empty (null): every tool is inherited",
		def:    md("tools:\n"),
		call:   call{Call: agent.Call{Type: "reviewer"}},
		child:  `{"role": "reviewer", "paths": ["/w"], "budget_tokens": 5000, "agent": {"host": "claude-code", "type": "reviewer", "definition": "{F}", "inherits_tools": true, "permission_mode": "default"}}`,
		issues: []string{"/tools"},
	},
	{
		name:   "disallowedTools alone does not bound the tools",
		def:    md("disallowedTools: Bash, Write\n"),
		call:   call{Call: agent.Call{Type: "reviewer"}},
		child:  `{"role": "reviewer", "paths": ["/w"], "budget_tokens": 5000, "agent": {"host": "claude-code", "type": "reviewer", "definition": "{F}", "inherits_tools": true, "permission_mode": "default"}}`,
		lines:  map[string]int{"/tools": 4},
		issues: []string{"/tools"},
	},
	{
		name:  "a plain name removes the tool and its patterns",
		def:   md("tools: Read, Bash, Bash(git diff:*), BashOutput\ndisallowedTools: Bash\n"),
		call:  call{Call: agent.Call{Type: "reviewer"}},
		child: `{"role": "reviewer", "paths": ["/w"], "budget_tokens": 5000, "tools": ["Read", "BashOutput"], "agent": {"host": "claude-code", "type": "reviewer", "definition": "{F}", "inherits_tools": false, "permission_mode": "default"}}`,
		lines: map[string]int{"/tools": 4, "/tools/0": 4, "/tools/1": 4},
	},
	{
		name:  "a tool in both lists is removed, and the lines follow the tools kept",
		def:   md("tools:\n  - Read\n  - Write\n  - Grep\ndisallowedTools: [Write]\n"),
		call:  call{Call: agent.Call{Type: "reviewer"}},
		child: `{"role": "reviewer", "paths": ["/w"], "budget_tokens": 5000, "tools": ["Read", "Grep"], "agent": {"host": "claude-code", "type": "reviewer", "definition": "{F}", "inherits_tools": false, "permission_mode": "default"}}`,
		lines: map[string]int{"/tools": 4, "/tools/0": 5, "/tools/1": 7, "/tools/2": 4},
	},
	{
		name:  "a pattern removes only itself",
		def:   md("tools: [Bash, Bash(rm:*), Bash(ls:*)]\ndisallowedTools: ['Bash(rm:*)']\n"),
		call:  call{Call: agent.Call{Type: "reviewer"}},
		child: `{"role": "reviewer", "paths": ["/w"], "budget_tokens": 5000, "tools": ["Bash", "Bash(ls:*)"], "agent": {"host": "claude-code", "type": "reviewer", "definition": "{F}", "inherits_tools": false, "permission_mode": "default"}}`,
	},
	{
		name:  "an MCP server removes its tools",
		def:   md("tools: mcp__github__create_issue, mcp__github__get, mcp__githubx__get, mcp__gitlab__get, Read\ndisallowedTools: mcp__github\n"),
		call:  call{Call: agent.Call{Type: "reviewer"}},
		child: `{"role": "reviewer", "paths": ["/w"], "budget_tokens": 5000, "tools": ["mcp__githubx__get", "mcp__gitlab__get", "Read"], "agent": {"host": "claude-code", "type": "reviewer", "definition": "{F}", "inherits_tools": false, "permission_mode": "default"}}`,
	},
	{
		name:  "mcp__server__* removes the server's tools",
		def:   md("tools: mcp__github__create_issue, mcp__github__get, mcp__githubx__get, Read\ndisallowedTools: ['mcp__github__*']\n"),
		call:  call{Call: agent.Call{Type: "reviewer"}},
		child: `{"role": "reviewer", "paths": ["/w"], "budget_tokens": 5000, "tools": ["mcp__githubx__get", "Read"], "agent": {"host": "claude-code", "type": "reviewer", "definition": "{F}", "inherits_tools": false, "permission_mode": "default"}}`,
	},
	{
		name:  "mcp__* removes every MCP tool",
		def:   md("tools: mcp__github__get, mcp__slack__post, Read, mcpish\ndisallowedTools: ['mcp__*']\n"),
		call:  call{Call: agent.Call{Type: "reviewer"}},
		child: `{"role": "reviewer", "paths": ["/w"], "budget_tokens": 5000, "tools": ["Read", "mcpish"], "agent": {"host": "claude-code", "type": "reviewer", "definition": "{F}", "inherits_tools": false, "permission_mode": "default"}}`,
	},
	{
		name:  "a wildcard is MCP's only: plugin__* is a plain name",
		def:   md("tools: plugin__run, Read\ndisallowedTools: ['plugin__*']\n"),
		call:  call{Call: agent.Call{Type: "reviewer"}},
		child: `{"role": "reviewer", "paths": ["/w"], "budget_tokens": 5000, "tools": ["plugin__run", "Read"], "agent": {"host": "claude-code", "type": "reviewer", "definition": "{F}", "inherits_tools": false, "permission_mode": "default"}}`,
	},
	{
		name:   "every tool removed leaves none, which the schema refuses",
		def:    md("tools: Bash\ndisallowedTools: Bash\n"),
		call:   call{Call: agent.Call{Type: "reviewer"}},
		child:  `{"role": "reviewer", "paths": ["/w"], "budget_tokens": 5000, "tools": [], "agent": {"host": "claude-code", "type": "reviewer", "definition": "{F}", "inherits_tools": false, "permission_mode": "default"}}`,
		issues: []string{"/tools"},
	},
	{
		name:  "entries are trimmed, empty ones dropped",
		def:   md("tools: ' Read ,, Grep ,'\ndisallowedTools: ['  Write ']\n"),
		call:  call{Call: agent.Call{Type: "reviewer"}},
		child: `{"role": "reviewer", "paths": ["/w"], "budget_tokens": 5000, "tools": ["Read", "Grep"], "agent": {"host": "claude-code", "type": "reviewer", "definition": "{F}", "inherits_tools": false, "permission_mode": "default"}}`,
	},
	{
		name:   "an entry that is not a string is kept for the checks to refuse",
		def:    md("tools: [Read, 5, [Grep]]\ndisallowedTools: [5, Read]\n"),
		call:   call{Call: agent.Call{Type: "reviewer"}},
		child:  `{"role": "reviewer", "paths": ["/w"], "budget_tokens": 5000, "tools": [5, ["Grep"]], "agent": {"host": "claude-code", "type": "reviewer", "definition": "{F}", "inherits_tools": false, "permission_mode": "default"}}`,
		issues: []string{"/tools/0", "/tools/1"},
	},
	{
		name:   "tools that are neither a string nor a list",
		def:    md("tools: {Read: true}\n"),
		call:   call{Call: agent.Call{Type: "reviewer"}},
		child:  `{"role": "reviewer", "paths": ["/w"], "budget_tokens": 5000, "tools": [{"Read": true}], "agent": {"host": "claude-code", "type": "reviewer", "definition": "{F}", "inherits_tools": false, "permission_mode": "default"}}`,
		lines:  map[string]int{"/tools/0": 4},
		issues: []string{"/tools/0"},
	},

	// The rest of the child.
	{
		name:  "the call's brief, id and caller",
		def:   md("tools: Read\npermissionMode: plan\n"),
		call:  call{Call: agent.Call{Type: "reviewer", Brief: "Review <this> & that", ID: "toolu_1", Caller: "planner"}},
		child: `{"role": "reviewer", "paths": ["/w"], "budget_tokens": 5000, "brief": "Review <this> & that", "id": "toolu_1", "tools": ["Read"], "agent": {"host": "claude-code", "type": "reviewer", "definition": "{F}", "inherits_tools": false, "permission_mode": "plan", "caller": "planner"}}`,
		lines: map[string]int{"/agent/permission_mode": 5, "/agent": 0, "/brief": 0},
	},
	{
		name:  "a budget in the definition replaces the call's",
		def:   md("tools: Read\nbudget_tokens: 1234\n"),
		call:  call{Call: agent.Call{Type: "reviewer"}},
		child: `{"role": "reviewer", "paths": ["/w"], "budget_tokens": 1234, "tools": ["Read"], "agent": {"host": "claude-code", "type": "reviewer", "definition": "{F}", "inherits_tools": false, "permission_mode": "default"}}`,
		lines: map[string]int{"/budget_tokens": 5},
	},
	{
		name:  "a budget in the definition stands when the call grants none",
		def:   md("tools: Read\nbudget_tokens: 1234\n"),
		call:  call{Call: agent.Call{Type: "reviewer", Budget: "-"}},
		child: `{"role": "reviewer", "paths": ["/w"], "budget_tokens": 1234, "tools": ["Read"], "agent": {"host": "claude-code", "type": "reviewer", "definition": "{F}", "inherits_tools": false, "permission_mode": "default"}}`,
	},
	{
		name:   "no budget at all",
		def:    md("tools: Read\n"),
		call:   call{Call: agent.Call{Type: "reviewer", Budget: "-"}},
		child:  `{"role": "reviewer", "paths": ["/w"], "tools": ["Read"], "agent": {"host": "claude-code", "type": "reviewer", "definition": "{F}", "inherits_tools": false, "permission_mode": "default"}}`,
		issues: []string{"/budget_tokens"},
	},
	{
		name:   "a definition's budget that is not a whole number is refused, not mended",
		def:    md("tools: Read\nbudget_tokens: '1000'\n"),
		call:   call{Call: agent.Call{Type: "reviewer"}},
		child:  `{"role": "reviewer", "paths": ["/w"], "budget_tokens": "1000", "tools": ["Read"], "agent": {"host": "claude-code", "type": "reviewer", "definition": "{F}", "inherits_tools": false, "permission_mode": "default"}}`,
		issues: []string{"/budget_tokens"},
	}, // What a definition grants beside its tools.
	{
		name:  "a memory adds Write and Edit, on the memory's line",
		def:   md("tools: Read, Write\nmemory: project\n"),
		call:  call{Call: agent.Call{Type: "reviewer"}},
		child: `{"role": "reviewer", "paths": ["/w"], "budget_tokens": 5000, "tools": ["Read", "Write", "Edit"], "agent": {"host": "claude-code", "type": "reviewer", "definition": "{F}", "inherits_tools": false, "permission_mode": "default"}}`,
		lines: map[string]int{"/tools/0": 4, "/tools/1": 4, "/tools/2": 5},
	},
	{
		name:  "a memory adds them even when disallowedTools removes them",
		def:   md("tools: Read\ndisallowedTools: Write, Edit\nmemory: user\n"),
		call:  call{Call: agent.Call{Type: "reviewer"}},
		child: `{"role": "reviewer", "paths": ["/w"], "budget_tokens": 5000, "tools": ["Read", "Write", "Edit"], "agent": {"host": "claude-code", "type": "reviewer", "definition": "{F}", "inherits_tools": false, "permission_mode": "default"}}`,
		lines: map[string]int{"/tools/1": 6, "/tools/2": 6},
	},
	{
		name:  "memory: false adds nothing",
		def:   md("tools: Read\nmemory: false\n"),
		call:  call{Call: agent.Call{Type: "reviewer"}},
		child: `{"role": "reviewer", "paths": ["/w"], "budget_tokens": 5000, "tools": ["Read"], "agent": {"host": "claude-code", "type": "reviewer", "definition": "{F}", "inherits_tools": false, "permission_mode": "default"}}`,
	},
	{
		name:  "MCP servers by name add mcp__NAME, in name order",
		def:   md("tools: Read\nmcpServers:\n  slack:\n    command: sl\n  github: {command: gh}\n"),
		call:  call{Call: agent.Call{Type: "reviewer"}},
		child: `{"role": "reviewer", "paths": ["/w"], "budget_tokens": 5000, "tools": ["Read", "mcp__github", "mcp__slack"], "agent": {"host": "claude-code", "type": "reviewer", "definition": "{F}", "inherits_tools": false, "permission_mode": "default"}}`,
		lines: map[string]int{"/tools/0": 4, "/tools/1": 5, "/tools/2": 5},
	},
	{
		name:  "MCP servers as a list of names and of inline servers",
		def:   md("tools: Read\nmcpServers:\n  - github\n  - slack: {command: sl}\n"),
		call:  call{Call: agent.Call{Type: "reviewer"}},
		child: `{"role": "reviewer", "paths": ["/w"], "budget_tokens": 5000, "tools": ["Read", "mcp__github", "mcp__slack"], "agent": {"host": "claude-code", "type": "reviewer", "definition": "{F}", "inherits_tools": false, "permission_mode": "default"}}`,
	},
	{
		name:   "an MCP server that is neither a name nor a server is kept for the checks to refuse",
		def:    md("tools: Read\nmcpServers: [5]\n"),
		call:   call{Call: agent.Call{Type: "reviewer"}},
		child:  `{"role": "reviewer", "paths": ["/w"], "budget_tokens": 5000, "tools": ["Read", 5], "agent": {"host": "claude-code", "type": "reviewer", "definition": "{F}", "inherits_tools": false, "permission_mode": "default"}}`,
		issues: []string{"/tools/1"},
	},
	{
		name:  "an MCP server already among the tools is listed once",
		def:   md("tools: Read, mcp__github\nmcpServers: [github]\n"),
		call:  call{Call: agent.Call{Type: "reviewer"}},
		child: `{"role": "reviewer", "paths": ["/w"], "budget_tokens": 5000, "tools": ["Read", "mcp__github"], "agent": {"host": "claude-code", "type": "reviewer", "definition": "{F}", "inherits_tools": false, "permission_mode": "default"}}`,
	},
	{
		name:  "the definition's own hooks are the tool hooks",
		def:   md("tools: Read\nhooks:\n  Stop:\n    - hooks: [{type: command, command: echo}]\n"),
		call:  call{Call: agent.Call{Type: "reviewer"}},
		child: `{"role": "reviewer", "paths": ["/w"], "budget_tokens": 5000, "tools": ["Read", "hooks"], "agent": {"host": "claude-code", "type": "reviewer", "definition": "{F}", "inherits_tools": false, "permission_mode": "default"}}`,
		lines: map[string]int{"/tools/1": 5},
	},
	{
		name:   "tools: \"*\" inherits every tool",
		def:    md("tools: '*'\nmemory: project\n"),
		call:   call{Call: agent.Call{Type: "reviewer"}},
		child:  `{"role": "reviewer", "paths": ["/w"], "budget_tokens": 5000, "agent": {"host": "claude-code", "type": "reviewer", "definition": "{F}", "inherits_tools": true, "permission_mode": "default"}}`,
		issues: []string{"/tools"},
	},
	{
		name:   "tools: \" * \" inherits every tool too",
		def:    md("tools: ' * '\n"),
		call:   call{Call: agent.Call{Type: "reviewer"}},
		child:  `{"role": "reviewer", "paths": ["/w"], "budget_tokens": 5000, "agent": {"host": "claude-code", "type": "reviewer", "definition": "{F}", "inherits_tools": true, "permission_mode": "default"}}`,
		issues: []string{"/tools"},
	},

	// The call beside the definition.
	{
		name:  "the call's isolation and launch are facts",
		def:   md("tools: Read\n"),
		call:  call{Call: agent.Call{Type: "reviewer", Paths: []string{"/w", "/w/sub"}}, Isolation: "worktree", Launch: "skill"},
		child: `{"role": "reviewer", "paths": ["/w", "/w/sub"], "budget_tokens": 5000, "tools": ["Read"], "agent": {"host": "claude-code", "type": "reviewer", "definition": "{F}", "inherits_tools": false, "permission_mode": "default", "isolation": "worktree", "launch": "skill"}}`,
	},
	{
		name:  "a call's mode that approves everything is judged, though Claude Code ignores it",
		def:   md("tools: Read\npermissionMode: plan\n"),
		call:  call{Call: agent.Call{Type: "reviewer"}, Mode: "bypassPermissions"},
		child: `{"role": "reviewer", "paths": ["/w"], "budget_tokens": 5000, "tools": ["Read"], "agent": {"host": "claude-code", "type": "reviewer", "definition": "{F}", "inherits_tools": false, "permission_mode": "bypassPermissions"}}`,
	},

	// No definition.
	{
		name:    "no definition: the problem is a fact",
		problem: `agent type "general-purpose" is built in`,
		call:    call{Call: agent.Call{Type: "general-purpose"}},
		child:   `{"role": "general-purpose", "paths": ["/w"], "budget_tokens": 5000, "agent": {"host": "claude-code", "type": "general-purpose", "definition": null, "problem": "agent type \"general-purpose\" is built in", "permission_mode": "default"}}`,
		lines:   map[string]int{"/tools": 0, "/agent": 0, "": 0},
		issues:  []string{"/tools"},
	},
	{
		name:    "no definition, in a session that bypasses permissions, on the forced model",
		problem: "p",
		call:    call{Call: agent.Call{Type: "Explore", Paths: []string{"/elsewhere"}}, SessionMode: "bypassPermissions", Model: "opus", EnvModel: "haiku", EnvForce: true},
		child:   `{"role": "Explore", "paths": ["/elsewhere"], "budget_tokens": 5000, "model": "haiku", "agent": {"host": "claude-code", "type": "Explore", "definition": null, "problem": "p", "permission_mode": "bypassPermissions"}}`,
		issues:  []string{"/tools"},
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
	for _, tc := range []struct {
		own           string // the definition's permissionMode; "" for none
		session, want string
	}{
		{"", "", "default"},
		{"plan", "", "plan"},
		{"manual", "", "default"},
		{"dontAsk", "", "dontAsk"},
		{"acceptEdits", "", "acceptEdits"},
		{"auto", "default", "auto"},
		{"bypassPermissions", "default", "bypassPermissions"},
		{"bypassPermissions", "plan", "bypassPermissions"},
		{"plan", "bypassPermissions", "bypassPermissions"},
		{"plan", "acceptEdits", "acceptEdits"},
		{"plan", "auto", "auto"},
		{"manual", "auto", "auto"},
		{"", "acceptEdits", "acceptEdits"},
		{"", "bypassPermissions", "bypassPermissions"},
		{"", "auto", "auto"},
		{"", "plan", "default"},
		{"", "dontAsk", "default"},
		{"plan", "dontAsk", "plan"},
		{"plan", "plan", "plan"},
		{"manual", "manual", "default"},
		{"dontAsk", "default", "dontAsk"},
	} {
		settings := "tools: Read\n"
		if tc.own != "" {
			settings += "permissionMode: " + tc.own + "\n"
		}
		def := readDef(t, md(settings))
		c := call{Call: agent.Call{Host: Name, Type: "t"}, SessionMode: tc.session}
		got := translate(c, def, "").Child["agent"].(map[string]any)["permission_mode"]
		if got != tc.want {
			t.Errorf("permissionMode %q in session %q: %v, want %q", tc.own, tc.session, got, tc.want)
		}
		if tc.own == "" {
			// Without a definition, the child's own mode is the default.
			none := translate(c, nil, "p").Child["agent"].(map[string]any)["permission_mode"]
			if none != tc.want {
				t.Errorf("no definition in session %q: %v, want %q", tc.session, none, tc.want)
			}
		}
	}
}

// TestTranslateIsolation: the call's isolation, else the definition's
// own, is a fact agent.launch judges (remote is refused).
func TestTranslateIsolation(t *testing.T) {
	def := readDef(t, md("tools: Read\nisolation: remote\n"))
	for _, tc := range []struct{ call, want string }{{"", "remote"}, {"worktree", "worktree"}} {
		tr := translate(call{Call: agent.Call{Host: Name, Type: "t"}, Isolation: tc.call}, def, "")
		if got := tr.Child["agent"].(map[string]any)["isolation"]; got != tc.want {
			t.Errorf("call %q: isolation %v, want %q", tc.call, got, tc.want)
		}
	}
	if got := translate(call{Call: agent.Call{Host: Name, Type: "t"}}, def, "").LineOf("/agent/isolation"); got != 5 {
		t.Errorf("LineOf(/agent/isolation) = %d", got)
	}
}

func TestTranslateModel(t *testing.T) {
	for _, tc := range []struct {
		name      string
		model     string // the definition's model line; "" for none; "-" for no definition
		call, env string
		force     bool   // CLAUDE_CODE_SUBAGENT_MODEL_FORCE
		want      string // "" for no model in the child
		line      int    // LineOf("/model")
	}{
		{name: "an alias", model: "sonnet", want: "sonnet", line: 5},
		{name: "a full id", model: "claude-opus-4-1-20250805", want: "claude-opus-4-1-20250805", line: 5},
		{name: "inherit is unknown", model: "inherit", line: 5},
		{name: "absent is unknown"},
		{name: "not a string is unknown", model: "5", line: 5},
		{name: "the call's model wins", model: "sonnet", call: "haiku", want: "haiku"},
		{name: "the call asks to inherit", model: "sonnet", call: "inherit"},
		{name: "the definition wins over the environment", model: "sonnet", env: "opus", want: "sonnet", line: 5},
		{name: "the call wins over the environment", model: "sonnet", call: "haiku", env: "opus", want: "haiku"},
		{name: "the environment wins over inherit", model: "inherit", env: "opus", want: "opus"},
		{name: "the environment where nothing names one", env: "opus", want: "opus"},
		{name: "forced, the environment wins over the definition", model: "sonnet", env: "opus", force: true, want: "opus"},
		{name: "forced, the environment wins over the call", model: "sonnet", call: "haiku", env: "opus", force: true, want: "opus"},
		{name: "no definition, the call's model", model: "-", call: "haiku", want: "haiku"},
		{name: "no definition, the call's over the environment's", model: "-", call: "haiku", env: "opus", want: "haiku"},
		{name: "no definition, forced", model: "-", call: "haiku", env: "opus", force: true, want: "opus"},
		{name: "no definition, no model", model: "-"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var def *agent.Definition
			switch tc.model {
			case "-":
			case "":
				def = readDef(t, md("tools: Read\n"))
			default:
				def = readDef(t, md("tools: Read\nmodel: "+tc.model+"\n"))
			}
			tr := translate(call{Call: agent.Call{Host: Name, Type: "t"}, Model: tc.call, EnvModel: tc.env, EnvForce: tc.force}, def, "")
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

func TestRemoved(t *testing.T) {
	for _, tc := range []struct {
		tool   string
		denied []any
		want   bool
	}{
		{"Bash", []any{"Bash"}, true},
		{"Bash(git diff:*)", []any{"Bash"}, true},
		{"Bash", []any{"Bash(rm:*)"}, false},
		{"Bash(rm:*)", []any{"Bash(rm:*)"}, true},
		{"BashOutput", []any{"Bash"}, false},
		{"bash", []any{"Bash"}, false},
		{"(Bash)", []any{""}, false},
		{"mcp__github__get", []any{"mcp__github"}, true},
		{"mcp__github__get", []any{"mcp__github__*"}, true},
		{"mcp__github__get", []any{"mcp__*"}, true},
		{"mcp__github__get", []any{"mcp__github__get"}, true},
		{"mcp__github__get(x)", []any{"mcp__github__get"}, true},
		{"mcp__githubx__get", []any{"mcp__github"}, false},
		{"mcp__githubx__get", []any{"mcp__github__*"}, false},
		{"mcp__github", []any{"mcp__github"}, true},
		{"Read", []any{"mcp__*"}, false},
		{"mcpish", []any{"mcp__*"}, false},
		{"plugin__run", []any{"plugin__*"}, false},
		{"plugin__*", []any{"plugin__*"}, true},
		{"x__y", []any{"__*"}, false},
		{"Read", []any{json.Number("5"), nil, []any{"Read"}}, false},
		{"Read", []any{json.Number("5"), "Read"}, true},
		{"Read", nil, false},
	} {
		if got := removed(tc.tool, tc.denied); got != tc.want {
			t.Errorf("removed(%q, %v) = %v, want %v", tc.tool, tc.denied, got, tc.want)
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
	dir := "../../../examples/claude-code/" + Folder
	c, err := load(context.Background(), host.Env{AgentsDirs: []string{dir}, Limits: document.DefaultLimits}, session{})
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range c.Definitions() {
		def, problem := resolve(c, d.Name)
		tr := translate(call{Call: agent.Call{Host: Name, Type: d.Name, Paths: []string{"/w"}, Budget: "1000"}}, def, problem)
		if (def == nil) != (d.Err != nil) {
			t.Errorf("%s: resolved to %v, %q", d.File, def, problem)
		}
		if _, err := loader.Plan(context.Background(), "spawn.json", tr.Plan()); err != nil {
			t.Errorf("%s: %v", d.File, err)
		}
	}
}
