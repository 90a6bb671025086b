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
	"sync"
	"time"

	"github.com/spawngate/spawngate/internal/gate"
	"github.com/spawngate/spawngate/internal/plan"
	"github.com/spawngate/spawngate/internal/report"
	"github.com/spawngate/spawngate/policy"
)

// checkOptions are the flags and arguments of spawngate check.
type checkOptions struct {
	policy    string
	format    report.Format
	limits    plan.Limits
	maxListed int
	timeout   time.Duration
	resolve   bool
	plans     []string
}

// defaultTimeout bounds the judging of one plan.
const defaultTimeout = 30 * time.Second

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
	opts := &checkOptions{limits: plan.DefaultLimits, format: report.Formats[0], maxListed: report.DefaultMaxListed}
	fs := flag.NewFlagSet("spawngate check", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {} // errors are reported once, below; help only on -h
	fs.Var(policyFlag{&opts.policy}, "policy", "the operator's policy `FILE` (.yaml, .yml or .json)")
	fs.Var(formatFlag{&opts.format}, "format", "output `format`: "+formatHelp())
	fs.Int64Var(&opts.limits.MaxBytes, "max-bytes", plan.DefaultLimits.MaxBytes, "largest plan or policy document, in `bytes`")
	fs.Int64Var(&opts.limits.MaxYAMLBytes, "max-yaml-bytes", plan.DefaultLimits.MaxYAMLBytes, "largest YAML document, in `bytes` (YAML takes far more memory to parse than JSON)")
	fs.IntVar(&opts.limits.MaxDepth, "max-depth", plan.DefaultLimits.MaxDepth, "deepest nesting of lists and mappings, in `levels`")
	fs.IntVar(&opts.limits.MaxAliasNodes, "max-alias-nodes", plan.DefaultLimits.MaxAliasNodes, "most `values` YAML aliases may expand to, per document")
	fs.IntVar(&opts.limits.MaxAliasBytes, "max-alias-bytes", plan.DefaultLimits.MaxAliasBytes, "most `bytes` of strings and keys YAML aliases may expand to, per document")
	fs.IntVar(&opts.limits.MaxStringBytes, "max-string-bytes", plan.DefaultLimits.MaxStringBytes, "longest string or key, in `bytes`")
	fs.IntVar(&opts.limits.MaxValues, "max-values", plan.DefaultLimits.MaxValues, "most `values` (of any kind) in one document")
	fs.IntVar(&opts.limits.MaxChildren, "max-children", plan.DefaultLimits.MaxChildren, "most `children` in one plan")
	fs.IntVar(&opts.limits.MaxChildEntries, "max-child-entries", plan.DefaultLimits.MaxChildEntries, "most `entries` one child's tools, and one child's paths, may list")
	fs.IntVar(&opts.maxListed, "max-listed", report.DefaultMaxListed, "most `violations` the report lists in all; the rest are counted per child, and verdicts and counts stay exact")
	fs.BoolVar(&opts.resolve, "resolve-paths", false, "also resolve every path on this machine's filesystem, following symlinks; the workspace roots must exist")
	fs.DurationVar(&opts.timeout, "timeout", defaultTimeout, "longest time to judge one plan (read, validate, evaluate), as a `duration` such as 500ms or 10s")
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
	case opts.limits.MaxBytes <= 0:
		return opts, &usageError{"--max-bytes must be positive"}
	case opts.limits.MaxYAMLBytes <= 0:
		return opts, &usageError{"--max-yaml-bytes must be positive"}
	case opts.limits.MaxDepth <= 0 || opts.limits.MaxDepth > maxDepthCeiling:
		return opts, &usageError{fmt.Sprintf("--max-depth must be between 1 and %d", maxDepthCeiling)}
	case opts.limits.MaxAliasNodes < 0:
		return opts, &usageError{"--max-alias-nodes must not be negative"}
	case opts.limits.MaxAliasBytes < 0:
		return opts, &usageError{"--max-alias-bytes must not be negative"}
	case opts.limits.MaxChildEntries <= 0:
		return opts, &usageError{"--max-child-entries must be positive"}
	case opts.maxListed < 0:
		return opts, &usageError{"--max-listed must not be negative"}
	case opts.limits.MaxStringBytes <= 0:
		return opts, &usageError{"--max-string-bytes must be positive"}
	case opts.limits.MaxValues <= 0:
		return opts, &usageError{"--max-values must be positive"}
	case opts.limits.MaxChildren <= 0:
		return opts, &usageError{"--max-children must be positive"}
	case opts.timeout <= 0:
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
		return report.ExitPass
	}
	if err != nil {
		fmt.Fprintf(stderr, "spawngate: %s (see spawngate check -h)\n", err)
		if opts != nil && opts.format.Name == "json" {
			writeJSONError(stdout, err.Error())
		}
		return report.ExitError
	}
	rep := run(ctx, opts, stdin, stderr)
	rep.Finish()
	// The report is rendered whole before any of it is written, so stdout
	// never holds half a report, whatever happens.
	var out bytes.Buffer
	err = opts.format.Renderer.Render(&out, rep)
	if err == nil {
		_, err = stdout.Write(out.Bytes())
	}
	if err != nil {
		fmt.Fprintf(stderr, "spawngate: writing the report: %s\n", oneLine(err.Error()))
		return report.ExitError
	}
	return rep.Verdict.ExitCode()
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
	fail := func(err error) {
		fmt.Fprintf(stderr, "spawngate: %s\n", report.Clean(oneLine(err.Error())))
	}
	// The Rego is compiled on one core while the schemas are compiled and
	// the operator policy is read on the other.
	pending := startEngine(opts.resolve)
	loader, err := plan.NewLoader(opts.limits)
	if err != nil {
		rep.Error = "internal error: " + err.Error()
		fail(errors.New(rep.Error))
		return rep
	}
	var operator plan.Policy
	if opts.policy != "" {
		operator, err = within(ctx, opts.timeout, opts.policy, func(ctx context.Context) (plan.Policy, error) {
			return readPolicy(ctx, loader, opts.policy)
		})
		if err != nil {
			err = fmt.Errorf("--policy %w", err)
			rep.Error = oneLine(err.Error())
			fail(err)
			return rep
		}
	}
	engine, err := pending.wait()
	if err != nil {
		rep.Error = "internal error: " + err.Error()
		fail(errors.New(rep.Error))
		return rep
	}
	left := opts.maxListed // the report lists at most this many violations in all
	for _, name := range opts.plans {
		res, err := within(ctx, opts.timeout, sourceName(name), func(ctx context.Context) (report.Result, error) {
			return judge(ctx, engine, loader, operator, name, stdin, left)
		})
		if err != nil {
			fail(err)
			res = report.Failed(sourceName(name), errors.New(oneLine(err.Error())))
		}
		left = res.Trim(left)
		rep.Results = append(rep.Results, res)
	}
	return rep
}

