package judge_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spawngate/spawngate/internal/judge"
	"github.com/spawngate/spawngate/internal/report"
	"github.com/spawngate/spawngate/policy"
)

// noHTTP is an operator's check: no child may fetch with http.get.
const noHTTP = `# METADATA
# title: No fetching
# description: Children here never fetch.
# custom:
#   id: org.no-http
#   severity: high
package spawngate.checks.no_http

import data.spawngate.lib

deny contains lib.violation(i, "/tools", "no http here") if {
	some i, child in lib.children
	"http.get" in child.tools
}
`

const fetchingPlan = `{"plan": [{"role": "r", "tools": ["http.get"], "paths": [], "budget_tokens": 1}]}`

const operatorYAML = "allowed_tools: [fs.read, http.get]\nworkspace_root: /repo/workspace\nbudget_cap_tokens: 200000\n"

// write writes files under dir, by slash-separated name.
func write(t testing.TB, dir string, files map[string]string) {
	t.Helper()
	for name, body := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func rulesOf(res report.Result) string {
	var ids []string
	for _, c := range res.Children {
		for _, v := range c.Violations {
			ids = append(ids, v.Rule)
		}
	}
	return strings.Join(ids, " ")
}

func judgeWith(t *testing.T, opts judge.Options, policyFile, doc string) (report.Result, error) {
	t.Helper()
	g, err := judge.New(context.Background(), opts, policyFile)
	if err != nil {
		return report.Result{}, err
	}
	return g.JudgeBytes(context.Background(), "plan.json", []byte(doc), report.DefaultMaxListed)
}

// Folders of checks come from --checks and from the policy's checks field
// (relative to the policy's folder); both judge, a folder's subfolders
// too, never its tests.
func TestChecksFromFoldersAndThePolicy(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, map[string]string{
		"policy.yaml":                 operatorYAML + "checks: [mine]\n",
		"mine/deep/no_http.rego":      noHTTP,
		"mine/deep/no_http_test.rego": "package broken_test\n\nthis does not parse\n",
		"other/no_http.rego":          strings.ReplaceAll(strings.ReplaceAll(noHTTP, "org.no-http", "org.other"), "no_http", "other"),
	})
	opts := judge.DefaultOptions()
	opts.Checks = []string{filepath.Join(dir, "other")}
	g, err := judge.New(context.Background(), opts, filepath.Join(dir, "policy.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	res, err := g.JudgeBytes(context.Background(), "plan.json", []byte(fetchingPlan), 10)
	if err != nil {
		t.Fatal(err)
	}
	if got := rulesOf(res); got != "org.no-http org.other" {
		t.Fatalf("rules %q", got)
	}
	src := g.Sources()
	if len(src.Modules) != 2 || !strings.HasSuffix(src.Modules[0], filepath.Join("other", "no_http.rego")) || src.ChecksDigest == judge.ChecksDigest() {
		t.Fatalf("sources %+v", src)
	}
}

// Rules lists every rule a violation may cite, from the checks' METADATA:
// the schema step first, the built-in checks and the operator's own, each
// of these marked custom with the module that declares it.
func TestRulesNameTheOperatorsOwn(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, map[string]string{"policy.yaml": operatorYAML, "mine/no_http.rego": noHTTP})
	opts := judge.DefaultOptions()
	opts.Checks = []string{filepath.Join(dir, "mine")}
	g, err := judge.New(context.Background(), opts, filepath.Join(dir, "policy.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	rules, err := g.Rules()
	if err != nil {
		t.Fatal(err)
	}
	if len(rules) < 3 || rules[0].ID != "schema" || rules[0].Custom {
		t.Fatalf("rules %+v: want the schema step first", rules)
	}
	var custom []report.Rule
	for _, r := range rules {
		if r.Custom {
			custom = append(custom, r)
		}
	}
	if len(custom) != 1 {
		t.Fatalf("custom rules %+v, want org.no-http alone", custom)
	}
	got := custom[0]
	want := report.Rule{ID: "org.no-http", Severity: "high", Title: "No fetching", Description: "Children here never fetch.", Custom: true, File: got.File}
	if got != want || !strings.HasSuffix(got.File, filepath.Join("mine", "no_http.rego")) {
		t.Fatalf("custom rule %+v, want %+v from mine/no_http.rego", got, want)
	}
}

// Whatever a folder of checks, or a policy's checks field, cannot give is
// an error naming it: nothing to check is never a pass.
func TestChecksFolderErrors(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, map[string]string{
		"empty/readme.txt":     "no checks",
		"tests/only_test.rego": "package x_test\n",
		"policy.yaml":          operatorYAML + "checks: [missing]\n",
		"bad/c.rego":           "package spawngate.checks.c\n\ndeny contains 1 if false\n",
	})
	for _, tt := range []struct {
		name, policy string
		checks       []string
		source       string
		line         int
		want         string
	}{
		{"missing folder", "", []string{filepath.Join(dir, "nope")}, filepath.Join(dir, "nope"), 0, "cannot be read: no such file or directory"},
		{"a file, not a folder", "", []string{filepath.Join(dir, "policy.yaml")}, filepath.Join(dir, "policy.yaml"), 0, "is not a directory: name the folder that holds the .rego modules"},
		{"no modules", "", []string{filepath.Join(dir, "empty")}, filepath.Join(dir, "empty"), 0, "holds no Rego modules"},
		{"only tests", "", []string{filepath.Join(dir, "tests")}, filepath.Join(dir, "tests"), 0, "holds no Rego modules"},
		{"the policy's folder is missing", filepath.Join(dir, "policy.yaml"), nil, filepath.Join(dir, "policy.yaml"), 4, "folder " + filepath.Join(dir, "missing") + " cannot be read"},
		{"a module breaks the contract", "", []string{filepath.Join(dir, "bad")}, filepath.Join(dir, "bad", "c.rego"), 1, "no # METADATA with custom.id"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			opts := judge.DefaultOptions()
			opts.Checks = tt.checks
			opts.ListOnly = tt.policy == "" // the errors of the checks alone
			_, err := judgeWith(t, opts, tt.policy, fetchingPlan)
			var e *judge.Error
			if !errors.As(err, &e) || e.Kind != judge.Document {
				t.Fatalf("err %v, want a document error", err)
			}
			if e.Source != tt.source || e.Line != tt.line || !strings.Contains(e.Msg, tt.want) {
				t.Fatalf("error %q (source %q, line %d), want %s:%d and %q", e, e.Source, e.Line, tt.source, tt.line, tt.want)
			}
		})
	}
}

// The folders a policy names compile while the policy is validated, but
// an invalid policy is what New reports, whatever its folders hold.
func TestAnInvalidPolicyIsReportedBeforeItsChecks(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, map[string]string{
		"policy.yaml": "allowed_tools: [fs.read]\nbudget_cap_tokens: 1\nchecks: [bad]\n",
		"bad/c.rego":  "package spawngate.lib\n",
	})
	_, err := judge.New(context.Background(), judge.DefaultOptions(), filepath.Join(dir, "policy.yaml"))
	var e *judge.Error
	if !errors.As(err, &e) || e.Source != filepath.Join(dir, "policy.yaml") || e.Pointer != "/workspace_root" {
		t.Fatalf("err %v", err)
	}
	write(t, dir, map[string]string{"policy.yaml": operatorYAML + "checks: [bad]\n"})
	_, err = judge.New(context.Background(), judge.DefaultOptions(), filepath.Join(dir, "policy.yaml"))
	if !errors.As(err, &e) || e.Source != filepath.Join(dir, "bad", "c.rego") || e.Line != 1 {
		t.Fatalf("err %v", err)
	}
}

