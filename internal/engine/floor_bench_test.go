package engine_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/storage/inmem"
	"github.com/open-policy-agent/opa/v1/topdown"

	"github.com/spawngate/spawngate/internal/benchplan"
)

// regoFloor compiles module and returns a function that evaluates its
// deny set once on n distinct children, as
// the engine evaluates (topdown, strict built-in errors), with the input
// already in OPA's form.
func regoFloor(b *testing.B, module string, n int) func() {
	b.Helper()
	var doc struct {
		Plan []any `json:"plan"`
	}
	if err := json.Unmarshal(benchplan.Generate(benchplan.Distinct(n)), &doc); err != nil {
		b.Fatal(err)
	}
	// The benchmarks' policy, with its one pattern (mcp__github__get_*)
	// written out as the tools the plan asks for: the floor matches
	// exactly, and must refuse only the children the gate refuses.
	operator := map[string]any{
		"allowed_tools":     []any{"fs.read", "fs.write", "http.get", "mcp__github__get_issue", "mcp__github__get_pull_request"},
		"workspace_root":    "/repo/workspace",
		"budget_cap_tokens": 200000,
	}
	input, err := ast.InterfaceToValue(map[string]any{"policies": map[string]any{"operator": operator}, "children": doc.Plan})
	if err != nil {
		b.Fatal(err)
	}
	compiler := ast.NewCompiler()
	if compiler.Compile(map[string]*ast.Module{"floor.rego": ast.MustParseModuleWithOpts(module, ast.ParserOptions{RegoVersion: ast.RegoV1})}); compiler.Failed() {
		b.Fatal(compiler.Errors)
	}
	body, err := compiler.QueryCompiler().Compile(ast.MustParseBody("deny = data.floor.deny"))
	if err != nil {
		b.Fatal(err)
	}
	store := inmem.New()
	ctx := context.Background()
	return func() {
		txn, err := store.NewTransaction(ctx)
		if err != nil {
			b.Fatal(err)
		}
		defer store.Abort(ctx, txn)
		rs, err := topdown.NewQuery(body).WithCompiler(compiler).WithStore(store).WithTransaction(txn).
			WithInput(ast.NewTerm(input)).WithStrictBuiltinErrors(true).Run(ctx)
		if err != nil || len(rs) != 1 {
			b.Fatal(err, len(rs))
		}
		if deny := rs[0][ast.Var("deny")].Value.(ast.Set); deny.Len() == 0 || deny.Len() > n/10 {
			b.Fatalf("the floor refuses %d of %d children: the plan refuses a few", deny.Len(), n)
		}
	}
}