// preparedEngines keeps the engines this process compiled, by whether they
// resolve paths: a test or fuzz target calling Run many times compiles the
// Rego once, as the command does. (The schemas are compiled once by the
// plan package.)
var preparedEngines sync.Map // bool -> *gate.Engine

// pendingEngine is an engine being built in the background.
type pendingEngine struct {
	done   chan struct{}
	engine *gate.Engine
	err    error
	panic  any
}

// startEngine builds the engine for these options, or finds the one this
// process built before.
func startEngine(resolve bool) *pendingEngine {
	p := &pendingEngine{done: make(chan struct{})}
	if e, ok := preparedEngines.Load(resolve); ok {
		p.engine = e.(*gate.Engine)
		close(p.done)
		return p
	}
	go func() {
		defer close(p.done)
		defer func() { p.panic = recover() }() // re-raised by wait, where Run recovers it
		modules, err := policy.Modules()
		if err != nil {
			p.err = fmt.Errorf("reading the built-in policy: %w", err)
			return
		}
		if p.engine, p.err = gate.New(modules, gate.ResolvePaths(resolve)); p.err == nil {
			preparedEngines.Store(resolve, p.engine)
		}
	}()
	return p
}

func (p *pendingEngine) wait() (*gate.Engine, error) {
	<-p.done
	if p.panic != nil {
		panic(p.panic)
	}
	return p.engine, p.err
}

