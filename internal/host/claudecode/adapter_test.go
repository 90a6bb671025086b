package claudecode

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spawngate/spawngate/internal/agent"
	"github.com/spawngate/spawngate/internal/document"
	"github.com/spawngate/spawngate/internal/host"
	"github.com/spawngate/spawngate/internal/host/hosttest"
)

func claudeAgent(name, tools string) string {
	s := "---\nname: " + name + "\ndescription: d\n"
	if tools != "" {
		s += "tools: " + tools + "\n"
	}
	return s + "model: sonnet\n---\nYou work.\n"
}

// callerCatalog writes the definitions the caller tests use and loads them.
func callerCatalog(t *testing.T) (string, *agent.Catalog) {
	t.Helper()
	dir := t.TempDir()
	hosttest.WriteTree(t, dir, map[string]string{
		"cc/lead.md":      claudeAgent("lead", "Read, Grep, Agent"),
		"cc/reader.md":    claudeAgent("reader", "Read, Grep"),
		"cc/open-lead.md": claudeAgent("open-lead", ""),
		"cc/star-lead.md": claudeAgent("star-lead", "'*'"),
		"cc/trimmed.md":   "---\nname: trimmed\ndescription: d\ntools: Read, Bash, Grep\ndisallowedTools: Bash\nbudget_tokens: 5000\n---\n",
		"cc/keeper.md":    "---\nname: keeper\ndescription: d\ntools: Read\nmemory: project\n---\n",
	})
	c, err := load(context.Background(), dirsEnv(filepath.Join(dir, "cc")), session{})
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Join(dir, "cc"), c
}

// The caller's own definition, translated like a child's, is the parent
// block: its tools unless it inherits them, its budget when the definition
// states one, depth 1, and the child's paths.
func TestCallerParent(t *testing.T) {
	_, c := callerCatalog(t)
	for _, tc := range []struct {
		name    string
		typ     string
		want    string
		problem string
	}{
		{"tools", "lead", `{"depth":1,"paths":["/w"],"role":"lead","tools":["Read","Grep","Agent"]}`, ""},
		{"matched as the host matches", "Lead", `{"depth":1,"paths":["/w"],"role":"lead","tools":["Read","Grep","Agent"]}`, ""},
		{"disallowed removed, budget kept", "trimmed", `{"budget_tokens":5000,"depth":1,"paths":["/w"],"role":"trimmed","tools":["Read","Grep"]}`, ""},
		{"what its memory adds", "keeper", `{"depth":1,"paths":["/w"],"role":"keeper","tools":["Read","Write","Edit"]}`, ""},
		{"inherits", "open-lead", `{"depth":1,"paths":["/w"],"role":"open-lead"}`, ""},
		{"inherits with *", "star-lead", `{"depth":1,"paths":["/w"],"role":"star-lead"}`, ""},
		{"unknown", "ghost", `{"depth":1,"paths":["/w"],"role":"ghost"}`, `the caller's own definition cannot be found (agent_id "a1"): agent type "ghost" is not defined in any agents folder`},
		{"built in", "general-purpose", `{"depth":1,"paths":["/w"],"role":"general-purpose"}`, `the caller's own definition cannot be found (agent_id "a1"): agent type "general-purpose" is built in`},
		{"no type", "", `{"depth":1,"paths":["/w"]}`, `the caller (agent_id "a1") is a sub-agent, and the payload does not name its agent_type`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			parent, problem := callerParent(call{Call: agent.Call{Host: Name, Paths: []string{"/w"}, Caller: "a1"}}, tc.typ, c)
			if got := hosttest.Canonical(t, parent); got != tc.want {
				t.Errorf("parent %s\nwant   %s", got, tc.want)
			}
			if (problem == "") != (tc.problem == "") || !strings.Contains(problem, tc.problem) {
				t.Errorf("problem %q, want it to hold %q", problem, tc.problem)
			}
		})
	}
	parent, _ := callerParent(call{Call: agent.Call{Host: Name, Paths: []string{"/p", "/p/sub"}, Caller: "a1"}}, "lead", c)
	if got := hosttest.Canonical(t, parent["paths"]); got != `["/p","/p/sub"]` {
		t.Errorf("paths %s", got)
	}
}

