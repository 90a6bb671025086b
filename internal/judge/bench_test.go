package judge_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/spawngate/spawngate/internal/judge"
	"github.com/spawngate/spawngate/internal/report"
)

// BenchmarkDecision is one in-process decision on the README's two-child
// example: the document loaded and judged, as a server or a Go
// orchestrator would make it, on one goroutine and on every core
// (parallel). The gate is built once, as such a caller would build it.
// Judged again and again, the example's children are remembered (see
// gate.Engine.Evaluate); "fresh" gives every decision children never seen
// before (a number in a role and a path), the cost of a first decision.
func BenchmarkDecision(b *testing.B) {
	g, err := judge.New(context.Background(), judge.DefaultOptions(), filepath.Join("..", "..", "examples", "policy.yaml"))
	if err != nil {
		b.Fatal(err)
	}
	for _, example := range []string{"refused-plan.json", "authorized-plan.json"} {
		data, err := os.ReadFile(filepath.Join("..", "..", "examples", example))
		if err != nil {
			b.Fatal(err)
		}
		decide := func(b *testing.B) {
			res, err := g.JudgeBytes(context.Background(), "plan.json", data, report.DefaultMaxListed)
			if err != nil || res.Verdict == report.NotJudged {
				b.Fatal(err)
			}
		}
		b.Run(example, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				decide(b)
			}
		})
		b.Run(example+"/parallel", func(b *testing.B) {
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					decide(b)
				}
			})
		})
	}
	var n atomic.Int64
	fresh := func(b *testing.B) {
		i := n.Add(1)
		data := fmt.Appendf(nil, `{"plan": [
			{"role": "home-cleaner-%d", "tools": ["fs.write", "fs:*", "shell.run"], "paths": ["~"], "budget_tokens": 5000000},
			{"role": "doc-reader-%d", "tools": ["fs.read", "http.get"], "paths": ["/repo/workspace/docs/%d"], "budget_tokens": 40000}]}`, i, i, i)
		if res, err := g.JudgeBytes(context.Background(), "plan.json", data, report.DefaultMaxListed); err != nil || res.Verdict != report.Block {
			b.Fatal(err)
		}
	}
	freshAuthorized := func(b *testing.B) {
		i := n.Add(1)
		data := fmt.Appendf(nil, `{"plan": [
			{"role": "doc-writer-%d", "tools": ["fs.read"], "paths": ["/repo/workspace/docs/%d"], "budget_tokens": 30000},
			{"role": "doc-reader-%d", "tools": ["fs.read", "http.get"], "paths": ["/repo/workspace/docs/%d/notes.md"], "budget_tokens": 40000}]}`, i, i, i, i)
		if res, err := g.JudgeBytes(context.Background(), "plan.json", data, report.DefaultMaxListed); err != nil || res.Verdict != report.Pass {
			b.Fatal(err, res.Verdict)
		}
	}
	b.Run("fresh-authorized", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			freshAuthorized(b)
		}
	})
	b.Run("fresh", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			fresh(b)
		}
	})
	b.Run("fresh/parallel", func(b *testing.B) {
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				fresh(b)
			}
		})
	})
}

// BenchmarkUnknownKeys is a plan of n top-level keys the schema does not
// know, judged as check and serve judge it: refused as a document, each
// key a problem placed on its line. Placing them read every key once per
// problem, which made the whole quadratic in n (12,500 YAML keys 0.6 s,
// 50,000 keys 7.4 s); it is linear now, in YAML and JSON alike.
func BenchmarkUnknownKeys(b *testing.B) {
	g, err := judge.New(context.Background(), judge.DefaultOptions(), filepath.Join("..", "..", "examples", "policy.yaml"))
	if err != nil {
		b.Fatal(err)
	}
	for _, syntax := range []string{"yaml", "json"} {
		for _, n := range []int{12500, 25000, 50000} {
			var doc strings.Builder
			for i := range n {
				switch {
				case syntax == "yaml":
					fmt.Fprintf(&doc, "k%06d: x\n", i)
				case i == 0:
					fmt.Fprintf(&doc, "{\"k%06d\": \"x\"\n", i)
				default:
					fmt.Fprintf(&doc, ",\"k%06d\": \"x\"\n", i)
				}
			}
			if syntax == "json" {
				doc.WriteString("}")
			}
			data := []byte(doc.String())
			b.Run(fmt.Sprintf("%s/keys=%d", syntax, n), func(b *testing.B) {
				b.SetBytes(int64(len(data)))
				for b.Loop() {
					_, err := g.JudgeBytes(context.Background(), "plan."+syntax, data, report.DefaultMaxListed)
					if e := (*judge.Error)(nil); !errors.As(err, &e) || e.Kind != judge.Document {
						b.Fatalf("%v, want the document refused", err)
					}
				}
			})
		}
	}
}
