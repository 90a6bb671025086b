package policy_test

import (
	"context"
	"io/fs"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/tester"

	"github.com/spawngate/spawngate/policy"
)

// TestRego runs every *_test.rego in this directory against the modules,
// the same way `opa test policy/` would, and reports each Rego test (and
// each case of a parameterized test) as a Go subtest.
func TestRego(t *testing.T) {
	modules := parseDir(t)
	ch, err := tester.NewRunner().
		SetModules(modules).
		RaiseBuiltinErrors(true).
		Run(context.Background(), modules)
	if err != nil {
		t.Fatal(err)
	}
	ran := 0
	for r := range ch {
		ran++
		name := strings.TrimPrefix(r.Package, "data.") + "." + r.Name
		t.Run(name, func(t *testing.T) {
			if r.Error != nil {
				t.Fatalf("%s: error: %v", r.Location, r.Error)
			}
			if r.Fail {
				failed := []string{}
				for path, sub := range r.SubResults.Iter {
					if sub.Fail {
						failed = append(failed, strings.Join(path, "/"))
					}
				}
				t.Fatalf("%s: failed %v", r.Location, failed)
			}
		})
	}
	if ran == 0 {
		t.Fatal("no Rego tests ran")
	}
}

// TestEveryCheckIsTestedBothWays keeps the promise that each check has a
// _test.rego beside it with at least one allowed and one denied case.
func TestEveryCheckIsTestedBothWays(t *testing.T) {
	mods, err := policy.Modules()
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range mods {
		if m.Name == "lib.rego" {
			continue
		}
		testFile := strings.TrimSuffix(m.Name, ".rego") + "_test.rego"
		src, err := os.ReadFile(testFile)
		if err != nil {
			t.Errorf("%s has no test file: %v", m.Name, err)
			continue
		}
		for _, kind := range []string{"allowed", "denied"} {
			re := regexp.MustCompile(`(?m)^test_\w+_` + kind + `\b`)
			if !re.Match(src) {
				t.Errorf("%s has no test_<case>_%s", testFile, kind)
			}
		}
	}
}

// TestTestFilesAreNotEvaluated guards the embed: tests must never become part
// of the policy the gate evaluates.
func TestTestFilesAreNotEvaluated(t *testing.T) {
	mods, err := policy.Modules()
	if err != nil {
		t.Fatal(err)
	}
	if len(mods) == 0 {
		t.Fatal("no modules")
	}
	for _, m := range mods {
		if strings.HasSuffix(m.Name, "_test.rego") {
			t.Errorf("test module %s is evaluated", m.Name)
		}
	}
}

func parseDir(t *testing.T) map[string]*ast.Module {
	t.Helper()
	modules := map[string]*ast.Module{}
	err := fs.WalkDir(os.DirFS("."), ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".rego") {
			return err
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		m, err := ast.ParseModuleWithOpts(path, string(src), ast.ParserOptions{ProcessAnnotation: true})
		if err != nil {
			return err
		}
		modules[path] = m
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return modules
}
