package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/spawngate/spawngate/internal/document"
	"github.com/spawngate/spawngate/internal/judge"
	"github.com/spawngate/spawngate/internal/report"
	"github.com/spawngate/spawngate/internal/report/render"
	"github.com/spawngate/spawngate/internal/spelling"
)

// command is the flags of one subcommand, parsed the same way for all:
// every flag at most once, flags before, between and after the arguments,
// "--" ending them, help only when it is all that was asked.
type command struct {
	fs   *flag.FlagSet
	help func(io.Writer, *flag.FlagSet)
	key  *judge.BundleKey // --bundle-verification-key and its settings, when the command has them
}

func newCommand(name string, help func(io.Writer, *flag.FlagSet)) *command {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {} // errors are reported once, by the caller; help only on -h
	return &command{fs: fs, help: help}
}

// gateFlags are the flags of every command that judges: the operator's
// policy, the limits, the timeout and path resolution.
func (c *command) gateFlags(policy *string, o *judge.Options) {
	fs := c.fs
	fs.Var(policyFlag{policy}, "policy", "the operator's policy `FILE` (.yaml, .yml or .json)")
	c.limitFlags(o)
	fs.BoolVar(&o.ResolvePaths, "resolve-paths", false, "also resolve every path on this machine's filesystem, following symlinks; the workspace roots must exist")
	c.judgingFlags(o)
	c.checksFlags(o)
}

// limitFlags are the resource limits every document is held to.
func (c *command) limitFlags(o *judge.Options) {
	fs := c.fs
	fs.Int64Var(&o.Limits.MaxBytes, "max-bytes", document.DefaultLimits.MaxBytes, "largest plan or policy document, and largest bundle once decompressed, in `bytes`")
	fs.Int64Var(&o.Limits.MaxYAMLBytes, "max-yaml-bytes", document.DefaultLimits.MaxYAMLBytes, "largest YAML document, in `bytes` (YAML takes far more memory to parse than JSON)")
	fs.IntVar(&o.Limits.MaxDepth, "max-depth", document.DefaultLimits.MaxDepth, "deepest nesting of lists and mappings, in `levels`")
	fs.IntVar(&o.Limits.MaxAliasNodes, "max-alias-nodes", document.DefaultLimits.MaxAliasNodes, "most `values` YAML aliases may expand to, per document")
	fs.IntVar(&o.Limits.MaxAliasBytes, "max-alias-bytes", document.DefaultLimits.MaxAliasBytes, "most `bytes` of strings and keys YAML aliases may expand to, per document")
	fs.IntVar(&o.Limits.MaxStringBytes, "max-string-bytes", document.DefaultLimits.MaxStringBytes, "longest string or key, in `bytes`")
	fs.IntVar(&o.Limits.MaxValues, "max-values", document.DefaultLimits.MaxValues, "most `values` (of any kind) in one document")
	fs.IntVar(&o.Limits.MaxChildren, "max-children", document.DefaultLimits.MaxChildren, "most `children` in one plan")
	fs.IntVar(&o.Limits.MaxChildEntries, "max-child-entries", document.DefaultLimits.MaxChildEntries, "most `entries` one child's tools, and one child's paths, may list")
}

// judgingFlags are the timeout and how the operator policy's exceptions
// are judged.
func (c *command) judgingFlags(o *judge.Options) {
	fs := c.fs
	fs.DurationVar(&o.Timeout, "timeout", judge.DefaultTimeout, "longest time to judge one plan (read, validate, evaluate), as a `duration` such as 500ms or 10s")
	fs.BoolVar(&o.StrictExceptions, "strict-exceptions", false, "refuse a plan that an exception of the operator policy matches nothing in")
	fs.StringVar(&o.Today, "today", "", "judge the operator policy's exceptions as of this `date` (YYYY-MM-DD, UTC) instead of today, to see what expires")
}

