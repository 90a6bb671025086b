package plan_test

import (
	"context"
	"testing"

	"github.com/spawngate/spawngate/internal/document"
	"github.com/spawngate/spawngate/internal/plan"
)

func TestMaxChildren(t *testing.T) {
	lim := document.DefaultLimits
	lim.MaxChildren = 3
	l, err := plan.NewLoader(lim)
	if err != nil {
		t.Fatal(err)
	}
	child := `{"role": "r", "tools": ["fs.read"], "paths": [], "budget_tokens": 1}`
	if _, err := l.Plan(context.Background(), "three.json", []byte(`{"plan": [`+child+`,`+child+`,`+child+`]}`)); err != nil {
		t.Fatalf("three children at a limit of three: %v", err)
	}
	_, err = l.Plan(context.Background(), "four.json", []byte(`{"plan": [`+child+`,`+child+`,`+child+`,`+child+`]}`))
	if err == nil || err.Error() != "four.json: /plan: 4 children, more than 3 (limit max-children)" {
		t.Fatalf("four children at a limit of three: %v", err)
	}
}
