package gate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/storage"
	"github.com/open-policy-agent/opa/v1/storage/inmem"
	"github.com/open-policy-agent/opa/v1/topdown"

	"github.com/spawngate/spawngate/internal/jsonpointer"
	"github.com/spawngate/spawngate/internal/plan"
	"github.com/spawngate/spawngate/internal/report"
	"github.com/spawngate/spawngate/policy"
)

// Engine judges plans. Build one per process with New; Evaluate may then be
// called for many plans, also concurrently.
type Engine struct {
	compiler     *ast.Compiler
	query        ast.Body      // compiled: deny0 = data.spawngate.checks.<a>.deny; ...
	store        storage.Store // empty: the checks read only input
	checks       []Check       // in the order of the query's bindings
	abstracted   []string      // child keys no check may see (plan.Abstracted)
	resolvePaths bool
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
	parsed, err := parseModules(modules)
	if err != nil {
		return nil, fmt.Errorf("policy: %w", err)
	}
	// OPA's type checker is a fifth of compiling, and finds nothing the
	// evaluation would not: a type error in a check is a built-in error at
	// run time, and built-in errors are strict, so the plan is not
	// evaluated (exit 2). TestBuiltinsTypeCheck runs it on the built-in
	// checks, so their type errors are caught before release.
	compiler := ast.NewCompiler().
		WithCapabilities(capabilities()).
		WithEnablePrintStatements(false).
		WithSkipStages(ast.StageCheckTypes)
	if compiler.Compile(parsed); compiler.Failed() {
		return nil, fmt.Errorf("policy: %w", compiler.Errors)
	}
	checks, err := discoverChecks(compiler)
	if err != nil {
		return nil, fmt.Errorf("policy: %w", err)
	}
	abstracted, err := plan.Abstracted()
	if err != nil {
		return nil, err
	}
	if err := readsNoAbstractedField(compiler, abstracted); err != nil {
		return nil, fmt.Errorf("policy: %w", err)
	}
	// One query binds every check's deny set. OPA's topdown evaluator is
	// used directly: the rego package around it would add bundle, wasm and
	// planner code to the binary, and their start-up, for nothing.
	var query ast.Body
	for i, chk := range checks {
		query = append(query, ast.Equality.Expr(ast.VarTerm(binding(i)), ast.NewTerm(denyRef(chk.Package))))
	}
	query, err = compiler.QueryCompiler().Compile(query)
	if err != nil {
		return nil, fmt.Errorf("policy: preparing the query: %w", err)
	}
	e := &Engine{compiler: compiler, query: query, store: inmem.New(), checks: checks, abstracted: abstracted}
	for _, opt := range opts {
		opt(e)
	}
	return e, nil
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
	out := append([]Check{SchemaCheck}, e.checks...)
	return out
}

// ErrNoPolicy is returned for a plan that no policy applies to.
var ErrNoPolicy = errors.New("no policy applies: pass --policy FILE, or give the plan a policy block")

// Evaluate judges one plan under the operator's policy (nil when there is
// none) and the plan's own. An error means the plan could not be judged.
func (e *Engine) Evaluate(ctx context.Context, operator plan.Policy, p *plan.Plan) (report.Result, error) {
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
	if len(policies) == 0 {
		return report.Result{}, ErrNoPolicy
	}
	// Children the schema and the checks cannot tell apart are evaluated
	// once (plan/group.go): the checks see one representative per group.
	reps, group := p.Reps, p.Group
	if reps == nil {
		reps, group = make([]int, len(p.Children)), make([]int, len(p.Children))
		for i := range reps {
			reps[i], group[i] = i, i
		}
	}
	// The checks see each representative without the keys its members may
	// differ in, so no check can judge one member by another's values.
	judged := make([]any, len(reps))
	for k, i := range reps {
		judged[k] = e.without(p.Children[i])
	}
	members := make([]any, len(reps))
	for _, k := range group {
		n, _ := members[k].(int)
		members[k] = n + 1
	}
	input := map[string]any{
		"policies":       policies,
		"children":       judged,
		"members":        members,
		"float_literals": floatLiterals(judged),
	}
	if e.resolvePaths {
		planRoot, _ := policies[names[len(names)-1]].(map[string]any)["workspace_root"].(string)
		r, err := resolution(policies, planRoot, judged)
		if err != nil {
			return report.Result{}, err
		}
		input["resolution"] = r
	}
	value, err := ast.InterfaceToValue(input)
	if err != nil {
		return report.Result{}, fmt.Errorf("building the policy input: %w", err)
	}
	rs, err := e.eval(ctx, value)
	if err == nil {
		// OPA notices cancellation asynchronously, so a short evaluation
		// can finish after its deadline passed; that is a timeout too.
		err = ctx.Err()
	}
	if err != nil {
		return report.Result{}, fmt.Errorf("evaluating the policy: %w", err)
	}
	if len(rs) != 1 {
		return report.Result{}, fmt.Errorf("evaluating the policy: the result is undefined (%d results)", len(rs))
	}
	byGroup := make([][]report.Violation, len(reps))
	for i, chk := range e.checks {
		deny, ok := rs[0][ast.Var(binding(i))]
		set, isSet := ast.Value(nil), false
		if ok {
			set, isSet = deny.Value.(ast.Set)
		}
		if !isSet {
			return report.Result{}, fmt.Errorf("check %s: deny is not a set", chk.ID)
		}
		var bad error
		set.(ast.Set).Foreach(func(raw *ast.Term) {
			if bad != nil {
				return
			}
			k, v, err := violation(chk, raw, len(reps))
			if err != nil {
				bad = fmt.Errorf("check %s: %w", chk.ID, err)
				return
			}
			byGroup[k] = append(byGroup[k], v)
		})
		if bad != nil {
			return report.Result{}, bad
		}
	}
	found := make([][]report.Violation, len(p.Children))
	for i, k := range group {
		if len(byGroup[k]) == 0 {
			continue
		}
		prefix := "/plan/" + strconv.Itoa(i)
		vs := make([]report.Violation, len(byGroup[k]))
		for j, v := range byGroup[k] {
			v.Path = prefix + v.Path
			vs[j] = v
		}
		found[i] = vs
	}
	return assemble(p, names, found), nil
}

