package judge_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/spawngate/spawngate/internal/judge"
)

// Every problem of an operator policy is said at its line and column,
// those found after the schema (a role profile's root, a folder of checks
// the policy names) as well as the schema's own: from a file (New) and
// from memory (NewWithPolicy) alike, in YAML and in JSON.
func TestPolicyProblemsAfterTheSchemaArePlaced(t *testing.T) {
	const head = "allowed_tools: [fs.read]\nworkspace_root: /repo/ws\nbudget_cap_tokens: 1000\n"
	for _, tc := range []struct {
		name, file, doc string
		memory          bool // NewWithPolicy, not New
		want            string
	}{
		{"a bad value (the schema's, placed as before)", "policy.yaml", "allowed_tools: [fs.read, 3]\nworkspace_root: /repo/ws\nbudget_cap_tokens: 1000\n", false,
			"policy.yaml:1:26: /allowed_tools/1: must be a string, not a number"},
		{"a role profile outside the root", "policy.yaml", head + "roles:\n  deployer:\n    workspace_root: /elsewhere\n", false,
			`policy.yaml:6:21: /roles/deployer/workspace_root: "/elsewhere" is not inside the policy's own workspace_root "/repo/ws": a role profile can only narrow it`},
		{"a role profile outside the root, in JSON", "policy.json", `{"allowed_tools": ["fs.read"], "workspace_root": "/repo/ws", "budget_cap_tokens": 1000,
 "roles": {"deployer": {"workspace_root": "/repo/ws-old"}}}`, false,
			`policy.json:2:43: /roles/deployer/workspace_root: "/repo/ws-old" is not inside the policy's own workspace_root "/repo/ws": a role profile can only narrow it`},
		{"a folder of checks that is missing", "policy.yaml", head + "checks:\n  - ./nope\n", false,
			"policy.yaml:5:5: /checks/0: folder nope cannot be read: no such file or directory"},
		{"a folder of checks that holds no module", "policy.yaml", head + "checks: [./empty, ./empty]\n", false,
			"policy.yaml:4:10: /checks/0: folder empty holds no Rego modules (*.rego files other than *_test.rego): a folder of checks must hold at least one check"},
		{"a relative folder of checks in memory", "policy.yaml", head + "checks: [/abs, mine]\n", true,
			`policy.yaml:4:16: /checks/1: folder "mine" is relative, and this policy has no file it could be read from: name the folder by an absolute path`},
		{"a role profile outside the root, in memory", "policy.yaml", head + "roles: {r: {workspace_root: /other}}\n", true,
			`policy.yaml:4:29: /roles/r/workspace_root: "/other" is not inside the policy's own workspace_root "/repo/ws": a role profile can only narrow it`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			write(t, dir, map[string]string{tc.file: tc.doc, "empty/README": "no checks here\n"})
			var err error
			if tc.memory {
				_, err = judge.NewWithPolicy(context.Background(), judge.DefaultOptions(), tc.file, []byte(tc.doc))
			} else {
				t.Chdir(dir)
				_, err = judge.New(context.Background(), judge.DefaultOptions(), tc.file)
			}
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

// A problem of a bundle's operator policy is said in the data file that
// holds it, at its line and column and its pointer there, as a problem its
// strict reading finds; every problem of the schema, not only the first.
func TestBundlePolicyProblemsArePlacedInTheirDataFile(t *testing.T) {
	for _, tc := range []struct {
		name  string
		files map[string]string
		want  []string
	}{
		{"a role profile outside the root", map[string]string{"spawngate/policy/data.json": `{"allowed_tools": ["fs.read"], "workspace_root": "/repo/ws", "budget_cap_tokens": 1,
 "roles": {"r": {"workspace_root": "/other"}}}`},
			[]string{`B/spawngate/policy/data.json:2:36: /roles/r/workspace_root: "/other" is not inside the policy's own workspace_root "/repo/ws": a role profile can only narrow it`}},
		{"two problems of the schema, in YAML", map[string]string{"spawngate/policy/data.yaml": "allowed_tools: [fs.read, 3]\nworkspace_root: /repo/ws\nbudget_cap_tokens: x\n"},
			[]string{"B/spawngate/policy/data.yaml:1:26: /allowed_tools/1: must be a string, not a number (and 1 more problem)",
				"B/spawngate/policy/data.yaml:3:20: /budget_cap_tokens: must be a whole number, not a string"}},
		{"a profile in a deeper file", map[string]string{
			"spawngate/policy/data.yaml":       "allowed_tools: [fs.read]\nworkspace_root: /repo/ws\nbudget_cap_tokens: 1\n",
			"spawngate/policy/roles/data.yaml": "# the roles\nr:\n  workspace_root: /other\n"},
			[]string{`B/spawngate/policy/roles/data.yaml:3:19: /r/workspace_root: "/other" is not inside the policy's own workspace_root "/repo/ws": a role profile can only narrow it`}},
		{"other data beside the policy's own file", map[string]string{
			"data.json":                  `{"other": 1}`,
			"spawngate/policy/data.yaml": "# the policy\nallowed_tools: [fs.read]\nworkspace_root: /repo/ws\n"},
			[]string{`B/data.json:1:11: /other: a bundle's data may hold only the operator policy, at /spawngate/policy: the checks read only their input`}},
		{"a key missing from the policy", map[string]string{"spawngate/policy/data.yaml": "# the policy\nallowed_tools: [fs.read]\nworkspace_root: /repo/ws\n"},
			[]string{`B/spawngate/policy/data.yaml:2:1: /budget_cap_tokens: required key "budget_cap_tokens" is missing`}},
		{"other data from files below it: about the bundle", map[string]string{
			"data.json":         `{"spawngate": {"policy": {"allowed_tools": ["fs.read"], "workspace_root": "/repo/ws", "budget_cap_tokens": 1}}}`,
			"teams/a/data.json": `{"x": 1}`},
			[]string{`B: /teams: a bundle's data may hold only the operator policy, at /spawngate/policy: the checks read only their input`}},
		{"other data, in the bundle's one data file", map[string]string{"data.json": "{\"spawngate\": {\"policy\": {}},\n \"teams\": {}}"},
			[]string{"B/data.json:2:11: /teams: a bundle's data may hold only the operator policy, at /spawngate/policy: the checks read only their input"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			tc.files["checks/no_http.rego"] = noHTTP
			write(t, dir, tc.files)
			opts := judge.DefaultOptions()
			opts.Bundle = dir
			_, err := judge.New(context.Background(), opts, "")
			var je *judge.Error
			if !errors.As(err, &je) || je.Kind != judge.Document {
				t.Fatalf("error %v (%T), want a document error", err, err)
			}
			got := []string{je.Error()}
			for _, m := range je.More {
				got = append(got, m.Error())
			}
			want := strings.Join(tc.want, "\n")
			if g := strings.ReplaceAll(strings.Join(got, "\n"), dir, "B"); g != want {
				t.Errorf("got\n%s\nwant\n%s", g, want)
			}
		})
	}
}
