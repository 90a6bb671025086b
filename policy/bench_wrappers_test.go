package policy_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/rego"
	"github.com/open-policy-agent/opa/v1/storage/inmem"
	"github.com/open-policy-agent/opa/v1/util"
)

// .ci/bench and .ci/load hand the checks to opa and conftest through
// testdata/bench/wrapper.rego, and .ci/load runs OPA's server on the four
// minimal checks of testdata/bench/minimal too. Both must keep loading
// and refusing what spawngate refuses in the README's example, or the
// scripts would time work that finds nothing.
func TestBenchWrappers(t *testing.T) {
	modules := parseDir(t)
	for name := range modules {
		if strings.HasSuffix(name, "_test.rego") {
			delete(modules, name)
		}
	}
	for _, extra := range []string{"wrapper.rego", filepath.Join("minimal", "minimal.rego")} {
		path := filepath.Join("..", "testdata", "bench", extra)
		src, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		m, err := ast.ParseModuleWithOpts(path, string(src), ast.ParserOptions{ProcessAnnotation: true})
		if err != nil {
			t.Fatal(err)
		}
		modules[path] = m
	}
	compiler := ast.NewCompiler()
	if compiler.Compile(modules); compiler.Failed() {
		t.Fatal(compiler.Errors)
	}
	var data map[string]any
	if err := util.UnmarshalJSON([]byte(`{"operator": {"allowed_tools": ["fs.read", "fs.write", "http.get", "mcp__github__get_*"],
		"workspace_root": "/repo/workspace", "budget_cap_tokens": 200000, "allow_write": false}}`), &data); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join("..", "examples", "refused-plan.json"))
	if err != nil {
		t.Fatal(err)
	}
	var input map[string]any
	if err := util.UnmarshalJSON(raw, &input); err != nil {
		t.Fatal(err)
	}
	// The fields spawngate refuses in the example (see README, Try it).
	want := []string{"/plan/0/budget_tokens", "/plan/0/paths/0", "/plan/0/tools/0", "/plan/0/tools/1", "/plan/0/tools/2", "/plan/0/tools/2"}
	for _, query := range []string{"data.main.deny", "data.minimal.deny"} {
		t.Run(query, func(t *testing.T) {
			rs, err := rego.New(rego.Query(query), rego.Compiler(compiler), rego.Store(inmem.NewFromObject(data)),
				rego.Input(input), rego.StrictBuiltinErrors(true)).Eval(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if len(rs) != 1 || len(rs[0].Expressions) != 1 {
				t.Fatalf("%s is undefined", query)
			}
			msgs, _ := rs[0].Expressions[0].Value.([]any)
			var fields []string
			for _, m := range msgs {
				s, _ := m.(string)
				fields = append(fields, s[:strings.Index(s, ":")])
			}
			slices.Sort(fields)
			if !slices.Equal(fields, want) {
				t.Errorf("%s refuses %q, want %q", query, fields, want)
			}
		})
	}
}
