package gate_test

import (
	"context"
	"strconv"
	"testing"

	"github.com/spawngate/spawngate/internal/benchplan"
)

// BenchmarkEvaluate is the Rego step alone, on plans already loaded, of
// both shapes: repeating (a few templates and 64 task directories, so
// children group) and distinct (every child its own role, budget and
// paths, as real fan-outs are written: none groups).
func BenchmarkEvaluate(b *testing.B) {
	e := builtin(b)
	operator := mustPolicy(b, benchplan.Policy)
	for _, shape := range []struct {
		name string
		opts func(int) benchplan.Options
	}{{"repeating", benchplan.Default}, {"distinct", benchplan.Distinct}} {
		for _, n := range []int{1000, 10000, 100000} {
			p := mustPlan(b, string(benchplan.Generate(shape.opts(n))))
			b.Run(shape.name+"/children="+strconv.Itoa(n), func(b *testing.B) {
				for b.Loop() {
					if _, err := e.Evaluate(context.Background(), operator, p); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
