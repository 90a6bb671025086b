package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/storage"
	"github.com/open-policy-agent/opa/v1/storage/inmem"
	"github.com/open-policy-agent/opa/v1/topdown"

	"github.com/spawngate/spawngate/internal/jsonpointer"
	"github.com/spawngate/spawngate/internal/memo"
	"github.com/spawngate/spawngate/internal/plan"
	"github.com/spawngate/spawngate/internal/report"
	"github.com/spawngate/spawngate/policy"
)

// Engine judges plans. Build one per process with New; Evaluate may then be
// called for many plans, also concurrently.
type Engine struct {
	program   // what New compiled
	caches    // what the engine remembers across evaluations (cache.go)
	selection // the lean engine's way to the engine of every module (lean.go)
	settings  // how it was asked to judge (Option)
}

// program is the policy New compiled, and the queries that evaluate it.
type program struct {
	compiler   *ast.Compiler
	store      storage.Store // empty: the checks read only input
	checks     []Check       // every check compiled, by ID
	childQuery *query        // the checks that judge each child on its own
	planQuery  *query        // the checks that judge the plan as a whole; nil when none do
	planChecks []Check       // the same checks
	abstracted []string      // child keys no check may see (plan.Abstracted)
	// exceptions are the queries of policy/exceptions.rego, compiled when
	// a policy first has exceptions.
	exceptions exceptionQueries
}

// settings are what the Options asked for.
type settings struct {
	resolvePaths bool
	custom       []policy.Module // the operator's own modules (Custom), compiled by New
	everyModule  bool
	expect       map[string]any // see Expect
	memoless     bool           // see noMemos
	unshared     bool           // see noSharedValues
	opts         []Option
}

// planQueryFor is the query of the plan checks that apply under the
// policies: every one without custom.when_set, and those whose keys a
// policy sets; nil when none does.
func (e *Engine) planQueryFor(policies map[string]any) (*query, error) {
	if e.planQuery == nil {
		return nil, nil
	}
	var apply []Check
	for _, chk := range e.planChecks {
		if applies(chk, policies) {
			apply = append(apply, chk)
		}
	}
	switch len(apply) {
	case 0:
		return nil, nil
	case len(e.planChecks):
		return e.planQuery, nil
	}
	queries, key := e.planQueries.For("", 1, nil), checksKey(apply)
	if q, ok := queries.Get(key); ok {
		return q, nil
	}
	q, err := prepare(e.compiler, apply)
	if err != nil {
		return nil, err
	}
	queries.Put(key, q)
	return q, nil
}

// applies tells whether a plan check can refuse under the policies.
func applies(chk Check, policies map[string]any) bool {
	if len(chk.WhenSet) == 0 {
		return true
	}
	for _, p := range policies {
		pol, _ := p.(map[string]any)
		for _, k := range chk.WhenSet {
			if _, ok := pol[k]; ok {
				return true
			}
		}
	}
	return false
}

// planViolations is what the plan checks found of one plan: by group, and of
// the plan as a whole.
type planViolations struct {
	found [][]report.Violation
	whole []report.Violation
}

// query is one compiled query that binds the deny set of each of its checks.
type query struct {
	body   ast.Body // deny0 = data.spawngate.checks.<a>.deny; ...
	checks []Check  // in the order of the bindings
}

// reads is every child key the query's checks read that grants nothing
// (Check.Reads), or nil when they read none.
func (q *query) reads() map[string]bool {
	if q == nil {
		return nil
	}
	var keep map[string]bool
	for _, chk := range q.checks {
		for _, k := range chk.Reads {
			if keep == nil {
				keep = map[string]bool{}
			}
			keep[k] = true
		}
	}
	return keep
}

// Option changes how an Engine judges.
type Option func(*Engine)

// ResolvePaths makes the engine resolve every path against the real
// filesystem as well (--resolve-paths): symlinks are followed on the
// longest existing prefix, and the result must lie inside every resolved
// workspace root. A root that does not exist on this machine makes the
// plan impossible to evaluate.
func ResolvePaths(on bool) Option { return func(e *Engine) { e.resolvePaths = on } }

// parseModules parses the modules on every core: parsing is a third of
// start-up. METADATA is read by packageMetadata, not by the parser.
func parseModules(modules []policy.Module) (map[string]*ast.Module, error) {
	parsed := make([]*ast.Module, len(modules))
	errs := make([]error, len(modules))
	var wg sync.WaitGroup
	next := make(chan int, len(modules))
	for i := range modules {
		next <- i
	}
	close(next)
	for range min(runtime.GOMAXPROCS(0), len(modules)) {
		wg.Go(func() {
			for i := range next {
				m := modules[i]
				func() {
					defer func() {
						if r := recover(); r != nil { // a parser panic is a module that cannot be read
							errs[i] = fmt.Errorf("%s: the Rego parser failed: %v", m.Name, r)
						}
					}()
					parsed[i], errs[i] = ast.ParseModuleWithOpts(m.Name, m.Source, ast.ParserOptions{RegoVersion: ast.RegoV1})
				}()
			}
		})
	}
	wg.Wait()
	out := make(map[string]*ast.Module, len(modules))
	for i, m := range modules {
		if errs[i] != nil {
			return nil, errs[i]
		}
		out[m.Name] = parsed[i]
	}
	return out, nil
}

