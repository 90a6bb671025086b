package cli

import (
	"fmt"
	"io"
	"strings"

	"github.com/spawngate/spawngate/internal/gate"
	"github.com/spawngate/spawngate/internal/report"
	"github.com/spawngate/spawngate/policy"
)

// rules lists every rule a refusal can cite: its ID and severity, its title
// and its description, as the check's METADATA gives them.
func rules(args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 {
		fmt.Fprintf(stderr, "spawngate: rules takes no arguments\n")
		return report.ExitError
	}
	modules, err := policy.Modules()
	if err == nil {
		var engine *gate.Engine
		if engine, err = gate.New(modules); err == nil {
			var b strings.Builder
			for i, c := range engine.Checks() {
				if i > 0 {
					b.WriteByte('\n')
				}
				fmt.Fprintf(&b, "%s (%s): %s\n", c.ID, c.Severity, c.Title)
				for _, line := range wrap(c.Description, 72) {
					fmt.Fprintf(&b, "    %s\n", line)
				}
			}
			if _, err = io.WriteString(stdout, b.String()); err == nil {
				return report.ExitPass
			}
		}
	}
	fmt.Fprintf(stderr, "spawngate: internal error: %s\n", oneLine(err.Error()))
	return report.ExitError
}

// wrap breaks text into lines of at most width characters, at spaces.
func wrap(text string, width int) []string {
	var lines []string
	line := ""
	for _, word := range strings.Fields(text) {
		if line != "" && len(line)+1+len(word) > width {
			lines = append(lines, line)
			line = ""
		}
		if line != "" {
			line += " "
		}
		line += word
	}
	if line != "" {
		lines = append(lines, line)
	}
	return lines
}
