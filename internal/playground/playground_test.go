package playground

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
	"testing"

	"github.com/spawngate/spawngate/internal/judge"
	"github.com/spawngate/spawngate/internal/report"
	"github.com/spawngate/spawngate/internal/server"
)

// start serves a playground on 127.0.0.1, with cfg's settings changed by
// set.
func start(t *testing.T, set func(*Config)) (*httptest.Server, *Playground) {
	t.Helper()
	ts := httptest.NewUnstartedServer(nil)
	cfg := Config{Server: server.Config{Gate: judge.DefaultOptions(), MaxConcurrent: 2, MaxListed: 100}, Hosts: Hosts(ts.Listener.Addr().String())}
	if set != nil {
		set(&cfg)
	}
	p, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ts.Config.Handler = p.Handler()
	ts.Start()
	t.Cleanup(ts.Close)
	return ts, p
}

// post sends a judging request as the page does, headers changed by set.
func post(t *testing.T, ts *httptest.Server, req request, set func(*http.Request)) (int, answer, []byte) {
	t.Helper()
	body, _ := json.Marshal(req)
	r, _ := http.NewRequest(http.MethodPost, ts.URL+JudgePath, bytes.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Origin", ts.URL)
	r.Header.Set("Sec-Fetch-Site", "same-origin")
	if set != nil {
		set(r)
	}
	res, err := ts.Client().Do(r)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	var a answer
	if err := json.Unmarshal(raw, &a); err != nil {
		t.Fatalf("status %d: the answer is not JSON: %v\n%s", res.StatusCode, err, raw)
	}
	return res.StatusCode, a, raw
}

const repo = "../.."

// rules lists a result's violations as "child rule pointer".
func rules(res report.Result) string {
	var out []string
	for _, v := range res.Violations {
		out = append(out, "plan "+v.Rule+" "+v.Path)
	}
	for _, c := range res.Children {
		for _, v := range c.Violations {
			out = append(out, fmt.Sprint(c.Index)+" "+v.Rule+" "+v.Path)
		}
	}
	return strings.Join(out, "\n")
}

// TestExamplesJudgedAsCheckJudges: every example the page offers gets
// the verdict, and the violations, that check gives the same files.
func TestExamplesJudgedAsCheckJudges(t *testing.T) {
	ts, _ := start(t, nil)
	exs, err := Examples()
	if err != nil {
		t.Fatal(err)
	}
	if len(exs) != len(exampleFiles) {
		t.Fatalf("%d examples, want %d", len(exs), len(exampleFiles))
	}
	seen := map[report.Verdict]int{}
	for i, ex := range exs {
		f := exampleFiles[i]
		t.Run(f.plan, func(t *testing.T) {
			opts := judge.DefaultOptions()
			if withChecks[f.plan] && f.policy == "policy.yaml" {
				opts.Checks = []string{filepath.Join(repo, "examples", "checks")}
			}
			g, err := judge.New(context.Background(), opts, filepath.Join(repo, "examples", f.policy))
			if err != nil {
				t.Fatal(err)
			}
			want, err := g.JudgeFile(context.Background(), filepath.Join(repo, "examples", f.plan), nil, 100)
			if err != nil {
				t.Fatal(err)
			}
			status, got, raw := post(t, ts, request{Plan: ex.Plan, Policy: ex.Policy, Checks: ex.Checks}, nil)
			if status != http.StatusOK || got.Verdict != want.Verdict {
				t.Fatalf("status %d, verdict %q; check says %q:\n%s", status, got.Verdict, want.Verdict, raw)
			}
			if !strings.Contains(got.HTML, "<!DOCTYPE html>") && !strings.Contains(got.HTML, "<!doctype html>") {
				t.Errorf("the answer carries no HTML page:\n%.300s", got.HTML)
			}
			for _, line := range strings.Split(rules(want), "\n") {
				if fields := strings.Fields(line); len(fields) == 3 && !strings.Contains(got.HTML, fields[1]) {
					t.Errorf("the report does not cite %s, which check cites", fields[1])
				}
			}
			seen[got.Verdict]++
		})
	}
	if seen[report.Pass] == 0 || seen[report.Block] == 0 {
		t.Errorf("verdicts %v: the examples should show both a pass and a block", seen)
	}
}

// TestRefusals: each request the playground does not judge gets its
// status and a one-line JSON error.
func TestRefusals(t *testing.T) {
	ts, _ := start(t, func(c *Config) { c.Server.Gate.Limits.MaxBytes = 8 << 10; c.MaxChecksBytes = 1 << 10 })
	tokened, _ := start(t, func(c *Config) { c.Server.Token = []byte("s3cret") })
	pol, _ := os.ReadFile(filepath.Join(repo, "examples", "policy.yaml"))
	plan, _ := os.ReadFile(filepath.Join(repo, "examples", "refused-plan.yaml"))
	ok := request{Plan: string(plan), Policy: string(pol)}
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "broken.rego"), []byte("package spawngate.checks.x\nnot rego\n"), 0o644)
	for _, c := range []struct {
		name   string
		ts     *httptest.Server
		req    request
		set    func(*http.Request)
		status int
		says   string
	}{
		{"judged", ts, ok, nil, 200, ""},
		{"other origin", ts, ok, func(r *http.Request) {
			r.Header.Set("Origin", "http://evil.example")
			r.Header.Set("Sec-Fetch-Site", "cross-site")
		}, 403, "other origins"},
		{"other origin, no fetch metadata", ts, ok, func(r *http.Request) {
			r.Header.Set("Origin", "http://evil.example")
			r.Header.Del("Sec-Fetch-Site")
		}, 403, "other origins"},
		{"rebound host", ts, ok, func(r *http.Request) {
			r.Host = "evil.example" + ts.URL[strings.LastIndex(ts.URL, ":"):]
			r.Header.Set("Origin", "http://"+r.Host)
		}, 403, "addressed to 127.0.0.1"},
		{"too large", ts, request{Plan: strings.Repeat("#", 9<<10), Policy: string(pol)}, nil, 413, "larger than 8192 bytes"},
		{"bad policy", ts, request{Plan: string(plan), Policy: "allowed_tools: [fs.read]\nworkspace_root: 7\n"}, nil, 422, "policy.yaml:"},
		{"no policy", ts, request{Plan: string(plan)}, nil, 422, "no operator policy"},
		{"a folder of checks", ts, request{Plan: string(plan), Policy: string(pol) + "checks: [" + dir + "]\n"}, nil, 422, "reads nothing from the file system"},
		{"bad checks", ts, request{Plan: string(plan), Policy: string(pol), Checks: "package spawngate.checks.x\nnot rego\n"}, nil, 422, "checks.rego:"},
		{"bad plan", ts, request{Plan: "plan: [", Policy: string(pol)}, nil, 422, "plan.yaml:"},
		{"not JSON", ts, ok, func(r *http.Request) { r.Header.Set("Content-Type", "text/plain") }, 415, "application/json"},
		{"YAML", ts, ok, func(r *http.Request) { r.Header.Set("Content-Type", "application/yaml") }, 415, "must be application/json"},
		{"checks too large", ts, request{Plan: string(plan), Policy: string(pol), Checks: strings.Repeat("#\n", 600)}, nil, 422, "limit --max-checks-bytes"},
		{"no token", tokened, ok, nil, 401, "bearer token"},
		{"wrong token", tokened, ok, func(r *http.Request) { r.Header.Set("Authorization", "Bearer nope") }, 401, "bearer token"},
		{"token", tokened, ok, func(r *http.Request) { r.Header.Set("Authorization", "Bearer s3cret") }, 200, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			status, a, raw := post(t, c.ts, c.req, c.set)
			if status != c.status {
				t.Fatalf("status %d, want %d:\n%s", status, c.status, raw)
			}
			if c.status == 200 {
				if a.Verdict != report.Block {
					t.Errorf("verdict %q, want block", a.Verdict)
				}
				return
			}
			if a.Verdict != report.NotJudged || strings.Contains(a.Error, "\n") || !strings.Contains(a.Error, c.says) {
				t.Errorf("answer %s: want verdict error and a one-line error saying %q", raw, c.says)
			}
		})
	}
}

