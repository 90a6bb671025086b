package document_test

import (
	"bytes"
	"context"
	"strconv"
	"testing"

	"github.com/spawngate/spawngate/internal/benchplan"
	"github.com/spawngate/spawngate/internal/document"
)

// BenchmarkDecode is the JSON reader alone on generated plans.
func BenchmarkDecode(b *testing.B) {
	for _, n := range []int{1000, 10000, 100000} {
		data := benchplan.Generate(benchplan.Default(n))
		b.Run("children="+strconv.Itoa(n), func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				if _, err := document.Decode(context.Background(), "plan.json", data, document.JSON, document.DefaultLimits); err != nil {
					b.Fatal(err)
				}
			}
		})
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
				if _, err := document.Locate(context.Background(), "plan.json", c.doc, document.DefaultLimits, c.ptrs); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
