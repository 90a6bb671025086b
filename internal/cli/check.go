package cli

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"regexp"
	"strings"

	"github.com/spawngate/spawngate/internal/judge"
	"github.com/spawngate/spawngate/internal/plan"
	"github.com/spawngate/spawngate/internal/report"
)

// checkOptions are the flags and arguments of spawngate check.
type checkOptions struct {
	policy    string
	format    report.Format
	gate      judge.Options
	maxListed int
	plans     []string
}

// maxDepthCeiling caps --max-depth: the readers recurse once per level, and
// a deeper document would overflow the stack instead of being refused.
const maxDepthCeiling = 10000

// usageError is a command line the gate cannot act on.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

// parseCheck reads the command line of check. On a usage error it still
// returns the options parsed so far, so that the error can be reported in
// the format the flags asked for (see errorFormat).
func parseCheck(args []string, help io.Writer) (*checkOptions, error) {
	opts := &checkOptions{gate: judge.DefaultOptions(), format: report.Formats[0], maxListed: report.DefaultMaxListed}
	fs := flag.NewFlagSet("spawngate check", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {} // errors are reported once, below; help only on -h
	fs.Var(policyFlag{&opts.policy}, "policy", "the operator's policy `FILE` (.yaml, .yml or .json)")
	fs.Var(formatFlag{&opts.format}, "format", "output `format`: "+formatHelp())
	fs.Int64Var(&opts.gate.Limits.MaxBytes, "max-bytes", plan.DefaultLimits.MaxBytes, "largest plan or policy document, in `bytes`")
	fs.Int64Var(&opts.gate.Limits.MaxYAMLBytes, "max-yaml-bytes", plan.DefaultLimits.MaxYAMLBytes, "largest YAML document, in `bytes` (YAML takes far more memory to parse than JSON)")
	fs.IntVar(&opts.gate.Limits.MaxDepth, "max-depth", plan.DefaultLimits.MaxDepth, "deepest nesting of lists and mappings, in `levels`")
	fs.IntVar(&opts.gate.Limits.MaxAliasNodes, "max-alias-nodes", plan.DefaultLimits.MaxAliasNodes, "most `values` YAML aliases may expand to, per document")
	fs.IntVar(&opts.gate.Limits.MaxAliasBytes, "max-alias-bytes", plan.DefaultLimits.MaxAliasBytes, "most `bytes` of strings and keys YAML aliases may expand to, per document")
	fs.IntVar(&opts.gate.Limits.MaxStringBytes, "max-string-bytes", plan.DefaultLimits.MaxStringBytes, "longest string or key, in `bytes`")
	fs.IntVar(&opts.gate.Limits.MaxValues, "max-values", plan.DefaultLimits.MaxValues, "most `values` (of any kind) in one document")
	fs.IntVar(&opts.gate.Limits.MaxChildren, "max-children", plan.DefaultLimits.MaxChildren, "most `children` in one plan")
	fs.IntVar(&opts.gate.Limits.MaxChildEntries, "max-child-entries", plan.DefaultLimits.MaxChildEntries, "most `entries` one child's tools, and one child's paths, may list")
	fs.IntVar(&opts.maxListed, "max-listed", report.DefaultMaxListed, "most `violations` the report lists in all; the rest are counted per child, and verdicts and counts stay exact")
	fs.BoolVar(&opts.gate.ResolvePaths, "resolve-paths", false, "also resolve every path on this machine's filesystem, following symlinks; the workspace roots must exist")
	fs.DurationVar(&opts.gate.Timeout, "timeout", judge.DefaultTimeout, "longest time to judge one plan (read, validate, evaluate), as a `duration` such as 500ms or 10s")
	// Every flag may be given once. A second --policy would silently drop
	// the first; a second --resolve-paths=false or --max-* would silently
	// undo a safety setting an earlier part of the command line made.
	fs.VisitAll(func(f *flag.Flag) { f.Value = &onceValue{Value: f.Value} })

	// Flags may come before, between and after plans; "--" ends them.
	flagArgs, rest := args, []string(nil)
	for i, a := range args {
		if a == "--" {
			flagArgs, rest = args[:i], args[i+1:]
			break
		}
	}
	for {
		if err := fs.Parse(flagArgs); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				// Help is an answer only when it is all that was asked:
				// "-h" among plans, or a file a glob named "--help=x",
				// must never turn a check into exit 0.
				if len(args) != 1 || (args[0] != "-h" && args[0] != "-help" && args[0] != "--help") {
					return opts, &usageError{"-h and --help take no value and no other arguments; to check a file named like a flag, put it after --"}
				}
				printCheckHelp(help, fs)
				return nil, err
			}
			return opts, &usageError{flagError(err)}
		}
		if fs.NArg() == 0 {
			break
		}
		opts.plans = append(opts.plans, fs.Arg(0))
		flagArgs = fs.Args()[1:]
	}
	opts.plans = append(opts.plans, rest...)

	switch {
	case len(opts.plans) == 0:
		return opts, &usageError{"no PLAN given: name a plan file, or - for standard input"}
	case opts.gate.Limits.MaxBytes <= 0:
		return opts, &usageError{"--max-bytes must be positive"}
	case opts.gate.Limits.MaxYAMLBytes <= 0:
		return opts, &usageError{"--max-yaml-bytes must be positive"}
	case opts.gate.Limits.MaxDepth <= 0 || opts.gate.Limits.MaxDepth > maxDepthCeiling:
		return opts, &usageError{fmt.Sprintf("--max-depth must be between 1 and %d", maxDepthCeiling)}
	case opts.gate.Limits.MaxAliasNodes < 0:
		return opts, &usageError{"--max-alias-nodes must not be negative"}
	case opts.gate.Limits.MaxAliasBytes < 0:
		return opts, &usageError{"--max-alias-bytes must not be negative"}
	case opts.gate.Limits.MaxChildEntries <= 0:
		return opts, &usageError{"--max-child-entries must be positive"}
	case opts.maxListed < 0:
		return opts, &usageError{"--max-listed must not be negative"}
	case opts.gate.Limits.MaxStringBytes <= 0:
		return opts, &usageError{"--max-string-bytes must be positive"}
	case opts.gate.Limits.MaxValues <= 0:
		return opts, &usageError{"--max-values must be positive"}
	case opts.gate.Limits.MaxChildren <= 0:
		return opts, &usageError{"--max-children must be positive"}
	case opts.gate.Timeout <= 0:
		return opts, &usageError{"--timeout must be positive"}
	case opts.policy == "-":
		return opts, &usageError{"--policy must name a file: standard input is for plans"}
	}
	stdinUses := 0
	for _, p := range opts.plans {
		if p == "-" {
			stdinUses++
		}
	}
	if stdinUses > 1 {
		return opts, &usageError{"- is given more than once: standard input can be read only once"}
	}
	return opts, nil
}

