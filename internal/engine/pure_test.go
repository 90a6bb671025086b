package engine

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/topdown"

	"github.com/spawngate/spawngate/internal/document"
	"github.com/spawngate/spawngate/internal/plan"
	"github.com/spawngate/spawngate/internal/report"
	"github.com/spawngate/spawngate/policy"
)

func compileForPurity(t *testing.T, modules ...string) *ast.Compiler {
	t.Helper()
	parsed := map[string]*ast.Module{}
	for i, src := range modules {
		name := "m" + string(rune('0'+i)) + ".rego"
		m, err := ast.ParseModuleWithOpts(name, src, ast.ParserOptions{RegoVersion: ast.RegoV1})
		if err != nil {
			t.Fatal(err)
		}
		parsed[name] = m
	}
	c := ast.NewCompiler()
	if c.Compile(parsed); c.Failed() {
		t.Fatal(c.Errors)
	}
	return c
}

// A rule is pure when all it reads of the input is under input.policies,
// and all it refers to is pure; a function, by its arguments as well.
func TestPureRules(t *testing.T) {
	c := compileForPurity(t, `package x
import data.y

policy_value := input.policies.operator.workspace_root
from_pure := concat("/", [policy_value, "a"])
children := input.children
from_children := count(children)
whole_input := object.get(input, "policies", {})
inside_ref := input.policies[input.children[0].role]
in_comprehension := [c | some c in input.children]
in_every if every c in input.policies.operator.allowed_tools { is_string(c) }
every_child if every c in input.children { is_object(c) }
else_reads := 1 if input.policies.operator.x else := count(input.children)
dynamic := y[_]
helper_pure := y.pure_thing

f(a) := concat("", [a, input.policies.operator.workspace_root])
g(a) := count(input.children) + a
calls_f(a) := f(a)
calls_g(a) := g(a)
two_bodies(a) := 1 if a == 1
two_bodies(a) := count(input.float_literals) if a == 2
`, `package y

pure_thing := input.policies.plan
not_pure := input.members
`)
	p := pureRules(c)
	if p == nil {
		t.Fatal("no module uses with, yet nothing is shared")
	}
	want := map[string]bool{
		"policy_value": true, "from_pure": true, "in_every": true, "helper_pure": true,
		"f": true, "calls_f": true,
		"children": false, "from_children": false, "whole_input": false, "inside_ref": false,
		"in_comprehension": false, "every_child": false, "else_reads": false, "dynamic": false,
		"g": false, "calls_g": false, "two_bodies": false,
	}
	for name, pure := range want {
		ref := ast.MustParseRef("data.x." + name)
		if got := p.of(ref); got != pure {
			t.Errorf("%s: pure %v, want %v", name, got, pure)
		}
		// A function's key is its ref followed by its arguments.
		if got := p.of(ast.Ref{ast.NewTerm(ref), ast.StringTerm("arg")}); got != pure {
			t.Errorf("%s called: pure %v, want %v", name, got, pure)
		}
	}
	// A key into a rule's document is the rule's.
	if !p.of(ast.MustParseRef(`data.x.policy_value.deeper`)) || p.of(ast.MustParseRef(`data.x.children[0]`)) {
		t.Error("a key under a rule is not judged as the rule")
	}
	for _, ref := range []string{"data.x", "data.nothing.here", "input.policies", "data.y.not_pure"} {
		if p.of(ast.MustParseRef(ref)) {
			t.Errorf("%s is pure", ref)
		}
	}
}

// with changes what a rule sees: a module that uses it turns sharing off.
func TestWithTurnsSharingOff(t *testing.T) {
	c := compileForPurity(t, `package x
p := input.policies.a
q if {
	p == 1 with input.policies.a as 1
}
`)
	if pureRules(c) != nil || newSharing(c).purity() != nil {
		t.Fatal("values are shared although a module uses with")
	}
}