// stopGrace is how long a step may run on after its deadline before the
// gate stops waiting for it. Every step looks at its context often, so it
// should never be needed; it makes "stops at --timeout" a promise rather
// than a hope.
const stopGrace = 500 * time.Millisecond

// stuck is called when a step has run stopGrace past its deadline without
// stopping. Main makes it end the process with exit 2; in process (tests,
// the fuzz targets) it does nothing, and the caller waits.
var stuck = func(name string, timeout time.Duration) {}

// within runs f with the timeout. Running out of time, or a signal, is an
// error like any other, also when f finished anyway: the plan or policy is
// then not evaluated, never passed. f runs on the caller's goroutine: a
// fresh one would grow its stack again for every plan, a fifth of a small
// check.
func within[T any](ctx context.Context, timeout time.Duration, name string, f func(context.Context) (T, error)) (T, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	watchdog := time.AfterFunc(timeout+stopGrace, func() { stuck(name, timeout) })
	defer watchdog.Stop()
	v, err := f(ctx)
	if err == nil {
		err = ctx.Err() // whatever finished, it finished too late
	}
	var zero T
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return zero, fmt.Errorf("%s: timed out after %s (limit --timeout)", name, timeout)
	case errors.Is(err, context.Canceled):
		return zero, fmt.Errorf("%s: interrupted", name)
	case err != nil:
		return zero, err
	}
	return v, nil
}

func readPolicy(ctx context.Context, loader *plan.Loader, name string) (plan.Policy, error) {
	data, err := read(ctx, name, name, loader.Limits().MaxBytes, nil)
	if err != nil {
		return nil, err
	}
	return loader.Policy(ctx, name, data)
}

func judge(ctx context.Context, engine *gate.Engine, loader *plan.Loader, operator plan.Policy, name string, stdin io.Reader, maxListed int) (report.Result, error) {
	source := sourceName(name)
	data, err := read(ctx, name, source, loader.Limits().MaxBytes, stdin)
	if err != nil {
		return report.Result{}, err
	}
	if len(data) > largeDocument {
		largeDocumentSeen()
	}
	if err := ctx.Err(); err != nil {
		return report.Result{}, err
	}
	p, err := loader.Plan(ctx, source, data)
	if err != nil {
		return report.Result{}, err
	}
	if err := ctx.Err(); err != nil {
		return report.Result{}, err
	}
	res, err := engine.Evaluate(ctx, operator, p, gate.ListAtMost(maxListed))
	if err != nil {
		return report.Result{}, fmt.Errorf("%s: %w", source, err)
	}
	return res, nil
}

// read reads a plan, giving up when the context ends: a FIFO without a
// writer or a stdin that never closes must not hold the gate past its
// timeout or a signal. The abandoned read ends with the process.
func read(ctx context.Context, name, source string, max int64, stdin io.Reader) ([]byte, error) {
	type result struct {
		data  []byte
		err   error
		panic any
	}
	done := make(chan result, 1)
	go func() {
		var r result
		defer func() {
			// A panic belongs to the caller, whose recover turns it into
			// an internal error; in this goroutine it would crash.
			if p := recover(); p != nil {
				done <- result{panic: p}
			}
		}()
		if name == "-" {
			r.data, r.err = plan.Read(stdin, source, max)
		} else {
			r.data, r.err = plan.ReadFile(name, max)
		}
		done <- r
	}()
	select {
	case r := <-done:
		if r.panic != nil {
			panic(r.panic)
		}
		return r.data, r.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func sourceName(name string) string {
	if name == "-" {
		return plan.Stdin
	}
	return name
}