func agentPayload(cwd string, input map[string]any, extra map[string]any) map[string]any {
	p := map[string]any{"session_id": "s1", "cwd": cwd, "tool_name": "Agent", "tool_use_id": "toolu_1", "tool_input": input}
	for k, v := range extra {
		p[k] = v
	}
	return p
}

// TestSpawn reads Claude Code's Agent payload: the prompt is the brief,
// a call that names no type asks for the default one, and the session's
// start folder and the shell's current one are both the child's paths.
func TestSpawn(t *testing.T) {
	dir, _ := callerCatalog(t)
	env := dirsEnv(dir)
	env.Budget = "900"
	ctx := context.Background()
	sp, err := Adapter{}.Spawn(ctx, agentPayload("/w", map[string]any{"subagent_type": "reader", "prompt": "Find it."}, nil), env)
	if err != nil || sp == nil {
		t.Fatalf("Spawn: %v %v", sp, err)
	}
	if sp.Brief != "Find it." || sp.Session != "s1" || sp.Parent != nil || len(sp.Children) != 1 {
		t.Fatalf("spawn %+v", sp)
	}
	want := `{"agent":{"definition":"` + filepath.Join(dir, "reader.md") + `","host":"claude-code","inherits_tools":false,"permission_mode":"default","type":"reader"},"brief":"Find it.","budget_tokens":900,"id":"toolu_1","model":"sonnet","paths":["/w"],"role":"reader","tools":["Read","Grep"]}`
	if got := hosttest.Canonical(t, sp.Children[0].Child); got != want {
		t.Errorf("child %s\nwant  %s", got, want)
	}

	// The default type when the call names none.
	sp, err = Adapter{}.Spawn(ctx, agentPayload("/w", map[string]any{"prompt": "p"}, nil), env)
	if err != nil {
		t.Fatal(err)
	}
	facts := sp.Children[0].Child["agent"].(map[string]any)
	if facts["type"] != DefaultType || sp.Children[0].Child["role"] != DefaultType || !strings.Contains(facts["problem"].(string), "is built in") {
		t.Errorf("no type: %v", sp.Children[0].Child)
	}

	// The shell has moved from the start folder: the child may work in
	// either; a cwd in the call is judged too.
	env.Getenv = func(k string) string { return map[string]string{"CLAUDE_PROJECT_DIR": "/w"}[k] }
	sp, err = Adapter{}.Spawn(ctx, agentPayload("/w/sub", map[string]any{"subagent_type": "reader", "cwd": "/elsewhere"}, nil), env)
	if err != nil {
		t.Fatal(err)
	}
	if got := hosttest.Canonical(t, sp.Children[0].Child["paths"]); got != `["/w","/w/sub","/elsewhere"]` {
		t.Errorf("paths %s", got)
	}

	// CLAUDE_CODE_SUBAGENT_MODEL is the model when neither the call nor
	// the definition names one; with CLAUDE_CODE_SUBAGENT_MODEL_FORCE it
	// wins over both.
	vars := map[string]string{"CLAUDE_CODE_SUBAGENT_MODEL": "opus"}
	env.Getenv = func(k string) string { return vars[k] }
	sp, err = Adapter{}.Spawn(ctx, agentPayload("/w", map[string]any{"subagent_type": "reader", "model": "haiku"}, nil), env)
	if err != nil || sp.Children[0].Child["model"] != "haiku" {
		t.Errorf("the call's model over the environment's: %v, %v", sp, err)
	}
	vars["CLAUDE_CODE_SUBAGENT_MODEL_FORCE"] = "1"
	sp, err = Adapter{}.Spawn(ctx, agentPayload("/w", map[string]any{"subagent_type": "reader", "model": "haiku"}, nil), env)
	if err != nil || sp.Children[0].Child["model"] != "opus" {
		t.Errorf("forced model: %v, %v", sp, err)
	}

	// A caller that is a sub-agent: its definition is the parent block; one
	// that cannot be found refuses the child.
	sp, err = Adapter{}.Spawn(ctx, agentPayload("/w", map[string]any{"subagent_type": "reader"}, map[string]any{"agent_id": "a1", "agent_type": "lead"}), dirsEnv(dir))
	if err != nil || hosttest.Canonical(t, sp.Parent) != `{"depth":1,"paths":["/w"],"role":"lead","tools":["Read","Grep","Agent"]}` {
		t.Fatalf("nested: %+v, %v", sp, err)
	}
	sp, err = Adapter{}.Spawn(ctx, agentPayload("/w", map[string]any{"subagent_type": "reader"}, map[string]any{"agent_id": "a1", "agent_type": "ghost"}), dirsEnv(dir))
	if err != nil {
		t.Fatal(err)
	}
	facts = sp.Children[0].Child["agent"].(map[string]any)
	if facts["definition"] != nil || !strings.HasPrefix(facts["problem"].(string), `the caller's own definition cannot be found (agent_id "a1")`) {
		t.Errorf("unknown caller: %v", facts)
	}

	// A call that starts no sub-agent is none of the gate's business.
	for _, tool := range []string{"Bash", "Read"} {
		p := agentPayload("/w", map[string]any{}, map[string]any{"tool_name": tool})
		if sp, err := (Adapter{}).Spawn(ctx, p, dirsEnv(dir)); sp != nil || err != nil {
			t.Errorf("%s: %v, %v", tool, sp, err)
		}
	}
	// Task, the Agent tool's old name, is a spawn too.
	p := agentPayload("/w", map[string]any{"subagent_type": "reader"}, map[string]any{"tool_name": "Task"})
	if sp, err := (Adapter{}).Spawn(ctx, p, dirsEnv(dir)); sp == nil || err != nil {
		t.Errorf("Task: %v, %v", sp, err)
	}
}

