package engine

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/open-policy-agent/opa/v1/ast"

	"github.com/spawngate/spawngate/internal/jsonpointer"
	"github.com/spawngate/spawngate/internal/plan"
	"github.com/spawngate/spawngate/internal/report"
)

// The queries of policy/exceptions.rego, which decides what the operator's
// exceptions let through; compiled the first time a policy has exceptions.
type exceptionQueries struct {
	once  sync.Once
	batch ast.Body
	notes ast.Body
	err   error
}

func (e *Engine) exceptionQueries() (*exceptionQueries, error) {
	q := &e.exceptions
	q.once.Do(func() {
		compile := func(ref string) ast.Body {
			if q.err != nil {
				return nil
			}
			body, err := e.compiler.QueryCompiler().Compile(ast.NewBody(ast.Equality.Expr(ast.VarTerm("x"), ast.NewTerm(ast.MustParseRef(ref)))))
			if err != nil {
				q.err = fmt.Errorf("policy: preparing the exceptions query: %w", err)
			}
			return body
		}
		q.batch = compile("data.spawngate.exceptions.batch")
		q.notes = compile("data.spawngate.exceptions.notes")
	})
	return q, q.err
}

// excepter applies the operator's exceptions to one plan's findings, a
// batch of groups at a time (on the cores that judged them, concurrently),
// and says at the end which exceptions expired or matched nothing.
type excepter struct {
	e        *Engine
	policies ast.Value // input.policies, as the checks see it
	in       *inputs   // the plan's inputs: with --resolve-paths, its roots
	today    ast.Value
	strict   bool
	list     []report.Exception // the operator's exceptions, by index
	rules    map[string]bool    // the rules some exception names
	named    map[string]bool    // the child ids some exception names

	mu      sync.Mutex
	matched map[int]bool
}

// exceptItem is one group as the exceptions see it: its representative as
// the plan wrote it, whether it is the group's only member (only then does
// its id count: an exception naming an id never reaches the child's
// twins), and its violations, which apply marks.
type exceptItem struct {
	child any
	alone bool
	vs    []report.Violation
}

// newExcepter reads the operator's exceptions; nil when there are none.
func newExcepter(e *Engine, operator plan.Policy, in *inputs, today string, strict bool) *excepter {
	raw, _ := operator["exceptions"].([]any)
	if len(raw) == 0 {
		return nil
	}
	if today == "" {
		today = time.Now().UTC().Format(time.DateOnly)
	}
	x := &excepter{e: e, policies: in.policies, in: in, today: ast.String(today), strict: strict, rules: map[string]bool{}, named: map[string]bool{}, matched: map[int]bool{}}
	for i, r := range raw {
		obj, _ := r.(map[string]any)
		ex := report.Exception{Index: i, Pointer: "/exceptions/" + strconv.Itoa(i)}
		ex.Rule, _ = obj["rule"].(string)
		ex.Reason, _ = obj["reason"].(string)
		ex.Expires, _ = obj["expires"].(string)
		x.list = append(x.list, ex)
		x.rules[ex.Rule] = true
		if id, ok := obj["id"].(string); ok {
			x.named[id] = true
		}
	}
	return x
}

