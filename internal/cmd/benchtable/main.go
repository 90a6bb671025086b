// Command benchtable prints hyperfine's JSON export (--export-json) as a
// table of medians, each with its ratio to the first command, for
// .ci/bench: go run ./internal/cmd/benchtable results.json.
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
)

func main() {
	data, err := os.ReadFile(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	var doc struct {
		Results []struct {
			Command string
			Median  float64
			Min     float64
			Max     float64
			Times   []float64
		}
	}
	if err := json.Unmarshal(data, &doc); err != nil || len(doc.Results) == 0 {
		fmt.Fprintln(os.Stderr, "not a hyperfine export:", err)
		os.Exit(2)
	}
	base := doc.Results[0].Median
	fmt.Printf("%-10s %10s %10s %10s %6s %s\n", "tool", "median ms", "min ms", "max ms", "runs", "ratio to spawngate")
	for _, r := range doc.Results {
		tool := strings.Fields(r.Command)[0]
		if i := strings.LastIndex(tool, "/"); i >= 0 {
			tool = tool[i+1:]
		}
		fmt.Printf("%-10s %10.1f %10.1f %10.1f %6d %.2f\n", tool, r.Median*1000, r.Min*1000, r.Max*1000, len(r.Times), r.Median/base)
	}
}
