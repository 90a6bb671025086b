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
