package judge

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"
	"time"

	"github.com/spawngate/spawngate/internal/document"
	"github.com/spawngate/spawngate/internal/engine"
	"github.com/spawngate/spawngate/internal/future"
	"github.com/spawngate/spawngate/internal/plan"
	"github.com/spawngate/spawngate/internal/report"
	"github.com/spawngate/spawngate/policy"
)

// Options are how a Gate reads and judges.
type Options struct {
	Limits document.Limits
	// Timeout bounds judging one document: reading, parsing, validating,
	// evaluating, assembling. It also bounds reading the operator policy.
	Timeout time.Duration
	// ResolvePaths also resolves every path on this machine's filesystem,
	// following symlinks (see engine.ResolvePaths).
	ResolvePaths bool
	// OnRead, when set, is given every document read, by its source name
	// (the CLI tunes its garbage collector by the size, and a decision log
	// records the digest). It must not keep or change data.
	OnRead func(source string, data []byte)
	// Today is the day (YYYY-MM-DD, UTC) the operator's exceptions are
	// judged on; "" for the day each document is judged. New refuses one
	// that is not a day (IsDay) with an error of Kind Option.
	Today string
	// StrictExceptions refuses a plan that an exception of the operator
	// policy matches nothing in (--strict-exceptions).
	StrictExceptions bool
	// Checks are folders of the operator's own Rego checks (--checks),
	// loaded beside the built-in ones, with those the operator policy's
	// checks field names.
	Checks []string
	// Modules are the operator's own checks given in memory, each a Rego
	// module by name and text, loaded beside the built-in ones after those
	// of the folders: for a front end whose checks come from a request,
	// never from this machine's files (spawngate playground).
	Modules []policy.Module
	// NoFiles builds a gate that reads nothing from the file system: the
	// operator policy must be given in memory (NewWithPolicy), and a folder
	// of checks it names is refused, as Checks, Bundle and ResolvePaths
	// are (an error of Kind Option). A request that brings its own policy
	// must not make the process read what lies on its disk.
	NoFiles bool
	// Bundle is an OPA bundle (--bundle): a .tar.gz file or a folder
	// carrying the operator's checks and, optionally, the operator policy
	// at data.spawngate.policy. BundleKey, when set, is the key its
	// signature must verify with; without it, a signed bundle is refused.
	Bundle    string
	BundleKey *BundleKey
	// The checks only some plans reach (a nested plan's tree checks, those
	// a policy turns on, the exceptions) are compiled with the first plan
	// that reaches them, unless the operator policy already turns them on:
	// a third off the start-up of one small flat check (gate/lean.go).
	// CompileAll compiles them at start too, for a long-lived process (a
	// server, the Go API), which still judges flat plans with the fewer
	// checks; ExpectNested, a hint from a front end that has seen the
	// first plan, compiles every check at once and only that.
	CompileAll   bool
	ExpectNested bool
	// ListOnly builds a gate that only lists its rules (spawngate rules):
	// it needs no operator policy, and judges nothing without one. Any
	// other gate needs one, given or carried by the bundle: New refuses
	// it with an error of Kind NoPolicy.
	ListOnly bool
}

// IsDay tells whether day is a real day written YYYY-MM-DD, as
// Options.Today must be: a day that is not one would compare with expiry
// dates as text, and could keep an expired exception alive. New refuses
// any other; a front end asks first, to name its own flag or option.
func IsDay(day string) bool {
	t, err := time.Parse(time.DateOnly, day)
	return err == nil && t.Format(time.DateOnly) == day
}

// DefaultTimeout bounds the judging of one document unless told otherwise.
const DefaultTimeout = 30 * time.Second

// DefaultOptions are the limits, timeout and settings of a plain check.
func DefaultOptions() Options {
	return Options{Limits: document.DefaultLimits, Timeout: DefaultTimeout}
}

