package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// --policy-in-plan is one explicit way in for a file holding policy and
// plan, and only for one such file: every other use is a usage error,
// exit 2, one line on stderr saying why, before anything is read.
func TestPolicyInPlanUsageErrors(t *testing.T) {
	dir := t.TempDir()
	plan := filepath.Join(dir, "plan.yaml")
	if err := os.WriteFile(plan, []byte(passingPlan), 0o644); err != nil {
		t.Fatal(err)
	}
	const why = "the operator policy is the plan file's own policy block"
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"with --policy", []string{"--policy-in-plan", "--policy", plan, plan},
			"--policy-in-plan and --policy cannot be given together: with --policy-in-plan, " + why},
		{"with --bundle", []string{"--bundle", dir, "--policy-in-plan", plan},
			"--policy-in-plan and --bundle cannot be given together: with --policy-in-plan, " + why},
		{"two plans", []string{"--policy-in-plan", plan, plan},
			"--policy-in-plan judges one PLAN file, and 2 are given: " + why + ", and it judges that file alone"},
		{"a plan and stdin", []string{"--policy-in-plan", plan, "-"},
			"--policy-in-plan judges one PLAN file, and 2 are given: " + why + ", and it judges that file alone"},
		{"a folder", []string{"--policy-in-plan", dir},
			"--policy-in-plan judges one PLAN file, and " + dir + " is a folder: name the file whose policy block is the operator's"},
		{"no plan", []string{"--policy-in-plan"},
			"no PLAN given: name a plan file, or - for standard input"},
		{"given twice", []string{"--policy-in-plan", "--policy-in-plan=false", plan},
			`--policy-in-plan "false": given more than once`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := Run(context.Background(), append([]string{"check"}, tc.args...), strings.NewReader(passingPlan), &stdout, &stderr)
			if code != exitError {
				t.Errorf("exit %d, want %d", code, exitError)
			}
			want := "spawngate: " + tc.want + " (see spawngate check -h)\n"
			if stderr.String() != want {
				t.Errorf("stderr\n%q\nwant\n%q", stderr.String(), want)
			}
			if stdout.Len() != 0 {
				t.Errorf("stdout %q, want nothing", stdout.String())
			}
		})
	}
}

// Without the flag, a plan's own policy still never stands in for the
// operator's; with it, the same bytes are judged by their policy block,
// from a file or from standard input.
func TestPolicyInPlanJudgesTheFileByItsBlock(t *testing.T) {
	dir := t.TempDir()
	plan := filepath.Join(dir, "plan.yaml")
	refused := strings.Replace(passingPlan, `"tools": ["fs.read"], "paths"`, `"tools": ["fs.write"], "paths"`, 1)
	if err := os.WriteFile(plan, []byte(refused), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		args []string
		code int
		head string
	}{
		{"no flag", []string{plan}, exitError, ""},
		{"a file", []string{"--policy-in-plan", plan}, exitBlock,
			plan + ": BLOCK, 1 of 1 child refused (judged by the plan file's own policy, taken as the operator's)\n"},
		{"stdin", []string{"--policy-in-plan", "-"}, exitBlock,
			"<stdin>: BLOCK, 1 of 1 child refused (judged by the plan file's own policy, taken as the operator's)\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := Run(context.Background(), append([]string{"check"}, tc.args...), strings.NewReader(refused), &stdout, &stderr)
			if code != tc.code {
				t.Fatalf("exit %d, want %d; stderr %q", code, tc.code, stderr.String())
			}
			if !strings.HasPrefix(stdout.String(), tc.head) {
				t.Errorf("stdout\n%s\nwant it to start\n%s", stdout.String(), tc.head)
			}
		})
	}
}
