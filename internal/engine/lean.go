package engine

import (
	"maps"
	"slices"
	"sync"

	"github.com/open-policy-agent/opa/v1/ast"

	"github.com/spawngate/spawngate/internal/future"
	"github.com/spawngate/spawngate/internal/plan"
)

// A third of the built-in Rego judges only some plans: the tree checks a
// nested plan (custom.when_nested), the checks a policy turns on
// (custom.when_set: brief hygiene, task ownership, plan-wide limits) and
// the exceptions. Compiling it was a third of one small check's start-up.
// So the engine New builds for the built-in checks compiles the rest (the
// lean engine) and judges with it every plan that cannot reach the other
// modules; the first plan that can has every module compiled, once, and
// that engine judges it and every plan after it like it. The lean engine
// lists every check all the same (Checks): what a plan is judged by never
// depends on which engine judges it, only what it costs.

// selection is how a lean engine reaches the engine of every module: every
// check, those left out included, the checks left out, and that engine,
// which judges the plans that reach them. All nil for an engine of every
// module.
type selection struct {
	all   []Check
	gated []Check
	full  *fullEngine
}

// fullEngine is the engine of every module, built when first needed: the
// first caller starts the compile (future.Go), and every caller waits for
// it. A panic while compiling is raised again in every caller, whose
// recover turns it into an internal error, never a nil engine.
type fullEngine struct {
	once  sync.Once
	build func() (*Engine, error)
	fu    *future.Future[*Engine] // nil until first needed
}

func (f *fullEngine) get() (*Engine, error) {
	f.once.Do(func() { f.fu = future.Go(f.build) })
	return f.fu.Wait()
}

// CompileRest compiles, now, the modules a lean engine left out, so that
// no plan that reaches them waits for the compile: for a long-lived
// process, which still judges the plans that do not with the lean engine
// (fewer checks to evaluate). A no-op for an engine of every module.
func (e *Engine) CompileRest() error {
	if e.full == nil {
		return nil
	}
	_, err := e.full.get()
	return err
}

// EveryModule makes New compile every module at once, as for the
// operator's own checks, rather than the lean engine first: for a
// long-lived process, where start-up is paid once, or where the first plan
// is most likely nested. It changes no result, only when the rest is
// compiled.
func EveryModule() Option { return func(e *Engine) { e.everyModule = true } }

// Expect tells New the operator policy the engine will most likely judge
// under (a document read ahead, not yet validated): when it already turns
// a gated check on or has exceptions, New compiles every module at once
// rather than the lean engine first and the rest with the first plan.
func Expect(operator map[string]any) Option { return func(e *Engine) { e.expect = operator } }

// leanModules splits the built-in modules into those every plan needs and
// the packages only some plans reach (the checks that declare
// custom.when_nested or custom.when_set, and the exceptions), and lists
// every check the modules declare. gated is empty when no package is
// reached only by some plans.
func leanModules(parsed map[string]*ast.Module) (lean map[string]*ast.Module, gated []Check, all []Check, err error) {
	all, err = findChecks(parsed, parsedRules(parsed), nil)
	if err != nil {
		return nil, nil, nil, err
	}
	left := map[string]bool{exceptionsPackage.String(): true}
	for _, chk := range all {
		if chk.WhenNested || len(chk.WhenSet) > 0 {
			gated = append(gated, chk)
			left["data."+chk.Package] = true
		}
	}
	lean = make(map[string]*ast.Module, len(parsed))
	for name, m := range parsed {
		if !left[m.Package.Path.String()] {
			lean[name] = m
		}
	}
	return lean, gated, all, nil
}

// leanChecks is every check but the gated ones, in the order of all.
func leanChecks(all, gated []Check) []Check {
	left := make(map[string]bool, len(gated))
	for _, c := range gated {
		left[c.ID] = true
	}
	var out []Check
	for _, c := range all {
		if !left[c.ID] {
			out = append(out, c)
		}
	}
	return out
}

// parsedRules finds rules by path in modules that are only parsed, as
// ast.Compiler.GetRulesExact does in compiled ones.
func parsedRules(modules map[string]*ast.Module) func(ast.Ref) []*ast.Rule {
	names := slices.Sorted(maps.Keys(modules))
	return func(path ast.Ref) []*ast.Rule {
		var out []*ast.Rule
		for _, name := range names {
			m := modules[name]
			if !path.HasPrefix(m.Package.Path) {
				continue // only a module of the rule's package can hold it
			}
			for _, r := range m.Rules {
				if r.Module != nil && r.Ref().Equal(path) {
					out = append(out, r)
				}
			}
		}
		return out
	}
}

// needsEveryModule tells whether a plan under these policies can reach a
// module the lean engine left out: it is nested (its children have
// parents), the operator's policy has exceptions, or a policy sets a key
// that turns a gated check on.
func (e *Engine) needsEveryModule(operator plan.Policy, policies map[string]any, p *plan.Plan) bool {
	return len(p.Parents) > 0 || p.Tree != nil || policyReaches(e.gated, operator, policies)
}

// policyReaches tells whether policies turn a gated check on, or the
// operator's has exceptions.
func policyReaches(gated []Check, operator map[string]any, policies map[string]any) bool {
	if _, ok := operator["exceptions"]; ok {
		return true
	}
	for _, chk := range gated {
		if len(chk.WhenSet) > 0 && applies(chk, policies) {
			return true
		}
	}
	return false
}