// without returns a child without the abstracted keys, or the child itself
// when it has none of them or is not an object.
func (e *Engine) without(child any) any {
	obj, ok := child.(map[string]any)
	if !ok {
		return child
	}
	found := false
	for _, k := range e.abstracted {
		if _, ok := obj[k]; ok {
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
		delete(out, k)
	}
	return out
}

// eval runs the query on one input, stopping when the context ends.
func (e *Engine) eval(ctx context.Context, input ast.Value) (topdown.QueryResultSet, error) {
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
	return topdown.NewQuery(e.query).
		WithCompiler(e.compiler).
		WithStore(e.store).
		WithTransaction(txn).
		WithInput(ast.NewTerm(input)).
		WithStrictBuiltinErrors(true).
		WithTime(time.Unix(0, 0)). // no built-in left reads it; never the clock
		WithCancel(cancel).
		Run(ctx)
}

// violation reads one element of a deny set, which must be exactly
// {"child": <index>, "field": <pointer>, "message": <text>}.
func violation(chk Check, raw *ast.Term, children int) (int, report.Violation, error) {
	obj, ok := raw.Value.(ast.Object)
	if !ok || obj.Len() != 3 {
		return 0, report.Violation{}, fmt.Errorf("malformed violation %v: want {child, field, message}", raw)
	}
	child := -1
	if t := obj.Get(ast.InternedTerm("child")); t != nil {
		if n, ok := t.Value.(ast.Number); ok {
			if i, ok := n.Int(); ok && i >= 0 && i < children && n.String() == strconv.Itoa(i) {
				child = i
			}
		}
	}
	if child < 0 {
		return 0, report.Violation{}, fmt.Errorf("malformed violation %v: child is not an index of the plan", raw)
	}
	field, ok := stringAt(obj, "field")
	if !ok || (field != "" && field[0] != '/') {
		return 0, report.Violation{}, fmt.Errorf("malformed violation %v: field is not a JSON pointer", raw)
	}
	msg, ok := stringAt(obj, "message")
	if !ok || strings.TrimSpace(msg) == "" {
		return 0, report.Violation{}, fmt.Errorf("malformed violation %v: message is empty", raw)
	}
	return child, report.Violation{
		Rule:     chk.ID,
		Severity: chk.Severity,
		Message:  msg,
		Path:     field, // relative to the child until it is known which
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

// assemble merges the checks' violations with the schema step's issues and
// settles each child's verdict. A schema issue at or under a place a check
// already reported adds nothing and is left out; any other issue stands.
func assemble(p *plan.Plan, policies []string, found [][]report.Violation) report.Result {
	for _, is := range p.Issues {
		path := "/plan/" + strconv.Itoa(is.Child) + is.Field
		covered := false
		for _, v := range found[is.Child] {
			if jsonpointer.Within(path, v.Path) {
				covered = true
				break
			}
		}
		if !covered {
			found[is.Child] = append(found[is.Child], report.Violation{
				Rule:     SchemaCheck.ID,
				Severity: SchemaCheck.Severity,
				Message:  is.Message,
				Path:     path,
			})
		}
	}
	res := report.Result{Source: p.Source, Verdict: report.Pass, Policies: policies, Children: make([]report.Child, len(p.Children))}
	for i, c := range p.Children {
		vs := found[i]
		if vs == nil {
			vs = []report.Violation{}
		}
		report.SortViolations(vs)
		ch := report.Child{Index: i, Verdict: report.Pass, Violations: vs}
		if obj, ok := c.(map[string]any); ok {
			ch.Role, _ = obj["role"].(string)
		}
		if len(vs) > 0 {
			ch.Verdict = report.Block
			res.Verdict = report.Block
		}
		res.Children[i] = ch
	}
	return res
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
