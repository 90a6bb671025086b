package judge_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/spawngate/spawngate/internal/judge"
	"github.com/spawngate/spawngate/internal/report"
)

// oneFile is the essay's one file: the operator's policy and the plan. Its
// block sets roles, which only an operator policy may.
const oneFile = `policy:
  allowed_tools: [fs.read, http.get]
  workspace_root: /repo/workspace
  budget_cap_tokens: 200000
  roles:
    reader: {allowed_tools: [fs.read]}
plan:
  - role: reader
    tools: [fs.read, http.get]
    paths: [/repo/workspace/docs]
    budget_tokens: 40000
`

// inPlan builds a gate from the policy block of the plan file name under
// dir and judges that same file.
func inPlan(t *testing.T, opts judge.Options, name string) (*judge.Gate, report.Result, error) {
	t.Helper()
	data, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	g, err := judge.NewWithPlanPolicy(context.Background(), opts, name, "", data)
	if err != nil {
		return nil, report.Result{}, err
	}
	res, err := g.JudgeBytes(context.Background(), name, data, report.DefaultMaxListed)
	return g, res, err
}

// The block is the operator policy, applied once: the verdict is the
// operator's (a role profile refuses http.get), the result names the
// operator alone, and says where its policy came from.
func TestPolicyInPlanIsTheOperatorsAppliedOnce(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, map[string]string{"plan.yaml": oneFile})
	name := filepath.Join(dir, "plan.yaml")
	g, res, err := inPlan(t, judge.DefaultOptions(), name)
	if err != nil {
		t.Fatal(err)
	}
	if res.Verdict != report.Block || rulesOf(res) != "tools.allowlist" {
		t.Errorf("verdict %s, rules %q; want block by tools.allowlist alone (the role profile, once)", res.Verdict, rulesOf(res))
	}
	if !slices.Equal(res.Policies, []string{"operator"}) || !res.PolicyInPlan {
		t.Errorf("policies %v, policy in plan %v; want [operator], true", res.Policies, res.PolicyInPlan)
	}
	if src := g.Sources(); src.Policy != name {
		t.Errorf("the gate names its policy %q, want the plan file %q", src.Policy, name)
	}

	// Another document judged by the same gate is a plan like any other:
	// its own policy narrows the operator's.
	other := []byte("policy:\n  allowed_tools: [fs.read]\n  workspace_root: /repo/workspace\n  budget_cap_tokens: 100\n" +
		"plan:\n  - {role: writer, tools: [fs.read], paths: [], budget_tokens: 50}\n")
	res, err = g.JudgeBytes(context.Background(), "other.yaml", other, report.DefaultMaxListed)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(res.Policies, []string{"operator", "plan"}) || res.PolicyInPlan {
		t.Errorf("another plan: policies %v, policy in plan %v; want [operator plan], false", res.Policies, res.PolicyInPlan)
	}
}

// Every problem of the block is placed in the plan file, under /policy,
// by its real name, line and column.
func TestPolicyInPlanErrorsArePlacedInThePlanFile(t *testing.T) {
	for _, tc := range []struct {
		name, doc string
		want      string
	}{
		{"a bad value", "policy:\n  allowed_tools: [fs.read, 3]\n  workspace_root: /repo\n  budget_cap_tokens: 1\nplan: []\n",
			"plan.yaml:2:28: /policy/allowed_tools/1: must be a string, not a number"},
		{"no policy block", "plan:\n  - {role: r, tools: [fs.read], paths: [], budget_tokens: 1}\n",
			`plan.yaml:1:1: /policy: required key "policy" is missing: the operator's policy is to be read from this document's policy block`},
		{"a block that is not a mapping", "plan: []\npolicy: [fs.read]\n",
			"plan.yaml:2:9: /policy: must be an object, not a list"},
		{"a role profile outside the root (placed after the schema)", "policy:\n  allowed_tools: [fs.read]\n  workspace_root: /repo\n  budget_cap_tokens: 1\n  roles:\n    r: {workspace_root: /other}\nplan: []\n",
			`plan.yaml:6:25: /policy/roles/r/workspace_root: "/other" is not inside the policy's own workspace_root "/repo": a role profile can only narrow it`},
		{"a duplicate key in the block", "policy:\n  allowed_tools: [fs.read]\n  allowed_tools: [fs.read]\nplan: []\n",
			`plan.yaml:3:3: /policy: duplicate key "allowed_tools": consumers disagree on which value wins`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			write(t, dir, map[string]string{"plan.yaml": tc.doc})
			t.Chdir(dir)
			_, _, err := inPlan(t, judge.DefaultOptions(), "plan.yaml")
			var je *judge.Error
			if !errors.As(err, &je) || je.Kind != judge.Document {
				t.Fatalf("error %v (%T), want a document error", err, err)
			}
			if got := je.Error(); got != tc.want {
				t.Errorf("got  %q\nwant %q", got, tc.want)
			}
		})
	}
}

// A relative folder of checks in the block is read from the plan file's
// folder, as from a policy file's; from standard input, which has no
// folder, it is refused at its place.
func TestPolicyInPlanChecksAreReadFromThePlanFilesFolder(t *testing.T) {
	dir := t.TempDir()
	doc := "policy:\n  allowed_tools: [fs.read, http.get]\n  workspace_root: /repo/workspace\n  budget_cap_tokens: 200000\n  checks: [mine]\n" +
		"plan:\n  - {role: r, tools: [http.get], paths: [], budget_tokens: 1}\n"
	write(t, dir, map[string]string{"sub/plan.yaml": doc, "sub/mine/no_http.rego": noHTTP})
	t.Chdir(dir) // the folder is sub/mine, not ./mine
	_, res, err := inPlan(t, judge.DefaultOptions(), filepath.Join("sub", "plan.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if rulesOf(res) != "org.no-http" {
		t.Errorf("rules %q, want org.no-http from sub/mine", rulesOf(res))
	}

	_, err = judge.NewWithPlanPolicy(context.Background(), judge.DefaultOptions(), judge.Stdin, "", []byte(doc))
	want := `<stdin>:5:12: /policy/checks/0: folder "mine" is relative, and this policy has no file it could be read from: name the folder by an absolute path`
	if err == nil || err.Error() != want {
		t.Errorf("from stdin: %v\nwant %s", err, want)
	}
}
