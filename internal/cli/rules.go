package cli

import (
	"context"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/spawngate/spawngate/internal/gate"
	"github.com/spawngate/spawngate/internal/report"
	"github.com/spawngate/spawngate/policy"
)

// rules lists every rule ID a refusal can cite, with its severity and title.
func rules(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 {
		fmt.Fprintf(stderr, "spawngate: rules takes no arguments\n")
		return report.ExitError
	}
	modules, err := policy.Modules()
	if err == nil {
		var engine *gate.Engine
		if engine, err = gate.New(ctx, modules); err == nil {
			w := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
			fmt.Fprintln(w, "RULE\tSEVERITY\tTITLE")
			for _, c := range engine.Checks() {
				fmt.Fprintf(w, "%s\t%s\t%s\n", c.ID, c.Severity, c.Title)
			}
			if err = w.Flush(); err == nil {
				return report.ExitPass
			}
		}
	}
	fmt.Fprintf(stderr, "spawngate: internal error: %s\n", oneLine(err.Error()))
	return report.ExitError
}
