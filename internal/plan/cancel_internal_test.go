package plan

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/spawngate/spawngate/internal/memo"
)

// hostileComments is an anchor, then n comment lines, then its value, then
// m aliases of it. Reading it looked at the n comment lines again for every
// alias: at 2 MB, 18 seconds under a 2-second timeout.
func hostileComments(n, m int) []byte {
	var b strings.Builder
	b.WriteString("plan:\n  - role: &r\n")
	for range n {
		b.WriteString("    # a comment\n")
	}
	b.WriteString("      reader\n    tools: &t [fs.read]\n    paths: []\n    budget_tokens: 1\n")
	for range m {
		b.WriteString("  - {role: *r, tools: *t, paths: [], budget_tokens: 1}\n")
	}
	return []byte(b.String())
}

// Every pass over a YAML document's text is linear in the document: each
// line is looked at beyond its own node at most once, however many aliases
// name what comes after it.
func TestYAMLReadingIsLinearInTheDocument(t *testing.T) {
	for _, m := range []int{1, 100, 1000} {
		data := hostileComments(20000, m)
		w := &yamlWalker{}
		v, err := parseYAMLWith(context.Background(), "plan.yaml", data, DefaultLimits, func(walker *yamlWalker) { w = walker })
		if err != nil {
			t.Fatal(err)
		}
		if got := len(v.(map[string]any)["plan"].([]any)); got != m+1 {
			t.Fatalf("%d children, want %d", got, m+1)
		}
		if lines := strings.Count(string(data), "\n"); w.text.looked > lines {
			t.Errorf("%d aliases: looked at %d lines beyond their nodes, more than the document's %d", m, w.text.looked, lines)
		}
	}
}

// Each reader and each step of the loader stops when its context ends,
// also deep inside a large document.
func TestReadingStopsWhenTheContextEnds(t *testing.T) {
	var children []string
	for i := range 3 * checkEvery {
		children = append(children, fmt.Sprintf(`{"role": "r%d", "tools": ["fs.read"], "paths": [], "budget_tokens": 1}`, i))
	}
	jsonDoc := []byte(`{"plan": [` + strings.Join(children, ",") + `]}`)
	yamlDoc := []byte("plan:\n  - " + strings.Join(children, "\n  - ") + "\n")
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	l, err := NewLoader(DefaultLimits)
	if err != nil {
		t.Fatal(err)
	}
	for name, run := range map[string]func(context.Context) error{
		"json": func(ctx context.Context) error {
			_, err := Decode(ctx, "p.json", jsonDoc, JSON, DefaultLimits)
			return err
		},
		"yaml": func(ctx context.Context) error {
			_, err := Decode(ctx, "p.yaml", yamlDoc, YAML, DefaultLimits)
			return err
		},
		"plan json": func(ctx context.Context) error { _, err := l.Plan(ctx, "p.json", jsonDoc); return err },
		"plan yaml": func(ctx context.Context) error { _, err := l.Plan(ctx, "p.yaml", yamlDoc); return err },
		"grouping": func(ctx context.Context) error {
			_, _, _, err := (&grouper{}).group(ctx, make([]any, 2*checkEvery))
			return err
		},
		"validating": func(ctx context.Context) error { return validateAll(ctx, l, jsonDoc) },
		// Placing problems reads the document again: it stops too, and a
		// document refused after its context ended is not an answer.
		"placing json": func(ctx context.Context) error {
			_, err := Locate(ctx, "p.json", jsonDoc, DefaultLimits, []string{"/plan/0/role"})
			return err
		},
		"placing yaml": func(ctx context.Context) error {
			_, err := Locate(ctx, "p.yaml", yamlDoc, DefaultLimits, []string{"/plan/0/role"})
			return err
		},
		"placing a document's problems": func(ctx context.Context) error {
			err := documentError(ctx, "p.yaml", yamlDoc, DefaultLimits, []schemaError{{"/plan/0/role", "bad"}, {"/plan/1/x", "unknown key"}})
			if e := (*Error)(nil); errors.As(err, &e) {
				return nil // the document's own error: what a context that did not end gives
			}
			return err
		},
	} {
		if err := run(context.Background()); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if err := run(cancelled); !errors.Is(err, context.Canceled) {
			t.Errorf("%s with its context cancelled: %v, want context.Canceled", name, err)
		}
	}
}

// validateAll runs the schema step alone on every child of a document.
func validateAll(ctx context.Context, l *Loader, data []byte) error {
	doc, err := Decode(context.Background(), "p.json", data, JSON, DefaultLimits)
	if err != nil {
		return err
	}
	reps := doc.(map[string]any)["plan"].([]any)
	_, _, err = l.schemas.validatePlan(ctx, doc.(map[string]any), reps, nil, true, memo.View[[]schemaError]{}, nil, nil)
	return err
}

// The schema step validates a child in tens of microseconds, and a
// thousand times that on a loaded machine: it looks at its context
// before each one, or a server told to stop would answer seconds late.
func TestValidatingStopsAtTheNextChild(t *testing.T) {
	for _, n := range []int{checkEvery / 2, 4 * 512 * runtime.GOMAXPROCS(0)} {
		ctx, cancel := context.WithCancel(context.Background())
		var calls atomic.Int64
		err := onEveryCore(ctx, 0, n, func(int) {
			calls.Add(1)
			cancel()
		})
		if !errors.Is(err, context.Canceled) {
			t.Errorf("%d children, cancelled at the first: %v, want context.Canceled", n, err)
		}
		// Each worker may finish the child it started.
		if got, most := calls.Load(), int64(runtime.GOMAXPROCS(0)); got > most {
			t.Errorf("%d children, cancelled at the first: validated %d, want at most %d", n, got, most)
		}
	}
}