// apply marks the violations of each item that an exception lets
// through, asking policy/exceptions.rego once for every item that has a
// violation of a rule some exception names. It may run on several
// goroutines at once.
func (x *excepter) apply(ctx context.Context, items []exceptItem) error {
	var asked [][]int // by item: the violations of rules some exception names
	var terms []*ast.Term
	var of []int // the item each asked term stands for
	for n, it := range items {
		var ask []int
		for i, v := range it.vs {
			if x.rules[v.Rule] {
				ask = append(ask, i)
			}
		}
		asked = append(asked, ask)
		if len(ask) == 0 {
			continue
		}
		t, err := x.item(ctx, it, ask)
		if err != nil {
			return err
		}
		terms, of = append(terms, t), append(of, n)
	}
	if len(terms) == 0 {
		return nil
	}
	q, err := x.e.exceptionQueries()
	if err != nil {
		return err
	}
	input := ast.NewObject(
		[2]*ast.Term{ast.InternedTerm("policies"), ast.NewTerm(x.policies)},
		[2]*ast.Term{ast.InternedTerm("today"), ast.NewTerm(x.today)},
		[2]*ast.Term{ast.InternedTerm("items"), ast.ArrayTerm(terms...)},
	)
	out, err := x.ask(ctx, q.batch, input)
	if err != nil {
		return err
	}
	answers, ok := out.(*ast.Array)
	if !ok || answers.Len() != len(terms) {
		return fmt.Errorf("evaluating the exceptions: batch is not a list of %d answers", len(terms))
	}
	var matched []int
	for t := range len(terms) {
		ask, vs := asked[of[t]], items[of[t]].vs
		obj, ok := answers.Elem(t).Value.(ast.Object)
		if !ok {
			return fmt.Errorf("evaluating the exceptions: answer %d is not an object", t)
		}
		err := obj.Iter(func(k, e *ast.Term) error {
			j, okJ := index(k, len(ask))
			n, okN := index(e, len(x.list))
			if !okJ || !okN {
				return fmt.Errorf("evaluating the exceptions: malformed answer %v: %v", k, e)
			}
			ex := x.list[n]
			vs[ask[j]].Excepted = &ex
			matched = append(matched, n)
			return nil
		})
		if err != nil {
			return err
		}
	}
	x.mu.Lock()
	for _, n := range matched {
		x.matched[n] = true
	}
	x.mu.Unlock()
	return nil
}

// item writes one group as the exceptions query reads it: the child's role
// (and id, when alone), its asked violations with the value at each, and
// with --resolve-paths where its paths resolve.
func (x *excepter) item(ctx context.Context, it exceptItem, ask []int) (*ast.Term, error) {
	about := map[string]any{}
	if obj, ok := it.child.(map[string]any); ok {
		if role, ok := obj["role"]; ok {
			about["role"] = role
		}
		if id, ok := obj["id"]; ok && it.alone {
			about["id"] = id
		}
	}
	violations := make([]any, len(ask))
	for j, i := range ask {
		v := it.vs[i]
		value, _ := jsonpointer.Lookup(it.child, v.Path)
		one := map[string]any{"rule": v.Rule, "field": v.Path, "value": value}
		if v.Policies != nil {
			ps := make([]any, len(v.Policies))
			for k, p := range v.Policies {
				ps[k] = p
			}
			one["policies"] = ps
		}
		violations[j] = one
	}
	doc := map[string]any{"child": about, "violations": violations}
	if x.in.roots != nil {
		// With --resolve-paths a path selector must match where the path
		// resolves as well as where it is written, as paths.escape judged it.
		paths, err := resolvePaths(ctx, x.in.planRoot, []any{it.child})
		if err != nil {
			return nil, err
		}
		doc["resolution"] = map[string]any{"paths": paths}
	}
	v, err := ast.InterfaceToValue(doc)
	if err != nil {
		return nil, fmt.Errorf("building the exceptions input: %w", err)
	}
	return ast.NewTerm(v), nil
}