// onceValue is a flag that refuses to be set twice: whichever of two
// values were applied, the other would be dropped without a word.
type onceValue struct {
	flag.Value
	set bool
}

func (o *onceValue) Set(s string) error {
	if o.set {
		return errors.New("given more than once")
	}
	o.set = true
	return o.Value.Set(s)
}

// IsBoolFlag keeps --resolve-paths a flag without a value.
func (o *onceValue) IsBoolFlag() bool {
	b, ok := o.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}

// policyFlag is --policy. An empty value (an unset $POLICY) must not mean
// "no operator policy".
type policyFlag struct{ value *string }

func (p policyFlag) String() string {
	if p.value == nil {
		return ""
	}
	return *p.value
}

func (p policyFlag) Set(s string) error {
	if s == "" {
		return errors.New("is empty: name the operator's policy file")
	}
	*p.value = s
	return nil
}

// formatFlag is --format, chosen from report.Formats.
type formatFlag struct{ value *report.Format }

func (f formatFlag) String() string {
	if f.value == nil {
		return report.Formats[0].Name
	}
	return f.value.Name
}

func (f formatFlag) Set(s string) error {
	format, err := report.FormatNamed(s)
	if err != nil {
		return err
	}
	*f.value = format
	return nil
}

var (
	unknownFlag  = regexp.MustCompile(`^flag provided but not defined: -+(.*)$`)
	missingValue = regexp.MustCompile(`^flag needs an argument: -+(.*)$`)
	badValue     = regexp.MustCompile(`^invalid (?:boolean )?value "(.*)" for (?:flag )?-+([^:]*): (.*)$`)
)

// flagError says a flag package error the way the flags are documented,
// with two dashes.
func flagError(err error) string {
	msg := err.Error()
	if m := unknownFlag.FindStringSubmatch(msg); m != nil {
		return "unknown flag --" + m[1]
	}
	if m := missingValue.FindStringSubmatch(msg); m != nil {
		return "--" + m[1] + " needs a value"
	}
	if m := badValue.FindStringSubmatch(msg); m != nil {
		why := m[3]
		switch {
		case why == "parse error" && m[2] == "timeout":
			why = "not a duration such as 500ms or 10s"
		case why == "parse error":
			why = "not a number"
		}
		return fmt.Sprintf("--%s %q: %s", m[2], m[1], why)
	}
	return msg
}