// Built-ins a policy may not call beside those OPA marks nondeterministic
// (http.send, time.now_ns, rand.intn, io.jwt.encode_sign and the rest):
// the same plan must always get the same answer, without the network, the
// clock or chance.
var forbiddenBuiltins = map[string]bool{
	"io.jwt.decode_verify": true, // reads the clock when no time is given
	"net.lookup_ip_addr":   true,
	"opa.runtime":          true,
	"trace":                true,
}

// New compiles the modules (policy.Modules() for the built-in checks) and
// prepares the one query that evaluates every check.
func New(modules []policy.Module, opts ...Option) (*Engine, error) {
	e := &Engine{program: program{store: inmem.New()}, caches: newCaches()}
	for _, opt := range opts {
		opt(e)
	}
	if e.memoless {
		e.caches = caches{}
	}
	e.opts = opts
	parsed, err := parseModules(modules)
	if err != nil {
		return nil, fmt.Errorf("policy: %w", err)
	}
	// The operator's modules are checked before anything is compiled: a
	// module that adds to a built-in package must never be compiled into
	// it, not even to report a compile error.
	custom := map[string]bool{}
	if len(e.custom) > 0 {
		mine, err := parseCustom(e.custom, parsed)
		if err != nil {
			return nil, err
		}
		if err := checkCustomPackages(mine, parsed); err != nil {
			return nil, err
		}
		for name, m := range mine {
			parsed[name], custom[name] = m, true
		}
	}
	// The built-in checks only some plans reach are left for the first
	// plan that does (lean.go), unless the policy expected already does.
	embedded := len(custom) == 0 && builtin(modules)
	if embedded && !e.everyModule {
		lean, gated, all, err := leanModules(parsed)
		if err != nil {
			return nil, policyError(err, false)
		}
		if len(gated) > 0 && !policyReaches(gated, e.expect, map[string]any{"operator": e.expect}) {
			parsed, e.gated, e.all = lean, gated, all
			e.full = &fullEngine{build: func() (*Engine, error) {
				return New(modules, append(slices.Clone(e.opts), EveryModule())...)
			}}
		}
	}
	// OPA's type checker is a fifth of compiling, and finds nothing the
	// evaluation would not: a type error in a check is a built-in error at
	// run time, and built-in errors are strict, so the plan is not
	// evaluated (exit 2). TestBuiltinsTypeCheck runs it on the built-in
	// checks, so their type errors are caught before release.
	skip := []ast.StageID{ast.StageCheckTypes}
	switch {
	case len(custom) > 0:
		// The operator's own checks are compiled with every stage, the
		// type checker's included: a mistake in them is a start-up error
		// naming its line, not a plan that cannot be judged later.
		skip = nil
	case embedded:
		// The built-in checks, exactly as embedded, also skip the stages
		// that only look for mistakes and change nothing (recursion, rule
		// conflicts, ...): TestBuiltinsTypeCheck compiles them with every
		// stage, and start-up is the hook's latency. Any other module is
		// compiled with all of them.
		skip = append(skip, validationStages...)
	}
	// OPA v1.22.3's comprehension indices give wrong answers, depending on
	// the order of calls, for a function whose value is a comprehension
	// that both looks its argument up in a rule and passes it to a function
	// (policy/indexing_test.go). The built-in checks avoid that shape; an
	// operator's own check may not, so no check is compiled with them.
	// Measured side by side, they made no evaluation faster (distinct
	// children, 10,000 and 100,000; a first decision on the example).
	skip = append(skip, ast.StageBuildComprehensionIndices)
	compiler := ast.NewCompiler().
		WithCapabilities(capabilities()).
		WithEnablePrintStatements(false).
		WithSkipStages(skip...)
	if compiler.Compile(parsed); compiler.Failed() {
		if len(custom) > 0 {
			return nil, moduleError("policy", compiler.Errors)
		}
		return nil, fmt.Errorf("policy: %w", compiler.Errors)
	}
	var checks []Check
	if e.all != nil {
		// The lean engine's checks are those leanModules found in the
		// same modules, parsed, less the ones it left out: not read twice.
		checks = leanChecks(e.all, e.gated)
	} else if checks, err = discoverChecks(compiler, custom); err != nil {
		return nil, policyError(err, len(custom) > 0)
	}
	abstracted, err := plan.Abstracted()
	if err != nil {
		return nil, err
	}
	if err := readsNoAbstractedField(compiler, abstracted, checks); err != nil {
		return nil, policyError(err, len(custom) > 0)
	}
	if len(custom) > 0 {
		// The built-in checks of each child read no pointers
		// (TestBuiltinChildChecksReadNoPointers): start-up is not spent
		// on asking again.
		var mine []Check
		for _, chk := range checks {
			if chk.Custom {
				mine = append(mine, chk)
			}
		}
		if err := childChecksReadNoPointers(compiler, mine); err != nil {
			return nil, err
		}
	}
	e.compiler, e.checks, e.abstracted, e.custom = compiler, checks, abstracted, nil
	if !e.unshared {
		e.shared = newSharing(compiler)
	}
	var byScope [2][]Check
	for _, chk := range checks {
		if chk.Scope == ScopePlan {
			byScope[1] = append(byScope[1], chk)
		} else {
			byScope[0] = append(byScope[0], chk)
		}
	}
	if e.childQuery, err = prepare(compiler, byScope[0]); err != nil {
		return nil, err
	}
	if len(byScope[1]) > 0 {
		e.planChecks = byScope[1]
		if e.planQuery, err = prepare(compiler, byScope[1]); err != nil {
			return nil, err
		}
	}
	return e, nil
}