// A policy from memory has no folder: a relative checks folder is refused,
// an absolute one read.
func TestChecksOfAPolicyInMemory(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, map[string]string{"mine/no_http.rego": noHTTP})
	_, err := judge.NewWithPolicy(context.Background(), judge.DefaultOptions(), "operator.yaml", []byte(operatorYAML+"checks: [mine]\n"))
	var e *judge.Error
	if !errors.As(err, &e) || e.Pointer != "/checks/0" || !strings.Contains(e.Msg, "is relative") {
		t.Fatalf("relative folder: %v", err)
	}
	g, err := judge.NewWithPolicy(context.Background(), judge.DefaultOptions(), "operator.yaml", []byte(operatorYAML+"checks: ["+filepath.Join(dir, "mine")+"]\n"))
	if err != nil {
		t.Fatal(err)
	}
	res, err := g.JudgeBytes(context.Background(), "plan.json", []byte(fetchingPlan), 10)
	if err != nil || rulesOf(res) != "org.no-http" {
		t.Fatalf("res %v, err %v", rulesOf(res), err)
	}
}

// The engine remembers what the child checks found, by policies and child:
// a gate with other checks must never be answered from another's memory.
// Each set of checks has an engine (and a memory) of its own.
func TestRememberedFindingsAreNotSharedAcrossChecks(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, map[string]string{"mine/no_http.rego": noHTTP, "policy.yaml": operatorYAML})
	policy := filepath.Join(dir, "policy.yaml")
	with := judge.DefaultOptions()
	with.Checks = []string{filepath.Join(dir, "mine")}
	for i, tt := range []struct {
		opts judge.Options
		want string
	}{
		{judge.DefaultOptions(), ""},
		{with, "org.no-http"},
		{judge.DefaultOptions(), ""},
		{with, "org.no-http"},
	} {
		res, err := judgeWith(t, tt.opts, policy, fetchingPlan)
		if err != nil {
			t.Fatal(err)
		}
		if got := rulesOf(res); got != tt.want {
			t.Fatalf("round %d: rules %q, want %q", i, got, tt.want)
		}
	}
	// A check that changes on disk is a new engine, with a memory of its own.
	write(t, dir, map[string]string{"mine/no_http.rego": strings.ReplaceAll(noHTTP, `"http.get" in child.tools`, `"fs.write" in child.tools`)})
	res, err := judgeWith(t, with, policy, fetchingPlan)
	if err != nil || rulesOf(res) != "" {
		t.Fatalf("after the change: rules %q, err %v", rulesOf(res), err)
	}
}

