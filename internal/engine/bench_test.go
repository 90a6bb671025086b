package engine_test

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

// BenchmarkRegoFloor is what OPA's evaluator costs for the least Rego a
// gate of each child could run, on the 100,000 distinct children of
// BenchmarkEvaluate, prepared and converted beforehand (neither is
// timed): one comparison per child ("one-comparison"), and the four
// checks written as plainly as Rego allows ("four-checks": an exact tool
// set, a prefix test for absolute paths, the cap, nothing explained). It
// is the floor under any gate whose Rego looks at every child: .ci/bench
// prints it beside the Python gate's whole run.
func BenchmarkRegoFloor(b *testing.B) {
	for _, floor := range []struct{ name, module string }{
		{"one-comparison", `package floor

deny contains i if {
	some i, child in input.children
	child.budget_tokens > input.policies.operator.budget_cap_tokens
}`},
		{"four-checks", `package floor

allowed := {t | some t in input.policies.operator.allowed_tools}

prefix := concat("", [input.policies.operator.workspace_root, "/"])

deny contains [i, j] if {
	some i, child in input.children
	some j, tool in child.tools
	not allowed[tool]
}

deny contains [i, j] if {
	some i, child in input.children
	some j, path in child.paths
	startswith(path, "/")
	not startswith(path, prefix)
}

deny contains [i, j] if {
	some i, child in input.children
	some j, tool in child.tools
	tool in {"fs.write", "fs.delete", "shell.run"}
	not input.policies.operator.allow_write
}

deny contains [i] if {
	some i, child in input.children
	child.budget_tokens > input.policies.operator.budget_cap_tokens
}`},
	} {
		b.Run(floor.name+"/children=100000", func(b *testing.B) {
			eval := regoFloor(b, floor.module, 100000)
			b.ResetTimer()
			for b.Loop() {
				eval()
			}
		})
	}
}

// BenchmarkExceptions is the Rego step on 10,000 distinct children, half
// asking for a tool outside the allowlist, judged without exceptions and
// with exceptions that let every such violation through: the difference
// is what applying exceptions costs (.ci/bench's 10k-exception row, the
// whole process).
func BenchmarkExceptions(b *testing.B) {
	e := builtin(b)
	o := benchplan.Distinct(10000)
	o.RefusedEvery, o.ToolsOnly = 2, true
	p := mustPlan(b, string(benchplan.Generate(o)))
	for _, policy := range []struct{ name, doc string }{{"none", benchplan.Policy}, {"excepting", benchplan.PolicyExcepting}} {
		operator := mustPolicy(b, policy.doc)
		b.Run(policy.name, func(b *testing.B) {
			for b.Loop() {
				if _, err := e.Evaluate(context.Background(), operator, p); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