// policyError is an error of the modules as New returns it: the built-in
// checks' with the "policy: " the engine has always put before them (they
// are the gate's own, an internal error), the operator's as they are.
func policyError(err error, custom bool) error {
	if custom {
		return err
	}
	return fmt.Errorf("policy: %w", err)
}

// prepare compiles the one query that binds the deny sets of the checks.
// OPA's topdown evaluator is used directly, not the rego package around
// it. That no longer keeps code out of the binary (internal/judge runs the
// Rego tests with OPA's tester, which links rego, bundle, wasm and the
// planner); it spares each evaluation the rego package's conversion of the
// result set to Go values, as violation reads OPA's terms themselves.
func prepare(compiler *ast.Compiler, checks []Check) (*query, error) {
	var body ast.Body
	for i, chk := range checks {
		body = append(body, ast.Equality.Expr(ast.VarTerm(binding(i)), ast.NewTerm(denyRef(chk.Package))))
	}
	body, err := compiler.QueryCompiler().Compile(body)
	if err != nil {
		return nil, fmt.Errorf("policy: preparing the query: %w", err)
	}
	return &query{body: body, checks: checks}, nil
}

// validationStages are the compiler's stages that only look for mistakes
// in the modules and change nothing in them.
var validationStages = []ast.StageID{
	ast.StageCheckRecursion, ast.StageCheckRuleConflicts, ast.StageCheckKeywordOverrides,
	ast.StageCheckDuplicateImports, ast.StageCheckVoidCalls, ast.StageCheckDeprecatedBuiltins,
	ast.StageCheckUnusedImports, ast.StageRewriteTestRulesForTracing, ast.StageBuildRequiredCapabilities,
}

// builtin tells whether the modules are the built-in checks exactly as
// embedded.
func builtin(modules []policy.Module) bool {
	embedded, err := policy.Modules()
	return err == nil && slices.Equal(modules, embedded)
}

func binding(i int) string { return "deny" + strconv.Itoa(i) }

func capabilities() *ast.Capabilities {
	caps := ast.CapabilitiesForThisVersion()
	kept := caps.Builtins[:0]
	for _, b := range caps.Builtins {
		if !b.Nondeterministic && !forbiddenBuiltins[b.Name] {
			kept = append(kept, b)
		}
	}
	caps.Builtins = kept
	caps.AllowNet = []string{}
	return caps
}

// Checks lists the rules the engine reports under, by ID, the schema
// step's included.
func (e *Engine) Checks() []Check {
	if e.all != nil {
		return append([]Check{SchemaCheck}, e.all...)
	}
	return append([]Check{SchemaCheck}, e.checks...)
}

// ErrNoPolicy is returned for a plan that no policy applies to.
var ErrNoPolicy = errors.New("no policy applies")

// EvalOption changes one evaluation.
type EvalOption func(*evalOptions)

type evalOptions struct {
	maxListed        int
	today            string
	strictExceptions bool
}

// Today is the day (YYYY-MM-DD, UTC) exceptions are judged on; by default
// the day of the evaluation.
func Today(day string) EvalOption { return func(o *evalOptions) { o.today = day } }

// StrictExceptions makes an exception that matches nothing in a plan
// refuse the plan (--strict-exceptions).
func StrictExceptions(on bool) EvalOption { return func(o *evalOptions) { o.strictExceptions = on } }

