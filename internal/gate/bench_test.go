package gate_test

import (
	"context"
	"strconv"
	"testing"

	"github.com/spawngate/spawngate/internal/benchplan"
)

// BenchmarkEvaluate is the Rego step alone, on plans already loaded.
func BenchmarkEvaluate(b *testing.B) {
	e := builtin(b)
	operator := mustPolicy(b, benchplan.Policy)
	for _, n := range []int{1000, 10000, 100000} {
		p := mustPlan(b, string(benchplan.Generate(benchplan.Default(n))))
		b.Run("children="+strconv.Itoa(n), func(b *testing.B) {
			for b.Loop() {
				if _, err := e.Evaluate(context.Background(), operator, p); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	// The worst case: every child has a task directory of its own, so no
	// two are alike and every one is evaluated.
	o := benchplan.Default(10000)
	o.Shards = 0
	p := mustPlan(b, string(benchplan.Generate(o)))
	b.Run("children=10000/distinct", func(b *testing.B) {
		for b.Loop() {
			if _, err := e.Evaluate(context.Background(), operator, p); err != nil {
				b.Fatal(err)
			}
		}
	})
}
