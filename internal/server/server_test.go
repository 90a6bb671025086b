package server

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/spawngate/spawngate/internal/hosts"
	"github.com/spawngate/spawngate/internal/judge"
	"github.com/spawngate/spawngate/internal/report"
)

const policyYAML = "allowed_tools: [fs.read, http.get, Read, Grep, Glob]\nworkspace_root: /home/dev/project\nbudget_cap_tokens: 200000\n"

func newServer(t *testing.T, mutate func(*Config)) (*Server, *httptest.Server, string) {
	t.Helper()
	dir := t.TempDir()
	policy := filepath.Join(dir, "policy.yaml")
	if err := os.WriteFile(policy, []byte(policyYAML), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := Config{PolicyFile: policy, Gate: judge.DefaultOptions(), MaxListed: report.DefaultMaxListed, MaxConcurrent: 4,
		AgentsDirs: []string{filepath.Join("..", "..", "examples", "claude-code", ".claude", "agents")}}
	if mutate != nil {
		mutate(&cfg)
	}
	s, err := New(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s.Handler())
	t.Cleanup(ts.Close)
	return s, ts, policy
}

func post(t *testing.T, url, contentType, body string, header ...string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}

const (
	passing = `{"plan": [{"role": "r", "tools": ["fs.read"], "paths": ["/home/dev/project/docs"], "budget_tokens": 10}]}`
	blocked = `{"plan": [{"role": "r", "tools": ["shell.run"], "paths": ["/etc"], "budget_tokens": 10}]}`
)

// verdictOf reads a /v1/check answer: one JSON report.
func verdictOf(t *testing.T, body string) report.Verdict {
	t.Helper()
	var rep report.Report
	if err := json.Unmarshal([]byte(body), &rep); err != nil {
		t.Fatalf("not a JSON report: %v\n%s", err, body)
	}
	return rep.Verdict
}

// Every answer of /v1/check: 200 only with a verdict, and every document
// failure a status no client reads as a pass, with the report's shape.
func TestCheckStatusCodes(t *testing.T) {
	_, ts, _ := newServer(t, func(c *Config) { c.Gate.Limits.MaxBytes = 4096; c.Gate.Limits.MaxDepth = 8 })
	url := ts.URL + "/v1/check"
	for _, tc := range []struct {
		name, contentType, body string
		status                  int
		verdict                 report.Verdict
	}{
		{"pass", "application/json", passing, 200, report.Pass},
		{"block", "application/json", blocked, 200, report.Block},
		{"yaml", "application/yaml; charset=utf-8", "plan:\n  - {role: r, tools: [fs.read], paths: [], budget_tokens: 1}\n", 200, report.Pass},
		{"yaml read as yaml, not json", "application/yaml", `{"plan": [{"role": "r", "tools": ["fs.read"], "paths": [], "budget_tokens": 1}]}`, 200, report.Pass},
		{"does not parse", "application/json", `{"plan": [`, 422, report.NotJudged},
		{"nothing to check", "application/json", `{"plan": []}`, 422, report.NotJudged},
		{"an invalid plan policy", "application/json", `{"policy": {}, "plan": [{}]}`, 422, report.NotJudged},
		{"over a limit", "application/json", `{"plan": [{"role": "r", "tools": ["fs.read"], "paths": [], "budget_tokens": 1, "metadata": [[[[[[[[1]]]]]]]]}]}`, 422, report.NotJudged},
		{"too large", "application/json", `{"plan": [` + strings.Repeat(" ", 5000) + `]}`, 413, report.NotJudged},
		{"no media type", "", passing, 415, report.NotJudged},
		{"another media type", "text/plain", passing, 415, report.NotJudged},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, body := post(t, url, tc.contentType, tc.body)
			if status != tc.status || verdictOf(t, body) != tc.verdict {
				t.Fatalf("status %d, verdict %s; want %d, %s\n%s", status, verdictOf(t, body), tc.status, tc.verdict, body)
			}
		})
	}
	res, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusMethodNotAllowed {
		t.Fatalf("GET: %d", res.StatusCode)
	}
}