// Gate judges documents under one operator policy. Build one with New; it
// is safe for concurrent use.
type Gate struct {
	opts     Options
	loader   *plan.Loader
	pending  *future.Future[*engine.Engine] // compiled beside the first document's reading
	operator plan.Policy                    // nil when there is none
	// sources names what the gate was built from, and digests them.
	sources Sources
	// onDisk are the files and folders the gate was read from (OnDisk).
	onDisk []string
	// inPlan tells that the operator policy is a plan document's own
	// policy block (NewWithPlanPolicy).
	inPlan bool
}

// Sources are what a gate was built from, besides the embedded checks:
// the operator policy's source and the operator's own checks.
type Sources struct {
	// Policy names the operator policy: its file, the bundle that carried
	// it, or the name given to NewWithPolicy; "" when there is none.
	Policy string
	// PolicyDigest is the SHA-256 of the policy document as it was
	// validated ("sha256:..."), "" without one.
	PolicyDigest string
	// Bundle is Options.Bundle; CheckDirs every folder of checks read,
	// those of Options.Checks first, then the policy's.
	Bundle    string
	CheckDirs []string
	// Modules are the operator's modules, by name, and ChecksDigest the
	// digest of everything that judges: the embedded checks and schemas,
	// with the operator's modules when there are any.
	Modules      []string
	ChecksDigest string
}

// New builds a gate: the checks compiled (once per process), the schemas,
// and the operator's policy read from policyFile or from the bundle the
// options name. Without one (policyFile "" and no bundle, or a bundle that
// carries none) there is no gate, unless Options.ListOnly: a plan's own
// policy was written by the plan's author, and only narrows the
// operator's. That error is of Kind NoPolicy, its Source the bundle (and
// its Pointer BundlePolicyPointer) or "", for each front end to word.
// The operator's own checks (Options.Checks, the policy's checks field, a
// bundle's modules) are compiled before New returns, so that a check that
// breaks the contract is an error here, naming its file and line. An
// error is an *Error about the policy file, a folder of checks, a module
// or the bundle, or of Kind Internal.
func New(ctx context.Context, opts Options, policyFile string) (*Gate, error) {
	return newGate(ctx, opts, policyFile, policyFile, false, func(ctx context.Context) ([]byte, error) {
		return Read(ctx, policyFile, policyFile, opts.Limits.MaxBytes, nil)
	})
}

// NewWithPolicy is New with the operator's policy document in memory;
// source names it in messages and decides its syntax by its extension. A
// checks folder it names must be absolute: it has no folder of its own.
func NewWithPolicy(ctx context.Context, opts Options, source string, policy []byte) (*Gate, error) {
	if source == "" {
		source = "policy"
	}
	return newGate(ctx, opts, source, "", false, func(context.Context) ([]byte, error) { return policy, nil })
}

// NewWithPlanPolicy is New with the operator's policy taken from the
// policy block of a plan document, for a file that holds both, as the gate
// of the essay spawngate comes from reads one: its user says that the
// block is the operator's. data is the plan document, read once; name is
// its file as given ("-" for standard input), and source names it in
// messages (SourceName). Everything an operator policy may set, the block
// may; a relative folder in its checks is read from the plan file's
// folder, as from a policy file's (refused for standard input, which has
// none). Every problem of the block is placed in the plan document, under
// /policy ("plan.yaml:4:18: /policy/allowed_tools/1: ..."); a document
// without a policy block is an error, never "no policy".
//
// Judged by this gate, that document's policy block is the operator's
// alone: it is not applied a second time as the plan's own, and its
// result says so (report.Result.PolicyInPlan). Any other document is
// judged as under New, its own policy narrowing this one.
func NewWithPlanPolicy(ctx context.Context, opts Options, name, source string, data []byte) (*Gate, error) {
	if source == "" {
		source = SourceName(name)
	}
	policyFile := name
	if name == Stdin {
		policyFile = ""
	}
	return newGate(ctx, opts, source, policyFile, true, func(context.Context) ([]byte, error) { return data, nil })
}

