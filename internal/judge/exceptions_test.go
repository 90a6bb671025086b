package judge_test

import (
	"context"
	"strings"
	"testing"

	"github.com/spawngate/spawngate/internal/judge"
	"github.com/spawngate/spawngate/internal/report"
)

// An operator policy that excepts every rule a child of role "r" can break,
// for ever: whatever it excepts, a document that cannot be judged stays an
// error, and a child the schema refuses stays refused.
const exceptEverything = `{"allowed_tools": ["fs.read"], "workspace_root": "/repo", "budget_cap_tokens": 10, "exceptions": [
  {"rule": "tools.allowlist", "role": "r", "reason": "x", "expires": "2999-01-01"},
  {"rule": "tools.write", "role": "r", "reason": "x", "expires": "2999-01-01"},
  {"rule": "tools.missing", "role": "r", "reason": "x", "expires": "2999-01-01"},
  {"rule": "paths.escape", "role": "r", "reason": "x", "expires": "2999-01-01"},
  {"rule": "paths.invalid", "role": "r", "reason": "x", "expires": "2999-01-01"},
  {"rule": "budget.cap", "role": "r", "reason": "x", "expires": "2999-01-01"},
  {"rule": "budget.invalid", "role": "r", "reason": "x", "expires": "2999-01-01"}]}`

func TestExceptionsNeverPassWhatCannotBeJudged(t *testing.T) {
	ctx := context.Background()
	g, err := judge.NewWithPolicy(ctx, judge.DefaultOptions(), "policy.json", []byte(exceptEverything))
	if err != nil {
		t.Fatal(err)
	}
	for _, doc := range []string{
		``,
		`{`,
		`[]`,
		`{"plan": []}`,
		`{"plan": "r"}`,
		`{"plan": [{"role": "r", "tools": ["shell.run"], "paths": [], "budget_tokens": 1}], "extra": 1}`,
		`{"plan": [{"role": "r", "tools": ["shell.run"], "paths": [], "budget_tokens": 1}], "policy": {"exceptions": []}}`,
		`{"plan": [{"role": "r", "tools": ["shell.run"], "paths": [], "budget_tokens": 1}], "plan": []}`,
	} {
		res, err := g.JudgeBytes(ctx, "plan.json", []byte(doc), report.DefaultMaxListed)
		if err == nil {
			t.Errorf("%q: judged %s, want an error", doc, res.Verdict)
		}
	}
	// The schema step's refusals are never excepted.
	res, err := g.JudgeBytes(ctx, "plan.json", []byte(`{"plan": [{"role": "r", "tools": ["shell.run"], "paths": [], "budget_tokens": 1, "powers": "all"}]}`), report.DefaultMaxListed)
	if err != nil {
		t.Fatal(err)
	}
	if res.Verdict != report.Block {
		t.Fatalf("verdict %s, want block: an unknown key is the schema's", res.Verdict)
	}
	var blocking []string
	for _, v := range res.Children[0].Violations {
		if v.Blocks() {
			blocking = append(blocking, v.Rule)
		}
	}
	if strings.Join(blocking, ",") != "schema" {
		t.Errorf("blocking %v, want only the schema's (everything else is excepted)", blocking)
	}
}
