package cli

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/spawngate/spawngate/internal/gate"
	"github.com/spawngate/spawngate/internal/judge"
)

// rules lists every rule a refusal can cite: its ID and severity, its title
// and its description, as the check's METADATA gives them.
func rules(args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 {
		fmt.Fprintf(stderr, "spawngate: rules takes no arguments\n")
		return exitError
	}
	g, err := judge.New(context.Background(), judge.DefaultOptions(), "")
	var engine *gate.Engine
	if err == nil {
		engine, err = g.Engine()
	}
	if err == nil {
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
			return exitPass
		}
	}
	fmt.Fprintf(stderr, "spawngate: %s\n", oneLine(err.Error()))
	return exitError
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