// TestRoutes: the page and its files answer GET alone, and nothing else
// is served.
func TestRoutes(t *testing.T) {
	ts, _ := start(t, nil)
	for path, want := range map[string]int{"/": 200, "/playground.js": 200, "/playground.css": 200, "/examples": 200, "/x": 404, "//": 404, "/v1/check": 404} {
		res, err := ts.Client().Get(ts.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != want {
			t.Errorf("GET %s: %d, want %d", path, res.StatusCode, want)
		}
	}
	res, err := ts.Client().Get(ts.URL + JudgePath)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("GET %s: %d, want 405", JudgePath, res.StatusCode)
	}
}

// TestContentSecurityPolicy: the page loads nothing from anywhere else,
// runs no inline script, and may be framed by nothing.
func TestContentSecurityPolicy(t *testing.T) {
	ts, _ := start(t, nil)
	res, err := ts.Client().Get(ts.URL + "/")
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(res.Body)
	res.Body.Close()
	csp := res.Header.Get("Content-Security-Policy")
	directives := map[string]string{}
	for _, d := range strings.Split(csp, ";") {
		name, value, _ := strings.Cut(strings.TrimSpace(d), " ")
		directives[name] = value
	}
	for name, want := range map[string]string{"default-src": "'none'", "script-src": "'self'", "connect-src": "'self'", "img-src": "data:", "frame-ancestors": "'self'", "base-uri": "'none'", "form-action": "'none'"} {
		if directives[name] != want {
			t.Errorf("%s %q, want %q (CSP %q)", name, directives[name], want, csp)
		}
	}
	if !strings.HasPrefix(directives["style-src"], "'self' 'sha256-") || strings.Contains(csp, "unsafe") {
		t.Errorf("style-src %q: want the playground's own and the report's by hash, nothing unsafe", directives["style-src"])
	}
	if bytes.Contains(page, []byte("<script>")) || bytes.Contains(page, []byte(" style=")) || bytes.Contains(page, []byte("http")) {
		t.Error("the page has inline script or style, or names another site")
	}
	if !bytes.Contains(page, []byte(`sandbox=""`)) {
		t.Error("the report's frame is not sandboxed with nothing allowed")
	}
}

