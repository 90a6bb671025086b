package engine

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/spawngate/spawngate/internal/document"
	"github.com/spawngate/spawngate/internal/plan"
	"github.com/spawngate/spawngate/internal/report"
	"github.com/spawngate/spawngate/policy"
)

// A key is the list of its parts: no two lists write one key, wherever
// one part ends and the next begins.
func TestAKeyTellsItsPartsApart(t *testing.T) {
	write := func(parts ...string) string {
		var k key
		for _, p := range parts {
			k.part(p)
		}
		return k.String()
	}
	for _, pair := range [][2][]string{
		{{"ab", "c"}, {"a", "bc"}},
		{{"a", ""}, {"a"}},
		{{"1:a"}, {"a"}},
		{{"", ""}, {""}},
		{{"a\x00", "b"}, {"a", "\x00b"}},
	} {
		if a, b := write(pair[0]...), write(pair[1]...); a == b {
			t.Errorf("%q and %q write one key, %q", pair[0], pair[1], a)
		}
	}
}

// Each row judges, on one long-lived engine (a server, the Go API), a plan
// twice (the memories filled, the shared values committed) and then a
// second that differs from it in one part of a memory's key alone: the
// second must get the answer an engine that remembers nothing gives, not
// the first's. Each row fails when its part is left out of the key
// (cache.go).
func TestEveryPartOfAKeyCounts(t *testing.T) {
	const (
		tools  = `"allowed_tools": ["fs.read"], "workspace_root": "/repo"`
		pol    = `{` + tools + `, "budget_cap_tokens": 1000}`
		capped = `{` + tools + `, "budget_cap_tokens": 1000, `
	)
	child := func(role string, budget string) string {
		return `{"role": "` + role + `", "tools": ["fs.read"], "paths": [], "budget_tokens": ` + budget + `}`
	}
	planOf := func(children ...string) string { return `{"plan": [` + strings.Join(children, ", ") + `]}` }
	a, b := child("a", "5"), child("b", "5")
	// A check of the whole plan that names every group's pointer, and one
	// that names every group's role.
	where := policy.Module{Name: "where.rego", Source: "# METADATA\n# title: T\n# description: D\n# custom:\n#   id: x.where\n#   severity: low\n#   scope: plan\n" +
		"package spawngate.checks.where\n\nimport data.spawngate.lib\n\n" +
		`deny contains {"field": "/plan", "message": concat(" ", [lib.pointer(i) | some i, _ in lib.children])} if true` + "\n"}
	roles := policy.Module{Name: "roles.rego", Source: "# METADATA\n# title: T\n# description: D\n# custom:\n#   id: x.roles\n#   severity: low\n#   scope: plan\n" +
		"package spawngate.checks.roles\n\nimport data.spawngate.lib\n\n" +
		`deny contains {"field": "/plan", "message": concat(" ", [c.role | some c in lib.children])} if true` + "\n"}
	// Group keys that write one key if the parts' lengths are left out:
	// "a", "x"+sep+"z" and "a"+sep+"x", "z", where sep is what a plan's key
	// writes between its first group's key and its second's. A group's key
	// is a digest, any 32 bytes: these stand for two that hold such bytes.
	k := planKey("", []string{"\x00A", "\x00B"}, []any{1, 1}, []any{"/plan/0", "/plan/1"})
	_, sep, _ := strings.Cut(k, "\x00A")
	sep, _, _ = strings.Cut(sep, "\x00B")
	type doc struct {
		policy, plan string
		keys         []string // the groups' keys, when not the loader's
	}
	tests := []struct {
		part          string
		extra         []policy.Module
		first, second doc
	}{
		{"policies, of the plan checks", nil,
			doc{policy: capped + `"max_children": 10}`, plan: planOf(a, a, a)},
			doc{policy: capped + `"max_children": 2}`, plan: planOf(a, a, a)}},
		{"policies, of the child checks", nil,
			doc{policy: pol, plan: planOf(a)},
			doc{policy: `{` + tools + `, "budget_cap_tokens": 1}`, plan: planOf(a)}},
		{"the plan checks that apply", nil,
			doc{policy: capped + `"max_children": 10}`, plan: planOf(a)},
			doc{policy: capped + `"max_total_budget_tokens": 2}`, plan: planOf(a)}},
		{"a child's key", nil,
			doc{policy: pol, plan: planOf(a)},
			doc{policy: pol, plan: planOf(child("a", "5000"))}},
		{"a group's key, of the plan checks", nil,
			doc{policy: capped + `"max_total_budget_tokens": 10}`, plan: planOf(a, b)},
			doc{policy: capped + `"max_total_budget_tokens": 10}`, plan: planOf(a, child("b", "6"))}},
		{"members", nil,
			doc{policy: capped + `"max_children": 2}`, plan: planOf(a, a)},
			doc{policy: capped + `"max_children": 2}`, plan: planOf(a, a, a)}},
		{"pointers", []policy.Module{where},
			doc{policy: pol, plan: planOf(a, a, b)},
			doc{policy: pol, plan: planOf(a, b, a)}},
		{"the parts' lengths", []policy.Module{roles},
			doc{policy: pol, plan: planOf(a, b), keys: []string{"a", "x" + sep + "z"}},
			doc{policy: pol, plan: planOf(child("c", "5"), child("d", "5")), keys: []string{"a" + sep + "x", "z"}}},
	}
	modules, err := policy.Modules()
	if err != nil {
		t.Fatal(err)
	}
	l, err := plan.NewLoader(document.DefaultLimits)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	judge := func(t *testing.T, e *Engine, d doc) report.Result {
		t.Helper()
		operator, err := l.Policy(ctx, "policy.json", []byte(d.policy))
		if err != nil {
			t.Fatal(err)
		}
		p, err := l.Plan(ctx, "plan.json", []byte(d.plan))
		if err != nil {
			t.Fatal(err)
		}
		if d.keys != nil {
			if len(d.keys) != len(p.Keys) {
				t.Fatalf("%d keys for %d groups", len(d.keys), len(p.Keys))
			}
			p.Keys = d.keys
		}
		res, err := e.Evaluate(ctx, operator, p)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	for _, tt := range tests {
		t.Run(tt.part, func(t *testing.T) {
			mods := append(append([]policy.Module(nil), modules...), tt.extra...)
			fresh, err := New(mods, noMemos(), noSharedValues())
			if err != nil {
				t.Fatal(err)
			}
			first, second := judge(t, fresh, tt.first), judge(t, fresh, tt.second)
			if reflect.DeepEqual(first, second) {
				t.Fatalf("both plans get one answer, %+v: the row proves nothing", first)
			}
			e, err := New(mods)
			if err != nil {
				t.Fatal(err)
			}
			for range 2 {
				judge(t, e, tt.first)
			}
			if got := judge(t, e, tt.second); !reflect.DeepEqual(got, second) {
				t.Errorf("after the first plan, the second got\n%+v\nwant\n%+v", got, second)
			}
			if got := judge(t, e, tt.first); !reflect.DeepEqual(got, first) {
				t.Errorf("after the second plan, the first got\n%+v\nwant\n%+v", got, first)
			}
		})
	}
}
