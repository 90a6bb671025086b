package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spawngate/spawngate/internal/document"
	"github.com/spawngate/spawngate/internal/judge"
	"github.com/spawngate/spawngate/internal/report"
	"github.com/spawngate/spawngate/policy"
)

// rules lists every rule a refusal can cite: its ID and severity, its title
// and its description, as the check's METADATA gives them. With the
// operator's checks (--checks, a policy's checks field, --bundle) it lists
// theirs too, marked custom, with the file each comes from.
func rules(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	var policy string
	o := judge.DefaultOptions()
	c := newCommand("spawngate rules", printRulesHelp)
	c.fs.Var(policyFlag{&policy}, "policy", "the operator's policy `FILE`, for the checks its checks field names")
	c.checksFlags(&o)
	format := "text"
	c.fs.Func("format", "output `format`: text (for a person) or json (one document: every rule's id, severity, title, description, and for the operator's own, custom and file) (default text)", func(s string) error {
		if s != "text" && s != "json" {
			return errors.New("use text or json")
		}
		format = s
		return nil
	})
	var writeTo string
	c.fs.Var(fileFlag{&writeTo, "a folder"}, "write-rego", "write the built-in Rego modules into `DIR` (created if need be) instead of listing the rules: opa build and opa test need them to compile checks that import data.spawngate.lib")
	rest, err := c.parse(args, stdout)
	if errors.Is(err, flag.ErrHelp) {
		return exitPass
	}
	if err == nil && len(rest) > 0 {
		err = &usageError{fmt.Sprintf("rules takes no arguments, only flags (got %q)", rest[0])}
	}
	if err == nil {
		err = c.checkGate(policy, &o)
	}
	if err != nil {
		fmt.Fprintf(stderr, "spawngate: %s (see spawngate rules -h)\n", report.Clean(oneLine(err.Error())))
		return exitError
	}
	if writeTo != "" {
		if err := writeBuiltins(writeTo, stdout); err != nil {
			fmt.Fprintf(stderr, "spawngate: --write-rego %s\n", report.Clean(oneLine(err.Error())))
			return exitError
		}
		return exitPass
	}
	o.ListOnly = true // the rules need no operator policy: nothing is judged
	g, err := newGate(ctx, "rules", o, policy)
	var list []report.Rule
	if err == nil {
		list, err = g.Rules()
	}
	if err == nil && format == "json" {
		err = writeRulesJSON(stdout, list)
		if err == nil {
			return exitPass
		}
	}
	if err == nil {
		var b strings.Builder
		for i, c := range list {
			if i > 0 {
				b.WriteByte('\n')
			}
			if c.Custom {
				fmt.Fprintf(&b, "%s (%s, custom): %s\n    from %s\n", c.ID, c.Severity, report.Clean(c.Title), report.Clean(c.File))
			} else {
				fmt.Fprintf(&b, "%s (%s): %s\n", c.ID, c.Severity, c.Title)
			}
			for _, line := range wrap(report.Clean(c.Description), 72) {
				fmt.Fprintf(&b, "    %s\n", line)
			}
		}
		if _, err = io.WriteString(stdout, b.String()); err == nil {
			return exitPass
		}
	}
	fmt.Fprintf(stderr, "spawngate: %s\n", report.Clean(oneLine(err.Error())))
	return exitError
}

// ruleJSON is one rule as rules --format json lists it.
type ruleJSON struct {
	ID          string `json:"id"`
	Severity    string `json:"severity"`
	Title       string `json:"title"`
	Description string `json:"description"`
	Custom      bool   `json:"custom,omitempty"`
	File        string `json:"file,omitempty"`
}

// writeRulesJSON writes the rules as one JSON document: {"rules": [...]}.
func writeRulesJSON(w io.Writer, rules []report.Rule) error {
	out := struct {
		Rules []ruleJSON `json:"rules"`
	}{Rules: make([]ruleJSON, len(rules))}
	for i, c := range rules {
		out.Rules[i] = ruleJSON{ID: c.ID, Severity: c.Severity, Title: c.Title, Description: c.Description, Custom: c.Custom}
		if c.Custom {
			out.Rules[i].File = c.File
		}
	}
	b, err := json.MarshalIndent(out, "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

// writeBuiltins writes the built-in modules (not their tests) into dir,
// for OPA's own tools: a bundle of the operator's checks carries them, so
// that opa build can compile it, and the gate leaves out every module that
// is one of its own built-in ones.
func writeBuiltins(dir string, stdout io.Writer) error {
	mods, err := policy.Modules()
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("%s: %s", dir, document.Reason(err))
	}
	// A module left from another version would be read as one of the
	// operator's own: the folder holds the built-in modules and nothing else.
	names := map[string]bool{}
	for _, m := range mods {
		names[m.Name] = true
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("%s: %s", dir, document.Reason(err))
	}
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".rego") && !names[e.Name()] {
			return fmt.Errorf("%s: holds %s, which is not a built-in module of this spawngate: write the built-in modules into a folder of their own (remove it first when it is an old copy)", dir, e.Name())
		}
	}
	for _, m := range mods {
		if err := os.WriteFile(filepath.Join(dir, m.Name), []byte(m.Source), 0o644); err != nil {
			return fmt.Errorf("%s: %s", filepath.Join(dir, m.Name), document.Reason(err))
		}
	}
	_, err = fmt.Fprintf(stdout, "wrote the %d built-in modules of spawngate to %s\n", len(mods), dir)
	return err
}

func printRulesHelp(w io.Writer, fs *flag.FlagSet) {
	fmt.Fprint(w, "Usage: spawngate rules [--policy FILE] [--checks DIR]... [--bundle FILE]\n"+
		"       spawngate rules --write-rego DIR\n\n"+
		"Lists every rule a refusal can cite: the built-in ones and, with the\n"+
		"operator's own checks, theirs, marked custom with the file each comes\n"+
		"from.\n\nFlags:\n")
	printFlags(w, fs)
	fmt.Fprint(w, "\nExamples:\n"+
		"  spawngate rules\n"+
		"  spawngate rules --policy policy.yaml --checks checks/ --format json\n"+
		"  spawngate rules --write-rego build/spawngate   # for opa build and opa test\n")
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
