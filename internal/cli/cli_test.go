package cli

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spawngate/spawngate/internal/report"
)

const passingPlan = `{"policy": {"allowed_tools": ["fs.read"], "workspace_root": "/w", "budget_cap_tokens": 10},
 "plan": [{"role": "r", "tools": ["fs.read"], "paths": [], "budget_tokens": 1}]}`

// openPolicy writes an operator policy that refuses nothing the plans of
// these tests allow by their own policy, which then judges them: check
// judges nothing without an operator policy.
func openPolicy(t testing.TB) string {
	t.Helper()
	name := filepath.Join(t.TempDir(), "open.yaml")
	doc := "allowed_tools: [\"**\"]\nworkspace_root: /\nbudget_cap_tokens: 9007199254740991\nallow_write: true\n"
	if err := os.WriteFile(name, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	return name
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("broken pipe") }

// A report that cannot be delivered is not a pass, however the plan fared.
func TestRunExitsTwoWhenTheReportCannotBeWritten(t *testing.T) {
	var stderr bytes.Buffer
	code := Run(context.Background(), []string{"check", "--policy", openPolicy(t), "-"}, strings.NewReader(passingPlan), failingWriter{}, &stderr)
	if code != exitError {
		t.Fatalf("exit %d, want %d", code, exitError)
	}
	if got := stderr.String(); got != "spawngate: writing the report: broken pipe\n" {
		t.Fatalf("stderr %q", got)
	}
}

type panickingReader struct{}

func (panickingReader) Read([]byte) (int, error) { panic("injected fault\nsecond line") }

// A panic anywhere under Run is an internal error on one line and exit 2.
func TestRunRecoversFromAPanic(t *testing.T) {
	var stdout, stderr bytes.Buffer
	code := Run(context.Background(), []string{"check", "--policy", openPolicy(t), "-"}, panickingReader{}, &stdout, &stderr)
	if code != exitError {
		t.Fatalf("exit %d, want %d", code, exitError)
	}
	if got := stderr.String(); got != "spawngate: internal error: injected fault second line\n" {
		t.Fatalf("stderr %q", got)
	}
	if stdout.Len() != 0 {
		t.Fatalf("stdout %q, want nothing", stdout.String())
	}
}

func TestRunPassesACleanPlanInProcess(t *testing.T) {
	var stdout, stderr bytes.Buffer
	code := Run(context.Background(), []string{"check", "--policy", openPolicy(t), "--format", "json", "-"}, strings.NewReader(passingPlan), &stdout, &stderr)
	if code != exitPass || stderr.Len() != 0 {
		t.Fatalf("exit %d, stderr %q", code, stderr.String())
	}
	if !strings.HasPrefix(stdout.String(), "{\n  \"verdict\": \"pass\",") {
		t.Fatalf("stdout %q", stdout.String())
	}
}

func TestRunRefusesWhenTheContextIsDone(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var stdout, stderr bytes.Buffer
	code := Run(ctx, []string{"check", "--policy", openPolicy(t), "-"}, strings.NewReader(passingPlan), &stdout, &stderr)
	if code != exitError {
		t.Fatalf("exit %d with a cancelled context, want %d", code, exitError)
	}
}

func TestRunReportsAPanicAsJSONWhenAskedFor(t *testing.T) {
	var stdout, stderr bytes.Buffer
	code := Run(context.Background(), []string{"check", "--policy", openPolicy(t), "--format", "json", "-"}, panickingReader{}, &stdout, &stderr)
	if code != exitError {
		t.Fatalf("exit %d, want %d", code, exitError)
	}
	want := "{\n  \"verdict\": \"error\",\n  \"error\": \"internal error: injected fault second line\",\n  \"results\": []\n}\n"
	if stdout.String() != want {
		t.Fatalf("stdout %q, want %q", stdout.String(), want)
	}
}

func TestRunTimesOut(t *testing.T) {
	var stdout, stderr bytes.Buffer
	code := Run(context.Background(), []string{"check", "--policy", openPolicy(t), "--timeout", "1ns", "-"}, strings.NewReader(passingPlan), &stdout, &stderr)
	if code != exitError {
		t.Fatalf("exit %d, want %d", code, exitError)
	}
	if got := stderr.String(); !strings.HasPrefix(got, "spawngate: ") || !strings.HasSuffix(got, ": timed out after 1ns (limit --timeout)\n") || strings.Count(got, "\n") != 1 {
		t.Fatalf("stderr %q", got)
	}
}

// A file name is text from outside too: it must not put a terminal escape
// on stderr.
func TestStderrEscapesFileNames(t *testing.T) {
	name := filepath.Join(t.TempDir(), "x\x1b[31mred\u202e.yaml")
	if err := os.WriteFile(name, []byte("plan: []\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	code := Run(context.Background(), []string{"check", "--policy", openPolicy(t), name}, strings.NewReader(""), &stdout, &stderr)
	if code != exitError {
		t.Fatalf("exit %d", code)
	}
	if strings.ContainsAny(stderr.String(), "\x1b\u202e") || !strings.Contains(stderr.String(), `x\u001b[31mred\u202e.yaml`) {
		t.Fatalf("stderr %q", stderr.String())
	}
}

// Only a pass exits 0: any verdict that is not a known one is an error.
func TestUnknownVerdictNeverExitsZero(t *testing.T) {
	for _, v := range []report.Verdict{"", "PASS", "ok", "pass ", "error"} {
		if got := exitCode(v); got != exitError {
			t.Errorf("verdict %q exits %d", v, got)
		}
	}
	if exitCode(report.Pass) != exitPass || exitCode(report.Block) != exitBlock {
		t.Fatal("pass and block do not exit 0 and 1")
	}
}