// TestGatesBounded: however many policies come, the playground keeps at
// most MaxGates gates, and a policy it keeps is not built again.
func TestGatesBounded(t *testing.T) {
	ts, p := start(t, func(c *Config) { c.MaxGates = 3 })
	plan := `{"plan": [{"role": "r", "tools": ["fs.read"], "paths": [], "budget_tokens": 1}]}`
	for i := range 8 {
		pol := fmt.Sprintf("allowed_tools: [fs.read]\nworkspace_root: /w\nbudget_cap_tokens: %d\n", 1000+i)
		if status, _, raw := post(t, ts, request{Plan: plan, Policy: pol}, nil); status != 200 {
			t.Fatalf("status %d: %s", status, raw)
		}
		if n := p.gates.len(); n > 3 {
			t.Fatalf("%d gates kept, want at most 3", n)
		}
	}
	pol := "allowed_tools: [fs.read]\nworkspace_root: /w\nbudget_cap_tokens: 1007\n"
	g1, err := p.gates.get(context.Background(), p.cfg.Server.Gate, "policy.yaml", []byte(pol), nil)
	if err != nil {
		t.Fatal(err)
	}
	g2, _ := p.gates.get(context.Background(), p.cfg.Server.Gate, "policy.yaml", []byte(pol), nil)
	if g1 != g2 {
		t.Error("a kept policy's gate was built again")
	}
	// A gate built once its request has ended is not kept: what was too
	// costly to build in time must not come from the cache in no time.
	ended, cancel := context.WithCancel(context.Background())
	cancel()
	late := "allowed_tools: [fs.read]\nworkspace_root: /late\nbudget_cap_tokens: 1\n"
	if g, err := p.gates.get(ended, p.cfg.Server.Gate, "policy.yaml", []byte(late), nil); g != nil || err == nil {
		t.Errorf("a gate built for an ended request: %v, %v", g, err)
	}
	if g, _ := p.gates.get(context.Background(), p.cfg.Server.Gate, "policy.yaml", []byte(late), nil); g == nil {
		t.Error("the same policy, asked for in time, builds no gate")
	}
}

// TestModulesKeepLines: the checks field's modules are split at their
// package lines, each keeping its lines in the field.
func TestModulesKeepLines(t *testing.T) {
	text := "# METADATA\n# title: a\npackage a\n\nx := 1\n# helpers\npackage b\ny := 2\n"
	mods := modules(text)
	if len(mods) != 2 {
		t.Fatalf("%d modules, want 2: %+v", len(mods), mods)
	}
	if !strings.HasPrefix(mods[0].Source, "# METADATA\n") || strings.Contains(mods[0].Source, "package b") {
		t.Errorf("first module %q", mods[0].Source)
	}
	if lines := strings.Split(mods[1].Source, "\n"); lines[5] != "# helpers" || lines[6] != "package b" {
		t.Errorf("second module %q does not keep its lines", mods[1].Source)
	}
}

// TestHosts: a loopback address answers localhost's names for its port.
func TestHosts(t *testing.T) {
	got := strings.Join(Hosts("127.0.0.1:8322"), " ")
	if got != "127.0.0.1:8322 localhost:8322 127.0.0.1:8322 [::1]:8322" {
		t.Errorf("Hosts = %s", got)
	}
	if got := strings.Join(Hosts("10.0.0.2:80", "gate.internal"), " "); got != "10.0.0.2:80 gate.internal:80" {
		t.Errorf("Hosts = %s", got)
	}
}
