package gate_test

import (
	"context"
	"testing"

	"github.com/spawngate/spawngate/internal/gate"
)

func TestZZScratch(t *testing.T) {
	e, l := builtin(t), loader(t)
	op := mustPolicy(t, operatorPolicy)
	for _, doc := range []string{
		`{"plan":[{"agent":{}}]}`,
		`{"plan":[{"role":"w","tools":["fs.read"],"paths":[],"budget_tokens":1,"agent":{}}]}`,
		`{"plan":[{"role":"w","tools":["fs.read"],"paths":[],"budget_tokens":"x","agent":{}}]}`,
		`{"plan":[{"role":"w","tools":["fs.read"],"paths":[],"budget_tokens":1,"agent":{"host":"codex","type":"w"}}]}`,
		`{"plan":[{"role":"w","tools":["fs.read"],"budget_tokens":1,"agent":{"host":"codex","type":"w"}}]}`,
		`{"plan":[{"role":"w","paths":[],"budget_tokens":1,"agent":{"host":"codex","type":"w"}}]}`,
	} {
		p, err := l.Plan(context.Background(), "x.json", []byte(doc))
		if err != nil {
			t.Logf("%s: load error %v", doc, err)
			continue
		}
		t.Logf("reps %v group %v groupissues %v", p.Reps, p.Group, p.GroupIssues)
		res, err := e.Evaluate(context.Background(), op, p, gate.ListAtMost(1<<30))
		if err != nil {
			t.Logf("%s: eval error %v", doc, err)
			continue
		}
		for _, v := range res.Children[0].Violations {
			t.Logf("%s\n   %s %q %s", doc, v.Rule, v.Path, v.Message)
		}
	}
}
