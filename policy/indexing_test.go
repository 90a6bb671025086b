package policy_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/storage"
	"github.com/open-policy-agent/opa/v1/storage/inmem"
	"github.com/open-policy-agent/opa/v1/topdown"

	"github.com/spawngate/spawngate/policy"
)

// TestComprehensionIndexingChangesNoAnswer judges random inputs with the
// checks compiled as the gate compiles them and again without OPA's
// comprehension indices, and requires the same answer. OPA v1.22.3 answers
// wrongly, depending on the order of calls, for a function whose value is a
// comprehension that both looks its argument up in a rule and passes it to
// a function (f(r) := {src[r] | g(r)}): the checks avoid that shape, and
// this keeps any check from coming back to it unseen.
func TestComprehensionIndexingChangesNoAnswer(t *testing.T) {
	mods, err := policy.Modules()
	if err != nil {
		t.Fatal(err)
	}
	compile := func(skip ...ast.StageID) *ast.Compiler {
		parsed := map[string]*ast.Module{}
		for _, m := range mods {
			mod, err := ast.ParseModuleWithOpts(m.Name, m.Source, ast.ParserOptions{RegoVersion: ast.RegoV1})
			if err != nil {
				t.Fatal(err)
			}
			parsed[m.Name] = mod
		}
		c := ast.NewCompiler().WithSkipStages(skip...)
		if c.Compile(parsed); c.Failed() {
			t.Fatal(c.Errors)
		}
		return c
	}
	indexed, plain := compile(), compile(ast.StageBuildComprehensionIndices)
	judge := func(c *ast.Compiler, input ast.Value) string {
		q, err := c.QueryCompiler().Compile(ast.MustParseBody("x = data.spawngate.checks"))
		if err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		store := inmem.New()
		txn := storage.NewTransactionOrDie(ctx, store)
		defer store.Abort(ctx, txn)
		rs, err := topdown.NewQuery(q).WithCompiler(c).WithStore(store).WithTransaction(txn).WithInput(ast.NewTerm(input)).
			WithStrictBuiltinErrors(true).Run(ctx)
		if err != nil || len(rs) != 1 {
			t.Fatalf("evaluating: %v (%d results)", err, len(rs))
		}
		return rs[0][ast.Var("x")].String()
	}
	r := rand.New(rand.NewPCG(11, 0x1d3))
	for n := range 300 {
		in := randomInput(r)
		v, err := ast.InterfaceToValue(in)
		if err != nil {
			t.Fatal(err)
		}
		if a, b := judge(indexed, v), judge(plain, v); a != b {
			t.Fatalf("input %d judged differently with comprehension indices:\n%v\nwith:    %s\nwithout: %s", n, in, a, b)
		}
	}
}

// randomInput draws an input like the gate's: operator and plan policies,
// with and without role profiles and plan limits, and children of profiled
// and other roles.
func randomInput(r *rand.Rand) map[string]any {
	pick := func(xs ...any) any { return xs[r.IntN(len(xs))] }
	profiles := map[string]any{
		"doc-reader": map[string]any{"allowed_tools": []any{"fs.read", "http.*"}, "allow_write": false, "workspace_root": "/repo/workspace/docs", "budget_cap_tokens": 1000, "allowed_models": []any{"sonnet"}},
		"fixer":      map[string]any{"allowed_tools": []any{"fs.*", "Bash"}, "allow_spawn": false, "workspace_root": "/repo/workspace/src"},
		"lead":       map[string]any{"allow_spawn": true, "allow_write": true, "allowed_tools": []any{"Agent", "sandbox:*"}},
		"team/a~b":   map[string]any{"budget_cap_tokens": 40000},
	}
	operator := map[string]any{
		"allowed_tools": []any{"fs.read", "fs.write", "http.get", "Agent", "Bash", "sandbox:*"}, "workspace_root": "/repo/workspace",
		"budget_cap_tokens": 200000, "allow_write": pick(true, false), "allow_spawn": pick(true, false),
	}
	roles := map[string]any{}
	for role, p := range profiles {
		if r.IntN(2) == 0 {
			roles[role] = p
		}
	}
	if len(roles) > 0 {
		operator["roles"] = roles
	}
	for key, v := range map[string]any{"unknown_roles": "refuse", "max_children": 3, "max_total_budget_tokens": 100000, "allowed_models": []any{"sonnet", "gpt-5*"}} {
		if r.IntN(3) == 0 {
			operator[key] = v
		}
	}
	policies := map[string]any{"operator": operator}
	if r.IntN(2) == 0 {
		policies["plan"] = map[string]any{"allowed_tools": []any{"fs.*", "http.get", "Agent"}, "workspace_root": pick("/repo/workspace", "/repo/workspace/docs"),
			"budget_cap_tokens": pick(200000, 30000), "allow_write": pick(true, false), "max_children": pick(2, 10)}
	}
	var children, members []any
	for range r.IntN(6) + 1 {
		list := func(xs ...any) []any {
			out := []any{}
			for range r.IntN(4) {
				out = append(out, pick(xs...))
			}
			return out
		}
		child := map[string]any{
			"role":          pick("doc-reader", "fixer", "lead", "team/a~b", "worker", "Doc-Reader", 5),
			"tools":         list("fs.read", "fs.write", "http.get", "Agent", "Bash", "sandbox:read-only", "sandbox:danger-full-access", "fs:*", 7),
			"paths":         list("/repo/workspace", "/repo/workspace/docs/a", "docs", "src/x", "/etc", "~", "/repo/workspace-evil", "/repo/workspace/src/main.go"),
			"budget_tokens": pick(1, 1000, 40000, 300000, "x", 0),
		}
		if m := pick(nil, "sonnet", "gpt-5", 5); m != nil {
			child["model"] = m
		}
		children = append(children, pick(child, child, child, "not a child"))
		members = append(members, r.IntN(3)+1)
	}
	in := map[string]any{"policies": policies, "children": children, "members": members}
	if r.IntN(4) == 0 {
		paths := map[string]any{}
		for _, c := range children {
			obj, _ := c.(map[string]any)
			list, _ := obj["paths"].([]any)
			for _, p := range list {
				paths[fmt.Sprint(p)] = map[string]any{"path": pick("/repo/workspace/docs/a", "/etc", "/repo/workspace/src/x")}
			}
		}
		roots := map[string]any{}
		for source := range policies {
			roots[source] = "/repo/workspace"
		}
		in["resolution"] = map[string]any{"roots": roots, "paths": paths}
	}
	return in
}
