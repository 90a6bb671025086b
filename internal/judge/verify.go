package judge

import (
	"cmp"
	"context"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/open-policy-agent/opa/v1/cover"
	"github.com/open-policy-agent/opa/v1/tester"

	"github.com/spawngate/spawngate/internal/document"
	"github.com/spawngate/spawngate/internal/engine"
	"github.com/spawngate/spawngate/internal/plan"
	"github.com/spawngate/spawngate/policy"
)

// VerifyOptions say whose checks spawngate verify tests.
type VerifyOptions struct {
	// Dirs are folders of the operator's checks with their tests beside
	// them (*_test.rego), subfolders included.
	Dirs []string
	// PolicyFile, when set, is an operator policy whose checks field names
	// more folders.
	PolicyFile string
	// Bundle and BundleKey name a bundle whose modules and tests are
	// verified, read as the gate reads it (see Options).
	Bundle    string
	BundleKey *BundleKey
	// Builtin also runs the built-in checks' tests.
	Builtin bool
	Limits  document.Limits
	// Timeout bounds each test; 0 means DefaultTestTimeout.
	Timeout time.Duration
}

// DefaultTestTimeout bounds each test when VerifyOptions say nothing. OPA's
// tester gives 5s, which the built-in tests of the path rules (a second
// each, idle) overrun on a loaded machine; a test that runs 30s is stuck,
// not slow, and check's own --timeout is 30s too.
const DefaultTestTimeout = 30 * time.Second

// The outcomes of a test.
const (
	TestPass  = "pass"
	TestFail  = "fail"
	TestError = "error" // it could not be evaluated: a built-in error, a timeout
	TestSkip  = "skip"  // a todo_test_ rule, which OPA's tester skips
)

// TestResult is one Rego test's outcome.
type TestResult struct {
	Package string // the test's package, such as spawngate.checks.deploy_test
	Name    string // the rule, such as test_deploy_outside_release_denied
	File    string
	Line    int
	Outcome string
	Error   string   // why it could not be evaluated, on one line
	Failed  []string // the failing cases of a test with cases (test_x[note])
	Output  string   // what it printed with print()
}

// Coverage is how much of the verified modules the tests evaluated, by
// lines, as OPA's cover package counts them.
type Coverage struct {
	Percent             float64
	Covered, NotCovered int
	Files               []FileCoverage // by name
}

// FileCoverage is one module's coverage.
type FileCoverage struct {
	File                string
	Percent             float64
	Covered, NotCovered int
	// NotCoveredLines are the ranges of lines no test evaluated, [first,
	// last], in order.
	NotCoveredLines [][2]int
}

// Verified is what spawngate verify found.
type Verified struct {
	// Modules are the operator's modules verified (not the tests); with
	// Builtin, the built-in ones too.
	Modules  []string
	Tests    []TestResult // by file, line and name
	Coverage Coverage
}