// A timeout is 504, a request that finds no turn is 503, draining is 503
// and not ready.
func TestCheckTimeoutsBusyAndDraining(t *testing.T) {
	s, ts, _ := newServer(t, func(c *Config) { c.Gate.Timeout = 100 * time.Millisecond })
	var slow strings.Builder // children that cannot be judged as one, each refused 40 times: seconds of work
	slow.WriteString(`{"plan": [`)
	for i := range 20000 {
		if i > 0 {
			slow.WriteByte(',')
		}
		fmt.Fprintf(&slow, `{"role": "r%d", "tools": [%s], "paths": [], "budget_tokens": 1}`, i, strings.TrimSuffix(strings.Repeat(`"shell.run",`, 20), ","))
	}
	slow.WriteString("]}")
	if status, body := post(t, ts.URL+"/v1/check", "application/json", slow.String()); status != http.StatusGatewayTimeout || verdictOf(t, body) != report.NotJudged {
		t.Fatalf("timeout: %d %.300s", status, body)
	}
	s2, ts2, _ := newServer(t, func(c *Config) { c.MaxConcurrent = 1 })
	s2.turns <- struct{}{} // every turn taken
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, ts2.URL+"/v1/check", strings.NewReader(passing))
	req.Header.Set("Content-Type", "application/json")
	if res, err := http.DefaultClient.Do(req); err == nil {
		res.Body.Close()
		if res.StatusCode == http.StatusOK {
			t.Fatal("a request with no turn was answered 200")
		}
	}
	<-s2.turns
	s.Drain()
	if status, _ := post(t, ts.URL+"/v1/check", "application/json", passing); status != http.StatusServiceUnavailable {
		t.Fatalf("draining: %d", status)
	}
	res, err := http.Get(ts.URL + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("readyz while draining: %d", res.StatusCode)
	}
}

// With a token, a request without it is refused: /v1/check answers 401,
// a hook endpoint the deny JSON (a 401 would let Claude Code spawn).
func TestAuth(t *testing.T) {
	_, ts, _ := newServer(t, func(c *Config) { c.Token = []byte("s3cret") })
	payload, _ := os.ReadFile(filepath.Join("..", "..", "examples", "claude-code", "payloads", "code-reviewer.json"))
	for _, h := range [][]string{nil, {"Authorization", "Bearer wrong"}, {"Authorization", "s3cret"}} {
		if status, _ := post(t, ts.URL+"/v1/check", "application/json", passing, h...); status != http.StatusUnauthorized {
			t.Fatalf("check with %v: %d", h, status)
		}
		status, body := post(t, ts.URL+"/v1/hooks/claude-code", "application/json", string(payload), h...)
		if status != 200 || body != string(hostsDeny(t, "claude-code", "spawngate could not judge this sub-agent, so it is refused: the hook's request carries no valid bearer token")) {
			t.Fatalf("hook with %v: %d %s", h, status, body)
		}
	}
	if status, body := post(t, ts.URL+"/v1/check", "application/json", passing, "Authorization", "Bearer s3cret"); status != 200 || verdictOf(t, body) != report.Pass {
		t.Fatalf("with the token: %d %s", status, body)
	}
	if status, body := post(t, ts.URL+"/v1/hooks/claude-code", "application/json", string(payload), "Authorization", "Bearer s3cret"); status != 200 || body != "" {
		t.Fatalf("hook with the token: %d %q", status, body)
	}
}

// The hook endpoints answer every example payload as the command hook
// does (the same deny reason, or nothing), and every failure with a deny,
// always 200.
func TestHookEndpointsAnswerAsTheCommandDoes(t *testing.T) {
	_, ts, _ := newServer(t, nil)
	payloads, _ := filepath.Glob(filepath.Join("..", "..", "examples", "claude-code", "payloads", "*.json"))
	denied := 0
	for _, p := range payloads {
		payload, _ := os.ReadFile(p)
		status, body := post(t, ts.URL+"/v1/hooks/claude-code", "application/json", string(payload))
		if status != 200 {
			t.Fatalf("%s: status %d", p, status)
		}
		if body != "" {
			denied++
			var answer map[string]map[string]string
			if err := json.Unmarshal([]byte(body), &answer); err != nil || answer["hookSpecificOutput"]["permissionDecision"] != "deny" {
				t.Fatalf("%s: %s", p, body)
			}
		}
	}
	if denied < 4 || denied == len(payloads) {
		t.Fatalf("%d of %d denied: the fixtures did not try both answers", denied, len(payloads))
	}
	for _, bad := range []string{``, `nope`, `[]`, `{"tool_name": "Agent"}`, strings.Repeat("x", 40<<20)} {
		status, body := post(t, ts.URL+"/v1/hooks/claude-code", "application/json", bad)
		if status != 200 || !strings.Contains(body, "spawngate could not judge this sub-agent") {
			t.Fatalf("payload %.20q: %d %s", bad, status, body)
		}
	}
	res, err := http.Get(ts.URL + "/v1/hooks/codex")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 200 || !bytes.Contains(body, []byte(`"permissionDecision":"deny"`)) {
		t.Fatalf("GET on a hook endpoint: %d %s", res.StatusCode, body)
	}
}

