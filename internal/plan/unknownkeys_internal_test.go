package plan

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/spawngate/spawngate/internal/document"
	"github.com/spawngate/spawngate/internal/document/documenttest"
)

// problemsOf loads a document and returns the pointers of every problem
// the loader found in it, whole-document and per child, as a report would
// place them.
func problemsOf(t testing.TB, l *Loader, shape, source string, data []byte) []string {
	t.Helper()
	var ptrs []string
	if shape == "policy" {
		_, err := l.Policy(context.Background(), source, data)
		var e *document.Error
		if !errors.As(err, &e) {
			t.Fatalf("%s: %v, want a document error", shape, err)
		}
		ptrs = append(ptrs, e.Pointer)
		for _, m := range e.More {
			ptrs = append(ptrs, m.Pointer)
		}
		return ptrs
	}
	p, err := l.Plan(context.Background(), source, data)
	var e *document.Error
	if errors.As(err, &e) {
		ptrs = append(ptrs, e.Pointer)
		for _, m := range e.More {
			ptrs = append(ptrs, m.Pointer)
		}
		return ptrs
	}
	if err != nil {
		t.Fatalf("%s: %v", shape, err)
	}
	for _, v := range p.SchemaViolations() {
		ptrs = append(ptrs, p.Pointer(v.Child)+v.Field)
	}
	return ptrs
}

// Reading a document of unknown keys, validating it and saying what is
// wrong with it allocate in proportion to the keys, in JSON and YAML,
// wherever the keys are: no step builds a message or a list per key that
// names every other key.
func TestUnknownKeysAllocateLinearly(t *testing.T) {
	const n = 1000
	l, err := NewLoader(document.DefaultLimits)
	if err != nil {
		t.Fatal(err)
	}
	for _, shape := range documenttest.UnknownKeysShapes {
		for _, yaml := range []bool{false, true} {
			source := "doc.json"
			if yaml {
				source = "doc.yaml"
			}
			t.Run(shape+"/"+source, func(t *testing.T) {
				var allocs [2]float64
				for i, keys := range []int{n, 4 * n} {
					data := documenttest.UnknownKeys(shape, keys, yaml)
					allocs[i] = testing.AllocsPerRun(2, func() { problemsOf(t, l, shape, source, data) })
				}
				if ratio := allocs[1] / allocs[0]; ratio > 6 {
					t.Errorf("%.0f allocations for %d unknown keys, %.0f for %d: %.1f times for 4 times the keys, want about 4",
						allocs[0], n, allocs[1], 4*n, ratio)
				}
			})
		}
	}
}

// A document, or a child, of more schema problems than MaxSchemaProblems
// lists the first of them in pointer order and counts the others, in one
// problem at the top of the document or the child that holds them: it is
// refused as it was, at the cost of the problems listed. A document whose
// own problems come after a child's many is still refused as a document,
// naming the first of its own.
func TestSchemaProblemsAreBounded(t *testing.T) {
	const max = MaxSchemaProblems
	l, err := NewLoader(document.DefaultLimits)
	if err != nil {
		t.Fatal(err)
	}
	keys := func(prefix string, n int) string {
		var b strings.Builder
		for i := range n {
			fmt.Fprintf(&b, `"%s%06d": 1, `, prefix, i)
		}
		return b.String()
	}
	const child = `"role": "r", "tools": ["fs.read"], "paths": [], "budget_tokens": 1`
	wrongTools := `[` + strings.TrimSuffix(strings.Repeat(`1, `, 3*max), ", ") + `]`
	want := func(first, last string, n int) []string {
		return []string{fmt.Sprintf("%d more schema problems, not listed: at most %d are", n, max), first, last}
	}
	for _, tc := range []struct {
		name, doc string
		policy    bool
		document  bool     // refused as a document, else child 0 has the problems
		top       string   // where the count is
		problems  []string // the count, then the first and the last listed
	}{
		{"unknown keys", `{` + keys("k", 3*max) + `"plan": [{` + child + `}]}`, false, true, "",
			want(`/k000000: unknown key "k000000" (allowed: parent, plan, policy)`, `/k000999: unknown key "k000999" (allowed: parent, plan, policy)`, 2*max)},
		{"values of the wrong type", `{"policy": {"allowed_tools": ` + wrongTools + `, "workspace_root": "/ws", "budget_cap_tokens": 1}, "plan": [{` + child + `}]}`, false, true, "",
			want(`/policy/allowed_tools/0: must be a string, not a number`, `/policy/allowed_tools/999: must be a string, not a number`, 2*max)},
		{"a child's unknown keys", `{"plan": [{` + keys("k", 3*max) + child + `}]}`, false, false, "",
			want(`/k000000: unknown key "k000000"`, `/k000999: unknown key "k000999"`, 2*max)},
		{"the operator's policy", `{` + keys("k", 3*max) + `"allowed_tools": ["fs.read"], "workspace_root": "/ws", "budget_cap_tokens": 1}`, true, true, "",
			want(`/k000000: unknown key "k000000"`, `/k000999: unknown key "k000999"`, 2*max)},
		// The child's thousand come first; the document's own five still
		// refuse it, named by the first of them.
		{"a document's problems after a child's", `{` + keys("z", 5) + `"plan": [{` + keys("k", max) + child + `}]}`, false, true, "",
			[]string{fmt.Sprintf("4 more schema problems, not listed: at most %d are", max), `/z000000: unknown key "z000000"`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for range 2 { // the same twice, whatever order the validator finds them in
				var lines []string
				var err error
				if tc.policy {
					_, err = l.Policy(context.Background(), "doc.json", []byte(tc.doc))
				} else {
					var p *Plan
					p, err = l.Plan(context.Background(), "doc.json", []byte(tc.doc))
					if err == nil {
						for _, v := range p.SchemaViolations() {
							lines = append(lines, v.Field+": "+v.Message)
						}
					}
				}
				var e *document.Error
				if errors.As(err, &e) {
					for _, m := range append([]*document.Error{e}, e.More...) {
						lines = append(lines, m.Pointer+": "+m.Msg)
					}
				} else if err != nil {
					t.Fatal(err)
				}
				if (e != nil) != tc.document {
					t.Fatalf("refused as a document: %v, want %v (%d problems)", e != nil, tc.document, len(lines))
				}
				if got != nil && !slices.Equal(got, lines) {
					t.Fatal("the problems differ from one reading to the next")
				}
				got = lines
			}
			if len(tc.problems) == 2 {
				// The child's problems are not the document's.
				if len(got) != 2 || got[0] != tc.top+": "+tc.problems[0] || !strings.HasPrefix(got[1], tc.problems[1]) {
					t.Fatalf("problems %q, want %q", got, tc.problems)
				}
				return
			}
			if len(got) != max+1 || got[0] != tc.top+": "+tc.problems[0] ||
				!strings.HasPrefix(got[1], tc.problems[1]) || !strings.HasPrefix(got[max], tc.problems[2]) {
				t.Fatalf("%d problems: %q, %q ... %q; want %d: %q, %q ... %q", len(got), got[0], got[1], got[len(got)-1], max+1, tc.problems[0], tc.problems[1], tc.problems[2])
			}
		})
	}
}