// ListAtMost bounds how many violations the result lists, in report order
// (report.DefaultMaxListed unless given). The rest are counted per child as
// unlisted; no verdict depends on the bound.
func ListAtMost(n int) EvalOption { return func(o *evalOptions) { o.maxListed = max(n, 0) } }

// Evaluate judges one plan under the operator's policy (nil when there is
// none) and the plan's own. An error means the plan could not be judged.
//
// The checks see one representative per group of children that cannot be
// told apart (plan/group.go), without the keys members may differ in, and
// child checks see them in batches, evaluated on every core. Each group's
// findings are kept once, however many members it has; the result lists at
// most the bound of violations and counts the rest, so what a plan of
// identical hostile children costs is bounded by the limits, the report's
// size included.
func (e *Engine) Evaluate(ctx context.Context, operator plan.Policy, p *plan.Plan, opts ...EvalOption) (report.Result, error) {
	o := evalOptions{maxListed: report.DefaultMaxListed}
	for _, opt := range opts {
		opt(&o)
	}
	policies, names := sources(operator, p)
	if len(policies) == 0 {
		return report.Result{}, ErrNoPolicy
	}
	if e.full != nil && e.needsEveryModule(operator, policies, p) {
		full, err := e.full.get()
		if err != nil {
			return report.Result{}, err
		}
		return full.Evaluate(ctx, operator, p, opts...)
	}
	ev, err := e.begin(ctx, operator, p, policies, names, o)
	if err != nil {
		return report.Result{}, err
	}
	if err := ev.planChecks(ctx); err != nil {
		return report.Result{}, err
	}
	if err := ev.childChecks(ctx); err != nil {
		return report.Result{}, err
	}
	return ev.assemble(ctx)
}

// sources are the policies that apply, by source, and their names in
// report order.
func sources(operator plan.Policy, p *plan.Plan) (map[string]any, []string) {
	policies := map[string]any{}
	var names []string
	if operator != nil {
		policies["operator"] = map[string]any(operator)
		names = append(names, "operator")
	}
	if p.Policy != nil {
		policies["plan"] = map[string]any(p.Policy)
		names = append(names, "plan")
	}
	return policies, names
}

// evaluation is one plan being judged: what the phases of Evaluate share.
type evaluation struct {
	e     *Engine
	p     *plan.Plan
	names []string // the sources of the policies that apply
	// The groups the checks judge: the plan's, with the children a check
	// or an exception must see alone split off (split).
	reps, group []int
	keys        []string
	pq          *query          // the plan checks that apply; nil when none
	keep        map[string]bool // the keys that grant nothing a check that applies reads
	in          *inputs
	exc         *excepter // nil without exceptions
	pkey        string    // the policies, as a key holds them (keyPolicies)
	mem         memories
	f           *resultBuilder
	// The representatives as the checks see them, built only for those a
	// query sees: a child whose findings are remembered needs none.
	judged []any
	built  []bool
}

// begin prepares what every check of one plan reads: the groups, the
// policies in OPA's form, the exceptions, and the memories that apply.
func (e *Engine) begin(ctx context.Context, operator plan.Policy, p *plan.Plan, policies map[string]any, names []string, o evalOptions) (*evaluation, error) {
	ev := &evaluation{e: e, p: p, names: names, reps: p.Reps, group: p.Group, keys: p.Keys}
	groupIssues := p.GroupViolations
	if ev.reps == nil {
		ev.reps, ev.group = make([]int, len(p.Children)), make([]int, len(p.Children))
		for i := range ev.reps {
			ev.reps[i], ev.group[i] = i, i
		}
	}
	var err error
	if ev.pq, err = e.planQueryFor(policies); err != nil {
		return nil, err
	}
	// A plan check that reads what grants nothing (a brief) applies: then
	// children that differ only in it differ, and each is judged alone.
	if ev.keep = ev.pq.reads(); ev.keep != nil {
		alone := make([]bool, len(p.Children))
		for i := range alone {
			alone[i] = true
		}
		ev.reps, ev.group, ev.keys, groupIssues = split(ev.reps, ev.group, ev.keys, groupIssues, alone)
	}
	var lacks []string
	ev.pkey, lacks = keyPolicies(policies)
	if ev.in, err = e.newInputs(ctx, policies, e.policyValues.For("", 1, lacks), ev.pkey, names, p); err != nil {
		return nil, err
	}
	ev.exc = newExcepter(e, operator, ev.in, o.today, o.strictExceptions)
	if ev.exc != nil && len(ev.exc.named) > 0 {
		ev.reps, ev.group, ev.keys, groupIssues = splitNamed(p.Children, ev.reps, ev.group, ev.keys, groupIssues, ev.exc.named)
	}
	ev.judged, ev.built = make([]any, len(ev.reps)), make([]bool, len(ev.reps))
	ev.f = newResultBuilder(p, ev.reps, ev.group, groupIssues, o.maxListed)
	if ev.exc != nil {
		ev.f.members(0) // counted here, before workers read the counts
	}
	// What the checks found for children judged before under the same
	// policies is remembered, as long as the keys hold all they read
	// (cache.go).
	ev.mem = e.memoriesFor(len(ev.reps), append(lacks, e.unkeyed(ev.keys, ev.reps, ev.keep)...))
	return ev, nil
}

