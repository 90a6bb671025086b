package hook

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/spawngate/spawngate/internal/agent"
	"github.com/spawngate/spawngate/internal/judge"
	"github.com/spawngate/spawngate/internal/ledger"
	"github.com/spawngate/spawngate/internal/plan"
)

// write writes files under root, making folders.
func write(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		path := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func claudeAgent(name, tools string) string {
	s := "---\nname: " + name + "\ndescription: d\n"
	if tools != "" {
		s += "tools: " + tools + "\n"
	}
	return s + "model: sonnet\n---\nYou work.\n"
}

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

// catalogs writes definitions for both hosts and loads them.
func catalogs(t *testing.T) (dir string, cc, cx *agent.Catalog) {
	dir = t.TempDir()
	write(t, dir, map[string]string{
		"cc/lead.md":      claudeAgent("lead", "Read, Grep, Agent"),
		"cc/reader.md":    claudeAgent("reader", "Read, Grep"),
		"cc/shell.md":     claudeAgent("shell", "Read, Bash"),
		"cc/open-lead.md": claudeAgent("open-lead", ""),
		"cc/trimmed.md":   "---\nname: trimmed\ndescription: d\ntools: Read, Bash, Grep\ndisallowedTools: Bash\nbudget_tokens: 5000\n---\n",
		"cx/lead.toml":    codexAgent("lead", "workspace-write", "github"),
		"cx/root.toml":    codexAgent("root", "danger-full-access"),
		"cx/ro.toml":      codexAgent("ro", "read-only"),
		"cx/inherit.toml": codexAgent("inherit", ""),
		"cx/mcponly.toml": codexAgent("mcponly", "", "slack"),
		"cx/badmode.toml": codexAgent("badmode", "everything"),
		"cx/github.toml":  codexAgent("github", "read-only", "github"),
	})
	var err error
	lim := plan.DefaultLimits
	if cc, err = agent.Load(context.Background(), agent.ClaudeCode, []string{filepath.Join(dir, "cc")}, lim); err != nil {
		t.Fatal(err)
	}
	if cx, err = agent.Load(context.Background(), agent.Codex, []string{filepath.Join(dir, "cx")}, lim); err != nil {
		t.Fatal(err)
	}
	return dir, cc, cx
}

func asJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// The caller's own definition, translated like a child's, is the parent
// block: its tools unless it inherits them (or, for Codex, its sandbox),
// its budget when the definition states one, depth 1.
func TestCallerParent(t *testing.T) {
	_, cc, cx := catalogs(t)
	for _, tc := range []struct {
		name    string
		host    agent.Host
		typ     string
		want    string
		problem string
	}{
		{"tools", agent.ClaudeCode, "lead", `{"depth":1,"paths":["/w"],"role":"lead","tools":["Read","Grep","Agent"]}`, ""},
		{"matched as the host matches", agent.ClaudeCode, "Lead", `{"depth":1,"paths":["/w"],"role":"lead","tools":["Read","Grep","Agent"]}`, ""},
		{"disallowed removed, budget kept", agent.ClaudeCode, "trimmed", `{"budget_tokens":5000,"depth":1,"paths":["/w"],"role":"trimmed","tools":["Read","Grep"]}`, ""},
		{"inherits", agent.ClaudeCode, "open-lead", `{"depth":1,"paths":["/w"],"role":"open-lead"}`, ""},
		{"unknown", agent.ClaudeCode, "ghost", `{"depth":1,"paths":["/w"],"role":"ghost"}`, `the caller's own definition cannot be found (agent_id "a1"): agent type "ghost" is not defined in any agents folder`},
		{"built in", agent.ClaudeCode, "general-purpose", `{"depth":1,"paths":["/w"],"role":"general-purpose"}`, `the caller's own definition cannot be found (agent_id "a1"): agent type "general-purpose" is built in`},
		{"no type", agent.ClaudeCode, "", `{"depth":1,"paths":["/w"]}`, `the caller (agent_id "a1") is a sub-agent, and the payload does not name its agent_type`},
		{"codex sandbox and servers", agent.Codex, "lead", `{"depth":1,"paths":["/w"],"role":"lead","tools":["sandbox:workspace-write","mcp__github"]}`, ""},
		{"codex full access", agent.Codex, "root", `{"depth":1,"paths":["/w"],"role":"root","tools":["sandbox:danger-full-access"]}`, ""},
		{"codex read-only", agent.Codex, "ro", `{"depth":1,"paths":["/w"],"role":"ro","tools":["sandbox:read-only"]}`, ""},
		{"codex inherits the sandbox", agent.Codex, "inherit", `{"depth":1,"paths":["/w"],"role":"inherit"}`, ""},
		{"codex mcp without sandbox", agent.Codex, "mcponly", `{"depth":1,"paths":["/w"],"role":"mcponly"}`, ""},
		{"codex unknown sandbox bounds to nothing", agent.Codex, "badmode", `{"depth":1,"paths":["/w"],"role":"badmode","tools":[]}`, ""},
		{"codex names exactly", agent.Codex, "Lead", `{"depth":1,"paths":["/w"],"role":"Lead"}`, `agent type "Lead" is not defined`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := cc
			if tc.host == agent.Codex {
				c = cx
			}
			parent, problem := callerParent(agent.Call{Host: tc.host, Cwd: "/w", Caller: "a1"}, tc.typ, c)
			if got := asJSON(t, parent); got != tc.want {
				t.Errorf("parent %s\nwant   %s", got, tc.want)
			}
			if (problem == "") != (tc.problem == "") || !strings.Contains(problem, tc.problem) {
				t.Errorf("problem %q, want it to hold %q", problem, tc.problem)
			}
		})
	}
}