// checksFlags are the flags that bring the operator's own checks: folders
// of them, and a bundle that may carry the operator policy too.
func (c *command) checksFlags(o *judge.Options) {
	fs := c.fs
	fs.Var(folderFlag{&o.Checks, "a folder of Rego checks"}, "checks", "a `DIR` of the operator's own Rego checks (*.rego but *_test.rego, subfolders too), judged beside the built-in ones; repeat it for several")
	fs.Var(fileFlag{&o.Bundle, "an OPA bundle (.tar.gz or folder)"}, "bundle", "an OPA bundle `FILE` (.tar.gz from opa build, or a folder) carrying checks and, at data.spawngate.policy, the operator policy")
	c.key = &judge.BundleKey{}
	fs.Var(fileFlag{&c.key.File, "the key file"}, "bundle-verification-key", "the `FILE` holding the key the bundle's signature must verify with: a PEM public key, or the HMAC secret (as opa run --verification-key); without it a signed bundle is refused")
	fs.StringVar(&c.key.ID, "bundle-verification-key-id", judge.DefaultKeyID, "the `ID` of the verification key (as opa run --verification-key-id)")
	algs := judge.SigningAlgs
	fs.StringVar(&c.key.Alg, "bundle-signing-alg", judge.DefaultSigningAlg, "the `algorithm` the bundle is signed with: "+strings.Join(algs[:len(algs)-1], ", ")+" or "+algs[len(algs)-1])
}

// checkChecks refuses bundle flags that would be silently ignored, and
// puts the verification key into the options when one is given.
func (c *command) checkChecks(o *judge.Options) error {
	set := map[string]bool{}
	c.fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	switch {
	case c.key == nil:
		return nil
	case !slices.Contains(judge.SigningAlgs, c.key.Alg):
		return &usageError{fmt.Sprintf("--bundle-signing-alg %q: not one of %s", c.key.Alg, strings.Join(judge.SigningAlgs, ", "))}
	case c.key.ID == "":
		return &usageError{"--bundle-verification-key-id must not be empty"}
	case c.key.File == "" && (set["bundle-verification-key-id"] || set["bundle-signing-alg"]):
		return &usageError{"--bundle-verification-key-id and --bundle-signing-alg need --bundle-verification-key"}
	case c.key.File != "" && o.Bundle == "":
		return &usageError{"--bundle-verification-key needs --bundle: it verifies a bundle's signature"}
	}
	if c.key.File != "" {
		key := *c.key
		o.BundleKey = &key
	}
	return nil
}

// reportFlags are the flags of every command that prints a report.
func (c *command) reportFlags(format *render.Format, outputs *[]reportOutput, maxListed *int) {
	c.fs.Var(formatFlag{format}, "format", "output `format`: "+formatHelp())
	c.fs.Var(outputFlag{outputs}, "output", "also write the report as `FORMAT=FILE`, such as sarif=results.sarif, from the same run; repeat it for several; FILE - is standard output, in place of --format")
	c.fs.IntVar(maxListed, "max-listed", report.DefaultMaxListed, "most `violations` the report lists in all; the rest are counted per child, and verdicts and counts stay exact")
}

// parse parses the command line and returns its arguments. Every flag may
// be given once: a second --policy would silently drop the first, a second
// --resolve-paths=false or --max-* would silently undo a safety setting an
// earlier part of the command line made. Help (-h, --help) is an answer
// only when it is all that was asked: "-h" among plans, or a file a glob
// named "--help=x", must never turn a run into exit 0; c.help is then
// written and flag.ErrHelp returned.
func (c *command) parse(args []string, help io.Writer) ([]string, error) {
	fs := c.fs
	fs.VisitAll(func(f *flag.Flag) {
		if r, ok := f.Value.(interface{ repeatable() bool }); ok && r.repeatable() {
			return // a list in order (--checks, --agents-dir): each use adds to it
		}
		if _, ok := f.Value.(*onceValue); !ok {
			f.Value = &onceValue{Value: f.Value}
		}
	})
	flagArgs, rest := args, []string(nil)
	for i, a := range args {
		if a == "--" {
			flagArgs, rest = args[:i], args[i+1:]
			break
		}
	}
	var positional []string
	for {
		if err := fs.Parse(flagArgs); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				if len(args) != 1 || (args[0] != "-h" && args[0] != "-help" && args[0] != "--help") {
					return positional, &usageError{"-h and --help take no value and no other arguments; to name a file like a flag, put it after --"}
				}
				c.help(help, fs)
				return nil, err
			}
			return positional, &usageError{flagError(err, fs)}
		}
		if fs.NArg() == 0 {
			break
		}
		positional = append(positional, fs.Arg(0))
		flagArgs = fs.Args()[1:]
	}
	return append(positional, rest...), nil
}

