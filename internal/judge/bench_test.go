package judge_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/spawngate/spawngate/internal/judge"
	"github.com/spawngate/spawngate/internal/report"
)

// BenchmarkDecision is one in-process decision on the README's two-child
// example: the document loaded and judged, as a server or a Go
// orchestrator would make it, on one goroutine and on every core
// (parallel). The gate is built once, as such a caller would build it.
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
			if err != nil || res.Verdict == report.Error {
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
}
