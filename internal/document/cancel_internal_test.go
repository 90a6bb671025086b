package document

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
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

// Each reader stops when its context ends, also deep inside a large
// document.
func TestReadingStopsWhenTheContextEnds(t *testing.T) {
	var children []string
	for i := range 3 * checkEvery {
		children = append(children, fmt.Sprintf(`{"role": "r%d", "tools": ["fs.read"], "paths": [], "budget_tokens": 1}`, i))
	}
	jsonDoc := []byte(`{"plan": [` + strings.Join(children, ",") + `]}`)
	yamlDoc := []byte("plan:\n  - " + strings.Join(children, "\n  - ") + "\n")
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	for name, run := range map[string]func(context.Context) error{
		"json": func(ctx context.Context) error {
			_, err := Decode(ctx, "p.json", jsonDoc, JSON, DefaultLimits)
			return err
		},
		"yaml": func(ctx context.Context) error {
			_, err := Decode(ctx, "p.yaml", yamlDoc, YAML, DefaultLimits)
			return err
		},
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
	} {
		if err := run(context.Background()); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if err := run(cancelled); !errors.Is(err, context.Canceled) {
			t.Errorf("%s with its context cancelled: %v, want context.Canceled", name, err)
		}
	}
}