// notes says which exceptions expired, and which matched nothing in the
// plan (blocking it when they must be used).
func (x *excepter) notes(ctx context.Context) ([]report.ExceptionNote, error) {
	q, err := x.e.exceptionQueries()
	if err != nil {
		return nil, err
	}
	x.mu.Lock()
	matched := make([]any, 0, len(x.matched))
	for n := range x.matched {
		matched = append(matched, n)
	}
	x.mu.Unlock()
	slices.SortFunc(matched, func(a, b any) int { return a.(int) - b.(int) })
	rest, err := ast.InterfaceToValue(map[string]any{"matched": matched})
	if err != nil {
		return nil, fmt.Errorf("building the exceptions input: %w", err)
	}
	input := rest.(ast.Object)
	input.Insert(ast.InternedTerm("policies"), ast.NewTerm(x.policies))
	input.Insert(ast.InternedTerm("today"), ast.NewTerm(x.today))
	out, err := x.ask(ctx, q.notes, input)
	if err != nil {
		return nil, err
	}
	set, ok := out.(ast.Set)
	if !ok {
		return nil, fmt.Errorf("evaluating the exceptions: notes is not a set")
	}
	var notes []report.ExceptionNote
	err = set.Iter(func(t *ast.Term) error {
		obj, ok := t.Value.(ast.Object)
		var n int
		var status string
		if ok {
			n, ok = index(obj.Get(ast.InternedTerm("index")), len(x.list))
			status, _ = stringAt(obj, "status")
		}
		if !ok || (status != report.ExceptionExpired && status != report.ExceptionUnused) {
			return fmt.Errorf("evaluating the exceptions: malformed note %v", t)
		}
		notes = append(notes, report.ExceptionNote{Exception: x.list[n], Status: status, Blocks: status == report.ExceptionUnused && x.strict})
		return nil
	})
	slices.SortFunc(notes, func(a, b report.ExceptionNote) int { return a.Index - b.Index })
	return notes, err
}

// ask evaluates one exceptions query; its one result must be defined.
func (x *excepter) ask(ctx context.Context, body ast.Body, input ast.Value) (ast.Value, error) {
	rs, err := x.e.eval(ctx, body, input)
	if err == nil {
		err = ctx.Err()
	}
	if err != nil {
		return nil, fmt.Errorf("evaluating the exceptions: %w", err)
	}
	if len(rs) != 1 {
		return nil, fmt.Errorf("evaluating the exceptions: the result is undefined (%d results)", len(rs))
	}
	t, ok := rs[0][ast.Var("x")]
	if !ok {
		return nil, fmt.Errorf("evaluating the exceptions: the result is undefined")
	}
	return t.Value, nil
}

// index reads a term that must be a whole number in [0, n).
func index(t *ast.Term, n int) (int, bool) {
	if t == nil {
		return 0, false
	}
	num, ok := t.Value.(ast.Number)
	if !ok {
		return 0, false
	}
	i, ok := num.Int()
	return i, ok && i >= 0 && i < n && num.String() == strconv.Itoa(i)
}

// splitNamed makes each child whose id an exception names a group of its
// own, so that the exception reaches that child and not its twins. Groups
// stay numbered by their first member, as findings needs.
func splitNamed(children []any, reps, group []int, keys []string, issues [][]plan.SchemaViolation, named map[string]bool) ([]int, []int, []string, [][]plan.SchemaViolation) {
	alone := make([]bool, len(children))
	some := false
	for i, c := range children {
		if obj, ok := c.(map[string]any); ok {
			if id, ok := obj["id"].(string); ok && named[id] {
				alone[i], some = true, true
			}
		}
	}
	if !some {
		return reps, group, keys, issues
	}
	return split(reps, group, keys, issues, alone)
}

// split makes each child marked alone a group of its own; the others keep
// their groups, numbered by their first member.
func split(reps, group []int, keys []string, issues [][]plan.SchemaViolation, alone []bool) ([]int, []int, []string, [][]plan.SchemaViolation) {
	withKeys := len(keys) == len(reps)
	var nreps []int
	var nkeys []string
	var nissues [][]plan.SchemaViolation
	ngroup := make([]int, len(group))
	renumbered := map[int]int{}
	add := func(i, k int) int {
		nreps = append(nreps, i)
		if withKeys {
			nkeys = append(nkeys, keys[k])
		}
		if k < len(issues) {
			nissues = append(nissues, issues[k])
		} else {
			nissues = append(nissues, nil)
		}
		return len(nreps) - 1
	}
	for i, k := range group {
		if alone[i] {
			ngroup[i] = add(i, k)
			continue
		}
		nk, ok := renumbered[k]
		if !ok {
			nk = add(i, k)
			renumbered[k] = nk
		}
		ngroup[i] = nk
	}
	return nreps, ngroup, nkeys, nissues
}