// placeIn gives a problem of the document source that names its pointer
// but not its place the line and column of that pointer in data. The
// schema's problems are placed as they are found; those found after it (a
// role profile's root, a folder of checks the policy names) are found
// again in the document here, whether it is a policy file, a policy in
// memory or a plan document's policy block.
func placeIn(ctx context.Context, err error, source string, data []byte, lim document.Limits) error {
	e := AsError(source, err)
	var missing []*Error
	for _, p := range append([]*Error{e}, e.More...) {
		if p.Source == source && p.Pointer != "" && p.Line == 0 {
			missing = append(missing, p)
		}
	}
	if len(missing) == 0 {
		return e
	}
	pointers := make([]string, len(missing))
	for i, p := range missing {
		pointers[i] = p.Pointer
	}
	at, _ := document.Locate(ctx, source, data, lim, pointers) // a place is a help, not a need
	for _, p := range missing {
		if pos, ok := at[p.Pointer]; ok {
			p.Line, p.Column = pos.Line, pos.Column
		}
	}
	return e
}

func newGate(ctx context.Context, opts Options, source, policyFile string, inPlan bool, readPolicy func(context.Context) ([]byte, error)) (*Gate, error) {
	if opts.Today != "" && !IsDay(opts.Today) {
		return nil, &Error{Kind: Option, Source: "Today", Msg: fmt.Sprintf("the day exceptions are judged on, %q, is not a date written YYYY-MM-DD", opts.Today)}
	}
	if opts.NoFiles {
		switch {
		case policyFile != "":
			return nil, &Error{Kind: Option, Source: "NoFiles", Msg: "a gate that reads no files takes its policy in memory, not from " + policyFile}
		case len(opts.Checks) > 0 || opts.Bundle != "":
			return nil, &Error{Kind: Option, Source: "NoFiles", Msg: "a gate that reads no files reads no folder of checks and no bundle"}
		case opts.ResolvePaths:
			return nil, &Error{Kind: Option, Source: "NoFiles", Msg: "a gate that reads no files does not resolve paths on this machine's file system"}
		}
	}
	if opts.ListOnly {
		return build(ctx, opts, source, policyFile, inPlan, readPolicy)
	}
	if source == "" && opts.Bundle == "" {
		return nil, noOperator(opts) // nothing could give one: nothing is read
	}
	g, err := build(ctx, opts, source, policyFile, inPlan, readPolicy)
	if err == nil && g.operator == nil {
		// The bundle carries none: said once its own errors (a module that
		// breaks the contract) have been.
		return nil, noOperator(opts)
	}
	return g, err
}