func newGate(t *testing.T, policy string) *judge.Gate {
	t.Helper()
	g, err := judge.NewWithPolicy(context.Background(), judge.DefaultOptions(), "policy.yaml", []byte(policy))
	if err != nil {
		t.Fatal(err)
	}
	return g
}

const ccPolicy = "allowed_tools: [Read, Grep, Bash, Agent]\nallow_write: true\nallow_spawn: true\nworkspace_root: /w\nbudget_cap_tokens: 1000\nallowed_models: [sonnet]\n"

func ccPayload(session, typ, callerID, callerType, prompt string) []byte {
	p := map[string]any{"session_id": session, "cwd": "/w", "hook_event_name": "PreToolUse", "tool_name": "Agent",
		"tool_use_id": "toolu_1", "tool_input": map[string]any{"prompt": prompt, "subagent_type": typ}}
	if callerID != "" {
		p["agent_id"] = callerID
	}
	if callerType != "" {
		p["agent_type"] = callerType
	}
	b, _ := json.Marshal(p)
	return b
}

// rules lists "rule field" for each violation a decision names.
func rules(d Decision) []string {
	var out []string
	for _, c := range d.Result.Children {
		for _, v := range c.Violations {
			out = append(out, v.Rule+" "+strings.TrimPrefix(v.Path, "/plan/0"))
		}
	}
	return out
}

// A nested spawn is judged against its caller: within it passes, wider is
// refused at the tool, and a caller whose definition cannot be found is
// refused, never passed.
func TestDecideNested(t *testing.T) {
	dir, _, _ := catalogs(t)
	g := newGate(t, ccPolicy)
	cfg := Config{Host: agent.ClaudeCode, AgentsDirs: []string{filepath.Join(dir, "cc")}, StateDir: filepath.Join(dir, "state")}
	for _, tc := range []struct {
		name, typ, callerID, callerType string
		kind                            Kind
		rules                           []string
	}{
		{"within", "reader", "a1", "lead", Pass, nil},
		{"widens", "shell", "a1", "lead", Deny, []string{"tree.tools /tools/1"}},
		{"top level", "shell", "", "", Pass, nil},
		{"agent_type alone is not a caller", "shell", "", "lead", Pass, nil},
		{"caller inherits", "shell", "a1", "open-lead", Pass, nil},
		{"unknown caller", "reader", "a1", "ghost", Deny, []string{"agent.definition "}},
		{"untyped caller", "reader", "a1", "", Deny, []string{"agent.definition "}},
		{"unknown caller and child", "nobody", "a1", "ghost", Deny, []string{"agent.definition ", "model.allowlist /model"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := Decide(context.Background(), g, cfg, ccPayload("s", tc.typ, tc.callerID, tc.callerType, "Do it."))
			if d.Kind != tc.kind || !slices.Equal(rules(d), tc.rules) {
				t.Fatalf("decided %v %q (err %v), want %v %q\n%s", d.Kind, rules(d), d.Err, tc.kind, tc.rules, d.Plan)
			}
			if tc.name == "unknown caller and child" && !strings.Contains(d.Reason, "; and agent type \"nobody\" is not defined") {
				t.Fatalf("the child's own problem is lost: %s", d.Reason)
			}
		})
	}
	if _, err := os.Stat(cfg.StateDir); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("without brief_retask the state directory was touched: %v", err)
	}
}

