package spawngate_test

import (
	"context"
	"fmt"
	"os"
	"sync/atomic"
	"testing"

	"github.com/spawngate/spawngate"
)

// BenchmarkGate is one two-child decision through the public API, as a Go
// orchestrator makes it from its spawn path: Check on a document's bytes
// and CheckPlan on a plan built in code, each on the README's example
// (judged again and again, so its children are remembered) and "fresh"
// (a number in a role and a path makes every plan's children new).
func BenchmarkGate(b *testing.B) {
	ctx := context.Background()
	g, err := spawngate.New(ctx, spawngate.WithPolicyFile("examples/policy.yaml"))
	if err != nil {
		b.Fatal(err)
	}
	doc, err := os.ReadFile("examples/refused-plan.json")
	if err != nil {
		b.Fatal(err)
	}
	var n atomic.Int64
	plan := func(i int64) spawngate.Plan {
		return spawngate.Plan{Children: []spawngate.Spawn{
			{Role: fmt.Sprint("home-cleaner-", i), Tools: []string{"fs.write", "fs:*", "shell.run"}, Paths: []string{"~"}, BudgetTokens: 5000000},
			{Role: fmt.Sprint("doc-reader-", i), Tools: []string{"fs.read", "http.get"}, Paths: []string{fmt.Sprint("/repo/workspace/docs/", i)}, BudgetTokens: 40000},
		}}
	}
	blocked := func(b *testing.B, res spawngate.Result, err error) {
		if err != nil || res.Verdict != spawngate.Block {
			b.Fatalf("want a block, got %v, %v", res.Verdict, err)
		}
	}
	b.Run("Check", func(b *testing.B) {
		for b.Loop() {
			res, err := g.Check(ctx, "plan.json", doc)
			blocked(b, res, err)
		}
	})
	b.Run("Check/fresh", func(b *testing.B) {
		for b.Loop() {
			i := n.Add(1)
			d := fmt.Appendf(nil, `{"plan": [
				{"role": "home-cleaner-%d", "tools": ["fs.write", "fs:*", "shell.run"], "paths": ["~"], "budget_tokens": 5000000},
				{"role": "doc-reader-%d", "tools": ["fs.read", "http.get"], "paths": ["/repo/workspace/docs/%d"], "budget_tokens": 40000}]}`, i, i, i)
			res, err := g.Check(ctx, "plan.json", d)
			blocked(b, res, err)
		}
	})
	b.Run("CheckPlan", func(b *testing.B) {
		p := plan(0)
		for b.Loop() {
			res, err := g.CheckPlan(ctx, p)
			blocked(b, res, err)
		}
	})
	b.Run("CheckPlan/fresh", func(b *testing.B) {
		for b.Loop() {
			res, err := g.CheckPlan(ctx, plan(n.Add(1)))
			blocked(b, res, err)
		}
	})
}
