package cli

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/spawngate/spawngate/internal/benchplan"
)

// BenchmarkCheckExample is one check of the seed essay's two-child plan,
// in process: read, validate, evaluate, render. The Rego and the schemas
// are prepared once per process, as in the command; the whole-process
// time, start-up included, is measured by .ci/bench.
func BenchmarkCheckExample(b *testing.B) {
	args := []string{"check", "--policy", filepath.Join("..", "..", "examples", "policy.yaml"), filepath.Join("..", "..", "examples", "refused-plan.yaml")}
	for b.Loop() {
		if code := Run(context.Background(), args, nil, io.Discard, io.Discard); code != exitBlock {
			b.Fatalf("exit %d", code)
		}
	}
}

// BenchmarkCheck checks generated plans of growing size (3% of children
// refused) through the whole command, JSON report included.
func BenchmarkCheck(b *testing.B) {
	policy := filepath.Join(b.TempDir(), "policy.json")
	if err := os.WriteFile(policy, []byte(benchplan.Policy), 0o644); err != nil {
		b.Fatal(err)
	}
	for _, n := range []int{1000, 10000, 100000} {
		plan := benchplan.Generate(benchplan.Default(n))
		b.Run("children="+strconv.Itoa(n), func(b *testing.B) {
			b.SetBytes(int64(len(plan)))
			args := []string{"check", "--timeout", "10m", "--policy", policy, "--format", "json", "-"}
			for b.Loop() {
				if code := Run(context.Background(), args, bytes.NewReader(plan), io.Discard, io.Discard); code != exitBlock {
					b.Fatalf("exit %d", code)
				}
			}
		})
	}
}

// BenchmarkCheckFormats is one check of a plan whose children all differ
// (the common case), 10,000 children with 1% refused, through the whole
// command in each report format: what a format costs beside the judging,
// measured side by side. html also keeps the plan's text and marks it.
func BenchmarkCheckFormats(b *testing.B) {
	policy := filepath.Join(b.TempDir(), "policy.json")
	if err := os.WriteFile(policy, []byte(benchplan.Policy), 0o644); err != nil {
		b.Fatal(err)
	}
	plan := benchplan.Generate(benchplan.Distinct(10000))
	for _, format := range []string{"json", "text", "sarif", "html"} {
		b.Run("format="+format, func(b *testing.B) {
			b.SetBytes(int64(len(plan)))
			args := []string{"check", "--timeout", "10m", "--policy", policy, "--format", format, "-"}
			for b.Loop() {
				if code := Run(context.Background(), args, bytes.NewReader(plan), io.Discard, io.Discard); code != exitBlock {
					b.Fatalf("exit %d", code)
				}
			}
		})
	}
}