// A reload under load: requests keep being answered, a broken policy in
// between keeps the old one serving (and is counted), and every request is
// judged by one whole policy: a plan that passes under both versions never
// fails, one that only the new allows passes only after the reload.
func TestReloadUnderLoad(t *testing.T) {
	s, ts, policy := newServer(t, nil)
	stop := make(chan struct{})
	var answered, failed atomic.Int64
	var wg sync.WaitGroup
	var once sync.Once
	halt := func() { once.Do(func() { close(stop) }); wg.Wait() }
	defer halt() // also when a step fails
	for range 4 {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				status, body := post(t, ts.URL+"/v1/check", "application/json", passing)
				if status != 200 || verdictOf(t, body) != report.Pass {
					failed.Add(1)
				}
				answered.Add(1)
			}
		})
	}
	// Each step waits until a few more requests were answered, not for a
	// guessed time: on a busy machine the clients may be slow to start.
	more := func() {
		t.Helper()
		from := answered.Load()
		for deadline := time.Now().Add(time.Minute); answered.Load() < from+5; time.Sleep(time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("no requests answered in a minute (%d so far)", answered.Load())
			}
		}
	}
	more()
	os.WriteFile(policy, []byte("allowed_tools: [\n"), 0o644) // broken
	if err := s.Reload(context.Background()); err == nil {
		t.Fatal("a broken policy reloaded")
	}
	more()
	os.WriteFile(policy, []byte(policyYAML+"allow_write: true\n"), 0o644)
	if err := s.Reload(context.Background()); err != nil {
		t.Fatal(err)
	}
	more()
	halt()
	if failed.Load() > 0 || answered.Load() < 10 {
		t.Fatalf("%d of %d requests failed across the reloads", failed.Load(), answered.Load())
	}
	writes := `{"plan": [{"role": "w", "tools": ["fs.write"], "paths": [], "budget_tokens": 1}]}`
	os.WriteFile(policy, []byte("allowed_tools: [fs.write]\nworkspace_root: /\nbudget_cap_tokens: 9\nallow_write: true\n"), 0o644)
	if status, body := post(t, ts.URL+"/v1/check", "application/json", writes); status != 200 || verdictOf(t, body) != report.Block {
		t.Fatalf("before the reload: %d %s", status, body)
	}
	if err := s.Reload(context.Background()); err != nil {
		t.Fatal(err)
	}
	if status, body := post(t, ts.URL+"/v1/check", "application/json", writes); status != 200 || verdictOf(t, body) != report.Pass {
		t.Fatalf("after the reload: %d %s", status, body)
	}
	metrics := get(t, ts.URL+"/metrics")
	for _, want := range []string{"spawngate_reloads_total 2", "spawngate_reload_failures_total 1", `spawngate_decisions_total{verdict="pass"}`, `spawngate_violations_total{rule="tools.allowlist"} 1`} {
		if !strings.Contains(metrics, want) {
			t.Errorf("metrics lack %q", want)
		}
	}
}

func get(t *testing.T, url string) string {
	t.Helper()
	res, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return string(b)
}