func codexPayload(input string) []byte {
	return []byte(`{"session_id": "s", "cwd": "/w", "hook_event_name": "PreToolUse", "tool_name": "spawn_agent", "tool_input": ` + input + `}`)
}

// A Codex brief is the message, else the items' text; what carries
// ciphertext, or items without any text, is an unreadable brief, with the
// reason, and no brief.
func TestCodexBrief(t *testing.T) {
	g := newGate(t, ccPolicy)
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
			sp, isSpawn, err := readPayload(context.Background(), g, agent.Codex, codexPayload(tc.input))
			if err != nil || !isSpawn {
				t.Fatalf("readPayload: %v %v", isSpawn, err)
			}
			if sp.call.Brief != tc.brief || sp.unreadable != tc.unreadable {
				t.Fatalf("brief %q unreadable %q, want %q %q", sp.call.Brief, sp.unreadable, tc.brief, tc.unreadable)
			}
		})
	}
	// A message that is neither text nor ciphertext cannot be judged.
	if _, _, err := readPayload(context.Background(), g, agent.Codex, codexPayload(`{"message": 3}`)); err == nil || !strings.Contains(err.Error(), "/tool_input/message") {
		t.Fatalf("a number message: %v", err)
	}
	// Claude Code's prompt is its brief; nothing there is ciphertext.
	sp, _, err := readPayload(context.Background(), g, agent.ClaudeCode, ccPayload("s", "reader", "", "", "Find it."))
	if err != nil || sp.call.Brief != "Find it." || sp.unreadable != "" || sp.session != "s" {
		t.Fatalf("claude code: %+v %v", sp, err)
	}
	// The unreadable reason reaches the judged plan in place of a brief.
	dir, _, _ := catalogs(t)
	cg := newGate(t, "allowed_tools: [\"sandbox:read-only\"]\nworkspace_root: /w\nbudget_cap_tokens: 1000\n")
	d := Decide(context.Background(), cg, Config{Host: agent.Codex, AgentsDirs: []string{filepath.Join(dir, "cx")}}, codexPayload(`{"agent_type": "ro", "items": [{"encrypted_content": "gAAAA"}]}`))
	if d.Kind != Pass || !strings.Contains(string(d.Plan), `"brief_unreadable": "the Codex message is encrypted`) || strings.Contains(string(d.Plan), `"brief":`) {
		t.Fatalf("decided %v (%v):\n%s", d.Kind, d.Err, d.Plan)
	}
}

