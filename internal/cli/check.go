package cli

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spawngate/spawngate/internal/document"
	"github.com/spawngate/spawngate/internal/future"
	"github.com/spawngate/spawngate/internal/judge"
	"github.com/spawngate/spawngate/internal/report"
	"github.com/spawngate/spawngate/internal/report/render"
)

// checkOptions are the flags and arguments of spawngate check.
type checkOptions struct {
	policy string
	// policyInPlan takes the operator policy from the one plan file's own
	// policy block (--policy-in-plan).
	policyInPlan bool
	format       render.Format
	outputs      []reportOutput
	gate         judge.Options
	maxListed    int
	log          logFlags
	plans        []string
}

// parseCheck reads the command line of check. On a usage error it still
// returns the options parsed so far, so that the error can be reported in
// the format the flags asked for (see wantsJSON).
func parseCheck(args []string, help io.Writer) (*checkOptions, error) {
	opts := &checkOptions{gate: judge.DefaultOptions(), format: render.Formats[0], maxListed: report.DefaultMaxListed}
	c := newCommand("spawngate check", printCheckHelp)
	c.gateFlags(&opts.policy, &opts.gate)
	c.fs.BoolVar(&opts.policyInPlan, "policy-in-plan", false, "take the operator policy from the one PLAN file's own policy block (a file holding policy and plan, as the essay's gate reads one), instead of --policy or --bundle")
	c.reportFlags(&opts.format, &opts.outputs, &opts.maxListed)
	c.logFlags(&opts.log)
	plans, err := c.parse(args, help)
	opts.plans = plans
	if errors.Is(err, flag.ErrHelp) {
		return nil, err
	}
	if err != nil {
		return opts, err
	}
	if len(opts.plans) == 0 {
		return opts, &usageError{"no PLAN given: name a plan file, or - for standard input"}
	}
	if err := c.checkGate(opts.policy, &opts.gate); err != nil {
		return opts, err
	}
	if opts.maxListed < 0 {
		return opts, &usageError{"--max-listed must not be negative"}
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
	if opts.policyInPlan {
		if err := checkPolicyInPlan(opts); err != nil {
			return opts, err
		}
	} else if opts.policy == "" && opts.gate.Bundle == "" {
		return opts, &usageError{"check needs --policy FILE (or a --bundle carrying the policy): a plan's own policy can narrow the operator's, never stand in for it; a file whose policy block is the operator's says so with --policy-in-plan"}
	}
	inputs := append([]string{opts.policy, opts.gate.Bundle, opts.log.file}, opts.plans...)
	if err := c.checkOutputs(&opts.format, opts.outputs, inputs); err != nil {
		return opts, err
	}
	return opts, nil
}

// checkPolicyInPlan refuses what --policy-in-plan cannot mean: a second
// source of the operator policy, and any PLAN but one file (or -), since
// the policy of one file is the operator's for that file alone.
func checkPolicyInPlan(opts *checkOptions) error {
	const why = "the operator policy is the plan file's own policy block"
	switch {
	case opts.policy != "":
		return &usageError{"--policy-in-plan and --policy cannot be given together: with --policy-in-plan, " + why}
	case opts.gate.Bundle != "":
		return &usageError{"--policy-in-plan and --bundle cannot be given together: with --policy-in-plan, " + why}
	case len(opts.plans) != 1:
		return &usageError{fmt.Sprintf("--policy-in-plan judges one PLAN file, and %d are given: %s, and it judges that file alone", len(opts.plans), why)}
	}
	if info, err := os.Stat(opts.plans[0]); opts.plans[0] != "-" && err == nil && info.IsDir() {
		return &usageError{fmt.Sprintf("--policy-in-plan judges one PLAN file, and %s is a folder: name the file whose policy block is the operator's", report.Clean(opts.plans[0]))}
	}
	return nil
}

func printCheckHelp(w io.Writer, fs *flag.FlagSet) {
	fmt.Fprint(w, "Usage: spawngate check --policy FILE|--bundle FILE [flags] PLAN...\n"+
		"       spawngate check --policy-in-plan [flags] PLAN\n\n"+
		"Judges each child of each PLAN (a .yaml, .yml or .json file, a folder\n"+
		"of them, or - for standard input) and exits 0 if every child may be\n"+
		"dispatched, 1 if any child is refused, 2 if the gate could not\n"+
		"evaluate. With --policy-in-plan, the one PLAN file's own policy block\n"+
		"is the operator policy.\n\nFlags:\n")
	printFlags(w, fs)
	fmt.Fprint(w, "\nExamples:\n"+
		"  spawngate check --policy examples/policy.yaml examples/refused-plan.yaml\n"+
		"  spawngate check --policy policy.yaml --format sarif plans/\n"+
		"  spawngate check --policy policy.yaml --output sarif=results.sarif plans/\n"+
		"  generate-plan | spawngate check --policy policy.yaml --format json -\n"+
		"  spawngate check --policy-in-plan examples/one-file-plan.yaml\n")
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
	log, err := openDecisionLog(opts.log, opts.policy, stdout)
	if err != nil {
		fmt.Fprintf(stderr, "spawngate: %s\n", report.Clean(oneLine(err.Error())))
		return exitError
	}
	if log != nil {
		defer log.close()
	}
	rep := run(ctx, opts, stdin, stderr, log)
	rep.Finish()
	return writeReports(stdout, stderr, opts.format, opts.outputs, rep)
}

// writeReports writes a finished report whole, in the format of stdout
// and in each --output file, and returns the exit code its verdict gives.
// Every report is rendered before any is written, so no file and no
// stdout holds half a report, whatever happens. A report that cannot be
// written is exit 2, one line on stderr naming where it went; the others
// are written all the same, so that the log still says what was judged
// when the code-scanning file cannot be.
func writeReports(stdout, stderr io.Writer, format render.Format, outputs []reportOutput, rep *report.Report) int {
	var out bytes.Buffer
	err := format.Renderer.Render(&out, rep)
	files := make([][]byte, len(outputs))
	for i, o := range outputs {
		if err != nil || o.file == "-" {
			continue // standard output's, rendered above
		}
		var b bytes.Buffer
		if err = o.format.Renderer.Render(&b, rep); err != nil {
			err = fmt.Errorf("rendering %s: %w", o.format.Name, err)
		}
		files[i] = b.Bytes()
	}
	if err != nil {
		fmt.Fprintf(stderr, "spawngate: writing the report: %s\n", oneLine(err.Error()))
		return exitError
	}
	code := exitCode(rep.Verdict)
	for i, o := range outputs {
		if o.file == "-" {
			continue
		}
		if err := os.WriteFile(o.file, files[i], 0o644); err != nil {
			var pe *os.PathError
			if errors.As(err, &pe) {
				err = pe.Err
			}
			fmt.Fprintf(stderr, "spawngate: writing the %s report to %s: %s\n", o.format.Name, report.Clean(o.file), oneLine(err.Error()))
			code = exitError
		}
	}
	if _, err := stdout.Write(out.Bytes()); err != nil {
		fmt.Fprintf(stderr, "spawngate: writing the report: %s\n", oneLine(err.Error()))
		return exitError
	}
	return code
}

// writeJSONError writes the JSON report of a run that judged nothing.
func writeJSONError(w io.Writer, msg string) {
	rep := &report.Report{Error: msg, Results: []report.Result{}}
	rep.Finish()
	render.JSON{}.Render(w, rep)
}

// run judges every plan. Errors are written to stderr as they happen, one
// line each, and recorded in the report.
func run(ctx context.Context, opts *checkOptions, stdin io.Reader, stderr io.Writer, log *decisionLog) *report.Report {
	rep := &report.Report{Results: []report.Result{}}
	var read []func(string, []byte)
	if log != nil {
		read = append(read, log.read)
	}
	if texts := keepTexts(opts.format, opts.outputs); texts != nil {
		read = append(read, texts.read) // for a report that shows each plan's text
		defer texts.fill(rep)
	}
	if opts.policyInPlan {
		start := time.Now()
		res, lines, g := judgeInPlan(ctx, opts, stdin, read)
		for _, line := range lines {
			fmt.Fprintf(stderr, "spawngate: %s\n", report.Clean(line))
		}
		if log != nil {
			if g != nil {
				log.useGate(g)
			}
			log.write("check", res.Source, res, time.Since(start), stderr)
		}
		res.Trim(opts.maxListed)
		rep.Results = append(rep.Results, res)
		if g != nil {
			rep.Rules = reportRules(g)
		}
		return rep
	}
	plans := expandPlans(ctx, opts.plans, opts.policy)
	if firstLooksNested(names(plans)) {
		opts.gate.ExpectNested = true
	}
	g, err := newGate(ctx, "check", opts.gate, opts.policy, read...)
	if err != nil {
		rep.Error = err.Error()
		lines := problemLines(err)
		if len(lines) > 1 {
			rep.Problems = lines
		}
		for _, line := range lines {
			fmt.Fprintf(stderr, "spawngate: %s\n", report.Clean(line))
		}
		return rep
	}
	if log != nil {
		log.useGate(g)
	}
	// Plans are judged on every core and reported in the order given; each
	// lists what it may, and the listing is bounded over the run in order.
	// Nothing stops the run early: a plan judged after ctx ends gets its
	// own error, and the report lists every plan.
	left := opts.maxListed // the report lists at most this many violations in all
	type judged struct {
		res   report.Result
		lines []string // the error, when it could not be judged: a line a problem
	}
	future.InOrder(context.Background(), len(plans), func(_ context.Context, i int) (judged, error) {
		start := time.Now()
		var res report.Result
		err := plans[i].err
		if err == nil {
			res, err = g.JudgeFile(ctx, plans[i].name, stdin, opts.maxListed)
		}
		var j judged
		if err != nil {
			line, problem := say(err)
			j = judged{report.Failed(judge.SourceName(plans[i].name), line, problem), []string{line}}
			if each := sayEach(err); each != nil {
				j.res.Problems, j.lines = each, each
			}
		} else {
			j = judged{res: res}
		}
		if log != nil {
			log.write("check", j.res.Source, j.res, time.Since(start), stderr)
		}
		return j, nil
	}, func(_ int, j judged) error {
		for _, line := range j.lines {
			fmt.Fprintf(stderr, "spawngate: %s\n", report.Clean(line))
		}
		left = j.res.Trim(left)
		rep.Results = append(rep.Results, j.res)
		return nil
	})
	rep.Rules = reportRules(g)
	return rep
}

// judgeInPlan judges the one PLAN of --policy-in-plan by its own policy
// block, taken as the operator's: the file is read once, the gate is built
// from its block, and the same bytes are judged. A problem anywhere in the
// file, its policy block included, is the plan's: its result is ERROR,
// with a line for each problem, placed in the plan file. read is given the
// document once it is read; g is nil when no gate could be built.
func judgeInPlan(ctx context.Context, opts *checkOptions, stdin io.Reader, read []func(string, []byte)) (res report.Result, lines []string, g *judge.Gate) {
	name := opts.plans[0]
	source := judge.SourceName(name)
	failed := func(err error, g *judge.Gate) (report.Result, []string, *judge.Gate) {
		_, problem := say(err)
		line, each := wording.Gate(err, opts.gate, "")
		res := report.Failed(source, line, problem)
		if each != nil {
			res.Problems = each
			return res, each, g
		}
		return res, []string{line}, g
	}
	data, err := judge.Within(ctx, opts.gate.Timeout, source, func(ctx context.Context) ([]byte, error) {
		return judge.Read(ctx, name, source, opts.gate.Limits.MaxBytes, stdin)
	})
	if err != nil {
		return failed(err, nil)
	}
	if len(data) > largeDocument {
		largeDocumentSeen()
	}
	for _, f := range read {
		f(source, data)
	}
	gopts := opts.gate
	gopts.ExpectNested = judge.LooksNested(data)
	if g, err = judge.NewWithPlanPolicy(ctx, gopts, name, source, data); err != nil {
		return failed(err, nil)
	}
	if res, err = g.JudgeBytes(ctx, source, data, opts.maxListed); err != nil {
		return failed(err, g)
	}
	return res, nil, g
}

// reportRules describes the checks that judged, for the formats that list
// rules apart (SARIF). It is asked after judging, so that compiling the
// checks still overlaps reading the first plan.
func reportRules(g *judge.Gate) []report.Rule {
	rules, err := g.Rules()
	if err != nil {
		return nil // judging failed the same way, and the report says so
	}
	return rules
}

// newGate builds the pipeline for a command. An error is one line, as the
// command line says it: a problem with the operator's policy names --policy,
// and a gate with no operator policy names the command that needs one.
// read, when set, is also given every document read.
func newGate(ctx context.Context, command string, opts judge.Options, policy string, read ...func(string, []byte)) (*judge.Gate, error) {
	// The operator's policy (or the bundle that carries it) is a document
	// too, read before any plan: a large one must switch the collector as
	// a large plan does, or reading it under the ceiling collects without
	// pause (a 3.3 MB policy of 300,000 unknown keys: 8.5 s of CPU, not 2.1).
	for _, f := range []string{policy, opts.Bundle} {
		if info, err := os.Stat(f); f != "" && err == nil && info.Size() > largeDocument {
			largeDocumentSeen()
		}
	}
	opts.OnRead = func(source string, data []byte) {
		if len(data) > largeDocument {
			largeDocumentSeen()
		}
		for _, f := range read {
			f(source, data)
		}
	}
	g, err := judge.New(ctx, opts, policy)
	var je *judge.Error
	if errors.As(err, &je) && je.Kind == judge.NoPolicy {
		// Only a bundle that carries none can come this far without one:
		// every command that judges needs --policy or --bundle.
		return nil, &gateError{line: fmt.Sprintf("%s needs an operator policy: the bundle carries none (at data%s), and no --policy is given", command, strings.ReplaceAll(judge.BundlePolicyPointer, "/", "."))}
	}
	if err != nil {
		line, each := wording.Gate(err, opts, policy)
		return nil, &gateError{line: line, each: each}
	}
	return g, nil
}

// gateError is why a gate could not be built, as the command line says
// it: one line, and each problem on its own line when there are several.
type gateError struct {
	line string
	each []string
}

func (e *gateError) Error() string { return e.line }

// problemLines is every line that says err: each problem of a gateError
// that has several, else err's one line.
func problemLines(err error) []string {
	var ge *gateError
	if errors.As(err, &ge) && len(ge.each) > 0 {
		return ge.each
	}
	return []string{err.Error()}
}

// planArg is one plan document to judge, or why a PLAN argument gives
// none.
type planArg struct {
	name string
	err  error
}

func names(plans []planArg) []string {
	out := make([]string, len(plans))
	for i, p := range plans {
		out[i] = p.name
	}
	return out
}

// planFolder is what a folder given as PLAN is searched for: the plan
// documents in it and its subfolders, hidden ones (.git, .github) passed
// over.
var planFolder = document.Walk{Noun: "folder of plans", Recursive: true, Skip: document.Hidden, Match: func(name string) bool {
	switch strings.ToLower(filepath.Ext(name)) {
	case ".yaml", ".yml", ".json":
		return true
	}
	return false
}}

// expandPlans turns each folder among the PLAN arguments into the plan
// documents under it, in path order, as conftest does; a file (or -)
// stays as given. The operator's policy file is passed over when it lies
// in a folder given. A folder that holds no plan, or cannot be walked,
// is an error in its place: nothing to check never passes.
func expandPlans(ctx context.Context, args []string, policy string) []planArg {
	var out []planArg
	for _, a := range args {
		info, err := os.Stat(a)
		if a == "-" || err != nil || !info.IsDir() {
			out = append(out, planArg{name: a})
			continue
		}
		files, err := planFolder.Files(ctx, a)
		if err != nil {
			out = append(out, planArg{name: a, err: judge.AsError(a, err)})
			continue
		}
		n := 0
		for _, f := range files {
			if policy != "" && sameFile(f, policy) {
				continue
			}
			out = append(out, planArg{name: f})
			n++
		}
		if n == 0 {
			out = append(out, planArg{name: a, err: judge.AsError(a, &document.Error{Source: a, Msg: "the folder holds no plan (no .yaml, .yml or .json file outside hidden folders): nothing to check"})})
		}
	}
	return out
}

// sameFile tells whether two names are one file.
func sameFile(a, b string) bool {
	fa, err := os.Stat(a)
	if err != nil {
		return false
	}
	fb, err := os.Stat(b)
	return err == nil && os.SameFile(fa, fb)
}

// firstLooksNested peeks at the first plan file, when it is a small
// regular file, for whether it is a nested plan (judge.LooksNested): then
// every check compiles at once instead of the flat plan's only. Reading it
// twice costs microseconds; a plan on stdin is not peeked at.
func firstLooksNested(plans []string) bool {
	if len(plans) == 0 || plans[0] == "-" {
		return false
	}
	info, err := os.Stat(plans[0])
	if err != nil || !info.Mode().IsRegular() || info.Size() > 1<<20 {
		return false
	}
	data, err := os.ReadFile(plans[0])
	return err == nil && judge.LooksNested(data)
}
