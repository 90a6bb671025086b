package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/spawngate/spawngate/internal/document"
	"github.com/spawngate/spawngate/internal/judge"
	"github.com/spawngate/spawngate/internal/report"
)

// verifyOptions are the flags and arguments of spawngate verify.
type verifyOptions struct {
	judge.VerifyOptions
	format string
}

// verifyFormats are the outputs of verify: its own, since its result is
// tests, not a report of plans.
var verifyFormats = map[string]bool{"text": true, "json": true}

func parseVerify(args []string, help io.Writer) (*verifyOptions, error) {
	opts := &verifyOptions{format: "text"}
	opts.Limits = document.DefaultLimits
	c := newCommand("spawngate verify", printVerifyHelp)
	var gateOpts judge.Options
	c.fs.Var(policyFlag{&opts.PolicyFile}, "policy", "an operator policy `FILE` whose checks field names folders to verify too")
	c.checksFlags(&gateOpts)
	c.fs.BoolVar(&opts.Builtin, "builtin", false, "also run the tests of the built-in checks")
	c.fs.Var(verifyFormatFlag{&opts.format}, "format", "output `format`: text (for a person) or json (one document on stdout, also on errors)")
	c.fs.DurationVar(&opts.Timeout, "timeout", judge.DefaultTestTimeout, "longest time one test may take, as a `duration`")
	c.fs.Int64Var(&opts.Limits.MaxBytes, "max-bytes", document.DefaultLimits.MaxBytes, "largest module, policy or bundle, in `bytes`")
	dirs, err := c.parse(args, help)
	if errors.Is(err, flag.ErrHelp) {
		return nil, err
	}
	opts.Dirs = dirs
	if err != nil {
		return opts, err
	}
	opts.Dirs = append(opts.Dirs, gateOpts.Checks...)
	if err := c.checkChecks(&gateOpts); err != nil {
		return opts, err
	}
	opts.Bundle, opts.BundleKey = gateOpts.Bundle, gateOpts.BundleKey
	switch {
	case len(opts.Dirs) == 0 && opts.PolicyFile == "" && opts.Bundle == "" && !opts.Builtin:
		return opts, &usageError{"nothing to verify: name the folders of your checks (spawngate verify DIR...), or give --policy FILE whose checks field names them, --bundle FILE, or --builtin"}
	case opts.Timeout <= 0:
		return opts, &usageError{"--timeout must be positive"}
	case opts.Limits.MaxBytes <= 0:
		return opts, &usageError{"--max-bytes must be positive"}
	case opts.PolicyFile == "-":
		return opts, &usageError{"--policy must name a file"}
	}
	for _, d := range opts.Dirs {
		if d == "" {
			return opts, &usageError{"an empty folder name: name a folder of checks"}
		}
	}
	return opts, nil
}

// runVerify is spawngate verify: the operator's Rego tests, run the way
// opa test runs them, with the built-in checks beside them. It exits 0 when
// every test passes, 1 when one fails (or cannot be evaluated), 2 when a
// module or test does not parse or compile, breaks the check contract, or
// there is no test at all: nothing tested is never verified.
func runVerify(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	opts, err := parseVerify(args, stdout)
	if errors.Is(err, flag.ErrHelp) {
		return exitPass
	}
	fail := func(msg string) int {
		fmt.Fprintf(stderr, "spawngate: %s\n", report.Clean(oneLine(msg)))
		if opts != nil && opts.format == "json" {
			writeVerifyJSON(stdout, nil, msg)
		}
		return exitError
	}
	if err != nil {
		return fail(err.Error() + " (see spawngate verify -h)")
	}
	v, err := judge.Verify(ctx, opts.VerifyOptions)
	if err != nil {
		line, _ := say(err)
		var e *judge.Error
		if errors.As(err, &e) {
			switch e.Source {
			case opts.PolicyFile:
				line = "--policy " + line
			case opts.Bundle:
				line = "--bundle " + line
			}
		}
		return fail(line)
	}
	ran, skipped := 0, 0
	for _, t := range v.Tests {
		if t.Outcome == judge.TestSkip {
			skipped++
		} else {
			ran++
		}
	}
	if ran == 0 {
		msg := "no tests found: write test_ rules in *_test.rego files beside the checks; an untested check is not a verified one"
		if skipped > 0 {
			msg = fmt.Sprintf("no test ran (%d skipped): an untested check is not a verified one", skipped)
		}
		return fail(msg)
	}
	var out bytes.Buffer
	if opts.format == "json" {
		writeVerifyJSON(&out, v, "")
	} else {
		writeVerifyText(&out, v)
	}
	if _, err := stdout.Write(out.Bytes()); err != nil {
		fmt.Fprintf(stderr, "spawngate: writing the result: %s\n", oneLine(err.Error()))
		return exitError
	}
	if v.Passed() {
		return exitPass
	}
	return exitBlock
}