// build builds the gate newGate asks for, with or without an operator
// policy: the document readPolicy gives, or with inPlan its policy block.
func build(ctx context.Context, opts Options, source, policyFile string, inPlan bool, readPolicy func(context.Context) ([]byte, error)) (_ *Gate, err error) {
	at := "" // where the policy is in its document
	if inPlan {
		at = plan.PolicyInPlanPointer
	}
	var data []byte // the operator policy document
	defer func() {
		// Every problem of the policy document is said at its place in it,
		// found after the schema or not.
		if err != nil && len(data) > 0 {
			err = placeIn(ctx, err, source, data, opts.Limits)
		}
	}()
	// The Rego is compiled on one core while the schemas are compiled and
	// the operator policy is read on the other: the built-in checks, or
	// with --checks those folders' too. A bundle's checks are known only
	// once it is read, and a policy's checks field once the policy is;
	// then the built-ins compiled ahead are kept for the next gate.
	var pending *future.Future[*engine.Engine]
	var ahead *future.Future[aheadEngine]
	var readErr error
	if source != "" {
		data, readErr = Within(ctx, opts.Timeout, source, readPolicy)
	}
	peeked := peekPolicy(ctx, opts, source, at, data)
	aheadDirs := peekCheckDirs(opts, source, policyFile, at, peeked)
	switch {
	case opts.Bundle != "":
	case len(aheadDirs) == 0:
		pending = startEngine(opts, peeked)
	default:
		// The folders --checks names, and those the policy seems to name,
		// compile while the schemas compile and the policy is validated;
		// they serve when they are the folders the valid policy names.
		ahead = compileAhead(ctx, opts, aheadDirs)
	}
	loader, err := plan.NewLoader(opts.Limits)
	if err != nil {
		return nil, &Error{Kind: Internal, Msg: "internal error: " + document.OneLine(err.Error())}
	}
	g := &Gate{opts: opts, loader: loader, inPlan: inPlan}
	if policyFile != "" {
		g.onDisk = append(g.onDisk, policyFile)
	}
	if opts.Bundle != "" {
		g.onDisk = append(g.onDisk, opts.Bundle)
		if opts.BundleKey != nil {
			g.onDisk = append(g.onDisk, opts.BundleKey.File)
		}
	}
	var custom []policy.Module
	if opts.Bundle != "" {
		b, err := Within(ctx, opts.Timeout, opts.Bundle, func(ctx context.Context) (*bundleContents, error) {
			return readBundle(ctx, loader, opts.Bundle, opts.BundleKey)
		})
		if err != nil {
			return nil, err
		}
		if b.policy != nil && source != "" {
			// Two operator policies are never merged, and neither wins
			// silently.
			return nil, &Error{Kind: Document, Source: opts.Bundle, Pointer: BundlePolicyPointer,
				Msg: fmt.Sprintf("the bundle carries an operator policy, and another one is given (%s): the operator policy must come from one place", source)}
		}
		if b.policy != nil {
			g.operator = b.policy
			g.sources.Policy, g.sources.PolicyDigest = opts.Bundle, Digest(b.policyJSON)
		}
		g.sources.Bundle = opts.Bundle
		custom = b.modules
	}
	var dirs []CheckSource
	for _, d := range opts.Checks {
		dirs = append(dirs, CheckSource{Dir: d})
	}
	if source != "" {
		if readErr != nil {
			return nil, readErr
		}
		g.operator, err = Within(ctx, opts.Timeout, source, func(ctx context.Context) (plan.Policy, error) {
			if err := document.CheckSize(source, int64(len(data)), opts.Limits.MaxBytes); err != nil {
				return nil, err
			}
			if inPlan {
				return loader.PolicyInPlan(ctx, source, data)
			}
			return loader.Policy(ctx, source, data)
		})
		if err != nil {
			return nil, err
		}
		g.sources.Policy, g.sources.PolicyDigest = source, Digest(data)
		if opts.NoFiles {
			if list, _ := g.operator["checks"].([]any); len(list) > 0 {
				return nil, &Error{Kind: Document, Source: source, Pointer: at + "/checks/0", Msg: fmt.Sprintf("folder %v: this gate reads nothing from the file system, so it reads no folder of checks; give the checks' text instead", list[0])}
			}
		}
		more, err := policyCheckDirs(source, policyFile, at, g.operator)
		if err != nil {
			return nil, AsError(source, err)
		}
		dirs = append(dirs, more...)
	}
	for _, d := range dirs {
		g.sources.CheckDirs = append(g.sources.CheckDirs, d.Dir)
		g.onDisk = append(g.onDisk, d.Dir)
	}
	if ahead != nil {
		a, err := ahead.Wait()
		mods, e := a.mods, a.engine
		if sameDirs(dirs, aheadDirs) {
			if err != nil {
				return nil, err
			}
			if e != nil {
				return g.withCustom(mods, e), nil
			}
			dirs = nil // copies of the built-in modules alone
		}
	}
	if len(dirs) > 0 {
		mods, err := Within(ctx, opts.Timeout, "checks", func(ctx context.Context) ([]policy.Module, error) {
			return readCheckDirs(ctx, dirs, opts.Limits.MaxBytes)
		})
		if err != nil {
			return nil, err
		}
		custom = append(mods, custom...)
	}
	custom = append(custom, opts.Modules...)
	if len(custom) > 0 {
		builtins, err := policy.Modules()
		if err != nil {
			return nil, &Error{Kind: Internal, Msg: "internal error: reading the built-in policy: " + document.OneLine(err.Error())}
		}
		custom = engine.WithoutBuiltinCopies(builtins, custom)
	}
	g.sources.ChecksDigest = ChecksDigest()
	if len(custom) == 0 {
		// The checks go on compiling while the first document is read and
		// loaded: only its evaluation waits for them. Compiling is most of
		// a small check's time.
		if pending == nil {
			pending = startEngine(opts, g.operator)
		}
		g.pending = pending
		return g, nil
	}
	e, err := customEngine(custom, opts.ResolvePaths)
	if err != nil {
		return nil, AsError("checks", err)
	}
	return g.withCustom(custom, e), nil
}