// Verify runs the tests of the operator's checks with OPA's tester, the
// way opa test does, compiled with the built-in modules so that a test
// can import data.spawngate.lib and data.spawngate.checks.*. The
// operator's modules are first held to the contract the gate holds them
// to. An error is an *Error: a module or test that does not parse or
// compile, or breaks the contract, a folder or bundle that cannot be read.
func Verify(ctx context.Context, o VerifyOptions) (*Verified, error) {
	loader, err := plan.NewLoader(o.Limits)
	if err != nil {
		return nil, &Error{Kind: Internal, Msg: "internal error: " + document.OneLine(err.Error())}
	}
	var dirs []CheckSource
	for _, d := range o.Dirs {
		dirs = append(dirs, CheckSource{Dir: d})
	}
	if o.PolicyFile != "" {
		data, err := document.ReadFile(o.PolicyFile, o.Limits.MaxBytes)
		if err != nil {
			return nil, AsError(o.PolicyFile, err)
		}
		pol, err := loader.Policy(ctx, o.PolicyFile, data)
		if err != nil {
			return nil, AsError(o.PolicyFile, err)
		}
		more, err := policyCheckDirs(o.PolicyFile, o.PolicyFile, "", pol)
		if err != nil {
			return nil, AsError(o.PolicyFile, err)
		}
		dirs = append(dirs, more...)
	}
	custom, err := readCheckDirs(ctx, dirs, o.Limits.MaxBytes)
	if err != nil {
		return nil, AsError("checks", err)
	}
	var tests []policy.Module
	seen := map[string]bool{}
	for _, d := range dirs {
		files, err := regoFiles(ctx, d.Dir, true)
		if err != nil {
			return nil, AsError(d.Dir, d.wrap(err))
		}
		for _, f := range files {
			if seen[f] {
				continue
			}
			seen[f] = true
			data, err := document.ReadFile(f, o.Limits.MaxBytes)
			if err != nil {
				return nil, AsError(f, err)
			}
			tests = append(tests, policy.Module{Name: f, Source: string(data)})
		}
	}
	if o.Bundle != "" {
		b, err := readBundle(ctx, loader, o.Bundle, o.BundleKey)
		if err != nil {
			return nil, AsError(o.Bundle, err)
		}
		custom = append(custom, b.modules...)
		tests = append(tests, b.tests...)
	}
	builtins, err := policy.Modules()
	if err != nil {
		return nil, &Error{Kind: Internal, Msg: "internal error: reading the built-in policy: " + document.OneLine(err.Error())}
	}
	custom = engine.WithoutBuiltinCopies(builtins, custom)
	if len(custom) > 0 {
		// The contract first, exactly as the gate holds the modules to it.
		if _, err := customEngine(custom, false); err != nil {
			return nil, AsError("checks", err)
		}
	}
	var builtinTests []policy.Module
	if o.Builtin {
		if builtinTests, err = policy.TestModules(); err != nil {
			return nil, &Error{Kind: Internal, Msg: "internal error: reading the built-in tests: " + document.OneLine(err.Error())}
		}
	}
	t, err := engine.PrepareTests(builtins, builtinTests, custom, tests)
	if err != nil {
		return nil, AsError("tests", err)
	}
	cov := cover.New()
	r := tester.NewRunner().
		SetCompiler(t.Compiler).
		SetModules(t.Modules).
		RaiseBuiltinErrors(true).
		CapturePrintOutput(true).
		SetCoverageQueryTracer(cov).
		SetCoverageRuns([]cover.Kind{}).
		SetParallel(runtime.GOMAXPROCS(0))
	r = r.SetTimeout(cmp.Or(o.Timeout, DefaultTestTimeout))
	ch, err := r.RunTests(ctx, nil)
	if err != nil {
		return nil, AsError("tests", engine.TestsError(err))
	}
	out := &Verified{}
	for res := range ch {
		out.Tests = append(out.Tests, testResult(res))
	}
	if err := ctx.Err(); err != nil {
		return nil, AsError("tests", err)
	}
	slices.SortFunc(out.Tests, func(a, b TestResult) int {
		return cmp.Or(cmp.Compare(a.File, b.File), cmp.Compare(a.Line, b.Line), cmp.Compare(a.Package, b.Package), cmp.Compare(a.Name, b.Name))
	})
	for name := range t.Covered {
		out.Modules = append(out.Modules, name)
	}
	slices.Sort(out.Modules)
	out.Coverage = coverage(cov.Report(t.Covered), out.Modules)
	return out, nil
}

func testResult(r *tester.Result) TestResult {
	t := TestResult{Package: strings.TrimPrefix(r.Package, "data."), Name: r.Name, Output: string(r.Output)}
	if r.Location != nil {
		t.File, t.Line = r.Location.File, r.Location.Row
	}
	switch {
	case r.Error != nil:
		t.Outcome, t.Error = TestError, document.OneLine(r.Error.Error())
	case r.Skip:
		t.Outcome = TestSkip
	case r.Fail:
		t.Outcome = TestFail
		for path, sub := range r.SubResults.Iter {
			if sub.Fail && len(sub.SubResults) == 0 {
				t.Failed = append(t.Failed, strings.Join(path, "/"))
			}
		}
		slices.Sort(t.Failed)
	default:
		t.Outcome = TestPass
	}
	return t
}

// coverage reads OPA's coverage report for the verified modules.
func coverage(rep cover.Report, modules []string) Coverage {
	var c Coverage
	for _, name := range modules {
		fc := FileCoverage{File: name}
		if fr := rep.Files[name]; fr != nil {
			fc.Covered, fc.NotCovered, fc.Percent = fr.CoveredLines, fr.NotCoveredLines, fr.Coverage
			for _, rg := range fr.NotCovered {
				fc.NotCoveredLines = append(fc.NotCoveredLines, [2]int{rg.Start.Row, rg.End.Row})
			}
		}
		c.Covered += fc.Covered
		c.NotCovered += fc.NotCovered
		c.Files = append(c.Files, fc)
	}
	if total := c.Covered + c.NotCovered; total > 0 {
		c.Percent = 100 * float64(c.Covered) / float64(total)
	}
	return c
}

// Passed tells whether every test that ran passed, and at least one ran:
// no test is never a verified check.
func (v *Verified) Passed() bool {
	ran := 0
	for _, t := range v.Tests {
		switch t.Outcome {
		case TestPass:
			ran++
		case TestSkip:
		default:
			return false
		}
	}
	return ran > 0
}

// String is a summary line for logs: "4 tests, 4 passed".
func (v *Verified) String() string {
	n := map[string]int{}
	for _, t := range v.Tests {
		n[t.Outcome]++
	}
	return fmt.Sprintf("%d tests: %d passed, %d failed, %d errors, %d skipped", len(v.Tests), n[TestPass], n[TestFail], n[TestError], n[TestSkip])
}