// writeVerifyText writes one line per test (where a test that did not
// pass is, and why), the coverage, and the verdict.
func writeVerifyText(w io.Writer, v *judge.Verified) {
	n := map[string]int{}
	for _, t := range v.Tests {
		n[t.Outcome]++
		name := report.Clean("data." + t.Package + "." + t.Name)
		at := report.Clean(fmt.Sprintf("%s:%d", t.File, t.Line))
		switch t.Outcome {
		case judge.TestPass:
			fmt.Fprintf(w, "%s: PASS\n", name)
		case judge.TestSkip:
			fmt.Fprintf(w, "%s: SKIPPED\n", name)
		case judge.TestFail:
			fmt.Fprintf(w, "%s: FAIL at %s", name, at)
			if len(t.Failed) > 0 {
				fmt.Fprintf(w, " (failed cases: %s)", report.Clean(strings.Join(t.Failed, ", ")))
			}
			fmt.Fprintln(w)
		default:
			fmt.Fprintf(w, "%s: ERROR at %s: %s\n", name, at, report.Clean(t.Error))
		}
		if t.Outcome != judge.TestPass && t.Output != "" {
			for _, line := range strings.Split(strings.TrimRight(t.Output, "\n"), "\n") {
				fmt.Fprintf(w, "    printed: %s\n", report.Clean(line))
			}
		}
	}
	c := v.Coverage
	fmt.Fprintf(w, "\ncoverage: %s of %s (%d of %d lines)\n", percent(c.Percent), plural(len(c.Files), "module", "modules"), c.Covered, c.Covered+c.NotCovered)
	for _, f := range c.Files {
		fmt.Fprintf(w, "  %s: %s", report.Clean(f.File), percent(f.Percent))
		if len(f.NotCoveredLines) > 0 {
			var parts []string
			for _, r := range f.NotCoveredLines {
				if r[0] == r[1] {
					parts = append(parts, strconv.Itoa(r[0]))
				} else {
					parts = append(parts, fmt.Sprintf("%d-%d", r[0], r[1]))
				}
			}
			fmt.Fprintf(w, ", not covered: line %s", strings.Join(parts, ", "))
		}
		fmt.Fprintln(w)
	}
	total := len(v.Tests) - n[judge.TestSkip]
	skipped := ""
	if n[judge.TestSkip] > 0 {
		skipped = fmt.Sprintf(", %d skipped", n[judge.TestSkip])
	}
	if v.Passed() {
		fmt.Fprintf(w, "\nverdict: PASS, %d of %d tests passed%s\n", n[judge.TestPass], total, skipped)
		return
	}
	fmt.Fprintf(w, "\nverdict: FAIL, %d of %d tests did not pass (%d failed, %s)%s\n", n[judge.TestFail]+n[judge.TestError], total, n[judge.TestFail], plural(n[judge.TestError], "error", "errors"), skipped)
}

// percent shows a coverage percentage with one decimal, never rounding
// up to 100% what is not all of it.
func percent(p float64) string {
	r := math.Floor(p*10) / 10
	return strconv.FormatFloat(r, 'f', 1, 64) + "%"
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}