// The built-in checks keep the rules that read only the policies pure: a
// change that makes lib.policies read the whole input (object.get(input,
// ...)) would quietly share nothing.
func TestBuiltinPolicyRulesArePure(t *testing.T) {
	_, full := engines(t)
	pure := full.shared.purity()
	if pure == nil {
		t.Fatal("the built-in checks share nothing")
	}
	for _, name := range []string{
		"lib.policies", "lib.profiles", "lib.root_prefixes", "lib.plan_prefix", "lib.describe", "lib.allows", "lib.show",
		"checks.tools_allowlist.refusing", "checks.budget_cap.lowest", "checks.paths_escape.roots_sound", "checks.paths_escape.plain",
	} {
		if !pure.of(ast.MustParseRef("data.spawngate." + name)) {
			t.Errorf("%s is not pure", name)
		}
	}
	for _, name := range []string{"lib.children", "lib.budgets", "lib.requested_paths", "checks.paths_escape.escaping", "checks.tools_allowlist.deny"} {
		if pure.of(ast.MustParseRef("data.spawngate." + name)) {
			t.Errorf("%s is pure, yet it reads the children", name)
		}
	}
}

// Whatever an engine judged before, under whatever policies, it judges a
// plan exactly as an engine that shares nothing: sharing remembers what
// the Rego decided, never decides.
func TestSharedValuesChangeNoResult(t *testing.T) {
	LongProperty(t)
	mods, err := policy.Modules()
	if err != nil {
		t.Fatal(err)
	}
	sharing, err := New(mods, EveryModule())
	if err != nil {
		t.Fatal(err)
	}
	if sharing.shared.purity() == nil {
		t.Fatal("the built-in checks share nothing")
	}
	l, err := plan.NewLoader(document.DefaultLimits)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	examples := filepath.Join("..", "..", "examples")
	type judged struct {
		policy plan.Policy
		plan   *plan.Plan
		name   string
	}
	var cases []judged
	for _, dir := range []string{"", "profiles", "trees", "briefs", "exceptions", "claude-code", "codex"} {
		polFile := filepath.Join(examples, dir, "policy.yaml")
		data, err := os.ReadFile(polFile)
		if err != nil {
			t.Fatal(err)
		}
		pol, err := l.Policy(ctx, polFile, data)
		if err != nil {
			t.Fatal(err)
		}
		plans, _ := filepath.Glob(filepath.Join(examples, dir, "*plan*.yaml"))
		plans = append(plans, filepath.Join(examples, "refused-plan.yaml"), filepath.Join(examples, "narrowed-plan.yaml"))
		for _, f := range plans {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			p, err := l.Plan(ctx, f, data)
			if err != nil {
				continue // examples of plans that cannot be judged (empty, missing)
			}
			cases = append(cases, judged{pol, p, f + " under " + polFile})
		}
	}
	if len(cases) < 20 {
		t.Fatalf("only %d cases", len(cases))
	}
	opts := []EvalOption{Today("2026-06-01")}
	// Each case is judged by a fresh engine that shares nothing, and by
	// the sharing engine three times over, in different orders, so each
	// meets what the others left under the same and other policies.
	want := make([]any, len(cases))
	for i, c := range cases {
		fresh, err := New(mods, EveryModule())
		if err != nil {
			t.Fatal(err)
		}
		fresh.shared = nil
		res, err := fresh.Evaluate(ctx, c.policy, c.plan, opts...)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		want[i] = res
	}
	order := make([]int, len(cases))
	for i := range order {
		order[i] = i
	}
	for round := range 3 {
		for _, i := range order {
			got, err := sharing.Evaluate(ctx, cases[i].policy, cases[i].plan, opts...)
			if err != nil {
				t.Fatalf("%s: %v", cases[i].name, err)
			}
			if !reflect.DeepEqual(got, want[i]) {
				t.Errorf("round %d, %s:\nsharing %+v\nalone   %+v", round, cases[i].name, got, want[i])
			}
		}
		slices.Reverse(order)
		if round == 1 {
			// Interleaved: every case after one under other policies.
			slices.SortFunc(order, func(a, b int) int { return (a%2)*len(order) + a - (b%2)*len(order) - b })
		}
	}
	sharing.shared.mu.Lock()
	sets := len(sharing.shared.sets)
	sharing.shared.mu.Unlock()
	if sets < 5 {
		t.Errorf("values were shared under %d sets of policies, want one per policy file at least", sets)
	}
}

