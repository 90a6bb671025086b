package plan_test

import (
	"context"
	"testing"
)

// A role profile's workspace_root must lie inside the operator policy's
// own, by the rule paths.escape applies to a path: the root itself or
// below it after a slash. Anything else is a policy error naming the
// profile's root, so an operator learns of it at load time and no child
// of that role is judged against two roots that share nothing.
func TestProfileRootsLieInsideThePolicyRoot(t *testing.T) {
	l := newLoader(t)
	for _, tc := range []struct {
		root, profile string
		err           string
	}{
		{"/repo/ws", "/repo/ws", ""},
		{"/repo/ws", "/repo/ws/docs", ""},
		{"/repo/ws", "/repo/ws/docs/api", ""},
		{"/", "/srv", ""},
		{"/", "/", ""},
		{"/repo/ws", "/repo/ws-old", `op.json: /roles/team~1docs/workspace_root: "/repo/ws-old" is not inside the policy's own workspace_root "/repo/ws": a role profile can only narrow it`},
		{"/repo/ws", "/repo", `op.json: /roles/team~1docs/workspace_root: "/repo" is not inside the policy's own workspace_root "/repo/ws": a role profile can only narrow it`},
		{"/repo/ws", "/", `op.json: /roles/team~1docs/workspace_root: "/" is not inside the policy's own workspace_root "/repo/ws": a role profile can only narrow it`},
		{"/repo/ws", "/srv/ws", `op.json: /roles/team~1docs/workspace_root: "/srv/ws" is not inside the policy's own workspace_root "/repo/ws": a role profile can only narrow it`},
	} {
		doc := `{"allowed_tools": ["fs.read"], "budget_cap_tokens": 1, "workspace_root": "` + tc.root + `",
			"roles": {"a": {"allow_write": false}, "team/docs": {"workspace_root": "` + tc.profile + `"}}}`
		_, err := l.Policy(context.Background(), "op.json", []byte(doc))
		switch {
		case tc.err == "" && err != nil:
			t.Errorf("root %s, profile root %s: %v", tc.root, tc.profile, err)
		case tc.err != "" && (err == nil || err.Error() != tc.err):
			t.Errorf("root %s, profile root %s:\n got %v\nwant %s", tc.root, tc.profile, err, tc.err)
		}
	}
}

// The keys of role profiles and plan limits are read by checks now: a
// policy may set them.
func TestProfilesAndPlanLimitsAreAccepted(t *testing.T) {
	l := newLoader(t)
	op := `{"allowed_tools": ["fs.read"], "budget_cap_tokens": 1, "workspace_root": "/repo/ws", "max_children": 5, "max_total_budget_tokens": 10,
		"unknown_roles": "refuse", "roles": {"doc-reader": {"allowed_tools": ["fs.read"], "budget_cap_tokens": 1}}}`
	if _, err := l.Policy(context.Background(), "op.json", []byte(op)); err != nil {
		t.Fatal(err)
	}
	doc := `{"policy": {"allowed_tools": ["fs.read"], "budget_cap_tokens": 1, "workspace_root": "/repo/ws", "max_children": 5, "max_total_budget_tokens": 10},
		"plan": [{"role": "r", "tools": ["fs.read"], "paths": [], "budget_tokens": 1}]}`
	if _, err := l.Plan(context.Background(), "plan.json", []byte(doc)); err != nil {
		t.Fatal(err)
	}
}
