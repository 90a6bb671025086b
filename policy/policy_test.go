package policy_test

import (
	"context"
	"encoding/json"
	"io/fs"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/storage/inmem"
	"github.com/open-policy-agent/opa/v1/tester"
	"github.com/open-policy-agent/opa/v1/topdown"

	hostlist "github.com/spawngate/spawngate/internal/hosts"
	"github.com/spawngate/spawngate/internal/judge"
	"github.com/spawngate/spawngate/policy"
	"github.com/spawngate/spawngate/schemas"
)

// TestRego runs every *_test.rego in this directory against the modules,
// the same way `opa test policy/` would, and reports each Rego test (and
// each case of a parameterized test) as a Go subtest.
func TestRego(t *testing.T) {
	modules := parseDir(t)
	ch, err := tester.NewRunner().
		SetModules(modules).
		RaiseBuiltinErrors(true).
		SetTimeout(judge.DefaultTestTimeout). // as spawngate verify --builtin runs them
		RunTests(context.Background(), nil)
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

// TestEveryCheckIsTestedBothWays keeps the promise that each module has a
// _test.rego beside it with at least one allowed and one denied case.
func TestEveryCheckIsTestedBothWays(t *testing.T) {
	mods, err := policy.Modules()
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range mods {
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

// The write tools and the spawn tools a policy gets when it lists none are
// written twice: in lib.rego, which the checks use, and as the defaults in
// the policy schema, which documents the format. They must say the same.
func TestDefaultToolListsMatchTheSchema(t *testing.T) {
	raw, err := schemas.FS.ReadFile("policy.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	var schema struct {
		Properties map[string]struct {
			Default json.RawMessage `json:"default"`
		} `json:"properties"`
	}
	if err := json.Unmarshal(raw, &schema); err != nil {
		t.Fatal(err)
	}
	compiler := ast.NewCompiler()
	if compiler.Compile(parseDir(t)); compiler.Failed() {
		t.Fatal(compiler.Errors)
	}
	for field, rule := range map[string]string{"write_tools": "default_write_tools", "spawn_tools": "default_spawn_tools"} {
		var documented []string
		if err := json.Unmarshal(schema.Properties[field].Default, &documented); err != nil || len(documented) == 0 {
			t.Fatalf("policy.schema.json gives %s no default list: %v", field, err)
		}
		rs, err := topdown.NewQuery(ast.MustParseBody("x = data.spawngate.lib." + rule)).
			WithCompiler(compiler).WithStore(inmem.New()).Run(context.Background())
		if err != nil || len(rs) != 1 {
			t.Fatalf("evaluating lib.%s: %v (%d results)", rule, err, len(rs))
		}
		var used []string
		if err := ast.As(rs[0][ast.Var("x")].Value, &used); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(used, documented) {
			t.Errorf("lib.rego's %s is %q, the schema's default for %s is %q", rule, used, field, documented)
		}
	}
}

// The tools a child may not hold without allow_spawn, when a policy lists
// none (lib.rego's default_spawn_tools), are the tools under which a host
// starts a new sub-agent, which the hooks intercept (each host adapter's
// SpawnTools): a tool a hook judges as a spawn and the checks let a child
// hold freely would let a child dispatch unjudged. Codex's resume_agent
// is the one intercepted tool left out: it starts again an agent that was
// dispatched, and judged, before.
func TestDefaultSpawnToolsAreTheHostsSpawnTools(t *testing.T) {
	compiler := ast.NewCompiler()
	if compiler.Compile(parseDir(t)); compiler.Failed() {
		t.Fatal(compiler.Errors)
	}
	rs, err := topdown.NewQuery(ast.MustParseBody("x = data.spawngate.lib.default_spawn_tools")).
		WithCompiler(compiler).WithStore(inmem.New()).Run(context.Background())
	if err != nil || len(rs) != 1 {
		t.Fatalf("evaluating lib.default_spawn_tools: %v (%d results)", err, len(rs))
	}
	var lib []string
	if err := ast.As(rs[0][ast.Var("x")].Value, &lib); err != nil {
		t.Fatal(err)
	}
	var hosts []string
	for _, a := range hostlist.All {
		for _, tool := range a.SpawnTools() {
			if !strings.HasSuffix(tool, "resume_agent") && !slices.Contains(hosts, tool) {
				hosts = append(hosts, tool)
			}
		}
	}
	slices.Sort(lib)
	slices.Sort(hosts)
	if !slices.Equal(lib, hosts) {
		t.Errorf("lib.rego's default_spawn_tools are %q, the hosts' spawn tools %q", lib, hosts)
	}
}
