package engine

import (
	"context"
	"testing"

	"github.com/spawngate/spawngate/internal/benchplan"
	"github.com/spawngate/spawngate/internal/document"
	"github.com/spawngate/spawngate/internal/plan"
)

// distinctPlan is a plan of n children no two of which are alike.
func distinctPlan(n int) string { return string(benchplan.Generate(benchplan.Distinct(n))) }

// A plan of more kinds of children than the memory keeps leaves it as it
// was: it would push every entry out, and find none of its own again.
func TestALargeDistinctPlanLeavesTheMemoryAlone(t *testing.T) {
	LongProperty(t)
	e, _ := engines(t)
	l, err := plan.NewLoader(document.DefaultLimits)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	pol, err := l.Policy(ctx, "policy.json", []byte(benchplan.Policy))
	if err != nil {
		t.Fatal(err)
	}
	judge := func(doc string) {
		t.Helper()
		p, err := l.Plan(ctx, "plan.json", []byte(doc))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := e.Evaluate(ctx, pol, p); err != nil {
			t.Fatal(err)
		}
	}
	judge(distinctPlan(3))
	if n := e.childMemo.Len(); n != 3 {
		t.Fatalf("after a plan of 3 kinds of children: %d decisions remembered, want 3", n)
	}
	judge(distinctPlan(e.childMemo.Cap() + 1))
	if n := e.childMemo.Len(); n != 3 {
		t.Errorf("after a plan of %d kinds: %d decisions remembered, want the 3 of before", e.childMemo.Cap()+1, n)
	}
	judge(distinctPlan(e.childMemo.Cap()))
	if e.childMemo.Len() != e.childMemo.Cap() {
		t.Errorf("a plan of exactly %d kinds is remembered: %d decisions", e.childMemo.Cap(), e.childMemo.Len())
	}
}
