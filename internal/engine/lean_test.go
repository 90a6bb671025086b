package engine

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/open-policy-agent/opa/v1/ast"

	"github.com/spawngate/spawngate/internal/document"
	"github.com/spawngate/spawngate/internal/plan"
	"github.com/spawngate/spawngate/policy"
)

// engines are a lean engine of the built-in checks and one of every
// module, both built with opts.
func engines(t *testing.T, opts ...Option) (lean, full *Engine) {
	t.Helper()
	mods, err := policy.Modules()
	if err != nil {
		t.Fatal(err)
	}
	if lean, err = New(mods, opts...); err != nil {
		t.Fatal(err)
	}
	if full, err = New(mods, append(slices.Clone(opts), EveryModule())...); err != nil {
		t.Fatal(err)
	}
	if lean.full == nil || full.full != nil {
		t.Fatalf("New made no lean engine of the built-in checks (full %v), or everyModule made one (%v)", lean.full, full.full)
	}
	return lean, full
}

func ids(checks []Check) []string {
	var out []string
	for _, c := range checks {
		out = append(out, c.ID)
	}
	return out
}

// The lean engine leaves out exactly the checks only some plans reach, and
// lists every check all the same.
func TestLeanEngineLeavesOutOnlyGatedChecks(t *testing.T) {
	lean, full := engines(t)
	if got, want := ids(lean.Checks()), ids(full.Checks()); !slices.Equal(got, want) {
		t.Fatalf("lean Checks() = %v\nfull Checks() = %v", got, want)
	}
	want := []string{"brief.retask", "brief.secrets", "plan.budget", "plan.children", "task.ownership",
		"tree.budget", "tree.depth", "tree.descendants", "tree.paths", "tree.spawn", "tree.tools"}
	gated := ids(lean.gated)
	slices.Sort(gated)
	if !slices.Equal(gated, want) {
		t.Errorf("gated = %v, want %v", gated, want)
	}
	// The lean engine takes its checks from the parsed modules: they are
	// what the compiled ones declare.
	if found, err := discoverChecks(lean.compiler, nil); err != nil || !reflect.DeepEqual(found, lean.checks) {
		t.Errorf("the lean engine's checks %v are not those its compiled modules declare %v (%v)", ids(lean.checks), ids(found), err)
	}
	compiled := ids(lean.checks)
	for _, id := range want {
		if slices.Contains(compiled, id) {
			t.Errorf("the lean engine compiled %s", id)
		}
	}
	if len(compiled)+len(want) != len(full.checks) {
		t.Errorf("lean %v and gated %v are not every check %v", compiled, want, ids(full.checks))
	}
	for name, m := range lean.compiler.Modules {
		if m.Package.Path.Equal(exceptionsPackage) {
			t.Errorf("the lean engine compiled %s", name)
		}
	}
}

// No module the lean engine compiles refers to a package it leaves out:
// such a reference would be undefined, not a compile error.
func TestLeanModulesReferToNoGatedPackage(t *testing.T) {
	lean, _ := engines(t)
	left := map[string]bool{exceptionsPackage.String(): true}
	for _, c := range lean.gated {
		left["data."+c.Package] = true
	}
	refersToGated := func(m *ast.Module) (found []string) {
		ast.WalkRefs(m, func(r ast.Ref) bool {
			for pkg := range left {
				if strings.HasPrefix(r.String(), pkg+".") {
					found = append(found, r.String())
				}
			}
			return false
		})
		return found
	}
	for name, m := range lean.compiler.Modules {
		if refs := refersToGated(m); len(refs) > 0 {
			t.Errorf("%s refers to %v, which the lean engine leaves out", name, refs)
		}
	}
	// The gated modules themselves do, once compiled: the walk sees them.
	_, full := engines(t)
	if refs := refersToGated(full.compiler.Modules["tree_tools.rego"]); len(refs) == 0 {
		t.Error("no reference found in tree_tools.rego: the walk finds nothing")
	}
}