// TestSpawnBadPayload: a field the payload holds with the wrong type is an
// error naming it, never a value taken for absent.
func TestSpawnBadPayload(t *testing.T) {
	dir, _ := callerCatalog(t)
	for _, tc := range []struct {
		name    string
		payload map[string]any
		pointer string
	}{
		{"no tool_name", map[string]any{"cwd": "/w"}, "/tool_name"},
		{"no tool_input", map[string]any{"cwd": "/w", "tool_name": "Agent"}, "/tool_input"},
		{"a relative cwd", agentPayload("w", map[string]any{}, nil), "/cwd"},
		{"no cwd", agentPayload("", map[string]any{}, nil), "/cwd"},
		{"a prompt that is not a string", agentPayload("/w", map[string]any{"prompt": 3.0}, nil), "/tool_input/prompt"},
		{"a type that is not a string", agentPayload("/w", map[string]any{"subagent_type": []any{}}, nil), "/tool_input/subagent_type"},
		{"an agent_id that is not a string", agentPayload("/w", map[string]any{}, map[string]any{"agent_id": 1.0}), "/agent_id"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Adapter{}.Spawn(context.Background(), tc.payload, dirsEnv(dir))
			var pe *document.Error
			if !errors.As(err, &pe) || pe.Pointer != tc.pointer || pe.Source != host.PayloadSource {
				t.Errorf("Spawn error %v, want one at %s", err, tc.pointer)
			}
		})
	}
}

