package plan_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"testing"

	"github.com/spawngate/spawngate/internal/document"
	"github.com/spawngate/spawngate/internal/plan"
)

// kid writes a child with the given role and budget, and children when
// any are given.
func kid(role string, budget string, kids ...string) string {
	s := `{"role": "` + role + `", "tools": ["fs.read"], "paths": [], "budget_tokens": ` + budget
	if kids != nil {
		s += `, "children": [`
		for i, k := range kids {
			if i > 0 {
				s += ", "
			}
			s += k
		}
		s += "]"
	}
	return s + "}"
}

// The plan's own children keep their indexes; descendants follow in
// pre-order, each placed by pointer, depth, parent and counts; the report
// order is the document's.
func TestTreePlacesEveryChild(t *testing.T) {
	doc := `{"plan": [` +
		kid("a", "100", kid("a0", "10", kid("a00", "1")), kid("a1", "10")) + `, ` +
		kid("b", "100") + `, ` +
		kid("c", "100", kid("c0", "5")) + `]}`
	p, err := newLoader(t).Plan(context.Background(), "tree.json", []byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for i, n := range p.Tree {
		role := p.Children[i].(map[string]any)["role"]
		got = append(got, fmt.Sprintf("%s %s parent=%d depth=%d spawns=%d descendants=%d", role, n.Pointer, n.Parent, n.Depth, n.Spawns, n.Descendants))
	}
	want := []string{
		"a /plan/0 parent=-1 depth=1 spawns=2 descendants=3",
		"b /plan/1 parent=-1 depth=1 spawns=0 descendants=0",
		"c /plan/2 parent=-1 depth=1 spawns=1 descendants=1",
		"a0 /plan/0/children/0 parent=0 depth=2 spawns=1 descendants=1",
		"a00 /plan/0/children/0/children/0 parent=3 depth=3 spawns=0 descendants=0",
		"a1 /plan/0/children/1 parent=0 depth=2 spawns=0 descendants=0",
		"c0 /plan/2/children/0 parent=2 depth=2 spawns=0 descendants=0",
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("tree\n got %q\nwant %q", got, want)
	}
	if order := p.Order(); !reflect.DeepEqual(order, []int{0, 3, 4, 5, 1, 2, 6}) {
		t.Errorf("document order %v", order)
	}
	if c, ok := p.Children[0].(map[string]any)["children"].([]any); !ok || len(c) != 0 {
		t.Errorf("a flattened child keeps an empty children list, got %v", p.Children[0].(map[string]any)["children"])
	}
	// What the checks read of each parent: its own settings, and its
	// children's budgets summed exactly.
	a := p.Parents["/plan/0"].(map[string]any)
	if a["children_budget_tokens"] != json.Number("20") || a["role"] != "a" || a["depth"] != json.Number("1") {
		t.Errorf("facts of /plan/0: %v", a)
	}
	if _, ok := p.Parents["/plan/1"]; ok {
		t.Errorf("a child without children is nobody's parent: %v", p.Parents)
	}
	if got := p.TreeOf(4); !reflect.DeepEqual(got, map[string]any{"depth": json.Number("3"), "spawns": json.Number("0"), "descendants": json.Number("0"), "parent": "/plan/0/children/0"}) {
		t.Errorf("TreeOf(a00) = %v", got)
	}
}

// A flat plan has no tree: the checks see its children exactly as before,
// and child i is /plan/i.
func TestFlatPlanHasNoTree(t *testing.T) {
	p, err := newLoader(t).Plan(context.Background(), "flat.json", []byte(`{"plan": [`+kid("a", "1")+`, `+kid("b", "1")+`]}`))
	if err != nil {
		t.Fatal(err)
	}
	if p.Tree != nil || p.Parents != nil || p.Order() != nil || p.Pointer(1) != "/plan/1" || p.ParentPointer(1) != "" {
		t.Fatalf("flat plan: tree %v, parents %v, pointer %q", p.Tree, p.Parents, p.Pointer(1))
	}
}

// The plan's parent block bounds the plan's own children: they name it
// /parent, its depth counts, and their budgets are summed for it.
func TestParentBlock(t *testing.T) {
	doc := `{"parent": {"role": "caller", "tools": ["fs.read"], "budget_tokens": 50, "depth": 2}, "plan": [` + kid("a", "30") + `, ` + kid("b", "4e1") + `]}`
	p, err := newLoader(t).Plan(context.Background(), "parent.json", []byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	if p.ParentPointer(0) != plan.ParentBlock || p.Tree[0].Depth != 3 {
		t.Fatalf("parent %q, depth %d", p.ParentPointer(0), p.Tree[0].Depth)
	}
	block := p.Parents[plan.ParentBlock].(map[string]any)
	if block["role"] != "caller" {
		t.Errorf("block %v", block)
	}
	// 4e1 is not a whole number written as one: no sum is given, and the
	// checks refuse the sum they are not given.
	if _, ok := block["children_budget_tokens"]; ok {
		t.Errorf("a sum over a budget written 4e1: %v", block["children_budget_tokens"])
	}
}

// Identical siblings are judged as one group; the same child under
// parents that differ is not, since what it may hold depends on its
// parent.
func TestTreeGroups(t *testing.T) {
	same := kid("w", "1")
	doc := `{"plan": [` + kid("p", "10", same, same, same) + `, ` +
		`{"role": "q", "tools": ["fs.read", "Agent"], "paths": [], "budget_tokens": 10, "children": [` + same + `]}]}`
	p, err := newLoader(t).Plan(context.Background(), "groups.json", []byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	// Flat order: p, q, p's three children, q's child.
	if p.Group[2] != p.Group[3] || p.Group[3] != p.Group[4] {
		t.Errorf("identical siblings in groups %v", p.Group)
	}
	if p.Group[5] == p.Group[2] {
		t.Errorf("the same child under another parent shares its group: %v", p.Group)
	}
	if p.Keys[p.Group[5]] == p.Keys[p.Group[2]] {
		t.Errorf("keys equal across parents that differ")
	}
}

// Every child of the tree counts against MaxChildren, and a tree over it
// cannot be evaluated: the error names the first child over the limit.
func TestTreeCountsAgainstMaxChildren(t *testing.T) {
	lim := document.DefaultLimits
	lim.MaxChildren = 3
	l, err := plan.NewLoader(lim)
	if err != nil {
		t.Fatal(err)
	}
	doc := `{"plan": [` + kid("a", "1", kid("b", "1"), kid("c", "1")) + `]}`
	_, err = l.Plan(context.Background(), "big.json", []byte(doc))
	if err != nil {
		t.Fatalf("3 children within a limit of 3: %v", err)
	}
	doc = `{"plan": [` + kid("a", "1", kid("b", "1"), kid("c", "1", kid("d", "1"))) + `]}`
	_, err = l.Plan(context.Background(), "big.json", []byte(doc))
	var pe *document.Error
	if !errors.As(err, &pe) || pe.Limit != "max-children" || pe.Pointer != "/plan/0/children/1/children/0" {
		t.Fatalf("4 children over a limit of 3: %v", err)
	}
}

// A children value that is not a list is left for the schema to refuse,
// and an entry that is not an object is a child of its own, refused too.
func TestTreeKeepsWhatTheSchemaRefuses(t *testing.T) {
	doc := `{"plan": [{"role": "a", "tools": ["Agent"], "paths": [], "budget_tokens": 1, "children": {"role": "x"}}, ` +
		kid("b", "1", "42") + `]}`
	p, err := newLoader(t).Plan(context.Background(), "bad.json", []byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, is := range p.SchemaViolations() {
		got = append(got, p.Pointer(is.Child)+is.Field+": "+is.Message)
	}
	want := []string{
		"/plan/0/children: must be a list, not an object",
		"/plan/1/children/0: must be an object, not a number",
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("issues\n got %q\nwant %q", got, want)
	}
}
