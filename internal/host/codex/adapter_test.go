package codex

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spawngate/spawngate/internal/agent"
	"github.com/spawngate/spawngate/internal/document"
	"github.com/spawngate/spawngate/internal/host/hosttest"
)

func codexAgent(name, sandbox string, mcp ...string) string {
	s := fmt.Sprintf("name = %q\ndescription = \"d\"\ndeveloper_instructions = \"w\"\nmodel = \"gpt-5.1-codex\"\n", name)
	if sandbox != "" {
		s += fmt.Sprintf("sandbox_mode = %q\n", sandbox)
	}
	for _, m := range mcp {
		s += fmt.Sprintf("\n[mcp_servers.%s]\ncommand = \"x\"\n", m)
	}
	return s
}

// callerCatalog writes the definitions the caller tests use and loads them.
func callerCatalog(t *testing.T) (string, *agent.Catalog) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "cx")
	hosttest.WriteTree(t, dir, map[string]string{
		"lead.toml":    codexAgent("lead", "workspace-write", "github"),
		"root.toml":    codexAgent("root", "danger-full-access"),
		"ro.toml":      codexAgent("ro", "read-only"),
		"inherit.toml": codexAgent("inherit", ""),
		"mcponly.toml": codexAgent("mcponly", "", "slack"),
		"badmode.toml": codexAgent("badmode", "everything"),
		"github.toml":  codexAgent("github", "read-only", "github"),
	})
	c, err := load(context.Background(), testEnv, []string{dir})
	if err != nil {
		t.Fatal(err)
	}
	return dir, c
}

// The caller's own definition, translated like a child's, is the parent
// block: its sandbox and servers as tools when it sets a sandbox, its
// budget when the definition states one, depth 1.
func TestCallerParent(t *testing.T) {
	_, c := callerCatalog(t)
	for _, tc := range []struct {
		name    string
		typ     string
		want    string
		problem string
	}{
		{"codex sandbox and servers", "lead", `{"depth":1,"paths":["/w"],"role":"lead","tools":["sandbox:workspace-write","mcp__github"]}`, ""},
		{"codex full access", "root", `{"depth":1,"paths":["/w"],"role":"root","tools":["sandbox:danger-full-access"]}`, ""},
		{"codex read-only", "ro", `{"depth":1,"paths":["/w"],"role":"ro","tools":["sandbox:read-only"]}`, ""},
		{"codex inherits the sandbox", "inherit", `{"depth":1,"paths":["/w"],"role":"inherit"}`, ""},
		{"codex mcp without sandbox", "mcponly", `{"depth":1,"paths":["/w"],"role":"mcponly"}`, ""},
		{"codex unknown sandbox bounds to nothing", "badmode", `{"depth":1,"paths":["/w"],"role":"badmode","tools":[]}`, ""},
		{"codex names exactly", "Lead", `{"depth":1,"paths":["/w"],"role":"Lead"}`, `agent type "Lead" is not defined`},
		{"built in", "worker", `{"depth":1,"paths":["/w"],"role":"worker"}`, `the caller's own definition cannot be found (agent_id "a1"): agent type "worker" is built in`},
		{"no type", "", `{"depth":1,"paths":["/w"]}`, `the caller (agent_id "a1") is a sub-agent, and the payload does not name its agent_type`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			parent, problem := callerParent(call{Call: agent.Call{Host: Name, Paths: []string{"/w"}, Caller: "a1"}}, tc.typ, c, nil)
			if got := hosttest.Canonical(t, parent); got != tc.want {
				t.Errorf("parent %s\nwant   %s", got, tc.want)
			}
			if (problem == "") != (tc.problem == "") || !strings.Contains(problem, tc.problem) {
				t.Errorf("problem %q, want it to hold %q", problem, tc.problem)
			}
		})
	}
}

func codexPayload(input string) map[string]any {
	var p map[string]any
	dec := json.NewDecoder(strings.NewReader(`{"session_id": "s", "cwd": "/w", "hook_event_name": "PreToolUse", "tool_name": "spawn_agent", "tool_use_id": "call_1", "tool_input": ` + input + `}`))
	dec.UseNumber()
	if err := dec.Decode(&p); err != nil {
		panic(err)
	}
	return p
}