func printCheckHelp(w io.Writer, fs *flag.FlagSet) {
	fmt.Fprint(w, "Usage: spawngate check [flags] PLAN...\n\n"+
		"Judges each child of each PLAN (a .yaml, .yml or .json file, or - for\n"+
		"standard input) and exits 0 if every child may be dispatched, 1 if any\n"+
		"child is refused, 2 if the gate could not evaluate.\n\nFlags:\n")
	fs.VisitAll(func(f *flag.Flag) {
		kind, usage := flag.UnquoteUsage(f)
		if kind != "" {
			kind = " " + kind
		}
		fmt.Fprintf(w, "  --%s%s\n    \t%s", f.Name, kind, usage)
		if f.DefValue != "" && f.DefValue != "false" {
			fmt.Fprintf(w, " (default %s)", f.DefValue)
		}
		fmt.Fprintln(w)
	})
	fmt.Fprint(w, "\nEvery flag may be given at most once; flags may come before or after the\n"+
		"plans, and -- ends them.\n")
	fmt.Fprint(w, "\nExamples:\n"+
		"  spawngate check --policy examples/policy.yaml examples/refused-plan.yaml\n"+
		"  generate-plan | spawngate check --policy policy.yaml --format json -\n")
}

func formatHelp() string {
	parts := make([]string, len(report.Formats))
	for i, f := range report.Formats {
		parts[i] = f.Name + " (" + f.Help + ")"
	}
	return strings.Join(parts, "; ")
}

// wantsJSON tells whether the arguments of check ask for JSON output, for
// reporting an error in the format the caller will parse. It asks the flag
// parser itself, so it reads the command line exactly as check does.
func wantsJSON(args []string) bool {
	opts, _ := parseCheck(args, io.Discard)
	return opts != nil && opts.format.Name == "json"
}

func check(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	opts, err := parseCheck(args, stdout)
	if errors.Is(err, flag.ErrHelp) {
		return exitPass
	}
	if err != nil {
		fmt.Fprintf(stderr, "spawngate: %s (see spawngate check -h)\n", err)
		if opts != nil && opts.format.Name == "json" {
			writeJSONError(stdout, err.Error())
		}
		return exitError
	}
	rep := run(ctx, opts, stdin, stderr)
	rep.Finish()
	return render(stdout, stderr, opts.format, rep)
}

// render writes a finished report whole, and returns the exit code its
// verdict gives. The report is rendered before any of it is written, so
// stdout never holds half a report, whatever happens; a report that cannot
// be written is an error.
func render(stdout, stderr io.Writer, format report.Format, rep *report.Report) int {
	var out bytes.Buffer
	err := format.Renderer.Render(&out, rep)
	if err == nil {
		_, err = stdout.Write(out.Bytes())
	}
	if err != nil {
		fmt.Fprintf(stderr, "spawngate: writing the report: %s\n", oneLine(err.Error()))
		return exitError
	}
	return exitCode(rep.Verdict)
}

// writeJSONError writes the JSON report of a run that judged nothing.
func writeJSONError(w io.Writer, msg string) {
	rep := &report.Report{Error: msg, Results: []report.Result{}}
	rep.Finish()
	report.JSON{}.Render(w, rep)
}

// run judges every plan. Errors are written to stderr as they happen, one
// line each, and recorded in the report.
func run(ctx context.Context, opts *checkOptions, stdin io.Reader, stderr io.Writer) *report.Report {
	rep := &report.Report{Results: []report.Result{}}
	g, err := newGate(ctx, opts.gate, opts.policy)
	if err != nil {
		rep.Error = err.Error()
		fmt.Fprintf(stderr, "spawngate: %s\n", report.Clean(rep.Error))
		return rep
	}
	left := opts.maxListed // the report lists at most this many violations in all
	for _, name := range opts.plans {
		res, err := g.JudgeFile(ctx, name, stdin, left)
		if err != nil {
			line, problem := say(err)
			fmt.Fprintf(stderr, "spawngate: %s\n", report.Clean(line))
			res = report.Failed(judge.SourceName(name), line, problem)
		}
		left = res.Trim(left)
		rep.Results = append(rep.Results, res)
	}
	return rep
}

// newGate builds the pipeline for a front end. An error is one line, as the
// command line says it: a problem with the operator's policy names --policy.
func newGate(ctx context.Context, opts judge.Options, policy string) (*judge.Gate, error) {
	opts.OnRead = func(n int) {
		if n > largeDocument {
			largeDocumentSeen()
		}
	}
	g, err := judge.New(ctx, opts, policy)
	if err != nil {
		line, _ := say(err)
		var e *judge.Error
		if errors.As(err, &e) && e.Kind != judge.Internal {
			line = "--policy " + line
		}
		return nil, errors.New(line)
	}
	return g, nil
}