type verifyJSON struct {
	Verdict  string         `json:"verdict"`
	Error    string         `json:"error,omitempty"`
	Tests    []testJSON     `json:"tests"`
	Coverage *coverageJSON  `json:"coverage,omitempty"`
	Counts   map[string]int `json:"counts"`
}

type testJSON struct {
	Package string   `json:"package"`
	Name    string   `json:"name"`
	File    string   `json:"file"`
	Line    int      `json:"line"`
	Outcome string   `json:"outcome"`
	Error   string   `json:"error,omitempty"`
	Failed  []string `json:"failed_cases,omitempty"`
	Output  string   `json:"output,omitempty"`
}

type coverageJSON struct {
	Percent    float64    `json:"percent"`
	Covered    int        `json:"covered_lines"`
	NotCovered int        `json:"not_covered_lines"`
	Files      []fileJSON `json:"files"`
}

type fileJSON struct {
	File       string   `json:"file"`
	Percent    float64  `json:"percent"`
	Covered    int      `json:"covered_lines"`
	NotCovered int      `json:"not_covered_lines"`
	Lines      [][2]int `json:"not_covered,omitempty"`
}

// writeVerifyJSON writes verify's one JSON document: the tests, the
// coverage and the verdict (pass, fail, or error with why).
func writeVerifyJSON(w io.Writer, v *judge.Verified, errMsg string) {
	doc := verifyJSON{Verdict: "error", Error: errMsg, Tests: []testJSON{}, Counts: map[string]int{}}
	if v != nil {
		for _, t := range v.Tests {
			doc.Counts[t.Outcome]++
			doc.Tests = append(doc.Tests, testJSON{Package: t.Package, Name: t.Name, File: t.File, Line: t.Line, Outcome: t.Outcome, Error: t.Error, Failed: t.Failed, Output: t.Output})
		}
		c := v.Coverage
		doc.Coverage = &coverageJSON{Percent: math.Floor(c.Percent*10) / 10, Covered: c.Covered, NotCovered: c.NotCovered, Files: []fileJSON{}}
		for _, f := range c.Files {
			doc.Coverage.Files = append(doc.Coverage.Files, fileJSON{File: f.File, Percent: math.Floor(f.Percent*10) / 10, Covered: f.Covered, NotCovered: f.NotCovered, Lines: f.NotCoveredLines})
		}
		doc.Verdict = "fail"
		if v.Passed() {
			doc.Verdict = "pass"
		}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.Encode(doc)
}

// verifyFormatFlag is verify's --format.
type verifyFormatFlag struct{ value *string }

func (f verifyFormatFlag) String() string {
	if f.value == nil {
		return "text"
	}
	return *f.value
}

func (f verifyFormatFlag) Set(s string) error {
	if !verifyFormats[s] {
		return fmt.Errorf("unknown format %q: choose text or json", s)
	}
	*f.value = s
	return nil
}

func printVerifyHelp(w io.Writer, fs *flag.FlagSet) {
	fmt.Fprint(w, `Usage: spawngate verify [flags] [DIR...]

Runs the Rego tests (*_test.rego, test_ rules) of the operator's own
checks in each DIR, subfolders included, with OPA's tester, compiled
together with the built-in checks so that a test can import
data.spawngate.lib and data.spawngate.checks.*. The checks are first held
to the contract the gate holds them to. Prints one line per test and the
coverage of the checks, and exits 0 if every test passes, 1 if one fails,
2 if a module or test does not parse or compile, breaks the contract, or
there is no test at all.

Flags:
`)
	printFlags(w, fs)
	fmt.Fprint(w, "\nExamples:\n"+
		"  spawngate verify examples/checks\n"+
		"  spawngate verify --policy /etc/spawngate/policy.yaml\n"+
		"  spawngate verify --bundle bundle.tar.gz --bundle-verification-key public.pem\n")
}