// Fingerprint changes with every source a gate is built from.
func TestFingerprint(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, map[string]string{"mine/no_http.rego": noHTTP, "policy.yaml": operatorYAML + "checks: [mine]\n", "flag/a.rego": noHTTP})
	opts := judge.DefaultOptions()
	opts.Checks = []string{filepath.Join(dir, "flag")}
	policy := filepath.Join(dir, "policy.yaml")
	last := judge.Fingerprint(opts, policy)
	if again := judge.Fingerprint(opts, policy); again != last {
		t.Fatal("the fingerprint of unchanged sources changed")
	}
	for _, change := range []map[string]string{
		{"policy.yaml": operatorYAML + "checks: [mine]\n# changed\n"},
		{"mine/no_http.rego": noHTTP + "\n# changed\n"},
		{"mine/new.rego": "package spawngate.custom.x\n"},
		{"flag/a.rego": noHTTP + "\n"},
	} {
		write(t, dir, change)
		now := judge.Fingerprint(opts, policy)
		if now == last {
			t.Fatalf("changing %v left the fingerprint as it was", change)
		}
		last = now
	}
}

// Digest names a policy document the one way every front end and the
// decision log name it, and the gate built from the document carries the
// same name: no document is "", an empty one still has a name.
func TestDigest(t *testing.T) {
	tests := []struct {
		name string
		data []byte
		want string
	}{
		{"no document", nil, ""},
		{"empty", []byte{}, "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := judge.Digest(tt.data); got != tt.want {
				t.Fatalf("Digest = %q, want %q", got, tt.want)
			}
		})
	}
	dir := t.TempDir()
	write(t, dir, map[string]string{"policy.yaml": operatorYAML})
	g, err := judge.New(context.Background(), judge.DefaultOptions(), filepath.Join(dir, "policy.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := g.Sources().PolicyDigest, judge.Digest([]byte(operatorYAML)); got != want || !strings.HasPrefix(got, "sha256:") {
		t.Fatalf("the gate names its policy %q, Digest %q", got, want)
	}
}

// A folder of checks is walked as every folder is (document.Walk): a linked
// subfolder's modules are read, and the server's fingerprint, which walks
// it the same way, changes when one of them does.
func TestChecksFolderFollowsLinks(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, map[string]string{
		"shared/no_http.rego": noHTTP,
		"checks/readme.txt":   "the checks are linked in",
		"policy.yaml":         operatorYAML,
	})
	if err := os.Symlink(filepath.Join(dir, "shared"), filepath.Join(dir, "checks", "shared")); err != nil {
		t.Skipf("no symlinks here: %v", err)
	}
	opts := judge.DefaultOptions()
	opts.Checks = []string{filepath.Join(dir, "checks")}
	res, err := judgeWith(t, opts, filepath.Join(dir, "policy.yaml"), fetchingPlan)
	if err != nil || rulesOf(res) != "org.no-http" {
		t.Fatalf("rules %q, err %v: the linked module was not read", rulesOf(res), err)
	}
	before := judge.Fingerprint(opts, filepath.Join(dir, "policy.yaml"))
	write(t, dir, map[string]string{"shared/no_http.rego": noHTTP + "\n# changed\n"})
	if judge.Fingerprint(opts, filepath.Join(dir, "policy.yaml")) == before {
		t.Fatal("a linked module changed, and the fingerprint did not")
	}
}

// A check that is still counting when the deadline passes is a timeout,
// as every other late evaluation is, though the built-in it was in
// reports a cancel error of its own: never an internal error (a 500 from
// the server, not the 504 a timeout gets).
func TestACheckStoppedInABuiltinIsATimeout(t *testing.T) {
	slow := strings.Replace(noHTTP, `"http.get" in child.tools`, `count(numbers.range(1, 4000000000)) > 0`, 1)
	opts := judge.DefaultOptions()
	opts.Modules = []policy.Module{{Name: "slow.rego", Source: slow}}
	opts.Timeout = 100 * time.Millisecond
	g, err := judge.NewWithPolicy(context.Background(), opts, "operator.yaml", []byte(operatorYAML))
	if err != nil {
		t.Fatal(err)
	}
	_, err = g.JudgeBytes(context.Background(), "plan.json", []byte(fetchingPlan), 10)
	var e *judge.Error
	if !errors.As(err, &e) || e.Kind != judge.Timeout {
		t.Fatalf("a check stopped by the deadline: %v (%T), want a timeout", err, err)
	}
}