// TestReadSession: without the environment Claude Code gives its command
// hooks, the hook cannot know which definitions the session runs, and
// says so; with folders given it needs neither.
func TestReadSession(t *testing.T) {
	env := func(vars map[string]string) host.Env {
		return host.Env{
			Getenv:      func(k string) string { return vars[k] },
			CommandLine: func(int) ([]string, error) { return []string{"claude"}, nil },
		}
	}
	for _, tc := range []struct {
		name string
		vars map[string]string
		msg  string
	}{
		{"no CLAUDE_PROJECT_DIR", map[string]string{"CLAUDE_PID": "1"},
			"CLAUDE_PROJECT_DIR is not set, so the folder the session started in (where Claude Code finds its agents) is not known: run spawngate hook claude-code as Claude Code's command hook, which sets it"},
		{"no CLAUDE_PID", map[string]string{"CLAUDE_PROJECT_DIR": "/p"},
			"CLAUDE_PID is not set, so the command line Claude Code was started with (where --agents and --add-dir add definitions) cannot be read: run spawngate hook claude-code as Claude Code's command hook, which sets it"},
		{"neither", nil,
			"CLAUDE_PROJECT_DIR is not set, so the folder the session started in (where Claude Code finds its agents) is not known: run spawngate hook claude-code as Claude Code's command hook, which sets it"},
		{"a relative CLAUDE_PROJECT_DIR", map[string]string{"CLAUDE_PROJECT_DIR": "p", "CLAUDE_PID": "1"},
			`CLAUDE_PROJECT_DIR "p" is not an absolute path`},
		{"a CLAUDE_PID that is no pid", map[string]string{"CLAUDE_PROJECT_DIR": "/p", "CLAUDE_PID": "-3"},
			`CLAUDE_PID "-3" is not a process id`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := readSession(env(tc.vars), "/cwd", false)
			var pe *document.Error
			if !errors.As(err, &pe) || pe.Source != "hook environment" || pe.Msg != tc.msg {
				t.Fatalf("readSession error %v\nwant hook environment: %s", err, tc.msg)
			}
			// The adapter says the same, and judges nothing.
			sp, err := Adapter{}.Spawn(context.Background(), agentPayload("/cwd", map[string]any{"subagent_type": "r"}, nil), env(tc.vars))
			if sp != nil || !errors.As(err, &pe) || pe.Msg != tc.msg {
				t.Fatalf("Spawn = %v, %v", sp, err)
			}
		})
	}
	// A command line that cannot be read is an error too.
	e := env(map[string]string{"CLAUDE_PROJECT_DIR": "/p", "CLAUDE_PID": "12"})
	e.CommandLine = func(int) ([]string, error) { return nil, errors.New("gone") }
	if _, err := readSession(e, "/cwd", false); err == nil || !strings.Contains(err.Error(), "the command line of Claude Code (CLAUDE_PID 12) cannot be read: gone") {
		t.Errorf("an unreadable command line: %v", err)
	}
	// With folders given, neither is needed, and the start folder is cwd.
	s, err := readSession(host.Env{}, "/cwd", true)
	if err != nil || s.project != "/cwd" || s.read {
		t.Errorf("folders given: %+v, %v", s, err)
	}
	// Both set: the command line is read.
	s, err = readSession(env(map[string]string{"CLAUDE_PROJECT_DIR": "/p", "CLAUDE_PID": "1"}), "/cwd", false)
	if err != nil || s.project != "/p" || !s.read {
		t.Errorf("both set: %+v, %v", s, err)
	}
}

func TestParseCommandLine(t *testing.T) {
	var s session
	err := s.parse([]string{"claude", "--add-dir", "a", "b", "--agents", "{}", "--setting-sources=user, project", "--add-dir=c", "--", "--agents", "x"})
	if err != nil {
		t.Fatal(err)
	}
	if hosttest.Canonical(t, s.addDirs) != `["a","b","c"]` || len(s.agents) != 1 || hosttest.Canonical(t, s.sources) != `["user","project"]` {
		t.Errorf("parsed %+v", s)
	}
	if !s.loads("user") || s.loads("local") {
		t.Errorf("loads: %v %v", s.loads("user"), s.loads("local"))
	}
	if err := (&session{}).parse([]string{"claude", "--setting-sources"}); err == nil {
		t.Error("--setting-sources without a value")
	}
	if !(&session{}).loads("project") {
		t.Error("without --setting-sources every source loads")
	}
	err = (&session{}).parse([]string{"claude", "-p", "x", "--project-config-root", "/elsewhere"})
	if err == nil || !strings.Contains(err.Error(), "--project-config-root") {
		t.Errorf("--project-config-root: %v", err)
	}
}

// TestLastAgentsFlag: given twice, --agents is read as the client reads
// it: the last one alone, not the two merged.
func TestLastAgentsFlag(t *testing.T) {
	s := session{agents: []agentsFlag{{`{"x": {"description": "d", "prompt": "p", "tools": ["Read"]}, "y": {"description": "d", "prompt": "p"}}`}, {`{"y": {"description": "d", "prompt": "p", "tools": ["Bash"]}}`}}}
	f, err := commandLineAgents(s)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Defs) != 1 || f.Defs[0].Name != "y" || hosttest.Canonical(t, f.Defs[0].Fields["tools"]) != `["Bash"]` {
		t.Errorf("defs %+v", f.Defs)
	}
}