// checkGate refuses limits and settings the gate cannot work with, and
// completes the options from the flags (the bundle's verification key).
func (c *command) checkGate(policy string, o *judge.Options) error {
	if err := c.checkChecks(o); err != nil {
		return err
	}
	var bad *document.LimitError
	if errors.As(o.Limits.Check(), &bad) {
		return &usageError{"--" + bad.Limit + " " + bad.Rule}
	}
	switch {
	case o.Timeout <= 0:
		return &usageError{"--timeout must be positive"}
	case o.Today != "" && !judge.IsDay(o.Today):
		return &usageError{fmt.Sprintf("--today %q is not a date written YYYY-MM-DD", o.Today)}
	case policy == "-":
		return &usageError{"--policy must name a file: standard input is for plans"}
	}
	return nil
}

// printFlags lists a command's flags with their defaults, for its help.
func printFlags(w io.Writer, fs *flag.FlagSet) {
	fs.VisitAll(func(f *flag.Flag) {
		kind, usage := flag.UnquoteUsage(f)
		if kind != "" {
			kind = " " + kind
		}
		fmt.Fprintf(w, "  --%s%s\n    \t%s", f.Name, kind, usage)
		// A default is shown once: the usage's own words when it says one,
		// else the flag's value, unless that is the zero of its type (an
		// unset duration, an empty list), which says nothing.
		if !strings.Contains(usage, "(default") && !zeroDefault(f.DefValue) {
			fmt.Fprintf(w, " (default %s)", f.DefValue)
		}
		fmt.Fprintln(w)
	})
	var repeatable, reports []string
	fs.VisitAll(func(f *flag.Flag) {
		if r, ok := f.Value.(interface{ repeatable() bool }); ok && r.repeatable() {
			if _, ok := unwrap(f.Value).(outputFlag); ok {
				reports = append(reports, "--"+f.Name)
				return
			}
			repeatable = append(repeatable, "--"+f.Name)
		}
	})
	if len(reports) > 0 {
		// The folder flags' sentences below are wrapped by hand; this one
		// names more, so it is wrapped here.
		but := strings.Join(reports, " and ") + ", which adds a report"
		switch len(repeatable) {
		case 0:
		case 1:
			but = repeatable[0] + ", which adds a folder each time, and " + but
		default:
			but = strings.Join(repeatable, " and ") + ", which add a folder each time, and " + but
		}
		fmt.Fprint(w, "\n"+strings.Join(wrap("Every flag may be given at most once, but "+but+"; flags may come before or after the arguments, and -- ends them.", 76), "\n")+"\n")
		return
	}
	switch len(repeatable) {
	case 0:
	case 1:
		fmt.Fprintf(w, "\nEvery flag may be given at most once, but %s, which adds a folder each\n"+
			"time; flags may come before or after the arguments, and -- ends them.\n", repeatable[0])
		return
	default:
		fmt.Fprintf(w, "\nEvery flag may be given at most once, but %s, which add a\n"+
			"folder each time; flags may come before or after the arguments, and --\nends them.\n", strings.Join(repeatable, " and "))
		return
	}
	fmt.Fprint(w, "\nEvery flag may be given at most once; flags may come before or after the\n"+
		"arguments, and -- ends them.\n")
}

// unwrap is the flag.Value under the once-only guard parse puts on it.
func unwrap(v flag.Value) flag.Value {
	if o, ok := v.(*onceValue); ok {
		return o.Value
	}
	return v
}

// zeroDefault tells whether a flag's default is the zero of its kind.
func zeroDefault(v string) bool {
	switch v {
	case "", "false", "0", "0s", "[]":
		return true
	}
	return false
}

// usageError is a command line the gate cannot act on.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

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

// folderFlag is a flag naming a folder that may be given many times, in
// order. An empty value (an unset variable) is an error, never "no folder".
type folderFlag struct {
	list *[]string
	what string
}

func (f folderFlag) String() string {
	if f.list == nil {
		return ""
	}
	return strings.Join(*f.list, ", ")
}

func (f folderFlag) Set(s string) error {
	if s == "" {
		return errors.New("is empty: name " + f.what)
	}
	*f.list = append(*f.list, s)
	return nil
}

func (folderFlag) repeatable() bool { return true }

// fileFlag is a flag naming one file; an empty value is an error.
type fileFlag struct {
	value *string
	what  string
}

func (f fileFlag) String() string {
	if f.value == nil {
		return ""
	}
	return *f.value
}

func (f fileFlag) Set(s string) error {
	if s == "" {
		return errors.New("is empty: name " + f.what)
	}
	*f.value = s
	return nil
}

// formatFlag is --format, chosen from render.Formats.
type formatFlag struct{ value *render.Format }

func (f formatFlag) String() string {
	if f.value == nil {
		return render.Formats[0].Name
	}
	return f.value.Name
}