// Every example plan gets the same result from the lean engine as from
// the engine of every module; flat plans under a policy that turns no
// gated check on are judged without compiling the rest, and the rest are
// compiled for the first plan that reaches it.
func TestLeanEngineJudgesAsEveryModule(t *testing.T) {
	lean, full := engines(t)
	l, err := plan.NewLoader(document.DefaultLimits)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	read := func(file string) []byte {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		return data
	}
	examples := filepath.Join("..", "..", "examples")
	flat := []string{"authorized-plan.yaml", "refused-plan.yaml", "narrowed-plan.yaml", "release-plan.yaml", "deploy-plan.yaml"}
	judge := func(policyFile, planFile string) (bool, bool) {
		t.Helper()
		pol, err := l.Policy(ctx, policyFile, read(policyFile))
		if err != nil {
			t.Fatal(err)
		}
		p, err := l.Plan(ctx, planFile, read(planFile))
		if err != nil {
			t.Fatal(err)
		}
		opts := []EvalOption{Today("2026-06-01")}
		got, err := lean.Evaluate(ctx, pol, p, opts...)
		if err != nil {
			t.Fatalf("%s: %v", planFile, err)
		}
		want, err := full.Evaluate(ctx, pol, p, opts...)
		if err != nil {
			t.Fatalf("%s: %v", planFile, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s under %s:\nlean %+v\nfull %+v", planFile, policyFile, got, want)
		}
		return lean.needsEveryModule(pol, policiesOf(pol, p), p), len(got.Children) > 0
	}
	for _, f := range flat {
		if every, _ := judge(filepath.Join(examples, "policy.yaml"), filepath.Join(examples, f)); every {
			t.Errorf("%s needs every module", f)
		}
	}
	if lean.full.fu != nil {
		t.Fatal("flat plans under examples/policy.yaml compiled every module")
	}
	// A flat plan with only a parent block, and a plan whose own policy
	// alone turns a gated check on, reach the rest too.
	scratch := t.TempDir()
	write := func(name, doc string) string {
		f := filepath.Join(scratch, name)
		if err := os.WriteFile(f, []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
		return f
	}
	pol := write("policy.json", `{"allowed_tools": ["fs.read", "http.get"], "workspace_root": "/repo", "budget_cap_tokens": 1000}`)
	for name, doc := range map[string]string{
		"parent.json": `{"parent": {"role": "lead", "tools": ["fs.read"], "paths": ["/repo"], "budget_tokens": 100},
			"plan": [{"role": "w", "tools": ["fs.read", "http.get"], "paths": ["/repo/a"], "budget_tokens": 10}]}`,
		"own-limit.json": `{"policy": {"allowed_tools": ["fs.read", "http.get"], "workspace_root": "/repo", "budget_cap_tokens": 1000, "max_children": 1},
			"plan": [{"role": "a", "tools": ["fs.read"], "paths": [], "budget_tokens": 10}, {"role": "b", "tools": ["fs.read"], "paths": [], "budget_tokens": 10}]}`,
	} {
		if every, _ := judge(pol, write(name, doc)); !every {
			t.Errorf("%s does not reach every module", name)
		}
	}
	for _, dir := range []string{"trees", "briefs", "exceptions", "profiles"} {
		plans, _ := filepath.Glob(filepath.Join(examples, dir, "*plan*.yaml"))
		plans = append(plans, filepath.Join(examples, "refused-plan.yaml"))
		for _, f := range plans {
			judge(filepath.Join(examples, dir, "policy.yaml"), f)
		}
	}
	if lean.full.fu == nil {
		t.Fatal("nested plans, briefs and exceptions were judged without every module")
	}
}

func policiesOf(operator plan.Policy, p *plan.Plan) map[string]any {
	policies := map[string]any{}
	if operator != nil {
		policies["operator"] = map[string]any(operator)
	}
	if p.Policy != nil {
		policies["plan"] = map[string]any(p.Policy)
	}
	return policies
}

// CompileRest builds the engine of every module at once, and is a no-op
// for an engine that already is one.
func TestCompileRest(t *testing.T) {
	lean, full := engines(t)
	if lean.full.fu != nil {
		t.Fatal("the lean engine compiled every module before any plan reached it")
	}
	if err := lean.CompileRest(); err != nil || lean.full.fu == nil {
		t.Fatalf("CompileRest() = %v, engine of every module started %v", err, lean.full.fu != nil)
	}
	if err := full.CompileRest(); err != nil || full.full != nil {
		t.Fatalf("CompileRest() on an engine of every module = %v, %v", err, full.full)
	}
}

// A panic while the engine of every module compiles is raised again in
// every caller, as future.Go raises it, where each caller's recover turns
// it into an internal error: no later caller gets a nil engine, or an
// error that hides what failed.
func TestFullEnginePanicReachesEveryCaller(t *testing.T) {
	builds := 0
	f := &fullEngine{build: func() (*Engine, error) {
		builds++
		panic("compile failed")
	}}
	for i := range 3 {
		func() {
			defer func() {
				if p := recover(); p != "compile failed" {
					t.Fatalf("caller %d recovered %v, want the build's panic", i, p)
				}
			}()
			e, err := f.get()
			t.Fatalf("caller %d got %v, %v; want the build's panic", i, e, err)
		}()
	}
	if builds != 1 {
		t.Fatalf("built %d times, want once", builds)
	}
}

// The built-in checks of each child read no input.pointers, which only a
// check of the whole plan is given (New asks this of the operator's own
// checks alone, to spare start-up).
func TestBuiltinChildChecksReadNoPointers(t *testing.T) {
	modules, err := policy.Modules()
	if err != nil {
		t.Fatal(err)
	}
	e, err := New(modules, EveryModule())
	if err != nil {
		t.Fatal(err)
	}
	if err := childChecksReadNoPointers(e.compiler, e.checks); err != nil {
		t.Fatal(err)
	}
	// And the question can be answered: the built-in checks of the whole
	// plan that call lib.pointer are found, when asked as if of each child.
	var asChild []Check
	for _, chk := range e.checks {
		chk.Scope = ScopeChild
		asChild = append(asChild, chk)
	}
	err = childChecksReadNoPointers(e.compiler, asChild)
	var me *ModuleError
	if !errors.As(err, &me) || !strings.Contains(me.Msg, "(through data.spawngate.lib.pointer)") {
		t.Fatalf("built-in checks asked as checks of each child: %v, want lib.pointer found", err)
	}
}
