package document

import (
	"context"
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
