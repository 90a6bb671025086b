package plan_test

import (
	"context"
	"runtime"
	"strconv"
	"testing"

	"github.com/spawngate/spawngate/internal/benchplan"
	"github.com/spawngate/spawngate/internal/document"
	"github.com/spawngate/spawngate/internal/plan"
)

// BenchmarkLoadPlan is the loader: reading and the schema step.
func BenchmarkLoadPlan(b *testing.B) {
	l, err := plan.NewLoader(document.DefaultLimits)
	if err != nil {
		b.Fatal(err)
	}
	for _, shape := range []struct {
		name string
		opts func(int) benchplan.Options
	}{{"repeating", benchplan.Default}, {"distinct", benchplan.Distinct}} {
		for _, n := range []int{1000, 10000, 100000} {
			data := benchplan.Generate(shape.opts(n))
			b.Run(shape.name+"/children="+strconv.Itoa(n), func(b *testing.B) {
				b.SetBytes(int64(len(data)))
				for b.Loop() {
					if _, err := l.Plan(context.Background(), "plan.json", data); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// BenchmarkHeldPlan is what a loaded plan of 100,000 distinct children
// holds in memory (MiB-held, after a collection) while it is judged,
// beside the document itself (MiB-document), which the gate keeps to
// place violations: the floor under the whole process's peak, since Go's
// collector lets the heap grow to about twice what is live. .ci/bench
// prints it beside the 100k-distinct row.
func BenchmarkHeldPlan(b *testing.B) {
	l, err := plan.NewLoader(document.DefaultLimits)
	if err != nil {
		b.Fatal(err)
	}
	data := benchplan.Generate(benchplan.Distinct(100000))
	var held float64
	for b.Loop() {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		p, err := l.Plan(context.Background(), "plan.json", data)
		if err != nil {
			b.Fatal(err)
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		runtime.KeepAlive(p)
		held = float64(int64(after.HeapAlloc)-int64(before.HeapAlloc)) / (1 << 20)
	}
	b.ReportMetric(held, "MiB-held")
	b.ReportMetric(float64(len(data))/(1<<20), "MiB-document")
}