// build makes representative k as the checks see it: without the keys its
// members may differ in, so that no check can judge one member by
// another's values.
func (ev *evaluation) build(k int) {
	if !ev.built[k] {
		ev.judged[k], ev.built[k] = ev.e.judged(ev.p, ev.reps[k], ev.keep), true
	}
}

// take gives representative k as the checks see it, to the one batch that
// judges it, and lets go of it: built by the plan checks, or built now, on
// the batch's core. A plan of many distinct children then never holds all
// of them twice, as written and as judged.
func (ev *evaluation) take(k int) any {
	if !ev.built[k] {
		return ev.e.judged(ev.p, ev.reps[k], ev.keep)
	}
	c := ev.judged[k]
	ev.judged[k] = nil
	return c
}

// planChecks runs the plan checks that apply. They see every
// representative at once, how many children each stands for, and where it
// is (for messages that name other children: a nonce or a task also held
// at /plan/0/children/2). What they found is remembered for the same
// policies, the same groups in the same order, the same members and the
// same places: a plan judged again costs a lookup.
func (ev *evaluation) planChecks(ctx context.Context) error {
	if ev.pq == nil {
		return nil
	}
	members := make([]any, len(ev.reps))
	for _, k := range ev.group {
		n, _ := members[k].(int)
		members[k] = n + 1
	}
	pointers := make([]any, len(ev.reps))
	for k, i := range ev.reps {
		pointers[k] = ev.p.Pointer(i)
	}
	var key string
	if ev.mem.plan.On() {
		key = planKey(ev.pkey, ev.keys, members, pointers)
	}
	pf, ok := ev.mem.plan.Get(key)
	if !ok {
		for k := range ev.reps {
			ev.build(k)
		}
		pv, err := ast.InterfaceToValue(pointers)
		if err != nil {
			return fmt.Errorf("building the policy input: %w", err)
		}
		ev.in.pointers = ast.NewTerm(pv)
		if pf.found, pf.whole, err = ev.e.evaluateAll(ctx, ev.pq, ev.in, ev.judged, members); err != nil {
			return err
		}
		ev.mem.plan.Put(key, pf)
	}
	found := make([][]report.Violation, len(pf.found))
	for k, vs := range pf.found {
		found[k] = slices.Clone(vs)
	}
	ev.f.addPlan(found, slices.Clone(pf.whole))
	return nil
}

// childChecks runs the child checks on every representative whose
// findings are not remembered, in batches on every core, and folds each
// group's findings, remembered or found, in group order.
func (ev *evaluation) childChecks(ctx context.Context) error {
	cached := make([][]report.Violation, len(ev.reps))
	var need []int
	for k := range ev.reps {
		if ev.mem.child.On() {
			if vs, ok := ev.mem.child.Get(childKey(ev.pkey, ev.keys[k])); ok {
				cached[k] = vs
				continue
			}
		}
		need = append(need, k)
	}
	next := 0 // the next group to fold
	foldTo := func(end int) error {
		for next < end {
			ks := make([]int, 0, min(end-next, exceptAtOnce))
			for k := next; k < end && len(ks) < exceptAtOnce; k++ {
				ks = append(ks, k)
			}
			found := make([][]report.Violation, len(ks))
			for j, k := range ks {
				found[j] = cached[k]
			}
			all, err := ev.complete(ctx, ks, found)
			if err != nil {
				return err
			}
			for j, k := range ks {
				if err := ev.f.fold(ctx, k, all[j]); err != nil {
					return err
				}
			}
			next += len(ks)
		}
		return nil
	}
	written := func(k int) any { return ev.p.Children[ev.reps[k]] }
	err := ev.e.evaluateBatches(ctx, ev.in, ev.take, batches(written, need), ev.complete, func(b batch, found, all [][]report.Violation) error {
		for j, k := range b {
			if err := foldTo(k); err != nil {
				return err
			}
			if ev.mem.child.On() {
				ev.mem.child.Put(childKey(ev.pkey, ev.keys[k]), slices.Clone(found[j]))
			}
			if err := ev.f.fold(ctx, k, all[j]); err != nil {
				return err
			}
			next = k + 1
		}
		return nil
	})
	if err != nil {
		return err
	}
	return foldTo(len(ev.reps))
}

