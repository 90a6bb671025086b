package plan_test

import (
	"context"
	"strconv"
	"testing"

	"github.com/spawngate/spawngate/internal/benchplan"
	"github.com/spawngate/spawngate/internal/plan"
)

// BenchmarkDecode is the JSON reader alone on generated plans.
func BenchmarkDecode(b *testing.B) {
	for _, n := range []int{1000, 10000, 100000} {
		data := benchplan.Generate(benchplan.Default(n))
		b.Run("children="+strconv.Itoa(n), func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				if _, err := plan.Decode(context.Background(), "plan.json", data, plan.JSON, plan.DefaultLimits); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkLoadPlan is the loader: reading and the schema step.
func BenchmarkLoadPlan(b *testing.B) {
	l, err := plan.NewLoader(plan.DefaultLimits)
	if err != nil {
		b.Fatal(err)
	}
	for _, n := range []int{1000, 10000, 100000} {
		data := benchplan.Generate(benchplan.Default(n))
		b.Run("children="+strconv.Itoa(n), func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				if _, err := l.Plan(context.Background(), "plan.json", data); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
