package plan_test

import (
	"bytes"
	"context"
	"runtime"
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

// BenchmarkLocate is placing a report's violations in the document: the
// README's refused example (six violations), and 1,000 violations in a
// generated plan of 10,000 children, a child a line and all on one line.
func BenchmarkLocate(b *testing.B) {
	small := []byte(`{"plan": [
  {"role": "home-cleaner", "tools": ["fs.write", "fs:*", "shell.run"], "paths": ["~"], "budget_tokens": 5000000},
  {"role": "doc-reader", "tools": ["fs.read", "http.get"], "paths": ["/repo/workspace/docs"], "budget_tokens": 40000}]}`)
	smallPtrs := []string{"/plan/0/budget_tokens", "/plan/0/paths/0", "/plan/0/tools/0", "/plan/0/tools/1", "/plan/0/tools/2", "/plan/0/tools/2"}
	large := benchplan.Generate(benchplan.Default(10000))
	var largePtrs []string
	for i := 0; i < 10000; i += 10 {
		largePtrs = append(largePtrs, "/plan/"+strconv.Itoa(i)+"/tools/0")
	}
	for _, c := range []struct {
		name string
		doc  []byte
		ptrs []string
	}{{"example", small, smallPtrs}, {"children=10000", large, largePtrs}, {"children=10000/one-line", bytes.ReplaceAll(large, []byte("\n"), nil), largePtrs}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := plan.Locate(context.Background(), "plan.json", c.doc, plan.DefaultLimits, c.ptrs); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkHeldPlan is what a loaded plan of 100,000 distinct children
// holds in memory (MiB-held, after a collection) while it is judged,
// beside the document itself (MiB-document), which the gate keeps to
// place violations: the floor under the whole process's peak, since Go's
// collector lets the heap grow to about twice what is live. .ci/bench
// prints it beside the 100k-distinct row.
func BenchmarkHeldPlan(b *testing.B) {
	l, err := plan.NewLoader(plan.DefaultLimits)
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