// exceptAtOnce is how many remembered groups one evaluation of the
// exceptions asks about.
const exceptAtOnce = 1024

// complete gives each group of ks all it was found to have: the child
// checks' violations (found, by place in ks, left as they are for the
// memory) with the plan checks' added, and the operator's exceptions
// applied, asked about every group of ks at once. It runs on the core
// that judged the batch, concurrently with others.
func (ev *evaluation) complete(ctx context.Context, ks []int, found [][]report.Violation) ([][]report.Violation, error) {
	all := make([][]report.Violation, len(ks))
	for j, k := range ks {
		vs := slices.Clone(found[j])
		if ev.f.planFound != nil {
			vs = append(vs, ev.f.planFound[k]...)
		}
		all[j] = vs
	}
	if ev.exc == nil {
		return all, nil
	}
	items := make([]exceptItem, len(ks))
	for j, k := range ks {
		items[j] = exceptItem{child: ev.p.Children[ev.reps[k]], alone: ev.f.members(k) == 1, vs: all[j]}
	}
	return all, ev.exc.apply(ctx, items)
}

// assemble builds the result from what the checks found, in document
// order, with what the operator's exceptions say of themselves.
func (ev *evaluation) assemble(ctx context.Context) (report.Result, error) {
	res, err := ev.f.assemble(ctx, ev.names, ev.group)
	if err != nil {
		return res, err
	}
	inDocumentOrder(ev.p, res.Children)
	if ev.exc == nil {
		return res, nil
	}
	if res.Exceptions, err = ev.exc.notes(ctx); err != nil {
		return report.Result{}, err
	}
	for _, n := range res.Exceptions {
		if n.Blocks {
			res.Verdict = report.Block
		}
	}
	return res, nil
}

// inDocumentOrder lists a nested plan's children as the document does:
// each with its descendants after it, not after every child of the plan.
func inDocumentOrder(p *plan.Plan, children []report.Child) {
	order := p.Order()
	if order == nil || len(order) != len(children) {
		return
	}
	sorted := make([]report.Child, len(children))
	for k, i := range order {
		sorted[k] = children[i]
	}
	copy(children, sorted)
}

// inputs is what every evaluation of one plan shares: the policies, already
// in OPA's form, and what --resolve-paths learned of the roots.
type inputs struct {
	policies ast.Value
	parents  *ast.Term      // what the checks may read of each parent in a nested plan; nil when none
	pointers *ast.Term      // for the plan checks: where each representative is in the document
	roots    map[string]any // resolved roots by policy; nil without --resolve-paths
	planRoot string         // the root relative paths are read against
}

// newInputs builds the inputs of one plan. The policies in OPA's form are
// remembered (values) by their key (policyValuesKey): a gate judging plan
// after plan under one policy converts it once.
func (e *Engine) newInputs(ctx context.Context, policies map[string]any, values memo.View[ast.Value], pkey string, names []string, p *plan.Plan) (*inputs, error) {
	key := policyValuesKey(pkey)
	pv, ok := values.Get(key)
	if !ok {
		var err error
		if pv, err = ast.InterfaceToValue(policies); err != nil {
			return nil, fmt.Errorf("building the policy input: %w", err)
		}
		values.Put(key, pv)
	}
	in := &inputs{policies: pv}
	if p.Parents != nil {
		// Built once and shared by every batch: a batch looks up only the
		// parents of its children.
		parents, err := ast.InterfaceToValue(p.Parents)
		if err != nil {
			return nil, fmt.Errorf("building the policy input: %w", err)
		}
		in.parents = ast.NewTerm(parents)
	}
	in.planRoot, _ = policies[names[len(names)-1]].(map[string]any)["workspace_root"].(string)
	if e.resolvePaths {
		var err error
		if in.roots, err = resolveRoots(policies); err != nil {
			return nil, err
		}
	}
	return in, nil
}

// evaluate runs a query over a batch of representatives (all of them for
// the plan query, which also gets members) and returns each one's
// violations, by its index in the batch, with fields relative to it.
func (e *Engine) evaluate(ctx context.Context, q *query, in *inputs, batch []any, members []any) ([][]report.Violation, error) {
	found, whole, err := e.evaluateAll(ctx, q, in, batch, members)
	if err == nil && len(whole) > 0 {
		err = fmt.Errorf("check %s: a violation names no child, and only a check of the whole plan (custom.scope: plan) may report one", whole[0].Rule)
	}
	return found, err
}

