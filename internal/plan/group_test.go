package plan_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/spawngate/spawngate/internal/plan"
)

// The fields that grant nothing are the ones the schema sees only by type
// and length; role and model have a pattern and count.
func TestAbstractedFields(t *testing.T) {
	got, err := plan.Abstracted()
	if err != nil || !slices.Equal(got, []string{"brief", "brief_unreadable", "id", "metadata"}) {
		t.Fatalf("abstracted %v, %v", got, err)
	}
}

func TestGroups(t *testing.T) {
	l := newLoader(t)
	child := func(extra string) string {
		return `{"role": "r", "tools": ["fs.read"], "paths": [], "budget_tokens": 1` + extra + `}`
	}
	tests := []struct {
		name     string
		children []string
		groups   []int
	}{
		{"ids and briefs do not split a group", []string{child(`, "id": "a", "brief": "x"`), child(`, "id": "b", "brief": "y"`), child(`, "id": "c"`)}, []int{0, 0, 1}},
		{"an empty id is another group", []string{child(`, "id": "a"`), child(`, "id": ""`)}, []int{0, 1}},
		{"an id of another type is another group", []string{child(`, "id": "a"`), child(`, "id": 5`), child(`, "id": 6`)}, []int{0, 1, 1}},
		{"metadata of any value is one group", []string{child(`, "metadata": {"a": 1}`), child(`, "metadata": {"b": [2]}`)}, []int{0, 0}},
		{"role counts", []string{`{"role": "s", "tools": ["fs.read"], "paths": [], "budget_tokens": 1}`, child("")}, []int{0, 1}},
		{"numbers count as written", []string{child(""), `{"role": "r", "tools": ["fs.read"], "paths": [], "budget_tokens": 1.0}`, `{"role": "r", "tools": ["fs.read"], "paths": [], "budget_tokens": 1e0}`}, []int{0, 1, 2}},
		{"order of keys does not count", []string{child(""), `{"budget_tokens": 1, "paths": [], "tools": ["fs.read"], "role": "r"}`}, []int{0, 0}},
		{"unknown keys count with their values", []string{child(`, "x": 1`), child(`, "x": 2`), child(`, "x": 1`)}, []int{0, 1, 0}},
		{"children that are not objects", []string{`"a"`, `"a"`, `"b"`, `1`, `null`}, []int{0, 0, 1, 2, 3}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := l.Plan(context.Background(), "plan.json", []byte(`{"plan": [`+strings.Join(tt.children, ",")+`]}`))
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(p.Group, tt.groups) {
				t.Fatalf("groups %v, want %v", p.Group, tt.groups)
			}
			for k, rep := range p.Reps {
				if p.Group[rep] != k || slices.Index(p.Group, k) != rep {
					t.Fatalf("representative %d of group %d is not its first child", rep, k)
				}
			}
		})
	}
}

// Validating one representative per group gives every child exactly the
// issues validating each child alone gives.
func TestGroupedIssuesEqualChildByChild(t *testing.T) {
	l := newLoader(t)
	var children []string
	variants := []string{
		`{"role": "r", "tools": ["fs.read"], "paths": [], "budget_tokens": 1, "id": "%d"}`,
		`{"role": "", "tools": ["fs.read"], "paths": [], "budget_tokens": 1, "id": "%d"}`,
		`{"role": "r", "tools": [], "paths": [], "budget_tokens": 4e4, "brief": "%d"}`,
		`{"role": "r", "tools": ["fs.read"], "paths": [], "budget_tokens": 1, "id": "", "x%d": 1}`,
		`{"role": "r", "tools": ["fs.read"], "paths": [], "budget_tokens": 1, "model": %d}`,
	}
	for i := 0; i < 40; i++ {
		children = append(children, fmt.Sprintf(variants[i%len(variants)], i))
	}
	p, err := l.Plan(context.Background(), "plan.json", []byte(`{"plan": [`+strings.Join(children, ",")+`]}`))
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Reps) >= len(children)/2 {
		t.Fatalf("%d groups for %d children: grouping did nothing", len(p.Reps), len(children))
	}
	for i, c := range children {
		alone, err := l.Plan(context.Background(), "plan.json", []byte(`{"plan": [`+c+`]}`))
		if err != nil {
			t.Fatal(err)
		}
		var got, want []string
		for _, is := range p.SchemaViolations() {
			if is.Child == i && !strings.Contains(is.Message, "is not unique") { // plan-wide, not per child
				got = append(got, is.Field+" "+is.Message)
			}
		}
		for _, is := range alone.SchemaViolations() {
			want = append(want, is.Field+" "+is.Message)
		}
		if !slices.Equal(got, want) {
			t.Errorf("child %d: grouped %q, alone %q", i, got, want)
		}
	}
}
