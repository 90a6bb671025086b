package decisionlog

import (
	"bytes"
	"encoding/json"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/spawngate/spawngate/internal/report"
)

var uuid4 = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)

func blocked() *report.Report {
	return &report.Report{Results: []report.Result{{
		Source:  "plan.json",
		Verdict: report.Block,
		Children: []report.Child{
			{Index: 0, Role: "home-cleaner", Verdict: report.Block, Violations: []report.Violation{
				{Rule: "tools.allowlist", Message: `tool "secret-nonce-123" is not allowed`, Path: "/plan/0/tools/0"},
				{Rule: "tools.allowlist", Message: "again", Path: "/plan/0/tools/1"},
				{Rule: "budget.cap", Message: "over", Path: "/plan/0/budget_tokens"},
			}},
			{Index: 1, Role: "doc-reader", Verdict: report.Pass},
		},
	}}}
}

func line(t *testing.T, withInput bool, d Decision) (map[string]any, string) {
	t.Helper()
	var buf bytes.Buffer
	if err := New(&buf, "instance", "v1.2.3", "sha256:checks", withInput).Write(d); err != nil {
		t.Fatal(err)
	}
	text := buf.String()
	if strings.Count(text, "\n") != 1 || !strings.HasSuffix(text, "\n") {
		t.Fatalf("want exactly one line, got %q", text)
	}
	var ev map[string]any
	if err := json.Unmarshal([]byte(text), &ev); err != nil {
		t.Fatalf("not JSON: %v: %s", err, text)
	}
	return ev, text
}

func TestLineFields(t *testing.T) {
	doc := []byte(`{"plan": [{"brief": "secret-nonce-123"}]}`)
	ev, text := line(t, false, Decision{Path: "/v1/check", RequestedBy: "127.0.0.1:5", Policy: "sha256:policy",
		Input: doc, Verdict: report.Block, Report: blocked(), Took: 1500 * time.Microsecond})
	if strings.Contains(text, "secret-nonce-123") {
		t.Errorf("the line carries the document or a message quoting it: %s", text)
	}
	if id, _ := ev["decision_id"].(string); !uuid4.MatchString(id) {
		t.Errorf("decision_id %q is not a version 4 UUID", id)
	}
	if ts, _ := ev["timestamp"].(string); ts == "" {
		t.Error("no timestamp")
	} else if _, err := time.Parse(time.RFC3339Nano, ts); err != nil {
		t.Errorf("timestamp: %v", err)
	}
	want := map[string]any{
		"path":         "/v1/check",
		"requested_by": "127.0.0.1:5",
		"policy":       "sha256:policy",
		"checks":       "sha256:checks",
		"input_sha256": Sum(doc),
		"labels":       map[string]any{"id": "instance", "version": "v1.2.3"},
		"metrics":      map[string]any{"timer_decision_ns": float64(1500000)},
		"result": map[string]any{"verdict": "block", "children": []any{
			map[string]any{"index": float64(0), "verdict": "block", "rules": []any{"tools.allowlist", "budget.cap"}},
			map[string]any{"index": float64(1), "verdict": "pass"},
		}},
	}
	for k, v := range want {
		got, _ := json.Marshal(ev[k])
		exp, _ := json.Marshal(v)
		if !bytes.Equal(got, exp) {
			t.Errorf("%s = %s, want %s", k, got, exp)
		}
	}
	if _, ok := ev["input"]; ok {
		t.Error("input written without withInput")
	}
}

func TestInputOnlyWhenAsked(t *testing.T) {
	doc := []byte(`{"plan": []}`)
	ev, _ := line(t, true, Decision{Path: "check", Input: doc, Verdict: report.NotJudged, Err: "plan.json:1:10: /plan: empty"})
	if got, _ := json.Marshal(ev["input"]); string(got) != `{"plan":[]}` {
		t.Errorf("input = %s, want the document as JSON", got)
	}
	if ev["error"] != "plan.json:1:10: /plan: empty" {
		t.Errorf("error = %v", ev["error"])
	}
	// YAML, or bytes that are not JSON, are kept as a JSON string.
	ev, _ = line(t, true, Decision{Path: "check", Input: []byte("plan:\n  - x\n"), Verdict: report.NotJudged})
	if ev["input"] != "plan:\n  - x\n" {
		t.Errorf("input = %#v, want the YAML text as a string", ev["input"])
	}
}

func TestDigestWithoutDocument(t *testing.T) {
	ev, _ := line(t, false, Decision{Path: "hook claude-code", InputSHA256: "abc", Verdict: report.Pass})
	if ev["input_sha256"] != "abc" {
		t.Errorf("input_sha256 = %v, want the digest given", ev["input_sha256"])
	}
	if _, ok := ev["result"].(map[string]any)["children"]; ok {
		t.Error("children listed without a report")
	}
}

