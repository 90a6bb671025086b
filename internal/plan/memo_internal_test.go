package plan

import (
	"context"
	"fmt"
	"strings"
	"testing"
)

// A plan of more kinds of children than the schema step's memory keeps
// leaves it as it was (see Loader.Plan); one that fits is remembered.
func TestALargeDistinctPlanLeavesTheSchemaMemoryAlone(t *testing.T) {
	l, err := NewLoader(DefaultLimits)
	if err != nil {
		t.Fatal(err)
	}
	load := func(n int) {
		t.Helper()
		var b strings.Builder
		b.WriteString(`{"plan": [`)
		for i := range n {
			if i > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, `{"role": "r%d", "tools": ["fs.read"], "paths": ["/repo/t%d"], "budget_tokens": %d}`, i, i, i+1)
		}
		b.WriteString("]}")
		if _, err := l.Plan(context.Background(), "plan.json", []byte(b.String())); err != nil {
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
}
