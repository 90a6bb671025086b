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
	"github.com/spawngate/spawngate/internal/host/claudecode"
	"github.com/spawngate/spawngate/internal/host/codex"
	"github.com/spawngate/spawngate/internal/judge"
	"github.com/spawngate/spawngate/internal/ledger"
	"github.com/spawngate/spawngate/internal/ledger/ledgertest"
	"github.com/spawngate/spawngate/internal/report"
)

// write writes files under root, making folders.
func write(t testing.TB, root string, files map[string]string) {
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

// catalogs writes definitions for both hosts, in dir/cc and dir/cx. (The
// caller's parent block is the adapters' callerParent, tested there.)
func catalogs(t testing.TB) (dir string) {
	dir = t.TempDir()
	write(t, dir, map[string]string{
		"cc/lead.md":      claudeAgent("lead", "Read, Grep, Agent"),
		"cc/reader.md":    claudeAgent("reader", "Read, Grep"),
		"cc/shell.md":     claudeAgent("shell", "Read, Bash"),
		"cc/open-lead.md": claudeAgent("open-lead", ""),
		"cc/trimmed.md":   "---\nname: trimmed\ndescription: d\ntools: Read, Bash, Grep\ndisallowedTools: Bash\nbudget_tokens: 5000\n---\n",
		"cx/lead.toml":    codexAgent("lead", "workspace-write", "github"),
		"cx/ro.toml":      codexAgent("ro", "read-only"),
		"cx/inherit.toml": codexAgent("inherit", ""),
	})
	return dir
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
	dir := catalogs(t)
	g := newGate(t, ccPolicy)
	cfg := Config{Host: claudecode.Adapter{}, AgentsDirs: []string{filepath.Join(dir, "cc")}, StateDir: filepath.Join(dir, "state")}
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

// A Codex brief the gate cannot read reaches the judged plan as the
// reason, in place of a brief. (How the adapter reads a brief is
// codex.TestCodexBrief.)
func TestCodexBrief(t *testing.T) {
	dir := catalogs(t)
	cg := newGate(t, "allowed_tools: [\"sandbox:read-only\"]\nworkspace_root: /w\nbudget_cap_tokens: 1000\n")
	// The example read-only session.
	session, err := filepath.Abs(filepath.Join("..", "..", "examples", "codex", "sessions", "read-only.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{Host: codex.Adapter{}, AgentsDirs: []string{filepath.Join(dir, "cx")}, Transcript: session}
	d := Decide(context.Background(), cg, cfg, codexPayload(`{"agent_type": "ro", "items": [{"encrypted_content": "gAAAA"}]}`))
	if d.Kind != Pass || !strings.Contains(string(d.Plan), `"brief_unreadable": "the Codex message is encrypted`) || strings.Contains(string(d.Plan), `"brief":`) {
		t.Fatalf("decided %v (%v):\n%s", d.Kind, d.Err, d.Plan)
	}
	d = Decide(context.Background(), cg, cfg, codexPayload(`{"agent_type": "ro", "message": "Read it."}`))
	if d.Kind != Pass || !strings.Contains(string(d.Plan), `"brief": "Read it."`) || len(d.Children) != 1 {
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
		kind  judge.ErrorKind
		line  string
		limit string
	}{
		{&ledger.Error{File: "/s/x.json", Pointer: "/nonces_sha256/1", Msg: "the ledger is corrupt: not a SHA-256"}, judge.Document, "/s/x.json: /nonces_sha256/1: the ledger is corrupt: not a SHA-256", ""},
		{&ledger.Error{File: "/s/x.json", Line: 1, Column: 4, Msg: "the ledger is corrupt: bad"}, judge.Document, "/s/x.json:1:4: the ledger is corrupt: bad", ""},
		{fmt.Errorf("opening: %w", &ledger.Error{File: "/s/x.json", Line: 1, Column: 4, Msg: "the ledger is corrupt: bad"}), judge.Document, "/s/x.json:1:4: the ledger is corrupt: bad", ""},
		{&ledger.Error{File: "/s/x.lock", Msg: "the ledger is locked by another hook", Err: context.DeadlineExceeded}, judge.Timeout, "/s/x.lock: the ledger is locked by another hook: timed out after 2s waiting for it (limit timeout)", "timeout"},
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
func retaskGate(t testing.TB, extra string) *judge.Gate {
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
	dir := catalogs(t)
	g := retaskGate(t, "")
	state := filepath.Join(dir, "state")
	cfg := Config{Host: claudecode.Adapter{}, AgentsDirs: []string{filepath.Join(dir, "cc")}, StateDir: state}
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
	dir := catalogs(t)
	g := retaskGate(t, "")
	state := filepath.Join(dir, "state")
	cfg := Config{Host: claudecode.Adapter{}, AgentsDirs: []string{filepath.Join(dir, "cc")}, StateDir: state}
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
	dir := catalogs(t)
	state := filepath.Join(dir, "state")
	file := ledger.Path(state, "s")
	write(t, dir, map[string]string{strings.TrimPrefix(file, dir+"/"): "{\"nonces_sha256\": [\"R-plain\"]}"})
	cfg := Config{Host: claudecode.Adapter{}, AgentsDirs: []string{filepath.Join(dir, "cc")}, StateDir: state}
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
	if d := Decide(context.Background(), g, Config{Host: claudecode.Adapter{}, AgentsDirs: cfg.AgentsDirs}, payload); d.Kind != Fail || !strings.Contains(d.Err.Error(), "no state directory") {
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

// readPayload reads what every host's payload is: a JSON object, within
// the limits, from a PreToolUse hook.
func TestReadPayload(t *testing.T) {
	g := newGate(t, ccPolicy)
	for _, tc := range []struct {
		name, payload, err string
		kind               judge.ErrorKind
	}{
		{"a list", `[1]`, "hook payload: the payload must be a JSON object", judge.Document},
		{"another hook", `{"hook_event_name": "PostToolUse", "tool_name": "Agent"}`, "hook payload: /hook_event_name: the hook runs on \"PostToolUse\", and only PreToolUse and UserPromptExpansion can stop a spawn in claude-code: wire it to those", judge.Document},
		{"an event that is not a string", `{"hook_event_name": 1}`, "hook payload: /hook_event_name: the hook runs on 1, and only PreToolUse and UserPromptExpansion can stop a spawn in claude-code: wire it to those", judge.Document},
		{"not JSON", `{"a": `, "", judge.Document},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := readPayload(context.Background(), g, claudecode.Adapter{}, []byte(tc.payload))
			var e *judge.Error
			if !errors.As(judge.AsError(payloadSource, err), &e) || e.Kind != tc.kind || tc.err != "" && e.Error() != tc.err {
				t.Fatalf("readPayload error %v, want %v %q", err, tc.kind, tc.err)
			}
			// Decide says the same, and never passes.
			if d := Decide(context.Background(), g, Config{Host: claudecode.Adapter{}, AgentsDirs: []string{}}, []byte(tc.payload)); d.Kind != Fail {
				t.Fatalf("decided %v", d.Kind)
			}
		})
	}
	obj, event, err := readPayload(context.Background(), g, claudecode.Adapter{}, []byte(`{"tool_name": "Agent", "n": 1}`))
	if err != nil || obj["tool_name"] != "Agent" || event != "PreToolUse" {
		t.Fatalf("a payload without hook_event_name: %v, %q, %v", obj, event, err)
	}
	// Codex's hook judges PreToolUse alone.
	if _, _, err := readPayload(context.Background(), g, codex.Adapter{}, []byte(`{"hook_event_name": "UserPromptExpansion"}`)); err == nil || !strings.Contains(err.Error(), "only PreToolUse can stop a spawn in codex") {
		t.Fatalf("codex, UserPromptExpansion: %v", err)
	}
	opts := judge.DefaultOptions()
	opts.Limits.MaxBytes = int64(len(ccPolicy))
	small, err := judge.NewWithPolicy(context.Background(), opts, "policy.yaml", []byte(ccPolicy))
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = readPayload(context.Background(), small, claudecode.Adapter{}, []byte(`{"tool_name": "Agent", "pad": "`+strings.Repeat("x", len(ccPolicy))+`"}`))
	var e *judge.Error
	if !errors.As(err, &e) || e.Kind != judge.Limit || e.Limit != "max-bytes" {
		t.Fatalf("a payload over the limit: %v", err)
	}
}

// Without --agents-dir, Claude Code's adapter needs the environment Claude
// Code gives its command hooks; without it the spawn cannot be judged,
// and is blocked.
func TestDecideClaudeEnvironment(t *testing.T) {
	g := newGate(t, ccPolicy)
	d := Decide(context.Background(), g, Config{Host: claudecode.Adapter{}}, ccPayload("s", "reader", "", "", "Do it."))
	var e *judge.Error
	if d.Kind != Fail || !errors.As(d.Err, &e) || !strings.Contains(e.Error(), "CLAUDE_PROJECT_DIR is not set") {
		t.Fatalf("decided %v, %v", d.Kind, d.Err)
	}
	// A call that starts no sub-agent is let through before any of it is
	// needed.
	p := strings.Replace(string(ccPayload("s", "reader", "", "", "x")), `"tool_name":"Agent"`, `"tool_name":"Bash"`, 1)
	if d := Decide(context.Background(), g, Config{Host: claudecode.Adapter{}}, []byte(p)); d.Kind != Ignore {
		t.Fatalf("a Bash call: %v %v", d.Kind, d.Err)
	}
}

// The reason of a spawn of several children names each refused child,
// with its own violations and lines, and leaves out the ones that pass.
func TestReasonSeveralChildren(t *testing.T) {
	child := func(role, file string, lines map[string]int) agent.Translation {
		return agent.Translation{Child: map[string]any{"role": role}, File: file, Lines: lines}
	}
	children := []agent.Translation{
		child("ok", "/a/ok.md", nil),
		child("wide", "/a/wide.md", map[string]int{"/tools/1": 4}),
		child("loose", "", nil),
	}
	res := report.Result{Children: []report.Child{
		{Index: 0},
		{Index: 1, Violations: []report.Violation{{Rule: "tools.allowlist", Path: "/plan/1/tools/1", Message: "tool \"Bash\" is not allowed"}}},
		{Index: 2, Violations: []report.Violation{{Rule: "agent.definition", Path: "/plan/2", Message: "no definition"}}},
	}}
	want := "spawngate refused this sub-agent: wide (/a/wide.md)\n- tools.allowlist /tools/1 (line 4): tool \"Bash\" is not allowed\n\nspawngate refused this sub-agent: loose\n- agent.definition /: no definition"
	if got := reason(children, res); got != want {
		t.Errorf("reason =\n%q\nwant\n%q", got, want)
	}
	// One child: its line even without violations of its own.
	one := reason(children[1:2], report.Result{Children: []report.Child{{Index: 0, Violations: []report.Violation{{Rule: "r", Path: "/plan/0/tools/1", Message: "m"}}}}})
	if one != "spawngate refused this sub-agent: wide (/a/wide.md)\n- r /tools/1 (line 4): m" {
		t.Errorf("one child: %q", one)
	}
}

// racedStore stands for a ledger that replicas share: between a
// decision's read and its claim, another replica claims the same nonces,
// races times. With keep false that replica's claim is not kept, so the
// race never ends.
type racedStore struct {
	mu     sync.Mutex
	hashes []string
	races  int
	keep   bool
	opens  int
}

func (s *racedStore) Open(ctx context.Context, session string, maxBytes int64) (ledger.Session, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.opens++
	return &racedSession{store: s, hashes: slices.Clone(s.hashes)}, nil
}
func (s *racedStore) Check(context.Context) error { return nil }
func (s *racedStore) Close() error                { return nil }
func (s *racedStore) String() string              { return "raced" }

type racedSession struct {
	store  *racedStore
	hashes []string
	added  []string
}

func (l *racedSession) Hashes() []string { return append([]string{}, l.hashes...) }
func (l *racedSession) Add(n string) {
	if !slices.Contains(l.hashes, ledger.Hash(n)) {
		l.added = append(l.added, ledger.Hash(n))
	}
}
func (l *racedSession) Close() error { return nil }
func (l *racedSession) Commit(ctx context.Context) error {
	s := l.store
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.races > 0 {
		s.races--
		if s.keep {
			s.hashes = append(s.hashes, l.added...)
		}
		return &ledger.Error{File: "raced", Msg: "claimed meanwhile", Err: ledger.ErrClaimed}
	}
	s.hashes = append(s.hashes, l.added...)
	return nil
}

// A nonce another replica claimed between this decision's read and its
// claim is refused by brief.retask, the decision taken again on the
// ledger as it is now: never a pass. A race that does not end is a Fail
// after a bounded number of rounds.
func TestLedgerClaimedMeanwhile(t *testing.T) {
	dir := catalogs(t)
	g := retaskGate(t, "")
	payload := ccPayload("s", "reader", "", "", retaskBrief("R-raced"))
	store := &racedStore{races: 1, keep: true}
	cfg := Config{Host: claudecode.Adapter{}, AgentsDirs: []string{filepath.Join(dir, "cc")}, Ledger: store}
	d := Decide(context.Background(), g, cfg, payload)
	if d.Kind != Deny || !slices.Equal(rules(d), []string{"brief.retask /brief"}) || store.opens != 2 {
		t.Fatalf("a nonce claimed meanwhile: %v %q %v after %d reads", d.Kind, rules(d), d.Err, store.opens)
	}
	if !strings.Contains(string(d.Plan), ledger.Hash("R-raced")) {
		t.Fatalf("the decision taken again does not see the claimed nonce:\n%s", d.Plan)
	}

	endless := &racedStore{races: 1 << 30}
	cfg.Ledger = endless
	d = Decide(context.Background(), g, cfg, payload)
	if d.Kind != Fail || endless.opens != maxClaims || d.Err.Error() != "raced: the session's nonces were claimed by other decisions 4 times while this one was judged" {
		t.Fatalf("an endless race: %v %v after %d reads", d.Kind, d.Err, endless.opens)
	}
	if len(endless.hashes) != 0 {
		t.Fatalf("an endless race kept %v", endless.hashes)
	}
}

// Two replicas sharing a Redis ledger: a nonce handed out through one is
// refused through the other, and of many decisions racing on one nonce
// across them exactly one passes; the others are refused, none fails.
func TestLedgerSharedByReplicas(t *testing.T) {
	url := ledgertest.RedisURL(t)
	dir := catalogs(t)
	g := retaskGate(t, "")
	var replicas []Config
	for range 2 {
		store, err := ledger.NewRedis(url, time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { store.Close() })
		replicas = append(replicas, Config{Host: claudecode.Adapter{}, AgentsDirs: []string{filepath.Join(dir, "cc")}, Ledger: store})
	}
	session := fmt.Sprintf("%s-%d", t.Name(), time.Now().UnixNano())
	decide := func(replica int, nonce string) Decision {
		return Decide(context.Background(), g, replicas[replica], ccPayload(session, "reader", "", "", retaskBrief(nonce)))
	}
	if d := decide(0, "R-one"); d.Kind != Pass {
		t.Fatalf("first use: %v %q %v", d.Kind, rules(d), d.Err)
	}
	if d := decide(1, "R-one"); d.Kind != Deny || !slices.Equal(rules(d), []string{"brief.retask /brief"}) {
		t.Fatalf("reuse on the other replica: %v %q %v", d.Kind, rules(d), d.Err)
	}
	const n = 16
	kinds := make([]Kind, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { kinds[i] = decide(i%2, "R-raced").Kind })
	}
	wg.Wait()
	if passed := slices.DeleteFunc(slices.Clone(kinds), func(k Kind) bool { return k != Pass }); len(passed) != 1 || slices.Contains(kinds, Fail) {
		t.Fatalf("decisions %v: want one pass and the rest refused", kinds)
	}
}

// BenchmarkDecideWithLedger is one hook decision that hands out a fresh
// nonce, with the session ledger in a folder and in Redis (when
// SPAWNGATE_REDIS_URL names one): what keeping the ledger costs a
// decision.
func BenchmarkDecideWithLedger(b *testing.B) {
	dir := catalogs(b)
	g := retaskGate(b, "")
	stores := map[string]func(b *testing.B) ledger.Store{
		"dir": func(b *testing.B) ledger.Store { return ledger.Dir(b.TempDir()) },
		"redis": func(b *testing.B) ledger.Store {
			r, err := ledger.NewRedis(ledgertest.RedisURL(b), time.Hour)
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { r.Close() })
			return r
		},
	}
	for _, name := range []string{"dir", "redis"} {
		b.Run(name, func(b *testing.B) {
			cfg := Config{Host: claudecode.Adapter{}, AgentsDirs: []string{filepath.Join(dir, "cc")}, Ledger: stores[name](b)}
			session := fmt.Sprintf("%s-%d", b.Name(), time.Now().UnixNano())
			i := 0
			for b.Loop() {
				// A session of its own every 500 nonces, so that the
				// ledger's size stays that of a busy session.
				i++
				if d := Decide(context.Background(), g, cfg, ccPayload(fmt.Sprintf("%s-%d", session, i/500), "reader", "", "", retaskBrief(fmt.Sprintf("R-b%d", i)))); d.Kind != Pass {
					b.Fatalf("decision %d: %v %v", i, d.Kind, d.Err)
				}
			}
		})
	}
}
