package engine

import (
	"context"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/open-policy-agent/opa/v1/ast"

	"github.com/spawngate/spawngate/internal/jsonpointer"
	"github.com/spawngate/spawngate/internal/report"
)

// The exceptions are asked one question per kind of violation (apply,
// question). Each violation must be answered as it is when asked alone,
// with everything the query could read of it: the child's role and id,
// the violation, and where every path of the child resolves.
func TestAQuestionIsAnsweredAsTheWholeItemWouldBe(t *testing.T) {
	LongProperty(t)
	_, e := engines(t)
	root := t.TempDir()
	if err := os.Mkdir(filepath.Join(root, "real"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/etc", filepath.Join(root, "real", "out")); err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(23, 5))
	pick := func(pool ...string) string { return pool[r.IntN(len(pool))] }
	roles := []string{"migrator", "reader", "backfill"}
	ids := []string{"c0", "c1", "c2"}
	// A few values in both lists: a tool selector must not reach a path,
	// nor a path selector a tool, of the same value.
	tools := []any{"shell.run", "fs.write", "net.raw", "fs:*", "sandbox:danger-full-access", "/etc/passwd", 7.0, nil}
	paths := []any{"real/out/x", "real/a", "real/a/", "/etc/passwd", "/etc/passwd/", root + "/real", "~/x", "a/../b", "shell.run", 3.0}
	rules := []string{"tools.write", "tools.allowlist", "paths.escape", "budget.cap"}
	fields := []string{"/tools/0", "/tools/1", "/paths/0", "/paths/1", "/budget_tokens", "/role"}
	policySets := [][]string{nil, {"operator"}, {"operator"}, {"plan"}, {"operator", "plan"}}
	var asked, excepted int
	for round := range 1000 {
		var exceptions []any
		for range 1 + r.IntN(4) {
			x := map[string]any{"rule": pick(rules...), "reason": "r", "expires": pick("2020-01-01", "2099-01-01", "2099-01-01")}
			if r.IntN(3) == 0 {
				x["role"] = pick(roles...)
				if r.IntN(2) == 0 {
					x["id"] = pick(ids...)
				}
			}
			if r.IntN(2) == 0 && x["rule"] != "paths.escape" {
				x["tool"] = pick("shell.*", "*", "fs.write", "sandbox:danger-full-access")
			}
			if r.IntN(2) == 0 && x["rule"] != "tools.write" {
				x["path"] = pick("/etc/**", "/**", root+"/real/**", root+"/real/a", "/etc/passwd")
			}
			exceptions = append(exceptions, x)
		}
		operator := map[string]any{"allowed_tools": []any{"fs.read"}, "workspace_root": root, "exceptions": exceptions}
		policies := map[string]any{"operator": operator}
		if r.IntN(4) == 0 {
			policies["plan"] = map[string]any{"allowed_tools": []any{"fs.read"}}
		}
		pv, err := ast.InterfaceToValue(policies)
		if err != nil {
			t.Fatal(err)
		}
		in := &inputs{policies: pv, planRoot: root}
		if r.IntN(3) == 0 {
			in.roots = map[string]any{}
		}
		x := newExcepter(e, operator, in, "2026-12-01", false)
		var items []exceptItem
		for range 1 + r.IntN(12) {
			child := map[string]any{
				"tools": []any{tools[r.IntN(len(tools))], tools[r.IntN(len(tools))]},
				"paths": []any{paths[r.IntN(len(paths))], paths[r.IntN(len(paths))]},
			}
			if r.IntN(6) != 0 {
				child["role"] = pick(append(roles, "other")...)
			}
			if r.IntN(2) == 0 {
				child["id"] = pick(append(ids, "c9")...)
			}
			it := exceptItem{child: child, alone: r.IntN(2) == 0}
			for range r.IntN(5) {
				v := report.Violation{Rule: pick(rules...), Path: pick(fields...), Policies: policySets[r.IntN(len(policySets))]}
				if r.IntN(4) != 0 { // mostly a field the rule is about
					v.Path = map[string]string{"tools.write": "/tools/", "tools.allowlist": "/tools/", "paths.escape": "/paths/"}[v.Rule] + pick("0", "1")
					if v.Rule == "budget.cap" {
						v.Path = "/budget_tokens"
					}
				}
				it.vs = append(it.vs, v)
			}
			items = append(items, it)
		}
		if err := x.apply(context.Background(), items); err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		for n, it := range items {
			for i, v := range it.vs {
				want := wholeItemAnswer(t, x, it, i)
				got := -1
				if v.Excepted != nil {
					got = v.Excepted.Index
				}
				if got != want {
					t.Fatalf("round %d, item %d (%v, alone %v), violation %+v: excepted by %d, alone by %d\nexceptions %v", round, n, it.child, it.alone, v, got, want, exceptions)
				}
				if x.rules[v.Rule] {
					asked++
				}
				if got >= 0 {
					excepted++
				}
			}
		}
	}
	if excepted < asked/10 || excepted == asked {
		t.Fatalf("%d of %d asked violations excepted: the rounds do not tell exceptions apart", excepted, asked)
	}
}

// Violations alike but for what an exception can tell them by are asked
// about apart: a tool and a path of the same name, and a child named by
// an exception's id, alone, and its twin, whom an id never reaches.
func TestAQuestionKeepsWhatTellsViolationsApart(t *testing.T) {
	_, e := engines(t)
	operator := map[string]any{"allowed_tools": []any{"fs.read"}, "workspace_root": "/w", "exceptions": []any{
		map[string]any{"rule": "tools.write", "tool": "shell.*", "reason": "r", "expires": "2999-12-31"},
		map[string]any{"rule": "budget.cap", "role": "backfill", "id": "job-7", "reason": "r", "expires": "2999-12-31"},
	}}
	pv, err := ast.InterfaceToValue(map[string]any{"operator": operator})
	if err != nil {
		t.Fatal(err)
	}
	x := newExcepter(e, operator, &inputs{policies: pv}, "2026-12-01", false)
	job7 := map[string]any{"role": "backfill", "id": "job-7", "budget_tokens": 9}
	items := []exceptItem{
		{child: map[string]any{"tools": []any{"shell.run"}}, vs: []report.Violation{{Rule: "tools.write", Path: "/tools/0"}}},
		{child: map[string]any{"paths": []any{"shell.run"}}, vs: []report.Violation{{Rule: "tools.write", Path: "/paths/0"}}},
		{child: job7, alone: true, vs: []report.Violation{{Rule: "budget.cap", Path: "/budget_tokens"}}},
		{child: job7, vs: []report.Violation{{Rule: "budget.cap", Path: "/budget_tokens"}}},
	}
	if err := x.apply(context.Background(), items); err != nil {
		t.Fatal(err)
	}
	for n, want := range []bool{true, false, true, false} {
		if got := items[n].vs[0].Excepted != nil; got != want {
			t.Errorf("item %d (%v): excepted %v, want %v", n, items[n].child, got, want)
		}
	}
}

// wholeItemAnswer asks about violation i of an item with everything the
// query could read of it, and says which exception lets it through (-1:
// none).
func wholeItemAnswer(t *testing.T, x *excepter, it exceptItem, i int) int {
	t.Helper()
	v := it.vs[i]
	about := map[string]any{}
	obj := it.child.(map[string]any)
	if role, ok := obj["role"]; ok {
		about["role"] = role
	}
	if id, ok := obj["id"]; ok && it.alone {
		about["id"] = id
	}
	value, _ := jsonpointer.Lookup(it.child, v.Path)
	one := map[string]any{"rule": v.Rule, "field": v.Path, "value": value}
	if v.Policies != nil {
		ps := []any{}
		for _, p := range v.Policies {
			ps = append(ps, p)
		}
		one["policies"] = ps
	}
	doc := map[string]any{"child": about, "violations": []any{one}}
	if x.in.roots != nil {
		resolved, err := resolvePaths(context.Background(), x.in.planRoot, []any{it.child})
		if err != nil {
			t.Fatal(err)
		}
		doc["resolution"] = map[string]any{"paths": resolved}
	}
	item, err := ast.InterfaceToValue(doc)
	if err != nil {
		t.Fatal(err)
	}
	q, err := x.e.exceptionQueries()
	if err != nil {
		t.Fatal(err)
	}
	input := ast.NewObject(
		[2]*ast.Term{ast.InternedTerm("policies"), ast.NewTerm(x.policies)},
		[2]*ast.Term{ast.InternedTerm("today"), ast.NewTerm(x.today)},
		[2]*ast.Term{ast.InternedTerm("items"), ast.ArrayTerm(ast.NewTerm(item))},
	)
	out, err := x.ask(context.Background(), q.batch, input)
	if err != nil {
		t.Fatal(err)
	}
	answer := out.(*ast.Array).Elem(0).Value.(ast.Object)
	if answer.Len() == 0 {
		return -1
	}
	n, ok := index(answer.Get(ast.InternedTerm(0)), len(x.list))
	if !ok {
		t.Fatalf("malformed answer %v", answer)
	}
	return n
}