func (f formatFlag) Set(s string) error {
	format, err := render.FormatNamed(s)
	if err != nil {
		return err
	}
	*f.value = format
	return nil
}

// reportOutput is one report of a run beyond the one --format writes: a
// format and where it goes ("-" for standard output).
type reportOutput struct {
	format render.Format
	file   string
}

// outputFlag is --output FORMAT=FILE, which may be given many times, in
// order.
type outputFlag struct{ list *[]reportOutput }

func (f outputFlag) String() string {
	if f.list == nil {
		return ""
	}
	parts := make([]string, len(*f.list))
	for i, o := range *f.list {
		parts[i] = o.format.Name + "=" + o.file
	}
	return strings.Join(parts, ", ")
}

func (f outputFlag) Set(s string) error {
	name, file, ok := strings.Cut(s, "=")
	if !ok || file == "" {
		return errors.New("not FORMAT=FILE, such as sarif=results.sarif (FILE - for standard output)")
	}
	format, err := render.FormatNamed(name)
	if err != nil {
		return err
	}
	*f.list = append(*f.list, reportOutput{format, file})
	return nil
}

func (outputFlag) repeatable() bool { return true }

// checkOutputs refuses reports that would overwrite each other, or a
// document the run reads, and makes the report --output sends to standard
// output the one *stdout is. Two reports on standard output, or in one
// file, would interleave or one would silently win; a report written over
// the policy or a plan would destroy what it judged.
func (c *command) checkOutputs(stdout *render.Format, outputs []reportOutput, inputs []string) error {
	formatSet, stdoutNamed := false, false
	c.fs.Visit(func(f *flag.Flag) { formatSet = formatSet || f.Name == "format" })
	seen := map[string]string{} // a file as compared, to the FILE given
	for _, o := range outputs {
		if o.file == "-" {
			switch {
			case stdoutNamed:
				return &usageError{"--output names standard output (-) twice: it can hold one report"}
			case formatSet:
				return &usageError{"--format and --output " + o.format.Name + "=- both name standard output: give one"}
			}
			stdoutNamed = true
			*stdout = o.format
			continue
		}
		key := o.file
		if abs, err := filepath.Abs(o.file); err == nil {
			key = abs
		}
		for k, given := range seen {
			if k == key || sameFile(given, o.file) {
				return &usageError{fmt.Sprintf("--output names %s twice: each report needs its own file", document.Quote(o.file))}
			}
		}
		seen[key] = o.file
		for _, in := range inputs {
			if in != "" && in != "-" && sameFile(in, o.file) {
				return &usageError{fmt.Sprintf("--output %s: the run reads that file: write the report elsewhere", document.Quote(o.file))}
			}
		}
	}
	return nil
}

var (
	unknownFlag  = regexp.MustCompile(`^flag provided but not defined: -+(.*)$`)
	missingValue = regexp.MustCompile(`^flag needs an argument: -+(.*)$`)
	badValue     = regexp.MustCompile(`^invalid (?:boolean )?value "(.*)" for (?:flag )?-+([^:]*): (.*)$`)
)

// flagError says a flag package error the way the flags are documented,
// with two dashes.
func flagError(err error, fs *flag.FlagSet) string {
	msg := err.Error()
	if m := unknownFlag.FindStringSubmatch(msg); m != nil {
		var names []string
		fs.VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
		if s := spelling.Closest(m[1], names); s != "" {
			return fmt.Sprintf("unknown flag --%s: did you mean --%s?", m[1], s)
		}
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

func formatHelp() string {
	parts := make([]string, len(render.Formats))
	for i, f := range render.Formats {
		parts[i] = f.Name + " (" + f.Help + ")"
	}
	return strings.Join(parts, "; ")
}

// budgetFlag is --budget-tokens, of the commands that translate a spawn
// whose definition may state no budget (hook, agents); checkBudget checks
// it.
func (c *command) budgetFlag(budget *string) {
	c.fs.StringVar(budget, "budget-tokens", "", "the token `budget` a spawn is granted when its definition states none (default: the operator policy's budget_cap_tokens)")
}

// checkBudget refuses a --budget-tokens that is not a positive whole
// number written plainly; "" is the default (judge.Gate.Budget).
func checkBudget(budget string) error {
	if budget == "" {
		return nil
	}
	if n, err := strconv.ParseInt(budget, 10, 64); err != nil || n <= 0 || strconv.FormatInt(n, 10) != budget {
		return &usageError{fmt.Sprintf("--budget-tokens %q: not a positive whole number", budget)}
	}
	return nil
}