// A Codex brief is the message, else the items' text; what carries
// ciphertext, or items without any text, is an unreadable brief, with the
// reason, and no brief.
func TestCodexBrief(t *testing.T) {
	dir, _ := callerCatalog(t)
	env := sessionEnv(t, dir, "read-only", "on-request")
	for _, tc := range []struct {
		name, input, brief, unreadable string
	}{
		{"message", `{"message": "Read it."}`, "Read it.", ""},
		{"items", `{"items": [{"type": "text", "text": "One."}, {"type": "local_image", "path": "/x.png"}, {"type": "text", "text": "Two."}]}`, "One.\n\nTwo.", ""},
		{"message wins over items", `{"message": "M.", "items": [{"type": "text", "text": "I."}]}`, "M.", ""},
		{"nothing", `{}`, "", ""},
		{"empty items", `{"items": []}`, "", ""},
		{"image only", `{"items": [{"type": "local_image", "path": "/x.png"}]}`, "", "the Codex message's items carry no plain text"},
		{"empty text only", `{"items": [{"type": "text", "text": ""}]}`, "", "the Codex message's items carry no plain text"},
		{"items not a list", `{"items": "Do it."}`, "", "the Codex message's items are not a list"},
		{"encrypted item", `{"items": [{"type": "text", "text": "Visible."}, {"type": "message", "encrypted_content": "gAAAA"}]}`, "", "the Codex message is encrypted"},
		{"encrypted message object", `{"message": {"encrypted_content": "gAAAA"}}`, "", "the Codex message is encrypted"},
		{"encrypted beside a message", `{"message": "Visible.", "encrypted_content": "gAAAA"}`, "", "the Codex message is encrypted"},
		{"deep", `{"items": [{"type": "x", "content": [{"parts": [{"encrypted_content": null}]}]}]}`, "", "the Codex message is encrypted"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sp, err := Adapter{}.Spawn(context.Background(), codexPayload(tc.input), env)
			if err != nil || sp == nil || len(sp.Children) != 1 {
				t.Fatalf("Spawn: %+v %v", sp, err)
			}
			child := sp.Children[0].Child
			brief, _ := child["brief"].(string)
			unreadable, _ := child["brief_unreadable"].(string)
			if sp.Brief != tc.brief || brief != tc.brief || unreadable != tc.unreadable {
				t.Fatalf("brief %q (child %q) unreadable %q, want %q %q", sp.Brief, brief, unreadable, tc.brief, tc.unreadable)
			}
			if _, set := child["brief_unreadable"]; set != (tc.unreadable != "") {
				t.Fatalf("brief_unreadable set %v", set)
			}
		})
	}
	// A message that is neither text nor ciphertext cannot be judged.
	var pe *document.Error
	if _, err := (Adapter{}).Spawn(context.Background(), codexPayload(`{"message": 3}`), env); !errors.As(err, &pe) || pe.Pointer != "/tool_input/message" {
		t.Fatalf("a number message: %v", err)
	}
}

// TestSpawn reads the rest of a Codex payload: a call that names no type
// asks for the default one; the session, the id and the caller are read;
// a tool that starts no sub-agent is none of the gate's business.
func TestSpawn(t *testing.T) {
	dir, _ := callerCatalog(t)
	env := sessionEnv(t, dir, "workspace-write", "on-request")
	env.Budget = "700"
	ctx := context.Background()
	sp, err := Adapter{}.Spawn(ctx, codexPayload(`{"message": "m"}`), env)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"agent":{"definition":null,"host":"codex","permission_mode":"default","problem":"agent type \"default\" is built in and no agents folder defines it, so it would inherit every tool: define default in an agents folder with the tools it may use","type":"default"},"brief":"m","budget_tokens":700,"id":"call_1","model":"main-model","paths":["/w"],"role":"default"}`
	if got := hosttest.Canonical(t, sp.Children[0].Child); got != want || sp.Session != "s" || sp.Parent != nil {
		t.Errorf("no type: %s\nwant     %s", got, want)
	}
	sp, err = Adapter{}.Spawn(ctx, codexPayload(`{"agent_type": "ro", "model": "o3"}`), env)
	// The definition's model wins over the call's.
	if err != nil || sp.Children[0].Child["role"] != "ro" || sp.Children[0].Child["model"] != "gpt-5.1-codex" {
		t.Fatalf("typed: %+v, %v", sp, err)
	}
	// A nested spawn: the caller's definition is the parent block; one
	// that cannot be found refuses the child.
	p := codexPayload(`{"agent_type": "ro"}`)
	p["agent_id"], p["agent_type"] = "a1", "lead"
	sp, err = Adapter{}.Spawn(ctx, p, env)
	if err != nil || hosttest.Canonical(t, sp.Parent) != `{"depth":1,"paths":["/w"],"role":"lead","tools":["sandbox:workspace-write","mcp__github"]}` {
		t.Fatalf("nested: %+v, %v", sp, err)
	}
	p["agent_type"] = "ghost"
	sp, err = Adapter{}.Spawn(ctx, p, env)
	if err != nil {
		t.Fatal(err)
	}
	facts := sp.Children[0].Child["agent"].(map[string]any)
	if facts["definition"] != nil || !strings.HasPrefix(facts["problem"].(string), `the caller's own definition cannot be found (agent_id "a1")`) {
		t.Errorf("unknown caller: %v", facts)
	}
	// v2's name (namespace and name run together), the dotted form, the
	// matcher alias, and spawn_agent in a namespace not seen yet.
	for _, tool := range []string{"collaborationspawn_agent", "collaboration.spawn_agent", "Agent", "multi_agent_v1spawn_agent"} {
		p := codexPayload(`{"agent_type": "ro"}`)
		p["tool_name"] = tool
		if sp, err := (Adapter{}).Spawn(ctx, p, env); sp == nil || err != nil {
			t.Errorf("%s: %v, %v", tool, sp, err)
		}
	}
	// resume_agent starts a closed agent under this turn's sandbox, from a
	// definition the payload does not name: refused.
	for _, tool := range []string{"resume_agent", "multi_agent_v1resume_agent"} {
		p := codexPayload(`{"id": "019a"}`)
		p["tool_name"] = tool
		sp, err := Adapter{}.Spawn(ctx, p, env)
		if err != nil || sp == nil || !strings.Contains(hosttest.Canonical(t, sp.Children[0].Child), `resume_agent starts the closed agent \"019a\" again`) {
			t.Errorf("%s: %+v, %v", tool, sp, err)
		}
	}
	for _, tool := range []string{"shell", "spawn_agents", "collaborationfollowup_task", "send_input"} {
		p := codexPayload(`{}`)
		p["tool_name"] = tool
		if sp, err := (Adapter{}).Spawn(ctx, p, env); sp != nil || err != nil {
			t.Errorf("%s: %v, %v", tool, sp, err)
		}
	}
	p = codexPayload(`{}`)
	p["cwd"] = "w"
	if _, err := (Adapter{}).Spawn(ctx, p, env); err == nil || !strings.Contains(err.Error(), "/cwd") {
		t.Errorf("a relative cwd: %v", err)
	}
}