// Evaluations on every core share values under two sets of policies, and
// each answers as one alone would (run with -race). Without memos, each of
// the 400 evaluations runs the checks; with them, a few dozen do, and the
// rest ask the memos at once.
func TestSharedValuesConcurrently(t *testing.T) {
	t.Run("without memos", func(t *testing.T) { sharedValuesConcurrently(t, true, noMemos()) })
	t.Run("with memos", func(t *testing.T) { sharedValuesConcurrently(t, false) })
}

// sharedValuesConcurrently is TestSharedValuesConcurrently on engines built
// with opts; every says each evaluation must run the checks.
func sharedValuesConcurrently(t *testing.T, every bool, opts ...Option) {
	lean, _ := engines(t, opts...)
	l, err := plan.NewLoader(document.DefaultLimits)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	policies := []string{
		`{"allowed_tools": ["fs.read", "http.get"], "workspace_root": "/repo", "budget_cap_tokens": 1000}`,
		`{"allowed_tools": ["fs.read"], "workspace_root": "/repo/ws", "budget_cap_tokens": 100}`,
	}
	doc := `{"plan": [{"role": "r%d", "tools": ["fs.read", "http.get"], "paths": ["/repo/ws/a", "b%d"], "budget_tokens": 500}]}`
	type answer struct {
		verdict string
		rules   string
	}
	judge := func(e *Engine, pi, n int) (answer, error) {
		pol, err := l.Policy(ctx, "policy.json", []byte(policies[pi]))
		if err != nil {
			return answer{}, err
		}
		p, err := l.Plan(ctx, "plan.json", []byte(strings.ReplaceAll(doc, "%d", string(rune('a'+n%20)))))
		if err != nil {
			return answer{}, err
		}
		res, err := e.Evaluate(ctx, pol, p)
		if err != nil {
			return answer{}, err
		}
		var rules []string
		for _, c := range res.Children {
			for _, v := range c.Violations {
				rules = append(rules, v.Rule+" "+v.Message)
			}
		}
		return answer{string(res.Verdict), strings.Join(rules, "\n")}, nil
	}
	want := map[[2]int]answer{}
	alone, _ := engines(t, noMemos(), noSharedValues())
	for pi := range policies {
		for n := range 20 {
			if want[[2]int{pi, n}], err = judge(alone, pi, n); err != nil {
				t.Fatal(err)
			}
		}
	}
	var wg sync.WaitGroup
	errs := make(chan string, 400)
	for w := range 8 {
		wg.Go(func() {
			for n := range 50 {
				pi, k := (w+n)%2, n%20
				got, err := judge(lean, pi, k)
				if err != nil {
					errs <- err.Error()
					return
				}
				if got != want[[2]int{pi, k}] {
					errs <- "policy " + string(rune('0'+pi)) + ": " + got.rules + "\nwant " + want[[2]int{pi, k}].rules
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	if n := lean.shared.evals.Load(); every && n < 400 {
		t.Errorf("%d evaluations of the checks for 400 plans, without memos", n)
	}
}

// An evaluation that fails shares nothing it computed: OPA keeps a
// function's first value before a conflicting body aborts the evaluation,
// and a value shared from there would let the next evaluation pass.
func TestAFailedEvaluationSharesNothing(t *testing.T) {
	check := `# METADATA
# title: Conflict
# description: A function with two values for one argument.
# custom:
#   id: org.conflict
#   severity: high
package spawngate.checks.conflict

import data.spawngate.lib

level(root) := 1 if startswith(root, "/")

level(root) := 2 if endswith(root, "o")

deny contains lib.violation(i, "/role", "refused") if {
	some i, _ in lib.children
	level(input.policies.operator.workspace_root) != 1
}
`
	mods, err := policy.Modules()
	if err != nil {
		t.Fatal(err)
	}
	e, err := New(mods, Custom([]policy.Module{{Name: "conflict.rego", Source: check}}))
	if err != nil {
		t.Fatal(err)
	}
	if p := e.shared.purity(); p == nil || !p.of(ast.MustParseRef("data.spawngate.checks.conflict.level")) {
		t.Fatal("level is not shared: the test would prove nothing")
	}
	for round := range 3 {
		res, err := oneChild(t, e, "r"+string(rune('a'+round)), `["/repo/a"]`)
		if err == nil || !strings.Contains(err.Error(), "conflicting values") {
			t.Fatalf("round %d: %v, %v; want the conflict as an error every time", round, res.Verdict, err)
		}
	}
}

// A gate that judges one plan finds no pure rules: the first evaluation
// of an engine shares nothing, and the second finds them.
func TestTheFirstEvaluationSharesNothing(t *testing.T) {
	lean, _ := engines(t)
	judge := func(role string) {
		if _, err := oneChild(t, lean, role, `["/repo/a"]`); err != nil {
			t.Fatal(err)
		}
	}
	judge("a")
	if lean.shared.pure != nil || lean.shared.sets != nil {
		t.Fatal("the first evaluation looked for pure rules or shared values")
	}
	judge("b")
	if lean.shared.pure == nil || len(lean.shared.sets) != 1 {
		t.Fatalf("the second evaluation shared nothing (pure rules %v, %d sets of policies)", lean.shared.pure != nil, len(lean.shared.sets))
	}
}

// oneChild judges a plan of one child with role and paths (a JSON list)
// under a small policy, and returns what e made of it.
func oneChild(t *testing.T, e *Engine, role, paths string) (report.Result, error) {
	t.Helper()
	l, err := plan.NewLoader(document.DefaultLimits)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	pol, err := l.Policy(ctx, "policy.json", []byte(`{"allowed_tools": ["fs.read"], "workspace_root": "/repo", "budget_cap_tokens": 1000}`))
	if err != nil {
		t.Fatal(err)
	}
	p, err := l.Plan(ctx, "plan.json", []byte(`{"plan": [{"role": "`+role+`", "tools": ["fs.read"], "paths": `+paths+`, "budget_tokens": 10}]}`))
	if err != nil {
		t.Fatal(err)
	}
	return e.Evaluate(ctx, pol, p)
}

// A rule whose ref head holds a variable before its last place, or a
// number, makes nothing at or under its string prefix shared: its document
// can hold what other rules there add (flags.secret beside flags[k].root),
// and OPA keys its values by parts of the ref. Refs to data are told
// apart exactly when the rules they reach are looked up: data.x["kids\x00"]
// is not data.x.kids, nor t[1] t["1"].
func TestPurityOfRefHeadsAndLookalikeRefs(t *testing.T) {
	c := compileForPurity(t, `package x

flags[k].root := true if k := input.policies.operator.workspace_root
flags.secret := count(input.children)
grid[i][j] := i + j if {
	some i in input.policies.operator.sizes
	some j in input.policies.operator.sizes
}
num[1].z := count(input.children)
objects[k] := 1 if some k in input.policies.operator.names
gates[k] := 1 if some k in input.policies.operator.names
gates.secret := count(input.children)
kids := input.children
decoy := data["x\u0000kids"]
reads_kids := data.x.kids
`, `package y

t[1] := 1
t["1"] := count(input.children)
by_number := t[1]
by_string := t["1"]
`)
	p := pureRules(c)
	for ref, want := range map[string]bool{
		"data.x.flags.secret": false, "data.x.flags": false, "data.x.flags.h.root": false,
		"data.x.grid": false, "data.x.grid[1]": false,
		"data.x.num":     false,
		"data.x.objects": true, `data.x.objects["a"]`: true,
		"data.x.gates": false, "data.x.gates.secret": false,
		"data.x.reads_kids": false, "data.x.decoy": true,
		"data.y.by_string": false,
	} {
		if got := p.of(ast.MustParseRef(ref)); got != want {
			t.Errorf("%s: shared %v, want %v", ref, got, want)
		}
	}
}

// The operator's own checks with such rules judge as they would alone,
// whatever was judged before (both once let /repo/secret pass).
func TestCustomRefHeadsShareNothingWrong(t *testing.T) {
	for name, check := range map[string]string{
		"flags": `flags[k].root := true if k := input.policies.operator.workspace_root

flags.secret := {i | some i, child in lib.children; "/repo/secret" in child.paths}

deny contains lib.violation(i, "/paths", "holds /repo/secret") if {
	some i in flags.secret
}`,
		"grid": `a[i][j][k] := (100 * i) + (10 * j) + k if {
	some i in [1]
	some j in [1, 2]
	some k in [1, 2]
	input.policies.operator.workspace_root
}

deny contains lib.violation(i, "/paths", "looks at the diagonal") if {
	some i, child in lib.children
	"/repo/diag" in child.paths
	some y
	a[1][y][y] == 0
}

deny contains lib.violation(i, "/paths", "holds /repo/secret") if {
	some i, child in lib.children
	"/repo/secret" in child.paths
	count([v | v := a[1][_][_]]) > 2
}`,
	} {
		t.Run(name, func(t *testing.T) {
			src := "# METADATA\n# title: Secret\n# description: No child may hold /repo/secret.\n# custom:\n#   id: org.secret\n#   severity: high\npackage spawngate.checks.secret\n\nimport data.spawngate.lib\n\n" + check + "\n"
			mods, err := policy.Modules()
			if err != nil {
				t.Fatal(err)
			}
			judge := func(e *Engine, paths string) report.Verdict {
				res, err := oneChild(t, e, "r", paths)
				if err != nil {
					t.Fatal(err)
				}
				return res.Verdict
			}
			custom := Custom([]policy.Module{{Name: "secret.rego", Source: src}})
			e, err := New(mods, custom)
			if err != nil {
				t.Fatal(err)
			}
			for _, paths := range []string{`["/repo/a"]`, `["/repo/diag"]`, `["/repo/b"]`, `["/repo/secret"]`} {
				if got := judge(e, paths); paths == `["/repo/secret"]` && got != report.Block {
					t.Errorf("after other plans, %s: %s, want block", paths, got)
				}
			}
		})
	}
}

// Policies equal in value but written differently (1e3, 1000) share
// nothing: a message may show how a number was written.
func TestPoliciesWrittenDifferentlyShareNothing(t *testing.T) {
	s := newSharing(ast.NewCompiler())
	a := s.valuesFor(ast.MustParseTerm(`{"operator": {"budget_cap_tokens": 1000}}`).Value)
	b := s.valuesFor(ast.MustParseTerm(`{"operator": {"budget_cap_tokens": 1e3}}`).Value)
	if a == b {
		t.Error("1000 and 1e3 share values")
	}
	if c := s.valuesFor(ast.MustParseTerm(`{"operator": {"budget_cap_tokens": 1000}}`).Value); c != a {
		t.Error("the same policies do not share values")
	}
}

// A cycle of rules is never trusted, though every rule in it reads only
// the policies: the compiler refuses recursion, but the built-in checks
// are compiled without that stage (New).
func TestACycleIsNotPure(t *testing.T) {
	parsed, err := ast.ParseModuleWithOpts("m.rego", `package x
a := b if input.policies.operator.x
b := a if input.policies.operator.y
c := a
`, ast.ParserOptions{RegoVersion: ast.RegoV1})
	if err != nil {
		t.Fatal(err)
	}
	c := ast.NewCompiler().WithSkipStages(ast.StageCheckRecursion)
	if c.Compile(map[string]*ast.Module{"m.rego": parsed}); c.Failed() {
		t.Fatal(c.Errors)
	}
	p := pureRules(c)
	for _, name := range []string{"a", "b", "c"} {
		if p.of(ast.MustParseRef("data.x." + name)) {
			t.Errorf("%s is in a cycle, or reads one, and is pure", name)
		}
	}
}

// layeredCache is the virtual cache of one evaluation, over values shared
// under one set of policies, with every key pure.
func layeredCache(shared *sharedValues) *layered {
	all := &purity{rule: true, pure: true, treePure: true}
	all.next = map[string]*purity{"x": {rule: true, pure: true, treePure: true}}
	return &layered{local: topdown.NewVirtualCache(), shared: shared, pure: all}
}

// Inside a with frame nothing is shared: what a rule computes there is
// not what it computes under the policies (a module that uses with turns
// sharing off altogether; this is the guard within one evaluation).
func TestNothingIsSharedInsideAWith(t *testing.T) {
	shared := &sharedValues{vc: topdown.NewVirtualCache()}
	ref := ast.MustParseRef("data.x")
	l := layeredCache(shared)
	l.Push()
	l.Put(ref, ast.StringTerm("inside"))
	l.Pop()
	l.commit()
	if v, _ := shared.vc.Get(ref); v != nil || shared.n != 0 {
		t.Fatalf("a value computed inside a with frame was shared: %v", v)
	}
	shared.vc.Put(ref, ast.StringTerm("shared"))
	l = layeredCache(shared)
	l.Push()
	if v, _ := l.Get(ref); v != nil {
		t.Fatalf("a shared value was read inside a with frame: %v", v)
	}
}

// What one evaluation shares, and what an engine keeps, is bounded: an
// evaluation of more function values than maxFromOne shares none of them,
// a set of policies keeps at most maxShared values, and an engine values
// for at most maxPolicySets sets of policies.
func TestSharedValuesAreBounded(t *testing.T) {
	fn := ast.MustParseRef("data.x.f")
	call := func(i int) ast.Ref { return ast.Ref{ast.NewTerm(fn), ast.IntNumberTerm(i)} }
	shared := &sharedValues{vc: topdown.NewVirtualCache()}
	l := layeredCache(shared)
	for i := range maxFromOne + 1 {
		l.Put(call(i), ast.IntNumberTerm(i))
	}
	l.Put(ast.MustParseRef("data.x"), ast.StringTerm("rule"))
	l.commit()
	if shared.n != 1 {
		t.Errorf("an evaluation of %d function values shared %d values, want only its rule's", maxFromOne+1, shared.n)
	}
	for round := 0; shared.n < maxShared; round++ {
		l = layeredCache(shared)
		for i := range maxFromOne {
			l.Put(call(round*maxFromOne+i), ast.IntNumberTerm(i))
		}
		l.commit()
	}
	l = layeredCache(shared)
	l.Put(call(-1), ast.IntNumberTerm(-1))
	l.commit()
	if shared.n != 1 {
		t.Errorf("past %d values, a set of policies holds %d, want only the newest", maxShared, shared.n)
	}
	s := newSharing(nil)
	for i := range maxPolicySets + 1 {
		s.valuesFor(ast.IntNumberTerm(i).Value)
	}
	if len(s.sets) > maxPolicySets {
		t.Errorf("an engine keeps values for %d sets of policies, more than %d", len(s.sets), maxPolicySets)
	}
}

// Finding a shared value allocates nothing: it is read where it is, not
// copied into the evaluation's own cache (a copy costs a node and a hash
// map per term of the key, and a fresh decision finds a few hundred).
func TestASharedValueIsFoundWithoutAllocating(t *testing.T) {
	fn := ast.MustParseRef("data.x.f")
	call := ast.Ref{ast.NewTerm(fn), ast.StringTerm("fs.read"), ast.StringTerm("fs.write")}
	shared := &sharedValues{vc: topdown.NewVirtualCache()}
	no := ast.BooleanTerm(false)
	shared.vc.Put(call, no)
	const runs = 100
	evals := make([]*layered, runs+1) // AllocsPerRun runs once more, to warm up
	for i := range evals {
		evals[i] = layeredCache(shared)
	}
	n := 0
	allocs := testing.AllocsPerRun(runs, func() {
		l := evals[n]
		n++
		for range 4 {
			if v, _ := l.Get(call); v != no {
				t.Fatalf("the shared value was not found: %v", v)
			}
		}
	})
	if allocs != 0 {
		t.Errorf("four lookups of a shared value allocated %v times, want none", allocs)
	}
}