// The decision log: one JSON line per decision, with OPA's field names,
// the SHA-256 of the body, the policy and checks that judged it, the rule
// IDs of each child; never the body unless asked.
func TestDecisionLog(t *testing.T) {
	for _, withInput := range []bool{false, true} {
		var log syncBuffer
		s, ts, _ := newServer(t, func(c *Config) { c.DecisionLog = &log; c.LogInput = withInput; c.Checks = "sha256:checks" })
		post(t, ts.URL+"/v1/check", "application/json", blocked)
		post(t, ts.URL+"/v1/check", "application/json", `{"plan": [`)
		lines := strings.Split(strings.TrimSpace(log.String()), "\n")
		if len(lines) != 2 {
			t.Fatalf("%d lines: %s", len(lines), log.String())
		}
		var ev map[string]any
		if err := json.Unmarshal([]byte(lines[0]), &ev); err != nil {
			t.Fatal(err)
		}
		for _, key := range []string{"decision_id", "timestamp", "path", "input_sha256", "policy", "checks", "result", "labels", "metrics", "requested_by"} {
			if _, ok := ev[key]; !ok {
				t.Errorf("no %s in %s", key, lines[0])
			}
		}
		if ev["policy"] != s.PolicyDigest() || ev["checks"] != "sha256:checks" || ev["path"] != "/v1/check" {
			t.Errorf("line %s", lines[0])
		}
		result := ev["result"].(map[string]any)
		child := result["children"].([]any)[0].(map[string]any)
		if result["verdict"] != "block" || fmt.Sprint(child["rules"]) != "[paths.escape tools.allowlist tools.write]" {
			t.Errorf("result %v", result)
		}
		if _, has := ev["input"]; has != withInput {
			t.Errorf("input logged: %v, asked: %v", has, withInput)
		}
		if strings.Contains(lines[0], "shell.run") != withInput {
			t.Errorf("the body leaked into the log without being asked for: %s", lines[0])
		}
	}
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// hostsDeny is the answer a host's hook endpoint refuses with before it
// has read the payload's event.
func hostsDeny(t *testing.T, name, reason string) []byte {
	t.Helper()
	a, ok := hosts.Lookup(name)
	if !ok {
		t.Fatalf("no host %q", name)
	}
	return a.Deny("", reason)
}

// An address under /v1/hooks/ that names no host is refused, never a 404
// (Claude Code's HTTP hook spawns on any answer that is not 2xx), and in
// the form every event blocks on.
func TestUnknownHookRefuses(t *testing.T) {
	_, ts, _ := newServer(t, nil)
	payload, _ := os.ReadFile(filepath.Join("..", "..", "examples", "claude-code", "payloads", "code-reviewer.json"))
	for _, path := range []string{"/v1/hooks/claude-code/", "/v1/hooks/Claude-Code", "/v1/hooks/claude", "/v1/hooks/", "/v1/hooks/codex/x"} {
		status, body := post(t, ts.URL+path, "application/json", string(payload))
		var answer struct{ Decision, Reason string }
		if status != 200 || json.Unmarshal([]byte(body), &answer) != nil || answer.Decision != "block" ||
			!strings.Contains(answer.Reason, "no hook is served at "+path+" (the hooks are "+hookPaths()+")") {
			t.Errorf("%s: %d %s", path, status, body)
		}
	}
}

// An Agent SDK program's callback reaches the server's hook endpoint with
// its own definitions in the payload (spawngate_program): they are judged
// as the client would run them, with no session environment at all.
func TestHookEndpointJudgesAProgramsOwnAgents(t *testing.T) {
	_, ts, _ := newServer(t, func(c *Config) { c.AgentsDirs = nil; c.Home = t.TempDir() })
	payload := func(typ string) string {
		return `{"session_id": "s", "cwd": "/home/dev/project", "hook_event_name": "PreToolUse", "tool_name": "Agent", "tool_input": {"subagent_type": "` + typ + `", "prompt": "p"}, "tool_use_id": "toolu_1",
			"spawngate_program": {"project": "/home/dev/project", "agents": {"sdkreader": {"description": "d", "prompt": "p", "tools": ["Read", "Grep"]}, "sdkwriter": {"description": "d", "prompt": "p", "tools": ["Read", "Write"]}}}}`
	}
	if status, body := post(t, ts.URL+"/v1/hooks/claude-code", "application/json", payload("sdkreader")); status != 200 || body != "" {
		t.Fatalf("the program's reader: %d %s", status, body)
	}
	if status, body := post(t, ts.URL+"/v1/hooks/claude-code", "application/json", payload("sdkwriter")); status != 200 || !strings.Contains(body, `"permissionDecision":"deny"`) || !strings.Contains(body, `Write`) {
		t.Fatalf("the program's writer: %d %s", status, body)
	}
}

// hookPaths are the server's hook addresses, one for each registered host,
// as an unknown address's refusal lists them.
func hookPaths() string {
	paths := make([]string, len(hosts.All))
	for i, a := range hosts.All {
		paths[i] = "/v1/hooks/" + a.Name()
	}
	return strings.Join(paths, ", ")
}

// A server without a policy of its own has no hooks to answer: serving its
// Handler would drop each hook's connection on a nil policy, which
// Claude Code's HTTP hook reads as a pass. It refuses to be served.
func TestHandlerRefusesAServerWithoutAPolicy(t *testing.T) {
	s, err := NewWithoutPolicy(Config{Gate: judge.DefaultOptions()})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if recover() == nil {
			t.Error("Handler of a server without a policy was built")
		}
	}()
	s.Handler()
}