// Lines written at once from many goroutines never interleave.
func TestConcurrentLinesStayWhole(t *testing.T) {
	var buf bytes.Buffer
	l := New(&buf, "i", "v", "c", false)
	var wg sync.WaitGroup
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 50 {
				if err := l.Write(Decision{Path: "/v1/check", Verdict: report.Block, Report: blocked()}); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	if len(lines) != 800 {
		t.Fatalf("%d lines, want 800", len(lines))
	}
	ids := map[string]bool{}
	for _, ln := range lines {
		var ev struct {
			DecisionID string `json:"decision_id"`
		}
		if err := json.Unmarshal([]byte(ln), &ev); err != nil {
			t.Fatalf("a line is not whole JSON: %v: %q", err, ln)
		}
		if ids[ev.DecisionID] {
			t.Fatalf("decision_id %s written twice", ev.DecisionID)
		}
		ids[ev.DecisionID] = true
	}
}

// Excepted violations are logged apart from the rules that refuse, with
// the exception that let each through; what refuses the plan as a whole,
// and the exceptions that did not apply, are logged too.
func TestExceptionsAndPlanRulesLogged(t *testing.T) {
	rep := blocked()
	res := &rep.Results[0]
	res.Children[0].Violations[2].Excepted = &report.Exception{Index: 3, Rule: "budget.cap", Reason: "secret-nonce-123 in a reason"}
	res.Violations = []report.Violation{{Rule: "plan.children", Path: "/plan", Message: "too many"}}
	res.Exceptions = []report.ExceptionNote{{Exception: report.Exception{Index: 1}, Status: report.ExceptionExpired}}
	ev, text := line(t, false, Decision{Path: "check", Verdict: report.Block, Report: rep})
	if strings.Contains(text, "secret-nonce-123") {
		t.Errorf("an exception's reason is written: %s", text)
	}
	got, _ := json.Marshal(ev["result"])
	want := `{"children":[{"excepted":[{"exception":3,"rule":"budget.cap"}],"index":0,"rules":["tools.allowlist"],"verdict":"block"},{"index":1,"verdict":"pass"}],"exceptions":[{"exception":1,"status":"expired"}],"rules":["plan.children"],"verdict":"block"}`
	if string(got) != want {
		t.Errorf("result\n got %s\nwant %s", got, want)
	}
}

// The line's bytes are OPA's field names and the report's values, in a
// fixed order: a change to the model or to how the log reads it must not
// move them. Only the decision id and the time differ between runs.
func TestLineBytes(t *testing.T) {
	rep := blocked()
	exc := &report.Exception{Index: 2, Pointer: "/exceptions/2", Rule: "budget.cap", Reason: "r", Expires: "2099-01-01"}
	rep.Results[0].Children[1].Violations = []report.Violation{
		{Rule: "budget.cap", Message: "over", Path: "/plan/1/budget_tokens", Excepted: exc},
		{Rule: "budget.cap", Message: "over again", Path: "/plan/1/budget_tokens", Excepted: exc},
	}
	rep.Results[0].Violations = []report.Violation{{Rule: "plan.children", Path: "/plan"}, {Rule: "plan.children", Path: "/plan"}}
	rep.Results[0].Exceptions = []report.ExceptionNote{{Exception: report.Exception{Index: 0}, Status: report.ExceptionExpired}}
	_, text := line(t, false, Decision{Path: "check", Policy: "sha256:policy", InputSHA256: "abc", Verdict: report.Block, Report: rep, Err: "", Took: 42})
	masked := regexp.MustCompile(`"decision_id":"[^"]*","path":"check","timestamp":"[^"]*"`).ReplaceAllString(text, `"decision_id":"ID","path":"check","timestamp":"TS"`)
	want := `{"labels":{"id":"instance","version":"v1.2.3"},"decision_id":"ID","path":"check","timestamp":"TS","input_sha256":"abc","policy":"sha256:policy","checks":"sha256:checks",` +
		`"result":{"verdict":"block","rules":["plan.children"],"children":[{"index":0,"verdict":"block","rules":["tools.allowlist","budget.cap"]},` +
		`{"index":1,"verdict":"pass","excepted":[{"rule":"budget.cap","exception":2}]}],"exceptions":[{"exception":0,"status":"expired"}]},"metrics":{"timer_decision_ns":42}}` + "\n"
	if masked != want {
		t.Fatalf("line\n%s\nwant\n%s", masked, want)
	}
}