// evaluateAll is evaluate, with the violations of the plan as a whole
// (those that name no child, from plan checks) apart.
func (e *Engine) evaluateAll(ctx context.Context, q *query, in *inputs, batch []any, members []any) ([][]report.Violation, []report.Violation, error) {
	input := ast.NewObject(
		ast.Item(ast.InternedTerm("policies"), ast.NewTerm(in.policies)),
	)
	children, err := ast.InterfaceToValue(batch)
	if err != nil {
		return nil, nil, fmt.Errorf("building the policy input: %w", err)
	}
	input.Insert(ast.InternedTerm("children"), ast.NewTerm(children))
	floats := floatLiterals(batch)
	literals, err := ast.InterfaceToValue(floats)
	if err != nil {
		return nil, nil, fmt.Errorf("building the policy input: %w", err)
	}
	input.Insert(ast.InternedTerm("float_literals"), ast.NewTerm(literals))
	if facts := factsOf(children, in.policies, floats); facts != nil {
		input.Insert(factsKey, ast.NewTerm(facts))
	}
	if in.parents != nil {
		input.Insert(ast.InternedTerm("parents"), in.parents)
	}
	if members != nil && in.pointers != nil {
		input.Insert(ast.InternedTerm("pointers"), in.pointers)
	}
	if members != nil {
		m, err := ast.InterfaceToValue(members)
		if err != nil {
			return nil, nil, fmt.Errorf("building the policy input: %w", err)
		}
		input.Insert(ast.InternedTerm("members"), ast.NewTerm(m))
	}
	if in.roots != nil {
		paths, err := resolvePaths(ctx, in.planRoot, batch)
		if err != nil {
			return nil, nil, err
		}
		r, err := ast.InterfaceToValue(map[string]any{"roots": in.roots, "paths": paths})
		if err != nil {
			return nil, nil, fmt.Errorf("building the policy input: %w", err)
		}
		input.Insert(ast.InternedTerm("resolution"), ast.NewTerm(r))
	}
	rs, err := e.eval(ctx, q.body, input)
	if err == nil {
		// OPA notices cancellation asynchronously, so a short evaluation
		// can finish after its deadline passed; that is a timeout too.
		err = ctx.Err()
	}
	if err != nil {
		return nil, nil, fmt.Errorf("evaluating the policy: %w", err)
	}
	if len(rs) != 1 {
		return nil, nil, fmt.Errorf("evaluating the policy: the result is undefined (%d results)", len(rs))
	}
	found := make([][]report.Violation, len(batch))
	var whole []report.Violation
	for i, chk := range q.checks {
		deny, ok := rs[0][ast.Var(binding(i))]
		set, isSet := ast.Value(nil), false
		if ok {
			set, isSet = deny.Value.(ast.Set)
		}
		if !isSet {
			return nil, nil, fmt.Errorf("check %s: deny is not a set", chk.ID)
		}
		var bad error
		set.(ast.Set).Foreach(func(raw *ast.Term) {
			if bad != nil {
				return
			}
			k, v, err := violation(chk, raw, len(batch))
			if err != nil {
				bad = fmt.Errorf("check %s: %w", chk.ID, err)
				return
			}
			if k < 0 {
				whole = append(whole, v)
				return
			}
			found[k] = append(found[k], v)
		})
		if bad != nil {
			return nil, nil, bad
		}
	}
	return found, whole, nil
}

// judged is child i as the checks see it: without the keys its group's
// members may differ in (but those in keep, which the checks that apply
// read), without its children list, and in a nested plan with its place in
// the tree (plan.Plan.TreeOf).
func (e *Engine) judged(p *plan.Plan, i int, keep map[string]bool) any {
	c := e.without(p.Children[i], keep)
	if p.Tree == nil {
		return c
	}
	obj, ok := c.(map[string]any)
	if !ok {
		return c
	}
	out := make(map[string]any, len(obj)+1)
	for k, v := range obj {
		if k != "children" {
			out[k] = v
		}
	}
	out["tree"] = p.TreeOf(i)
	return out
}

// without returns a child without the abstracted keys, or the child itself
// when it has none of them or is not an object.
func (e *Engine) without(child any, keep map[string]bool) any {
	obj, ok := child.(map[string]any)
	if !ok {
		return child
	}
	found := false
	for _, k := range e.abstracted {
		if _, ok := obj[k]; ok && !keep[k] {
			found = true
			break
		}
	}
	if !found {
		return child
	}
	out := make(map[string]any, len(obj))
	for k, v := range obj {
		out[k] = v
	}
	for _, k := range e.abstracted {
		if !keep[k] {
			delete(out, k)
		}
	}
	return out
}

