package main

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// closedPipe is the write end of a pipe whose read end is closed: the
// standard output of a command piped into one that has gone ("| head -0").
func closedPipe(t *testing.T) *os.File {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	r.Close()
	t.Cleanup(func() { w.Close() })
	return w
}

// exitOf is a finished process's exit code, failing the test when a
// signal ended it: a process killed by SIGPIPE has no exit code, and says
// nothing.
func exitOf(t *testing.T, err error, stderr string) int {
	t.Helper()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return 0
	case !errors.As(err, &exit):
		t.Fatal(err)
	}
	if ws, ok := exit.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		t.Fatalf("killed by %v (stderr %q), not an exit code", ws.Signal(), stderr)
	}
	return exit.ExitCode()
}

// Output that cannot be written is an error, not a pass and not a silent
// death: with its standard output a closed pipe, the real process exits 2
// and says why on one line of stderr, where Go's default would let SIGPIPE
// kill it with no word and no exit code. The refused and the passing
// plan alike (the report is lost either way), a hook's refusal (its
// answer is lost: exit 2 is the refusal a host reads), and a command that
// writes its output without looking at the error (version).
func TestAClosedStdoutExits2(t *testing.T) {
	bin, err := exec.LookPath("spawngate")
	if err != nil {
		t.Fatal(err)
	}
	root := filepath.Join("..", "..")
	payload, err := os.ReadFile(filepath.Join(root, "examples", "claude-code", "payloads", "fixer.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		args   []string
		stdin  []byte
		stderr string
	}{
		{"check, a refused plan", []string{"check", "--policy", "examples/policy.yaml", "examples/refused-plan.yaml"}, nil,
			"spawngate: writing the report: write /dev/stdout: broken pipe\n"},
		{"check, a passing plan, json", []string{"check", "--policy", "examples/policy.yaml", "--format", "json", "examples/authorized-plan.yaml"}, nil,
			"spawngate: writing the report: write /dev/stdout: broken pipe\n"},
		{"hook, a refusal", []string{"hook", "claude-code", "--policy", "examples/claude-code/policy.yaml", "--agents-dir", "examples/claude-code/.claude/agents"}, payload,
			"spawngate: writing the answer: write /dev/stdout: broken pipe\n"},
		{"version", []string{"version"}, nil,
			"spawngate: writing to standard output: write /dev/stdout: broken pipe\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stderr bytes.Buffer
			cmd := exec.Command(bin, tc.args...)
			cmd.Dir = root
			cmd.Stdin = bytes.NewReader(tc.stdin)
			cmd.Stdout = closedPipe(t)
			cmd.Stderr = &stderr
			code := exitOf(t, cmd.Run(), stderr.String())
			if code != 2 || stderr.String() != tc.stderr {
				t.Fatalf("exit %d, stderr %q; want exit 2, stderr %q", code, stderr.String(), tc.stderr)
			}
		})
	}
	// With stderr closed too, the line is lost, and the exit code still
	// says it.
	cmd := exec.Command(bin, "check", "--policy", "examples/policy.yaml", "examples/refused-plan.yaml")
	cmd.Dir = root
	cmd.Stdout, cmd.Stderr = closedPipe(t), closedPipe(t)
	if code := exitOf(t, cmd.Run(), ""); code != 2 {
		t.Fatalf("stdout and stderr closed: exit %d, want 2", code)
	}
}

// A server whose standard output is a closed pipe keeps serving: its
// decision log there (--decision-log -) cannot be written, and every
// decision is still answered, the failure counted, where SIGPIPE would
// end the process at the first decision, with the request unanswered (a
// refused connection lets Claude Code's HTTP hook spawn).
func TestServeSurvivesAClosedStdout(t *testing.T) {
	bin, err := exec.LookPath("spawngate")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "serve", "--addr", "127.0.0.1:0", "--decision-log", "-", "--policy", filepath.Join("..", "..", "examples", "policy.yaml"))
	cmd.Stdout = closedPipe(t)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	lines := bufio.NewScanner(stderr)
	serving := regexp.MustCompile(`"msg":"serving","addr":"([^"]+)"`)
	var addr string
	for lines.Scan() {
		if m := serving.FindStringSubmatch(lines.Text()); m != nil {
			addr = m[1]
			break
		}
	}
	if addr == "" {
		t.Fatal("the server did not say where it serves")
	}
	logged := make(chan string, 1)
	go func() {
		b, _ := io.ReadAll(stderr)
		logged <- string(b)
	}()
	plan, err := os.ReadFile(filepath.Join("..", "..", "examples", "refused-plan.json"))
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		res, err := http.Post("http://"+addr+"/v1/check", "application/json", bytes.NewReader(plan))
		if err != nil {
			t.Fatalf("no answer: %v", err)
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != http.StatusOK || !strings.Contains(string(body), `"verdict": "block"`) {
			t.Fatalf("%d %s", res.StatusCode, body)
		}
	}
	res, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	metrics, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if !strings.Contains(string(metrics), `spawngate_errors_total{kind="decision-log"} 2`) {
		t.Errorf("the decision log's failures are not counted:\n%s", metrics)
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	var log string
	select {
	case log = <-logged: // its stderr ends as it does
	case <-time.After(2 * time.Minute):
		t.Fatal("still running two minutes after SIGTERM")
	}
	if code := exitOf(t, cmd.Wait(), log); code != 0 {
		t.Fatalf("exit %d after SIGTERM, want 0; stderr:\n%s", code, log)
	}
	if !strings.Contains(log, `"msg":"writing the decision log"`) {
		t.Errorf("the failure is not logged:\n%s", log)
	}
}