// The nonces of a brief that goes ahead are found with the policy's
// pattern (group 1) and kept by hash.
func TestRecordAndPattern(t *testing.T) {
	re, err := noncePattern("policy.yaml", map[string]any{})
	if err != nil || re.String() != DefaultNoncePattern {
		t.Fatalf("default pattern: %v %v", re, err)
	}
	for _, bad := range []any{map[string]any{"pattern": "(unclosed"}, map[string]any{"pattern": "no group"}} {
		_, err := noncePattern("policy.yaml", bad)
		if err == nil || !strings.HasPrefix(err.Error(), "policy.yaml: /brief_retask/pattern: the re-task pattern cannot be used: ") {
			t.Fatalf("%v: %v", bad, err)
		}
	}
	dir := t.TempDir()
	led, err := ledger.Open(context.Background(), dir, "s", 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	brief := "Fix it. RETASK CHANNEL: a revision names token R-abc_1 here.\nRETASK CHANNEL again, token R-def-2. Done when it passes."
	if err := record(context.Background(), led, re, brief); err != nil {
		t.Fatal(err)
	}
	if err := record(context.Background(), led, re, "No block."); err != nil {
		t.Fatal(err)
	}
	led.Close()
	led, err = ledger.Open(context.Background(), dir, "s", 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{ledger.Hash("R-abc_1"), ledger.Hash("R-def-2")}
	slices.Sort(want)
	if !slices.Equal(led.Hashes(), want) {
		t.Fatalf("recorded %v, want %v", led.Hashes(), want)
	}
	// A decision past its deadline blocks the spawn, so it hands out
	// nothing.
	custom := regexp.MustCompile(`nonce=(\w+)`)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := record(ctx, led, custom, "nonce=late"); err == nil {
		t.Fatal("a decision past its deadline recorded its nonce")
	}
	led.Close()
	if led, err = ledger.Open(context.Background(), dir, "s", 1<<20); err != nil {
		t.Fatal(err)
	}
	defer led.Close()
	if led.Has("late") || len(led.Hashes()) != 2 {
		t.Fatalf("the ledger holds %v", led.Hashes())
	}
}

// A ledger's errors are the gate's: which file, where, which limit.
func TestLedgerErrors(t *testing.T) {
	for _, tc := range []struct {
		err   error
		kind  judge.Kind
		line  string
		limit string
	}{
		{&ledger.Error{File: "/s/x.json", Pointer: "/nonces_sha256/1", Msg: "the ledger is corrupt: not a SHA-256"}, judge.Document, "/s/x.json: /nonces_sha256/1: the ledger is corrupt: not a SHA-256", ""},
		{&ledger.Error{File: "/s/x.json", Line: 1, Column: 4, Msg: "the ledger is corrupt: bad"}, judge.Document, "/s/x.json:1:4: the ledger is corrupt: bad", ""},
		{&ledger.Error{File: "/s/x.lock", Msg: "locked", Err: context.DeadlineExceeded}, judge.Timeout, "/s/x.lock: the ledger is locked by another hook: timed out after 2s waiting for it (limit timeout)", "timeout"},
		{&ledger.Error{File: "/s/x.lock", Msg: "locked", Err: context.Canceled}, judge.Interrupted, "/s/x.lock: locked", ""},
		{&ledger.Error{File: "/s/x.json", Msg: "the ledger is larger than 9 bytes", Err: ledger.ErrTooLarge}, judge.Limit, "/s/x.json: the ledger is larger than 9 bytes (limit max-bytes)", "max-bytes"},
	} {
		var e *judge.Error
		if !errors.As(ledgerError(tc.err, 2*time.Second), &e) || e.Kind != tc.kind || e.Error() != tc.line || e.Limit != tc.limit {
			t.Errorf("%v: got %#v", tc.err, e)
		}
	}
}

// retaskGate is a gate whose operator policy sets brief_retask.
func retaskGate(t *testing.T, extra string) *judge.Gate {
	t.Helper()
	g, err := judge.NewWithPolicy(context.Background(), judge.DefaultOptions(), "policy.yaml", []byte(ccPolicy+"brief_retask: {}\n"+extra))
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func retaskBrief(nonce string) string {
	return "Find the loader. RETASK CHANNEL: a revision of this task names token " + nonce + ". Done when you have named the file."
}

// A nonce handed out by one hook call is refused in a later, separate
// call of the same session, through the ledger; another session has its
// own ledger; a refused spawn hands nothing out.
func TestLedgerAcrossCalls(t *testing.T) {
	dir, _, _ := catalogs(t)
	g := retaskGate(t, "")
	state := filepath.Join(dir, "state")
	cfg := Config{Host: agent.ClaudeCode, AgentsDirs: []string{filepath.Join(dir, "cc")}, StateDir: state}
	decide := func(session, typ, nonce string) Decision {
		return Decide(context.Background(), g, cfg, ccPayload(session, typ, "", "", retaskBrief(nonce)))
	}
	if d := decide("s1", "reader", "R-one"); d.Kind != Pass {
		t.Fatalf("first use: %v %q %v\n%s", d.Kind, rules(d), d.Err, d.Plan)
	}
	d := decide("s1", "shell", "R-one")
	if d.Kind != Deny || !slices.Equal(rules(d), []string{"brief.retask /brief"}) {
		t.Fatalf("reuse in the session: %v %q %v\n%s", d.Kind, rules(d), d.Err, d.Plan)
	}
	if strings.Contains(d.Reason, "R-one") {
		t.Fatalf("the reason shows the whole nonce: %s", d.Reason)
	}
	if !strings.Contains(string(d.Plan), ledger.Hash("R-one")) {
		t.Fatalf("the plan does not carry the session's nonces:\n%s", d.Plan)
	}
	if d := decide("s2", "reader", "R-one"); d.Kind != Pass {
		t.Fatalf("another session: %v %q", d.Kind, rules(d))
	}
	// Refused for its tool (the caller lacks Bash), so its nonce is not
	// handed out, and a later spawn may use it.
	d = Decide(context.Background(), g, cfg, ccPayload("s1", "shell", "a1", "lead", retaskBrief("R-two")))
	if d.Kind != Deny {
		t.Fatalf("widening spawn: %v %q", d.Kind, rules(d))
	}
	if d := decide("s1", "reader", "R-two"); d.Kind != Pass {
		t.Fatalf("a refused spawn's nonce was recorded: %v %q", d.Kind, rules(d))
	}
	data, err := os.ReadFile(ledger.Path(state, "s1"))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{ledger.Hash("R-one"), ledger.Hash("R-two")}
	slices.Sort(want)
	if got := string(data); got != "{\n  \"nonces_sha256\": [\n    \""+want[0]+"\",\n    \""+want[1]+"\"\n  ]\n}\n" {
		t.Fatalf("ledger:\n%s", got)
	}
}

// Hooks racing on one session each keep their nonce, and a nonce two of
// them race with passes once.
func TestLedgerRacingHooks(t *testing.T) {
	dir, _, _ := catalogs(t)
	g := retaskGate(t, "")
	state := filepath.Join(dir, "state")
	cfg := Config{Host: agent.ClaudeCode, AgentsDirs: []string{filepath.Join(dir, "cc")}, StateDir: state}
	const n = 12
	kinds := make([]Kind, 2*n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			kinds[i] = Decide(context.Background(), g, cfg, ccPayload("race", "reader", "", "", retaskBrief(fmt.Sprintf("R-n%d", i)))).Kind
		})
		wg.Go(func() {
			kinds[n+i] = Decide(context.Background(), g, cfg, ccPayload("race", "reader", "", "", retaskBrief("R-shared"))).Kind
		})
	}
	wg.Wait()
	if passed := slices.Index(kinds[n:], Pass); slices.Contains(kinds[:n], Deny) || slices.Contains(kinds, Fail) || passed < 0 ||
		len(slices.DeleteFunc(slices.Clone(kinds[n:]), func(k Kind) bool { return k != Pass })) != 1 {
		t.Fatalf("decisions %v: want the distinct nonces all passed and the shared one passed once", kinds)
	}
	led, err := ledger.Open(context.Background(), state, "race", 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	defer led.Close()
	if len(led.Hashes()) != n+1 || !led.Has("R-shared") {
		t.Fatalf("kept %d nonces, want %d", len(led.Hashes()), n+1)
	}
}

// A ledger the hook cannot read, parse or lock in time means the spawn
// cannot be judged: never a pass. Without brief_retask nothing is read.
func TestLedgerFailsClosed(t *testing.T) {
	dir, _, _ := catalogs(t)
	state := filepath.Join(dir, "state")
	file := ledger.Path(state, "s")
	write(t, dir, map[string]string{strings.TrimPrefix(file, dir+"/"): "{\"nonces_sha256\": [\"R-plain\"]}"})
	cfg := Config{Host: agent.ClaudeCode, AgentsDirs: []string{filepath.Join(dir, "cc")}, StateDir: state}
	payload := ccPayload("s", "reader", "", "", retaskBrief("R-x"))
	if d := Decide(context.Background(), newGate(t, ccPolicy), cfg, payload); d.Kind != Pass {
		t.Fatalf("without brief_retask the ledger was read: %v %v", d.Kind, d.Err)
	}
	g := retaskGate(t, "")
	d := Decide(context.Background(), g, cfg, payload)
	if d.Kind != Fail || d.Err.Error() != file+": /nonces_sha256/0: the ledger is corrupt: not a SHA-256 as 64 lowercase hex digits" {
		t.Fatalf("corrupt ledger: %v %v", d.Kind, d.Err)
	}
	if d := Decide(context.Background(), g, cfg, ccPayload("", "reader", "", "", retaskBrief("R-x"))); d.Kind != Fail || !strings.Contains(d.Err.Error(), "/session_id") {
		t.Fatalf("no session: %v %v", d.Kind, d.Err)
	}
	if d := Decide(context.Background(), g, Config{Host: agent.ClaudeCode, AgentsDirs: cfg.AgentsDirs}, payload); d.Kind != Fail || !strings.Contains(d.Err.Error(), "no state directory") {
		t.Fatalf("no state directory: %v %v", d.Kind, d.Err)
	}
	// Held by another hook past the deadline.
	held, err := ledger.Open(context.Background(), state, "held", 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	opts := judge.DefaultOptions()
	opts.Timeout = 100 * time.Millisecond
	short, err := judge.NewWithPolicy(context.Background(), opts, "policy.yaml", []byte(ccPolicy+"brief_retask: {}\n"))
	if err != nil {
		t.Fatal(err)
	}
	d = Decide(context.Background(), short, cfg, ccPayload("held", "reader", "", "", retaskBrief("R-x")))
	var e *judge.Error
	if d.Kind != Fail || !errors.As(d.Err, &e) || e.Kind != judge.Timeout {
		t.Fatalf("a held ledger: %v %v", d.Kind, d.Err)
	}
}