// eval runs a query on one input, stopping when the context ends.
func (e *Engine) eval(ctx context.Context, body ast.Body, input ast.Value) (topdown.QueryResultSet, error) {
	txn, err := e.store.NewTransaction(ctx)
	if err != nil {
		return nil, err
	}
	defer e.store.Abort(ctx, txn)
	cancel := topdown.NewCancel()
	done := make(chan struct{})
	defer close(done)
	go func() {
		select {
		case <-ctx.Done():
			cancel.Cancel()
		case <-done:
		}
	}()
	q := topdown.NewQuery(body)
	vc := e.shared.cacheFor(input)
	if vc != nil {
		q = q.WithVirtualCache(vc)
	}
	rs, err := q.
		WithCompiler(e.compiler).
		WithStore(e.store).
		WithTransaction(txn).
		WithInput(ast.NewTerm(input)).
		WithStrictBuiltinErrors(true).
		WithTime(time.Unix(0, 0)). // no built-in left reads it; never the clock
		WithCancel(cancel).
		Run(ctx)
	if err == nil && ctx.Err() == nil {
		vc.commit()
	}
	if err != nil && ctx.Err() != nil {
		// Stopped because the context ended (a built-in such as
		// numbers.range reports its own cancel error): the reason is the
		// context's, a timeout or an interruption, not an internal error.
		return rs, fmt.Errorf("%w: %v", ctx.Err(), err)
	}
	return rs, err
}

// violation reads one element of a deny set: {"child": <index>, "field":
// <pointer>, "message": <text>}, with "policies" (the sources that refuse,
// a list of strings) when the check depends on them. A violation of the
// plan as a whole names no child, and its field points into the document
// (/plan): its index is -1.
func violation(chk Check, raw *ast.Term, children int) (int, report.Violation, error) {
	obj, ok := raw.Value.(ast.Object)
	if !ok {
		return 0, report.Violation{}, fmt.Errorf("malformed violation %v: want {child, field, message}", raw)
	}
	known := 2
	child := -1
	if t := obj.Get(ast.InternedTerm("child")); t != nil {
		known++
		if n, ok := t.Value.(ast.Number); ok {
			if i, ok := n.Int(); ok && i >= 0 && i < children && n.String() == strconv.Itoa(i) {
				child = i
			}
		}
		if child < 0 {
			return 0, report.Violation{}, fmt.Errorf("malformed violation %v: child is not an index of the plan", raw)
		}
	} else if chk.Scope != ScopePlan {
		return 0, report.Violation{}, fmt.Errorf("malformed violation %v: no child, and only a check of the whole plan (custom.scope: plan) may report one", raw)
	}
	field, ok := stringAt(obj, "field")
	if !ok || (field != "" && field[0] != '/') || (child < 0 && field == "") {
		return 0, report.Violation{}, fmt.Errorf("malformed violation %v: field is not a JSON pointer", raw)
	}
	msg, ok := stringAt(obj, "message")
	if !ok || strings.TrimSpace(msg) == "" {
		return 0, report.Violation{}, fmt.Errorf("malformed violation %v: message is empty", raw)
	}
	var sources []string
	if t := obj.Get(ast.InternedTerm("policies")); t != nil {
		known++
		list, ok := t.Value.(*ast.Array)
		if ok && list.Len() > 0 {
			for i := range list.Len() {
				s, isString := list.Elem(i).Value.(ast.String)
				if !isString || s == "" || (len(sources) > 0 && string(s) <= sources[len(sources)-1]) {
					ok = false
					break
				}
				sources = append(sources, string(s))
			}
		}
		if !ok || len(sources) == 0 {
			return 0, report.Violation{}, fmt.Errorf("malformed violation %v: policies is not a sorted list of the sources that refuse", raw)
		}
	}
	if obj.Len() != known {
		return 0, report.Violation{}, fmt.Errorf("malformed violation %v: want {child, field, message} and optionally policies", raw)
	}
	return child, report.Violation{
		Rule:     chk.ID,
		Severity: chk.Severity,
		Message:  msg,
		Path:     field, // relative to the child until it is known which
		Policies: sources,
	}, nil
}

func stringAt(obj ast.Object, key string) (string, bool) {
	t := obj.Get(ast.InternedTerm(key))
	if t == nil {
		return "", false
	}
	s, ok := t.Value.(ast.String)
	return string(s), ok
}

// floatLiterals finds every number the children wrote with a fraction or
// an exponent, as a JSON pointer into the children mapped to its text. Rego
// sees only values, and 4e4 is 40000 there.
func floatLiterals(children []any) map[string]any {
	out := map[string]any{}
	var walk func(ptr string, v any)
	walk = func(ptr string, v any) {
		switch v := v.(type) {
		case json.Number:
			if strings.ContainsAny(string(v), ".eE") {
				out[ptr] = string(v)
			}
		case map[string]any:
			for k, x := range v {
				walk(jsonpointer.Join(ptr, k), x)
			}
		case []any:
			for i, x := range v {
				walk(ptr+"/"+strconv.Itoa(i), x)
			}
		}
	}
	for i, c := range children {
		walk("/"+strconv.Itoa(i), c)
	}
	return out
}
