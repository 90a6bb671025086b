// Command startup times each step of one small check's start-up, one after
// the other, in fresh processes, and prints the median of each: what the
// 30-odd milliseconds of `spawngate check` on the README's example are
// made of. The command itself overlaps the Rego compile (one core) with
// the schemas, the policy and the plan (the other), so its wall time is
// about package init plus the longer of the two, plus the evaluation.
//
//	go run ./internal/cmd/startup -runs 20
//	GODEBUG=inittrace=1 spawngate check ...   # package init, per package
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/open-policy-agent/opa/v1/ast"

	"github.com/spawngate/spawngate/internal/document"
	"github.com/spawngate/spawngate/internal/engine"
	"github.com/spawngate/spawngate/internal/plan"
	"github.com/spawngate/spawngate/policy"
)

// steps are timed in this order, each once per process.
var steps = []string{
	"read the embedded Rego",
	"parse every module (one core)",
	"compile the lean engine (parse included)",
	"compile every module (parse included)",
	"compile the schemas",
	"read and validate the policy",
	"read and validate the plan",
	"evaluate (lean engine)",
}

func main() {
	runs := flag.Int("runs", 20, "fresh processes to take medians over")
	examples := flag.String("examples", "examples", "the examples folder")
	child := flag.Bool("child", false, "time the steps once and print them (internal)")
	flag.Parse()
	if *child {
		if err := once(*examples); err != nil {
			fmt.Fprintln(os.Stderr, "startup:", err)
			os.Exit(2)
		}
		return
	}
	times := make([][]float64, len(steps))
	for range *runs {
		out, err := exec.Command(os.Args[0], "-child", "-examples", *examples).Output()
		if err != nil {
			fmt.Fprintln(os.Stderr, "startup:", err)
			os.Exit(2)
		}
		for i, f := range strings.Fields(string(out)) {
			ms, _ := strconv.ParseFloat(f, 64)
			times[i] = append(times[i], ms)
		}
	}
	fmt.Printf("%-44s %s\n", "step (medians of "+strconv.Itoa(*runs)+" fresh processes)", "ms")
	for i, s := range steps {
		slices.Sort(times[i])
		fmt.Printf("%-44s %6.2f\n", s, times[i][len(times[i])/2])
	}
}

// once runs every step in this process and prints the milliseconds of each.
func once(examples string) error {
	// As the command does for a small document: no collection at all.
	debug.SetGCPercent(-1)
	debug.SetMemoryLimit(64 << 20) // cli's gcCeiling
	ctx := context.Background()
	var ms []string
	lap := func(start time.Time) {
		ms = append(ms, strconv.FormatFloat(float64(time.Since(start).Microseconds())/1000, 'f', 2, 64))
	}
	start := time.Now()
	mods, err := policy.Modules()
	if err != nil {
		return err
	}
	lap(start)
	start = time.Now()
	for _, m := range mods {
		if _, err := ast.ParseModuleWithOpts(m.Name, m.Source, ast.ParserOptions{RegoVersion: ast.RegoV1}); err != nil {
			return err
		}
	}
	lap(start)
	start = time.Now()
	e, err := engine.New(mods)
	if err != nil {
		return err
	}
	lap(start)
	start = time.Now()
	if _, err := engine.New(mods, engine.EveryModule()); err != nil {
		return err
	}
	lap(start)
	start = time.Now()
	l, err := plan.NewLoader(document.DefaultLimits)
	if err != nil {
		return err
	}
	lap(start)
	start = time.Now()
	data, err := os.ReadFile(filepath.Join(examples, "policy.yaml"))
	if err != nil {
		return err
	}
	pol, err := l.Policy(ctx, "policy.yaml", data)
	if err != nil {
		return err
	}
	lap(start)
	start = time.Now()
	data, err = os.ReadFile(filepath.Join(examples, "refused-plan.json"))
	if err != nil {
		return err
	}
	p, err := l.Plan(ctx, "refused-plan.json", data)
	if err != nil {
		return err
	}
	lap(start)
	start = time.Now()
	if _, err := e.Evaluate(ctx, pol, p); err != nil {
		return err
	}
	lap(start)
	fmt.Println(strings.Join(ms, " "))
	return nil
}
