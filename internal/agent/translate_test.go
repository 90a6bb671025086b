package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/spawngate/spawngate/internal/plan"
)

const (
	claudeFile = "/repo/.claude/agents/x.md"
	codexFile  = "/repo/.codex/agents/x.toml"
)

// readDef reads a definition that must be one the gate can judge.
func readDef(t *testing.T, host Host, text string) *Definition {
	t.Helper()
	var d *Definition
	if host == Codex {
		d = ReadCodex(codexFile, []byte(text))
	} else {
		d = ReadClaude(context.Background(), claudeFile, []byte(text), plan.DefaultLimits)
	}
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

// codexTOML is a Codex definition named reader with the given settings,
// from line 3 on.
func codexTOML(settings string) string {
	return "name = \"reader\"\ndescription = \"Reads.\"\n" + settings
}

type translateCase struct {
	name    string
	host    Host
	def     string // the definition; "" for none
	problem string // the problem passed with no definition
	call    Call   // Host is the case's; Cwd "/w" and Budget 5000 unless set
	child   string // the child wanted, as JSON; {F} is the definition file
	lines   map[string]int
	// issues are the fields of the child the schema refuses, in order.
	issues []string
}

var translateCases = []translateCase{
	// Claude Code: tools.
	{
		name: "comma-separated tools",
		host: ClaudeCode, def: md("tools: Read, Grep\nmodel: sonnet\n"),
		call:  Call{Type: "reviewer"},
		child: `{"role": "reviewer", "paths": ["/w"], "budget_tokens": 5000, "model": "sonnet", "tools": ["Read", "Grep"], "agent": {"host": "claude-code", "type": "reviewer", "definition": "{F}", "inherits_tools": false, "permission_mode": "default"}}`,
		lines: map[string]int{"/tools": 4, "/tools/0": 4, "/tools/1": 4, "/model": 5, "/agent/permission_mode": 0, "/role": 0, "/budget_tokens": 0, "": 0},
	},
	{
		name: "a block list: each tool on its own line",
		host: ClaudeCode, def: md("tools:\n  - Read\n  - Grep\n"),
		call:  Call{Type: "Reviewer"},
		child: `{"role": "reviewer", "paths": ["/w"], "budget_tokens": 5000, "tools": ["Read", "Grep"], "agent": {"host": "claude-code", "type": "Reviewer", "definition": "{F}", "inherits_tools": false, "permission_mode": "default"}}`,
		lines: map[string]int{"/tools": 4, "/tools/0": 5, "/tools/1": 6, "/tools/9": 4, "/model": 0},
	},
	{
		name: "tools omitted: every tool is inherited",
		host: ClaudeCode, def: md("model: haiku\n"),
		call:   Call{Type: "reviewer"},
		child:  `{"role": "reviewer", "paths": ["/w"], "budget_tokens": 5000, "model": "haiku", "agent": {"host": "claude-code", "type": "reviewer", "definition": "{F}", "inherits_tools": true, "permission_mode": "default"}}`,
		lines:  map[string]int{"/tools": 0, "/model": 4},
		issues: []string{"/tools"},
	},
	{
		name: "tools written empty (null): every tool is inherited",
		host: ClaudeCode, def: md("tools:\n"),
		call:   Call{Type: "reviewer"},
		child:  `{"role": "reviewer", "paths": ["/w"], "budget_tokens": 5000, "agent": {"host": "claude-code", "type": "reviewer", "definition": "{F}", "inherits_tools": true, "permission_mode": "default"}}`,
		issues: []string{"/tools"},
	},
	{
		name: "disallowedTools alone does not bound the tools",
		host: ClaudeCode, def: md("disallowedTools: Bash, Write\n"),
		call:   Call{Type: "reviewer"},
		child:  `{"role": "reviewer", "paths": ["/w"], "budget_tokens": 5000, "agent": {"host": "claude-code", "type": "reviewer", "definition": "{F}", "inherits_tools": true, "permission_mode": "default"}}`,
		lines:  map[string]int{"/tools": 4},
		issues: []string{"/tools"},
	},
	{
		name: "a plain name removes the tool and its patterns",
		host: ClaudeCode, def: md("tools: Read, Bash, Bash(git diff:*), BashOutput\ndisallowedTools: Bash\n"),
		call:  Call{Type: "reviewer"},
		child: `{"role": "reviewer", "paths": ["/w"], "budget_tokens": 5000, "tools": ["Read", "BashOutput"], "agent": {"host": "claude-code", "type": "reviewer", "definition": "{F}", "inherits_tools": false, "permission_mode": "default"}}`,
		lines: map[string]int{"/tools": 4, "/tools/0": 4, "/tools/1": 4},
	},
	{
		name: "a tool in both lists is removed, and the lines follow the tools kept",
		host: ClaudeCode, def: md("tools:\n  - Read\n  - Write\n  - Grep\ndisallowedTools: [Write]\n"),
		call:  Call{Type: "reviewer"},
		child: `{"role": "reviewer", "paths": ["/w"], "budget_tokens": 5000, "tools": ["Read", "Grep"], "agent": {"host": "claude-code", "type": "reviewer", "definition": "{F}", "inherits_tools": false, "permission_mode": "default"}}`,
		lines: map[string]int{"/tools": 4, "/tools/0": 5, "/tools/1": 7, "/tools/2": 4},
	},
	{
		name: "a pattern removes only itself",
		host: ClaudeCode, def: md("tools: [Bash, Bash(rm:*), Bash(ls:*)]\ndisallowedTools: ['Bash(rm:*)']\n"),
		call:  Call{Type: "reviewer"},
		child: `{"role": "reviewer", "paths": ["/w"], "budget_tokens": 5000, "tools": ["Bash", "Bash(ls:*)"], "agent": {"host": "claude-code", "type": "reviewer", "definition": "{F}", "inherits_tools": false, "permission_mode": "default"}}`,
	},
	{
		name: "an MCP server removes its tools",
		host: ClaudeCode, def: md("tools: mcp__github__create_issue, mcp__github__get, mcp__githubx__get, mcp__gitlab__get, Read\ndisallowedTools: mcp__github\n"),
		call:  Call{Type: "reviewer"},
		child: `{"role": "reviewer", "paths": ["/w"], "budget_tokens": 5000, "tools": ["mcp__githubx__get", "mcp__gitlab__get", "Read"], "agent": {"host": "claude-code", "type": "reviewer", "definition": "{F}", "inherits_tools": false, "permission_mode": "default"}}`,
	},
	{
		name: "mcp__server__* removes the server's tools",
		host: ClaudeCode, def: md("tools: mcp__github__create_issue, mcp__github__get, mcp__githubx__get, Read\ndisallowedTools: ['mcp__github__*']\n"),
		call:  Call{Type: "reviewer"},
		child: `{"role": "reviewer", "paths": ["/w"], "budget_tokens": 5000, "tools": ["mcp__githubx__get", "Read"], "agent": {"host": "claude-code", "type": "reviewer", "definition": "{F}", "inherits_tools": false, "permission_mode": "default"}}`,
	},
	{
		name: "mcp__* removes every MCP tool",
		host: ClaudeCode, def: md("tools: mcp__github__get, mcp__slack__post, Read, mcpish\ndisallowedTools: ['mcp__*']\n"),
		call:  Call{Type: "reviewer"},
		child: `{"role": "reviewer", "paths": ["/w"], "budget_tokens": 5000, "tools": ["Read", "mcpish"], "agent": {"host": "claude-code", "type": "reviewer", "definition": "{F}", "inherits_tools": false, "permission_mode": "default"}}`,
	},
	{
		name: "a wildcard is MCP's only: plugin__* is a plain name",
		host: ClaudeCode, def: md("tools: plugin__run, Read\ndisallowedTools: ['plugin__*']\n"),
		call:  Call{Type: "reviewer"},
		child: `{"role": "reviewer", "paths": ["/w"], "budget_tokens": 5000, "tools": ["plugin__run", "Read"], "agent": {"host": "claude-code", "type": "reviewer", "definition": "{F}", "inherits_tools": false, "permission_mode": "default"}}`,
	},
	{
		name: "every tool removed leaves none, which the schema refuses",
		host: ClaudeCode, def: md("tools: Bash\ndisallowedTools: Bash\n"),
		call:   Call{Type: "reviewer"},
		child:  `{"role": "reviewer", "paths": ["/w"], "budget_tokens": 5000, "tools": [], "agent": {"host": "claude-code", "type": "reviewer", "definition": "{F}", "inherits_tools": false, "permission_mode": "default"}}`,
		issues: []string{"/tools"},
	},
	{
		name: "entries are trimmed, empty ones dropped",
		host: ClaudeCode, def: md("tools: ' Read ,, Grep ,'\ndisallowedTools: ['  Write ']\n"),
		call:  Call{Type: "reviewer"},
		child: `{"role": "reviewer", "paths": ["/w"], "budget_tokens": 5000, "tools": ["Read", "Grep"], "agent": {"host": "claude-code", "type": "reviewer", "definition": "{F}", "inherits_tools": false, "permission_mode": "default"}}`,
	},
	{
		name: "an entry that is not a string is kept for the checks to refuse",
		host: ClaudeCode, def: md("tools: [Read, 5, [Grep]]\ndisallowedTools: [5, Read]\n"),
		call:   Call{Type: "reviewer"},
		child:  `{"role": "reviewer", "paths": ["/w"], "budget_tokens": 5000, "tools": [5, ["Grep"]], "agent": {"host": "claude-code", "type": "reviewer", "definition": "{F}", "inherits_tools": false, "permission_mode": "default"}}`,
		issues: []string{"/tools/0", "/tools/1"},
	},
	{
		name: "tools that are neither a string nor a list",
		host: ClaudeCode, def: md("tools: {Read: true}\n"),
		call:   Call{Type: "reviewer"},
		child:  `{"role": "reviewer", "paths": ["/w"], "budget_tokens": 5000, "tools": [{"Read": true}], "agent": {"host": "claude-code", "type": "reviewer", "definition": "{F}", "inherits_tools": false, "permission_mode": "default"}}`,
		lines:  map[string]int{"/tools/0": 4},
		issues: []string{"/tools/0"},
	},

	// Claude Code: the rest of the child.
	{
		name: "the call's brief, id and caller",
		host: ClaudeCode, def: md("tools: Read\npermissionMode: plan\n"),
		call:  Call{Type: "reviewer", Brief: "Review <this> & that", ID: "toolu_1", Caller: "planner"},
		child: `{"role": "reviewer", "paths": ["/w"], "budget_tokens": 5000, "brief": "Review <this> & that", "id": "toolu_1", "tools": ["Read"], "agent": {"host": "claude-code", "type": "reviewer", "definition": "{F}", "inherits_tools": false, "permission_mode": "plan", "caller": "planner"}}`,
		lines: map[string]int{"/agent/permission_mode": 5, "/agent": 0, "/brief": 0},
	},
	{
		name: "a budget in the definition replaces the call's",
		host: ClaudeCode, def: md("tools: Read\nbudget_tokens: 1234\n"),
		call:  Call{Type: "reviewer"},
		child: `{"role": "reviewer", "paths": ["/w"], "budget_tokens": 1234, "tools": ["Read"], "agent": {"host": "claude-code", "type": "reviewer", "definition": "{F}", "inherits_tools": false, "permission_mode": "default"}}`,
		lines: map[string]int{"/budget_tokens": 5},
	},
	{
		name: "a budget in the definition stands when the call grants none",
		host: ClaudeCode, def: md("tools: Read\nbudget_tokens: 1234\n"),
		call:  Call{Type: "reviewer", Budget: "-"},
		child: `{"role": "reviewer", "paths": ["/w"], "budget_tokens": 1234, "tools": ["Read"], "agent": {"host": "claude-code", "type": "reviewer", "definition": "{F}", "inherits_tools": false, "permission_mode": "default"}}`,
	},
	{
		name: "no budget at all",
		host: ClaudeCode, def: md("tools: Read\n"),
		call:   Call{Type: "reviewer", Budget: "-"},
		child:  `{"role": "reviewer", "paths": ["/w"], "tools": ["Read"], "agent": {"host": "claude-code", "type": "reviewer", "definition": "{F}", "inherits_tools": false, "permission_mode": "default"}}`,
		issues: []string{"/budget_tokens"},
	},
	{
		name: "a definition's budget that is not a whole number is refused, not mended",
		host: ClaudeCode, def: md("tools: Read\nbudget_tokens: '1000'\n"),
		call:   Call{Type: "reviewer"},
		child:  `{"role": "reviewer", "paths": ["/w"], "budget_tokens": "1000", "tools": ["Read"], "agent": {"host": "claude-code", "type": "reviewer", "definition": "{F}", "inherits_tools": false, "permission_mode": "default"}}`,
		issues: []string{"/budget_tokens"},
	},
	{
		name: "the default type when the call names none",
		host: ClaudeCode, def: md("tools: Read\n"),
		call:  Call{},
		child: `{"role": "reviewer", "paths": ["/w"], "budget_tokens": 5000, "tools": ["Read"], "agent": {"host": "claude-code", "type": "general-purpose", "definition": "{F}", "inherits_tools": false, "permission_mode": "default"}}`,
	},

	// Codex.
	{
		name: "a Codex sandbox and MCP server become tools",
		host: Codex,
		def:  codexTOML("developer_instructions = \"Read.\"\nmodel = \"gpt-5.1-codex\"\nsandbox_mode = \"read-only\"\n\n[mcp_servers.github]\ncommand = \"github-mcp-server\"\n"),
		call: Call{Type: "reader"},
		child: `{"role": "reader", "paths": ["/w"], "budget_tokens": 5000, "model": "gpt-5.1-codex", "tools": ["sandbox:read-only", "mcp__github"],
			"agent": {"host": "codex", "type": "reader", "definition": "{F}", "sandbox_mode": "read-only", "permission_mode": "default"}}`,
		lines: map[string]int{"/tools": 5, "/tools/0": 5, "/tools/1": 7, "/agent/sandbox_mode": 5, "/tools/5": 5},
	},
	{
		name: "MCP servers in name order, after the sandbox",
		host: Codex,
		def:  codexTOML("sandbox_mode = \"workspace-write\"\n[mcp_servers.zeta]\ncommand = \"z\"\n[mcp_servers.alpha]\ncommand = \"a\"\n"),
		call: Call{Type: "reader"},
		child: `{"role": "reader", "paths": ["/w"], "budget_tokens": 5000, "tools": ["sandbox:workspace-write", "mcp__alpha", "mcp__zeta"],
			"agent": {"host": "codex", "type": "reader", "definition": "{F}", "sandbox_mode": "workspace-write", "permission_mode": "default"}}`,
		lines: map[string]int{"/tools/0": 3, "/tools/1": 6, "/tools/2": 4},
	},
	{
		name: "no sandbox_mode: the fact is null",
		host: Codex,
		def:  codexTOML("[mcp_servers.github]\ncommand = \"gh\"\n"),
		call: Call{Type: "reader"},
		child: `{"role": "reader", "paths": ["/w"], "budget_tokens": 5000, "tools": ["mcp__github"],
			"agent": {"host": "codex", "type": "reader", "definition": "{F}", "sandbox_mode": null, "permission_mode": "default"}}`,
		lines: map[string]int{"/tools": 0, "/tools/0": 3, "/agent/sandbox_mode": 0},
	},
	{
		name: "no sandbox_mode and no servers: no tools",
		host: Codex, def: codexTOML("model = \"o4-mini\"\n"),
		call: Call{Type: "reader"},
		child: `{"role": "reader", "paths": ["/w"], "budget_tokens": 5000, "model": "o4-mini", "tools": [],
			"agent": {"host": "codex", "type": "reader", "definition": "{F}", "sandbox_mode": null, "permission_mode": "default"}}`,
		issues: []string{"/tools"},
	},
	{
		name: "danger-full-access is a tool like the others",
		host: Codex, def: codexTOML("sandbox_mode = \"danger-full-access\"\n"),
		call: Call{Type: "reader"},
		child: `{"role": "reader", "paths": ["/w"], "budget_tokens": 5000, "tools": ["sandbox:danger-full-access"],
			"agent": {"host": "codex", "type": "reader", "definition": "{F}", "sandbox_mode": "danger-full-access", "permission_mode": "default"}}`,
	},
	{
		name: "an unknown sandbox is a fact, not a tool",
		host: Codex, def: codexTOML("sandbox_mode = \"yolo\"\n"),
		call: Call{Type: "reader"},
		child: `{"role": "reader", "paths": ["/w"], "budget_tokens": 5000, "tools": [],
			"agent": {"host": "codex", "type": "reader", "definition": "{F}", "sandbox_mode": "yolo", "permission_mode": "default"}}`,
		lines:  map[string]int{"/agent/sandbox_mode": 3, "/tools": 3},
		issues: []string{"/tools"},
	},
	{
		name: "a sandbox that is not a string",
		host: Codex, def: codexTOML("sandbox_mode = 5\n"),
		call: Call{Type: "reader"},
		child: `{"role": "reader", "paths": ["/w"], "budget_tokens": 5000, "tools": [],
			"agent": {"host": "codex", "type": "reader", "definition": "{F}", "sandbox_mode": 5, "permission_mode": "default"}}`,
		issues: []string{"/agent/sandbox_mode", "/tools"},
	},
	{
		name: "a Codex budget and model; the call's model wins",
		host: Codex, def: codexTOML("model = \"o4-mini\"\nsandbox_mode = \"read-only\"\nbudget_tokens = 777\n"),
		call: Call{Type: "reader", Model: "gpt-5.1-codex"},
		child: `{"role": "reader", "paths": ["/w"], "budget_tokens": 777, "model": "gpt-5.1-codex", "tools": ["sandbox:read-only"],
			"agent": {"host": "codex", "type": "reader", "definition": "{F}", "sandbox_mode": "read-only", "permission_mode": "default"}}`,
		lines: map[string]int{"/budget_tokens": 5},
	},
	{
		name: "an infinite Codex budget is a string the schema refuses",
		host: Codex, def: codexTOML("sandbox_mode = \"read-only\"\nbudget_tokens = inf\n"),
		call: Call{Type: "reader"},
		child: `{"role": "reader", "paths": ["/w"], "budget_tokens": "+Inf", "tools": ["sandbox:read-only"],
			"agent": {"host": "codex", "type": "reader", "definition": "{F}", "sandbox_mode": "read-only", "permission_mode": "default"}}`,
		issues: []string{"/budget_tokens"},
	},
	{
		name: "a Codex session that bypasses permissions passes it on",
		host: Codex, def: codexTOML("sandbox_mode = \"read-only\"\n"),
		call: Call{Type: "reader", SessionMode: "bypassPermissions", Caller: "lead"},
		child: `{"role": "reader", "paths": ["/w"], "budget_tokens": 5000, "tools": ["sandbox:read-only"],
			"agent": {"host": "codex", "type": "reader", "definition": "{F}", "sandbox_mode": "read-only", "permission_mode": "bypassPermissions", "caller": "lead"}}`,
	},

	// No definition.
	{
		name: "no definition: the problem is a fact",
		host: ClaudeCode, problem: `agent type "general-purpose" is built in`,
		call:   Call{Type: "general-purpose"},
		child:  `{"role": "general-purpose", "paths": ["/w"], "budget_tokens": 5000, "agent": {"host": "claude-code", "type": "general-purpose", "definition": null, "problem": "agent type \"general-purpose\" is built in", "permission_mode": "default"}}`,
		lines:  map[string]int{"/tools": 0, "/agent": 0, "": 0},
		issues: []string{"/tools"},
	},
	{
		name: "no definition and no problem given",
		host: Codex,
		call: Call{Brief: "b", ID: "call_1", SessionMode: "acceptEdits"},
		child: `{"role": "default", "paths": ["/w"], "budget_tokens": 5000, "brief": "b", "id": "call_1",
			"agent": {"host": "codex", "type": "default", "definition": null, "problem": "no definition applies", "permission_mode": "default"}}`,
		issues: []string{"/tools"},
	},
	{
		name: "no definition, in a session that bypasses permissions, on the forced model",
		host: ClaudeCode, problem: "p",
		call:   Call{Type: "Explore", SessionMode: "bypassPermissions", Model: "opus", EnvModel: "haiku", Cwd: "/elsewhere"},
		child:  `{"role": "Explore", "paths": ["/elsewhere"], "budget_tokens": 5000, "model": "haiku", "agent": {"host": "claude-code", "type": "Explore", "definition": null, "problem": "p", "permission_mode": "bypassPermissions"}}`,
		issues: []string{"/tools"},
	},
}

func TestTranslate(t *testing.T) {
	loader, err := plan.NewLoader(plan.DefaultLimits)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range translateCases {
		t.Run(tc.name, func(t *testing.T) {
			call := tc.call
			call.Host = tc.host
			if call.Cwd == "" {
				call.Cwd = "/w"
			}
			switch call.Budget {
			case "":
				call.Budget = "5000"
			case "-":
				call.Budget = ""
			}
			var def *Definition
			file := ""
			if tc.def != "" {
				def = readDef(t, tc.host, tc.def)
				file = def.File
			}
			tr := Translate(call, def, tc.problem)
			want := canonicalText(t, strings.ReplaceAll(tc.child, "{F}", file))
			if got := canonical(t, tr.Child); got != want {
				t.Errorf("child = %s\nwant    %s", got, want)
			}
			if tr.File != file {
				t.Errorf("File = %q, want %q", tr.File, file)
			}
			for pointer, line := range tc.lines {
				if got := tr.LineOf(pointer); got != line {
					t.Errorf("LineOf(%q) = %d, want %d", pointer, got, line)
				}
			}
			if def == nil {
				for pointer, line := range tr.Lines {
					if line != 0 {
						t.Errorf("without a definition, Lines[%q] = %d", pointer, line)
					}
				}
			}
			p, err := loader.Plan(context.Background(), "spawn.json", tr.Plan())
			if err != nil {
				t.Fatalf("the loader refuses the plan: %v\n%s", err, tr.Plan())
			}
			if len(p.Children) != 1 {
				t.Fatalf("%d children", len(p.Children))
			}
			var fields []string
			for _, is := range p.ChildIssues() {
				fields = append(fields, is.Field)
			}
			if !slices.Equal(fields, tc.issues) {
				t.Errorf("schema issues at %q, want %q: %v", fields, tc.issues, p.ChildIssues())
			}
		})
	}
}

func TestTranslatePermissionMode(t *testing.T) {
	for _, tc := range []struct {
		host          Host
		own           string // the definition's permissionMode; "" for none
		session, want string
	}{
		{ClaudeCode, "", "", "default"},
		{ClaudeCode, "plan", "", "plan"},
		{ClaudeCode, "manual", "", "default"},
		{ClaudeCode, "dontAsk", "", "dontAsk"},
		{ClaudeCode, "acceptEdits", "", "acceptEdits"},
		{ClaudeCode, "auto", "default", "auto"},
		{ClaudeCode, "bypassPermissions", "default", "bypassPermissions"},
		{ClaudeCode, "bypassPermissions", "plan", "bypassPermissions"},
		{ClaudeCode, "plan", "bypassPermissions", "bypassPermissions"},
		{ClaudeCode, "plan", "acceptEdits", "acceptEdits"},
		{ClaudeCode, "plan", "auto", "auto"},
		{ClaudeCode, "manual", "auto", "auto"},
		{ClaudeCode, "", "acceptEdits", "acceptEdits"},
		{ClaudeCode, "", "bypassPermissions", "bypassPermissions"},
		{ClaudeCode, "", "auto", "auto"},
		{ClaudeCode, "", "plan", "default"},
		{ClaudeCode, "", "dontAsk", "default"},
		{ClaudeCode, "plan", "dontAsk", "plan"},
		{ClaudeCode, "plan", "plan", "plan"},
		{ClaudeCode, "manual", "manual", "default"},
		{ClaudeCode, "dontAsk", "default", "dontAsk"},
		{Codex, "", "", "default"},
		{Codex, "", "bypassPermissions", "bypassPermissions"},
		{Codex, "", "acceptEdits", "default"},
		{Codex, "", "auto", "default"},
		{Codex, "", "plan", "default"},
	} {
		var def *Definition
		if tc.host == Codex {
			def = readDef(t, Codex, codexTOML("sandbox_mode = \"read-only\"\n"))
		} else {
			settings := "tools: Read\n"
			if tc.own != "" {
				settings += "permissionMode: " + tc.own + "\n"
			}
			def = readDef(t, ClaudeCode, md(settings))
		}
		call := Call{Host: tc.host, Type: "t", SessionMode: tc.session}
		got := Translate(call, def, "").Child["agent"].(map[string]any)["permission_mode"]
		if got != tc.want {
			t.Errorf("%s: permissionMode %q in session %q: %v, want %q", tc.host, tc.own, tc.session, got, tc.want)
		}
		if tc.own == "" {
			// Without a definition, the child's own mode is the default.
			none := Translate(call, nil, "p").Child["agent"].(map[string]any)["permission_mode"]
			if none != tc.want {
				t.Errorf("%s: no definition in session %q: %v, want %q", tc.host, tc.session, none, tc.want)
			}
		}
	}
}

func TestTranslateModel(t *testing.T) {
	for _, tc := range []struct {
		name      string
		host      Host
		model     string // the definition's model line; "" for none; "-" for no definition
		call, env string
		want      string // "" for no model in the child
		line      int    // LineOf("/model")
	}{
		{name: "an alias", host: ClaudeCode, model: "sonnet", want: "sonnet", line: 5},
		{name: "a full id", host: ClaudeCode, model: "claude-opus-4-1-20250805", want: "claude-opus-4-1-20250805", line: 5},
		{name: "inherit is unknown", host: ClaudeCode, model: "inherit", line: 5},
		{name: "absent is unknown", host: ClaudeCode},
		{name: "not a string is unknown", host: ClaudeCode, model: "5", line: 5},
		{name: "the call's model wins", host: ClaudeCode, model: "sonnet", call: "haiku", want: "haiku"},
		{name: "the call asks to inherit", host: ClaudeCode, model: "sonnet", call: "inherit"},
		{name: "the environment wins over the definition", host: ClaudeCode, model: "sonnet", env: "opus", want: "opus"},
		{name: "the environment wins over the call", host: ClaudeCode, model: "sonnet", call: "haiku", env: "opus", want: "opus"},
		{name: "the environment wins over inherit", host: ClaudeCode, model: "inherit", env: "opus", want: "opus"},
		{name: "Codex's model", host: Codex, model: "gpt-5.1-codex", want: "gpt-5.1-codex", line: 5},
		{name: "Codex, the call's model", host: Codex, model: "gpt-5.1-codex", call: "o4-mini", want: "o4-mini"},
		{name: "no definition, the call's model", host: ClaudeCode, model: "-", call: "haiku", want: "haiku"},
		{name: "no definition, the environment's", host: ClaudeCode, model: "-", call: "haiku", env: "opus", want: "opus"},
		{name: "no definition, no model", host: Codex, model: "-"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var def *Definition
			switch {
			case tc.model == "-":
			case tc.host == Codex:
				def = readDef(t, Codex, codexTOML("sandbox_mode = \"read-only\"\nmodel = \""+tc.model+"\"\n"))
			case tc.model == "":
				def = readDef(t, ClaudeCode, md("tools: Read\n"))
			default:
				def = readDef(t, ClaudeCode, md("tools: Read\nmodel: "+tc.model+"\n"))
			}
			tr := Translate(Call{Host: tc.host, Type: "t", Model: tc.call, EnvModel: tc.env}, def, "")
			got, set := tr.Child["model"]
			if tc.want == "" && set || tc.want != "" && got != tc.want {
				t.Errorf("model = %v (set %v), want %q", got, set, tc.want)
			}
			if tc.host == ClaudeCode {
				if line := tr.LineOf("/model"); line != tc.line {
					t.Errorf("LineOf(/model) = %d, want %d", line, tc.line)
				}
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

func TestLineOf(t *testing.T) {
	tr := Translation{Lines: map[string]int{"/tools": 4, "/tools/0": 5, "/tools/1": 0, "/agent/permission_mode": 7, "/model": 0}}
	for pointer, want := range map[string]int{
		"/tools/0":               5,
		"/tools/1":               4, // a line of 0 is not known: the one above it is taken
		"/tools/12":              4,
		"/tools":                 4,
		"/agent/permission_mode": 7,
		"/agent/sandbox_mode":    0,
		"/agent":                 0,
		"/model":                 0,
		"":                       0,
		"tools":                  0,
		"/tools/0/x/y":           5,
	} {
		if got := tr.LineOf(pointer); got != want {
			t.Errorf("LineOf(%q) = %d, want %d", pointer, got, want)
		}
	}
	if got := (Translation{}).LineOf("/tools/0"); got != 0 {
		t.Errorf("LineOf without lines = %d", got)
	}
}

// TestPlanBytes pins the plan document of a spawn: JSON, keys in order,
// indented, with nothing escaped for HTML, the same on every call.
func TestPlanBytes(t *testing.T) {
	def := readDef(t, Codex, codexTOML("sandbox_mode = \"read-only\"\nbudget_tokens = 900\n[mcp_servers.b]\ncommand = \"b\"\n[mcp_servers.a]\ncommand = \"a\"\n[mcp_servers.c]\ncommand = \"c\"\n"))
	call := Call{Host: Codex, Type: "reader", Cwd: "/w", Brief: "<a & b>", ID: "x", Budget: "5"}
	got := Translate(call, def, "").Plan()
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
		again := readDef(t, Codex, codexTOML("sandbox_mode = \"read-only\"\nbudget_tokens = 900\n[mcp_servers.b]\ncommand = \"b\"\n[mcp_servers.a]\ncommand = \"a\"\n[mcp_servers.c]\ncommand = \"c\"\n"))
		if b := Translate(call, again, "").Plan(); !bytes.Equal(b, got) {
			t.Fatalf("a second translation gives other bytes:\n%s", b)
		}
	}
}

// TestTranslateExamples translates a spawn of every example definition
// and has the gate's loader read each plan.
func TestTranslateExamples(t *testing.T) {
	loader, err := plan.NewLoader(plan.DefaultLimits)
	if err != nil {
		t.Fatal(err)
	}
	for _, host := range []Host{ClaudeCode, Codex} {
		dir := "../../examples/claude-code/" + Folder(host)
		if host == Codex {
			dir = "../../examples/codex/" + Folder(host)
		}
		c, err := Load(context.Background(), host, []string{dir}, plan.DefaultLimits)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range c.Definitions() {
			def, problem := c.Resolve(d.Name)
			tr := Translate(Call{Host: host, Type: d.Name, Cwd: "/w", Budget: "1000"}, def, problem)
			if (def == nil) != (d.Err != nil) {
				t.Errorf("%s: resolved to %v, %q", d.File, def, problem)
			}
			if _, err := loader.Plan(context.Background(), "spawn.json", tr.Plan()); err != nil {
				t.Errorf("%s: %v", d.File, err)
			}
		}
	}
}
