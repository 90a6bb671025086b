package benchplan

import (
	"bytes"
	"encoding/json"
	"testing"
)

func TestGenerate(t *testing.T) {
	data := Generate(Default(1000))
	var doc struct {
		Plan []map[string]any
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Plan) != 1000 {
		t.Fatalf("%d children", len(doc.Plan))
	}
	refused := 0
	for _, c := range doc.Plan {
		if bytes.Contains(mustJSON(c), []byte("shell.run")) || bytes.Contains(mustJSON(c), []byte("~/")) || c["budget_tokens"] == 5e6 {
			refused++
		}
	}
	if refused != 1000/33 {
		t.Fatalf("%d children ask for too much, want %d", refused, 1000/33)
	}
	if !bytes.Equal(data, Generate(Default(1000))) {
		t.Fatal("two generations differ")
	}
}

func mustJSON(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}

// A distinct plan has no two children alike, and refuses 1% of them.
func TestGenerateDistinct(t *testing.T) {
	data := Generate(Distinct(1000))
	var doc struct {
		Plan []map[string]any
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	refused := 0
	for _, c := range doc.Plan {
		delete(c, "id")
		delete(c, "brief")
		key := string(mustJSON(c))
		if seen[key] {
			t.Fatalf("two children alike: %s", key)
		}
		seen[key] = true
		if bytes.Contains(mustJSON(c), []byte("shell.run")) || bytes.Contains(mustJSON(c), []byte("~/")) || c["budget_tokens"].(float64) > 200000 {
			refused++
		}
	}
	if len(doc.Plan) != 1000 || refused != 10 {
		t.Fatalf("%d children, %d asking for too much; want 1000 and 10", len(doc.Plan), refused)
	}
}

// A tools-only plan refuses only by a tool, which PolicyExcepting's
// exceptions name.
func TestGenerateToolsOnly(t *testing.T) {
	o := Distinct(300)
	o.RefusedEvery, o.ToolsOnly = 2, true
	var doc struct {
		Plan []map[string]any
	}
	if err := json.Unmarshal(Generate(o), &doc); err != nil {
		t.Fatal(err)
	}
	refused := 0
	for _, c := range doc.Plan {
		b := mustJSON(c)
		if bytes.Contains(b, []byte("~/")) || c["budget_tokens"].(float64) >= 5e6 {
			t.Fatalf("a child refused by more than a tool: %s", b)
		}
		if bytes.Contains(b, []byte("shell.run")) {
			refused++
		}
	}
	if refused != 150 {
		t.Fatalf("%d children ask for shell.run, want 150", refused)
	}
	var policy struct {
		Exceptions []struct{ Rule, Tool string }
	}
	if err := json.Unmarshal([]byte(PolicyExcepting), &policy); err != nil || len(policy.Exceptions) != 2 || policy.Exceptions[0].Tool != "shell.run" {
		t.Fatalf("PolicyExcepting: %+v, %v", policy, err)
	}
}