// TestCommandLineOverrides: what Codex's command line overrides of the
// configuration the hook reads (agent roles, MCP servers, trusted
// projects, a profile that can set them all, the user's layer dropped)
// makes the spawn not judged; what it does not read, or reads, passes.
func TestCommandLineOverrides(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"exec", "-c", `agents.reader={description="r",config_file="/tmp/w.toml"}`, "go"}, "-c agents.reader="},
		{[]string{"exec", "-c", `agents.default_subagent_model="o3"`}, "overrides agents"},
		{[]string{"-c", `mcp_servers.x.command="x"`, "exec", "go"}, "overrides mcp_servers"},
		{[]string{"exec", `--config=projects={"/r"={trust_level="trusted"}}`}, "overrides projects"},
		{[]string{"exec", `-cagents.x.config_file="/a.toml"`}, "overrides agents"},
		{[]string{"--profile", "wide", "exec", "go"}, "--profile wide"},
		{[]string{"exec", "-pwide", "go"}, "--profile wide"},
		{[]string{"exec", "--ignore-user-config", "go"}, "--ignore-user-config"},
		{[]string{"exec", "-c", `sandbox_mode="read-only"`, "-m", "o3", "-s", "read-only", "go"}, ""},
		{[]string{"exec", "-c", "model_provider=local", "--enable", "multi_agent_v2", "go"}, ""},
		// The words after -- are the prompt's.
		{[]string{"exec", "--", "-c", "agents.x={}"}, ""},
		// A value is not an option: -m takes -p as its model.
		{[]string{"exec", "-m", "-p", "go"}, ""},
	} {
		got := overrides(append([]string{"/usr/bin/codex"}, tc.args...))
		if tc.want == "" && got != "" || tc.want != "" && !strings.Contains(got, tc.want) {
			t.Errorf("%q: %q, want %q", tc.args, got, tc.want)
		}
	}
	// Through the adapter, with the configuration read as Codex reads it.
	dir, _ := callerCatalog(t)
	env := sessionEnv(t, dir, "read-only", "never")
	env.AgentsDirs, env.Home = nil, t.TempDir()
	env.CommandLine = func(int) ([]string, error) {
		return []string{"codex", "exec", "-c", `agents.ro={description="r",config_file="/tmp/w.toml"}`, "go"}, nil
	}
	if _, err := (Adapter{}).Spawn(context.Background(), codexPayload(`{"agent_type": "ro"}`), env); err == nil || !strings.Contains(err.Error(), "start Codex without it") {
		t.Fatalf("a role given with -c was judged: %v", err)
	}
}