// noOperator is why a gate that would judge is not built: no operator
// policy is given, and the bundle, if any, carries none.
func noOperator(opts Options) *Error {
	if opts.Bundle != "" {
		return &Error{Kind: NoPolicy, Source: opts.Bundle, Pointer: BundlePolicyPointer,
			Msg: "the bundle carries no operator policy, and none is given: every plan is judged by the operator's policy"}
	}
	return &Error{Kind: NoPolicy, Msg: "no operator policy is given: a plan's own policy can narrow the operator's, never stand in for it"}
}

// withCustom completes a gate judged by the operator's own checks too.
func (g *Gate) withCustom(custom []policy.Module, e *engine.Engine) *Gate {
	g.sources.ChecksDigest = checksDigest(custom)
	for _, m := range custom {
		g.sources.Modules = append(g.sources.Modules, m.Name)
	}
	g.pending = future.Done(e, nil)
	return g
}

// Digest is how a policy document is named in decision logs, by the
// server and by every front end: "sha256:" and the SHA-256 of its bytes;
// "" for no document (nil), so that an empty file still has a name.
func Digest(data []byte) string {
	if data == nil {
		return ""
	}
	sum := sha256.Sum256(data)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// Sources are what the gate was built from.
func (g *Gate) Sources() Sources { return g.sources }

// OnDisk lists the files and folders on this machine the gate was read
// from, in the order read: the operator policy file, the bundle (a file or
// a folder), the key its signature was verified with, and each folder of
// the operator's checks. Whoever can change one of them can change what
// the gate decides; a hook asks that its session cannot (host.Owners).
func (g *Gate) OnDisk() []string { return slices.Clone(g.onDisk) }

// engine waits for the compiled checks.
func (g *Gate) engine() (*engine.Engine, error) {
	e, err := g.pending.Wait()
	if err != nil {
		return nil, &Error{Kind: Internal, Msg: "internal error: " + document.OneLine(err.Error())}
	}
	return e, nil
}

// Options returns the options the gate was built with.
func (g *Gate) Options() Options { return g.opts }

// Operator is the operator's policy, or nil when there is none.
func (g *Gate) Operator() plan.Policy { return g.operator }

// Ready waits for the checks to compile, and returns why they could not,
// for a front end that must know before it judges anything (a server that
// starts).
func (g *Gate) Ready() error {
	_, err := g.engine()
	return err
}

// Rules describes every rule a violation may cite, built-in and the
// operator's own, as their checks' METADATA declare them, in the order
// the engine lists its checks. It waits for the checks to compile.
func (g *Gate) Rules() ([]report.Rule, error) {
	e, err := g.engine()
	if err != nil {
		return nil, err
	}
	checks := e.Checks()
	rules := make([]report.Rule, len(checks))
	for i, c := range checks {
		rules[i] = c.Rule
	}
	return rules, nil
}

// Budget is the token budget a spawn is granted when its definition
// states none: given, when a front end was given one, else the operator
// policy's budget_cap_tokens, else "" (none).
func (g *Gate) Budget(given json.Number) json.Number {
	if given != "" {
		return given
	}
	budget, _ := g.operator["budget_cap_tokens"].(json.Number)
	return budget
}

// Stdin is the name that JudgeFile reads from standard input.
const Stdin = "-"

// SourceName is how a name given to JudgeFile appears in results: "-" is
// <stdin>.
func SourceName(name string) string {
	if name == Stdin {
		return document.Stdin
	}
	return name
}

// JudgeFile judges the plan in the file name, or on stdin for "-". It
// lists at most maxListed violations (see engine.ListAtMost). An error is an
// *Error: the plan was not judged, and is never a pass.
func (g *Gate) JudgeFile(ctx context.Context, name string, stdin io.Reader, maxListed int) (report.Result, error) {
	source := SourceName(name)
	return Within(ctx, g.opts.Timeout, source, func(ctx context.Context) (report.Result, error) {
		data, err := Read(ctx, name, source, g.opts.Limits.MaxBytes, stdin)
		if err != nil {
			return report.Result{}, err
		}
		return g.judge(ctx, source, data, maxListed, true)
	})
}

// JudgeBytes judges a plan document already in memory; source names it in
// messages and decides its syntax by its extension (see document.SyntaxOf).
func (g *Gate) JudgeBytes(ctx context.Context, source string, data []byte, maxListed int) (report.Result, error) {
	return Within(ctx, g.opts.Timeout, source, func(ctx context.Context) (report.Result, error) {
		if err := document.CheckSize(source, int64(len(data)), g.opts.Limits.MaxBytes); err != nil {
			return report.Result{}, err
		}
		return g.judge(ctx, source, data, maxListed, true)
	})
}

// JudgeSpawn judges a plan a host adapter wrote for a spawn (agent.
// Translation.Plan): as JudgeBytes, but its violations get no line and
// column, since the document is the gate's own; the adapter names the
// agent definition's lines instead.
func (g *Gate) JudgeSpawn(ctx context.Context, source string, data []byte, maxListed int) (report.Result, error) {
	return Within(ctx, g.opts.Timeout, source, func(ctx context.Context) (report.Result, error) {
		return g.judge(ctx, source, data, maxListed, false)
	})
}

func (g *Gate) judge(ctx context.Context, source string, data []byte, maxListed int, located bool) (report.Result, error) {
	if g.operator == nil {
		// A gate built to list rules (Options.ListOnly) judges nothing.
		return report.Result{}, &Error{Kind: NoPolicy, Source: source, Msg: "no policy applies: the gate was built to list its rules, without an operator policy"}
	}
	if g.opts.OnRead != nil {
		g.opts.OnRead(source, data)
	}
	if err := ctx.Err(); err != nil {
		return report.Result{}, err
	}
	// The document the operator policy was taken from is judged by it
	// alone: its policy block is not the plan's own as well.
	own := g.inPlan && Digest(data) == g.sources.PolicyDigest
	load := g.loader.Plan
	if own {
		load = g.loader.PlanBesidePolicy
	}
	p, err := load(ctx, source, data)
	if err != nil {
		var de *document.Error
		if located && errors.As(err, &de) && de.Pointer != "" && de.Line == 0 {
			// A problem found once the document was read (a plan over a
			// limit such as --max-children) has a pointer and no place.
			// Anything else (a deadline) goes on as it is.
			err = placeIn(ctx, err, source, data, g.opts.Limits)
		}
		return report.Result{}, err
	}
	e, err := g.engine()
	if err != nil {
		return report.Result{}, err
	}
	res, err := e.Evaluate(ctx, g.operator, p, engine.ListAtMost(maxListed), engine.Today(g.opts.Today), engine.StrictExceptions(g.opts.StrictExceptions))
	if err != nil {
		return report.Result{}, err
	}
	res.PolicyInPlan = own
	if !located {
		return res, nil
	}
	return res, place(ctx, &res, g.opts.Limits, data)
}

// place gives each listed violation the line and column of the value it
// points at in the document.
func place(ctx context.Context, res *report.Result, lim document.Limits, data []byte) error {
	var pointers []string
	for _, v := range res.Violations {
		pointers = append(pointers, v.Path)
	}
	for _, c := range res.Children {
		for _, v := range c.Violations {
			pointers = append(pointers, v.Path)
		}
	}
	if len(pointers) == 0 {
		return nil
	}
	at, err := document.Locate(ctx, res.Source, data, lim, pointers)
	if err != nil {
		return err
	}
	set := func(vs []report.Violation) {
		for i := range vs {
			if pos, ok := at[vs[i].Path]; ok {
				vs[i].Line, vs[i].Column = pos.Line, pos.Column
			}
		}
	}
	set(res.Violations)
	for i := range res.Children {
		set(res.Children[i].Violations)
	}
	return nil
}

// Within runs f with the timeout. Running out of time, or the caller's
// context ending, is an error like any other, also when f finished anyway:
// the document is then not judged, never passed. Every error comes back
// as an *Error about name. f runs on the caller's goroutine: a fresh one
// would grow its stack again for every document, a fifth of a small check.
func Within[T any](ctx context.Context, timeout time.Duration, name string, f func(context.Context) (T, error)) (T, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	watchdog := time.AfterFunc(timeout+stopGrace, func() { Stuck(name, timeout) })
	defer watchdog.Stop()
	v, err := f(ctx)
	if err == nil {
		err = ctx.Err() // whatever finished, it finished too late
	}
	var zero T
	switch {
	case err == nil:
		return v, nil
	case errors.Is(err, context.DeadlineExceeded):
		return zero, &Error{Kind: Timeout, Source: name, Msg: fmt.Sprintf("timed out after %s", timeout), Limit: "timeout"}
	}
	return zero, AsError(name, err)
}

// stopGrace is how long a step may run on after its deadline before Stuck
// is called. Every step looks at its context often, so it should never be
// needed; it makes "stops at the timeout" a promise rather than a hope.
const stopGrace = 500 * time.Millisecond

// Stuck is called when a step has run stopGrace past its deadline without
// stopping. A command-line front end makes it end the process; by default
// it does nothing, and the caller waits.
var Stuck = func(name string, timeout time.Duration) {}

// Read reads a document (name, or stdin for "-"), giving up when the
// context ends: a FIFO without a writer or a stdin that never closes must
// not hold the gate past its timeout or a signal. The abandoned read ends
// with the process.
func Read(ctx context.Context, name, source string, max int64, stdin io.Reader) ([]byte, error) {
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
		if name == Stdin {
			r.data, r.err = document.Read(stdin, source, max)
		} else {
			r.data, r.err = document.ReadFile(name, max)
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

// engines keeps the engines this process compiled, by whether they resolve
// paths: a test, a fuzz target or a server building many gates compiles
// the Rego once. (The schemas are compiled once by the plan package.)
var engines sync.Map // bool -> *engine.Engine

// startEngine builds the engine for these options, or finds the one this
// process built before; expect is the operator policy it will most likely
// judge under (engine.Expect), or nil. A panic while building it is raised
// again in every caller of Wait, whose recover turns it into an internal
// error.
func startEngine(opts Options, expect map[string]any) *future.Future[*engine.Engine] {
	resolve := opts.ResolvePaths
	if e, ok := engines.Load(resolve); ok {
		eng := e.(*engine.Engine)
		var err error
		if opts.CompileAll {
			err = eng.CompileRest()
		}
		return future.Done(eng, err)
	}
	return future.Go(func() (*engine.Engine, error) {
		modules, err := policy.Modules()
		if err != nil {
			return nil, fmt.Errorf("reading the built-in policy: %w", err)
		}
		build := []engine.Option{engine.ResolvePaths(resolve), engine.Expect(expect)}
		if opts.ExpectNested {
			build = append(build, engine.EveryModule())
		}
		eng, err := engine.New(modules, build...)
		if err == nil && opts.CompileAll {
			err = eng.CompileRest()
		}
		if err == nil {
			engines.Store(resolve, eng)
		}
		return eng, err
	})
}
