package judge

import (
	"os"
	"path/filepath"
	"testing"
)

func TestLooksNested(t *testing.T) {
	examples := filepath.Join("..", "..", "examples")
	for file, want := range map[string]bool{
		"trees/plan.yaml":         true,
		"trees/widened-plan.yaml": true,
		"authorized-plan.yaml":    false,
		"refused-plan.json":       false,
		"briefs/plan.yaml":        false,
	} {
		data, err := os.ReadFile(filepath.Join(examples, file))
		if err != nil {
			t.Fatal(err)
		}
		if got := LooksNested(data); got != want {
			t.Errorf("LooksNested(%s) = %v, want %v", file, got, want)
		}
	}
	for doc, want := range map[string]bool{
		`{"plan": [{"role": "a", "children": [{"role": "b"}]}]}`:      true,
		`{"parent": {"role": "lead"}, "plan": []}`:                    true,
		"parent:\n  role: lead\n":                                     true,
		`{"plan": [{"role": "children", "brief": "no parent here"}]}`: false,
	} {
		if got := LooksNested([]byte(doc)); got != want {
			t.Errorf("LooksNested(%s) = %v, want %v", doc, got, want)
		}
	}
}
