package plan

import (
	"bytes"
	"context"
	"testing"

	"github.com/spawngate/spawngate/internal/benchplan"
	"github.com/spawngate/spawngate/internal/document"
	"github.com/spawngate/spawngate/internal/memo"
)

// A plan of more kinds of children than the schema step's memory keeps
// leaves it as it was (see Loader.Plan); one that fits is remembered.
func TestALargeDistinctPlanLeavesTheSchemaMemoryAlone(t *testing.T) {
	l, err := NewLoader(document.DefaultLimits)
	if err != nil {
		t.Fatal(err)
	}
	load := func(n int) {
		t.Helper()
		if _, err := l.Plan(context.Background(), "plan.json", benchplan.Generate(benchplan.Distinct(n))); err != nil {
			t.Fatal(err)
		}
	}
	// The first child is validated with the document itself, the others
	// one by one, and those are remembered.
	load(3)
	if n := l.seen.Len(); n != 2 {
		t.Fatalf("after a plan of 3 kinds of children: %d remembered, want 2", n)
	}
	load(l.seen.Cap() + 1)
	if n := l.seen.Len(); n != 2 {
		t.Errorf("after a plan of %d kinds: %d remembered, want the 2 of before", l.seen.Cap()+1, n)
	}
	load(l.seen.Cap())
	if n := l.seen.Len(); n != l.seen.Cap()-1 {
		t.Errorf("a plan of exactly %d kinds: %d remembered, want %d", l.seen.Cap(), n, l.seen.Cap()-1)
	}
	// Nor is the document's shell remembered: a plan of too many kinds is
	// validated as if there were no memory.
	shells := l.shells.Len()
	doc := benchplan.Generate(benchplan.Distinct(l.seen.Cap() + 1))
	doc = bytes.Replace(doc, []byte(`"role":"worker-0"`), []byte(`"role":"first-of-its-kind"`), 1)
	if !bytes.Contains(doc, []byte("first-of-its-kind")) {
		t.Fatal("the plan's first child was not renamed")
	}
	if _, err := l.Plan(context.Background(), "plan.json", doc); err != nil {
		t.Fatal(err)
	}
	if n := l.shells.Len(); n != shells {
		t.Errorf("after a plan of %d kinds: %d shells remembered, want the %d of before", l.seen.Cap()+1, n, shells)
	}
}

// The shell's key holds the rest of the document and its first child: it
// is remembered only when the shell holds that one child. A schema that
// makes the loader validate every child with the document (no schema of
// one child) leaves shells alone, or a document would be answered for by
// another with the same first child.
func TestTheShellMemoryHoldsOneChild(t *testing.T) {
	s, err := compileSchemas()
	if err != nil {
		t.Fatal(err)
	}
	s.child = nil
	l := &Loader{limits: document.DefaultLimits, schemas: s, seen: memo.New[[]schemaError](memo.Size), shells: memo.New[[]schemaError](shellMemoSize)}
	const first = `{"role": "r", "tools": ["fs.read"], "paths": [], "budget_tokens": 1}`
	for _, tc := range []struct {
		second string
		issues int
	}{
		{`{"role": "s", "tools": ["fs.read"], "paths": [], "budget_tokens": 1}`, 0},
		{`{"role": "s", "tools": ["fs.read"], "paths": [], "budget_tokens": "1"}`, 1},
	} {
		p, err := l.Plan(context.Background(), "plan.json", []byte(`{"plan": [`+first+`, `+tc.second+`]}`))
		if err != nil {
			t.Fatal(err)
		}
		if n := len(p.SchemaViolations()); n != tc.issues {
			t.Errorf("second child %s: %d issues %v, want %d", tc.second, n, p.SchemaViolations(), tc.issues)
		}
	}
}

// What the schema said of a document's shell is found again only for the
// same rest of the document around the same first child: a document that
// differs outside its children is validated again.
func TestTheShellMemoryKeysOnTheRestOfTheDocument(t *testing.T) {
	l, err := NewLoader(document.DefaultLimits)
	if err != nil {
		t.Fatal(err)
	}
	const child = `{"role": "r", "tools": ["fs.read"], "paths": ["/repo/a"], "budget_tokens": 10}`
	load := func(doc string) error {
		_, err := l.Plan(context.Background(), "plan.json", []byte(doc))
		return err
	}
	for i := range 2 {
		if err := load(`{"plan": [` + child + `]}`); err != nil {
			t.Fatalf("load %d: %v", i, err)
		}
	}
	if n := l.shells.Len(); n != 1 {
		t.Fatalf("one document loaded twice: %d shells remembered, want 1", n)
	}
	for _, doc := range []string{
		`{"plan": [` + child + `], "extra": 1}`,
		`{"plan": [` + child + `], "policy": {"allowed_tools": "fs.read"}}`,
		`{"plan": [{"role": "r", "tools": ["fs.read"], "paths": ["/repo/a"], "budget_tokens": "10"}]}`,
	} {
		if err := load(doc); err == nil {
			p, _ := l.Plan(context.Background(), "plan.json", []byte(doc))
			if len(p.GroupViolations) == 0 || len(p.GroupViolations[0]) == 0 {
				t.Errorf("%s: no problem found, as if the valid document's shell answered for it", doc)
			}
		}
	}
	if n := l.shells.Len(); n != 4 {
		t.Errorf("%d shells remembered, want 4 (each document its own)", n)
	}
}
