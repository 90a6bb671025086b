// Command benchtable times whole commands side by side for .ci/bench and
// prints a table of medians, each with its ratio to the first command:
//
//	go run ./internal/cmd/benchtable -runs 20 -- spawngate check ... -- opa eval ...
//
// The commands run interleaved, one run of each in turn, after a warm-up
// run of each: on a shared machine whose speed drifts over a minute, runs
// of one command after all runs of another (as hyperfine makes them) can
// differ by a fifth with nothing changed, and the ratio with them. A
// command's exit code is ignored (spawngate exits 1 on a refused plan);
// one that cannot be started is an error.
package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

func main() {
	runs := flag.Int("runs", 20, "timed runs of each command")
	flag.Parse()
	cmds := split(flag.Args())
	if len(cmds) == 0 || *runs < 1 {
		fmt.Fprintln(os.Stderr, "usage: benchtable [-runs N] -- COMMAND [ARGS...] [-- COMMAND [ARGS...]]...")
		os.Exit(2)
	}
	times := make([][]float64, len(cmds))
	for round := -1; round < *runs; round++ { // round -1 warms up
		for i, c := range cmds {
			ms, err := timed(c)
			if err != nil {
				fmt.Fprintf(os.Stderr, "benchtable: %s: %v\n", c[0], err)
				os.Exit(2)
			}
			if round >= 0 {
				times[i] = append(times[i], ms)
			}
		}
	}
	base := median(times[0])
	fmt.Printf("%-10s %10s %10s %10s %6s %s\n", "tool", "median ms", "min ms", "max ms", "runs", "ratio to the first")
	for i, c := range cmds {
		fmt.Printf("%-10s %10.1f %10.1f %10.1f %6d %.2f\n", filepath.Base(c[0]), median(times[i]),
			slices.Min(times[i]), slices.Max(times[i]), len(times[i]), median(times[i])/base)
	}
}

// split cuts the arguments into commands at each "--".
func split(args []string) [][]string {
	var cmds [][]string
	var cur []string
	for _, a := range args {
		if a == "--" {
			if len(cur) > 0 {
				cmds = append(cmds, cur)
			}
			cur = nil
			continue
		}
		cur = append(cur, a)
	}
	if len(cur) > 0 {
		cmds = append(cmds, cur)
	}
	return cmds
}

// timed runs a command with its output discarded and returns its wall
// time in milliseconds.
func timed(c []string) (float64, error) {
	cmd := exec.Command(c[0], c[1:]...)
	start := time.Now()
	err := cmd.Run()
	ms := float64(time.Since(start).Microseconds()) / 1000
	if _, exited := err.(*exec.ExitError); exited {
		err = nil
	}
	if err != nil {
		return 0, fmt.Errorf("%s: %w", strings.Join(c, " "), err)
	}
	return ms, nil
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	if n := len(s); n%2 == 0 {
		return (s[n/2-1] + s[n/2]) / 2
	}
	return s[len(s)/2]
}
