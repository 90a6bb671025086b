// Command benchgen writes a generated spawn plan (see internal/benchplan)
// for .ci/bench: go run ./internal/cmd/benchgen -children 100000 > plan.json.
// With -policy it writes the operator policy the plan is judged by.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/spawngate/spawngate/internal/benchplan"
)

func main() {
	children := flag.Int("children", 100000, "children in the plan")
	shards := flag.Int("shards", 64, "distinct task directories; 0 gives every child its own")
	policy := flag.Bool("policy", false, "write the operator policy instead of a plan")
	distinct := flag.Bool("distinct", false, "give every child its own role, budget and paths, 1% refused (no two alike)")
	refusedEvery := flag.Int("refused-every", 0, "make every n-th child ask for too much (0: the plan's default)")
	toolsOnly := flag.Bool("tools-only", false, "a child that asks for too much asks only for a tool outside the allowlist")
	excepting := flag.Bool("excepting", false, "with -policy: the policy with an exception that lets that tool through")
	flag.Parse()
	if *policy {
		if *excepting {
			fmt.Println(benchplan.PolicyExcepting)
		} else {
			fmt.Println(benchplan.Policy)
		}
		return
	}
	o := benchplan.Default(*children)
	o.Shards = *shards
	if *distinct {
		o = benchplan.Distinct(*children)
	}
	if *refusedEvery > 0 {
		o.RefusedEvery = *refusedEvery
	}
	o.ToolsOnly = *toolsOnly
	os.Stdout.Write(benchplan.Generate(o))
}
