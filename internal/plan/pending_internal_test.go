package plan

import (
	"context"
	"testing"

	"github.com/spawngate/spawngate/internal/document"
)

// A key the schema knows but no check reads yet is refused in a plan's own
// policy block at its line and column, as the schema's problems are: the
// refusal comes after the schema, from a document whose place is known.
func TestPendingKeyOfAPlansOwnPolicyIsPlaced(t *testing.T) {
	pending["allowed_tools"] = true
	t.Cleanup(func() { delete(pending, "allowed_tools") })
	l, err := NewLoader(document.DefaultLimits)
	if err != nil {
		t.Fatal(err)
	}
	doc := "plan:\n  - {role: r, tools: [fs.read], paths: [], budget_tokens: 1}\npolicy:\n  workspace_root: /ws\n  budget_cap_tokens: 1\n  allowed_tools: [fs.read]\n"
	_, err = l.Plan(context.Background(), "plan.yaml", []byte(doc))
	want := `plan.yaml:6:18: /policy/allowed_tools: "allowed_tools" is not supported by this build of spawngate yet`
	if err == nil || err.Error() != want {
		t.Errorf("got  %v\nwant %s", err, want)
	}
}
