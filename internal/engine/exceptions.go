package engine

import (
	"context"
	"encoding/json"
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
	roles    map[string]bool    // the roles some exception names
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
	x := &excepter{e: e, policies: in.policies, in: in, today: ast.String(today), strict: strict, rules: map[string]bool{}, roles: map[string]bool{}, named: map[string]bool{}, matched: map[int]bool{}}
	for i, r := range raw {
		obj, _ := r.(map[string]any)
		ex := report.Exception{Index: i, Pointer: "/exceptions/" + strconv.Itoa(i)}
		ex.Rule, _ = obj["rule"].(string)
		ex.Reason, _ = obj["reason"].(string)
		ex.Expires, _ = obj["expires"].(string)
		x.list = append(x.list, ex)
		x.rules[ex.Rule] = true
		if role, ok := obj["role"].(string); ok {
			x.roles[role] = true
		}
		if id, ok := obj["id"].(string); ok {
			x.named[id] = true
		}
	}
	return x
}

// apply marks the violations of each item that an exception lets
// through, asking policy/exceptions.rego once for every violation of a
// rule some exception names. Violations it would ask the same question
// about (the same rule, field and value, the same policies refusing, and
// alike in whatever selector an exception could tell them apart by) are
// asked about once. It may run on several goroutines at once.
func (x *excepter) apply(ctx context.Context, items []exceptItem) error {
	var (
		terms  []*ast.Term
		askers [][]*report.Violation // by term: the violations it answers for
		asked  = map[string]int{}    // a question's key: its term
		named  = ast.NewObject()     // the fact path_names of the questions' values
	)
	prefix, withNames := planPrefix(x.policies)
	for _, it := range items {
		var resolved map[string]any // with --resolve-paths, where the item's paths resolve
		for i := range it.vs {
			v := &it.vs[i]
			if !x.rules[v.Rule] {
				continue
			}
			if x.in.roots != nil && resolved == nil {
				// A path selector must match where the path resolves as
				// well as where it is written, as paths.escape judged it.
				var err error
				if resolved, err = resolvePaths(ctx, x.in.planRoot, []any{it.child}); err != nil {
					return err
				}
			}
			q := x.question(it, v, resolved)
			key, err := q.key()
			if err != nil {
				return err
			}
			if t, ok := asked[key]; ok {
				askers[t] = append(askers[t], v)
				continue
			}
			term, err := ast.InterfaceToValue(q.doc())
			if err != nil {
				return fmt.Errorf("building the exceptions input: %w", err)
			}
			asked[key] = len(terms)
			terms, askers = append(terms, ast.NewTerm(term)), append(askers, []*report.Violation{v})
			if s, ok := q.value.(string); ok && withNames {
				if name, ok := pathName(prefix, s); ok {
					named.Insert(ast.StringTerm(s), ast.StringTerm(name))
				}
			}
		}
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
	if withNames {
		// The name each plain path stands for, as lib.path_names gives it to
		// the checks: a fact, computed here (exceptions.rego computes it
		// when the input lacks it).
		input.Insert(ast.InternedTerm("facts"), ast.ObjectTerm(ast.Item(pathNamesKey, ast.NewTerm(named))))
	}
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
		obj, ok := answers.Elem(t).Value.(ast.Object)
		if !ok {
			return fmt.Errorf("evaluating the exceptions: answer %d is not an object", t)
		}
		err := obj.Iter(func(k, e *ast.Term) error {
			_, okJ := index(k, 1)
			n, okN := index(e, len(x.list))
			if !okJ || !okN {
				return fmt.Errorf("evaluating the exceptions: malformed answer %v: %v", k, e)
			}
			for _, v := range askers[t] {
				ex := x.list[n]
				v.Excepted = &ex
			}
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

// question is what the exceptions are asked of one violation (see
// excepter.question).
type question struct {
	role, id any // nil when left out
	v        *report.Violation
	value    any
	resolved any // where the value resolves; nil when it does not, or without --resolve-paths
	resolve  bool
}

// question is what the exceptions are asked of one violation: an item of
// that violation alone, with the value at its field, the child's role and
// id, and with --resolve-paths where the value resolves.
//
// A role or id that no exception names is left out: an exception that
// writes a role or id holds only for a child with that one, so a child
// whose role (or id) none names is answered as one without. That keeps
// the question the same for children alike in all an exception can tell.
// An id counts only when the child is alone in its group: an exception
// naming an id never reaches the child's twins.
func (x *excepter) question(it exceptItem, v *report.Violation, resolved map[string]any) question {
	q := question{v: v, resolve: resolved != nil}
	if obj, ok := it.child.(map[string]any); ok {
		if role, ok := obj["role"]; ok && names(x.roles, role) {
			q.role = role
		}
		if id, ok := obj["id"]; ok && it.alone && names(x.named, id) {
			q.id = id
		}
	}
	q.value, _ = jsonpointer.Lookup(it.child, v.Path)
	if s, ok := q.value.(string); ok {
		q.resolved = resolved[s]
	}
	return q
}

// names tells whether a child's role or id (its value as written) is one
// some exception names; a value that is not a string is always kept.
func names(named map[string]bool, value any) bool {
	s, ok := value.(string)
	return !ok || named[s]
}

// key is the question's identity: every part of it, in order, a string
// quoted by strconv (by far the most common, and without encoding/json's
// allocations) and any other value as JSON, which never begins with a
// quote: two questions that differ in any part have different keys.
func (q question) key() (string, error) {
	b := make([]byte, 0, 128)
	var err error
	for _, part := range [...]any{q.role, q.id, q.value, q.resolved} {
		if b, err = appendJSON(b, part); err != nil {
			return "", err
		}
	}
	b = strconv.AppendQuote(b, q.v.Rule)
	b = strconv.AppendQuote(b, q.v.Path)
	b = strconv.AppendBool(b, q.resolve)
	b = strconv.AppendBool(b, q.v.Policies != nil)
	for _, p := range q.v.Policies {
		b = strconv.AppendQuote(b, p)
	}
	return string(b), nil
}

// appendJSON appends a value (a quoted string, or JSON) and a comma.
func appendJSON(b []byte, v any) ([]byte, error) {
	switch v := v.(type) {
	case string:
		b = strconv.AppendQuote(b, v)
	case nil:
		b = append(b, "null"...)
	default:
		j, err := json.Marshal(v)
		if err != nil {
			return nil, fmt.Errorf("building the exceptions input: %w", err)
		}
		b = append(b, j...)
	}
	return append(b, ','), nil
}

// doc writes the question as the query reads it: {"child": {"role",
// "id"}, "violations": [{"rule", "field", "value", "policies"}],
// "resolution": {"paths": {value: where it resolves}}}.
func (q question) doc() map[string]any {
	about := map[string]any{}
	if q.role != nil {
		about["role"] = q.role
	}
	if q.id != nil {
		about["id"] = q.id
	}
	one := map[string]any{"rule": q.v.Rule, "field": q.v.Path, "value": q.value}
	if q.v.Policies != nil {
		ps := make([]any, len(q.v.Policies))
		for k, p := range q.v.Policies {
			ps[k] = p
		}
		one["policies"] = ps
	}
	doc := map[string]any{"child": about, "violations": []any{one}}
	if q.resolve {
		paths := map[string]any{}
		if q.resolved != nil {
			paths[q.value.(string)] = q.resolved
		}
		doc["resolution"] = map[string]any{"paths": paths}
	}
	return doc
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
