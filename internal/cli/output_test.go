package cli

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// brokenPipe is a standard output whose reader has gone.
type brokenPipe struct{}

func (brokenPipe) Write([]byte) (int, error) { return 0, errors.New("write /dev/stdout: broken pipe") }

// Output that cannot be written is exit 2 with one line on stderr, never
// the exit code of a verdict no one read: a command that reports the
// failure itself says it in its words, and Run says it for one that does
// not look (version, help, doctor).
func TestLostOutputExits2(t *testing.T) {
	t.Chdir(filepath.Join("..", ".."))
	payload, err := os.ReadFile(filepath.Join("examples", "claude-code", "payloads", "fixer.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args   []string
		stdin  []byte
		stderr string
	}{
		{[]string{"check", "--policy", "examples/policy.yaml", "examples/authorized-plan.yaml"}, nil, "spawngate: writing the report: write /dev/stdout: broken pipe\n"},
		{[]string{"check", "--policy", "examples/policy.yaml", "examples/refused-plan.yaml"}, nil, "spawngate: writing the report: write /dev/stdout: broken pipe\n"},
		{[]string{"hook", "claude-code", "--policy", "examples/claude-code/policy.yaml", "--agents-dir", "examples/claude-code/.claude/agents"}, payload,
			"spawngate: writing the answer: write /dev/stdout: broken pipe\n"},
		{[]string{"version"}, nil, "spawngate: writing to standard output: write /dev/stdout: broken pipe\n"},
		{[]string{"help"}, nil, "spawngate: writing to standard output: write /dev/stdout: broken pipe\n"},
		{[]string{"check", "-h"}, nil, "spawngate: writing to standard output: write /dev/stdout: broken pipe\n"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			var stderr bytes.Buffer
			code := Run(context.Background(), tc.args, bytes.NewReader(tc.stdin), brokenPipe{}, &stderr)
			if code != exitError || stderr.String() != tc.stderr {
				t.Fatalf("exit %d, stderr %q; want %d, %q", code, stderr.String(), exitError, tc.stderr)
			}
		})
	}
}

// Run's watch over standard output hides nothing from the hook: a flag
// that names the file its standard output is, is still refused.
func TestHookSeesItsStandardOutputThroughRun(t *testing.T) {
	t.Chdir(filepath.Join("..", ".."))
	stdout, err := os.Create(filepath.Join(t.TempDir(), "answer.json"))
	if err != nil {
		t.Fatal(err)
	}
	defer stdout.Close()
	var stderr bytes.Buffer
	code := Run(context.Background(), []string{"hook", "claude-code", "--policy", "examples/claude-code/policy.yaml", "--print-plan", stdout.Name()}, strings.NewReader("{}"), stdout, &stderr)
	if code != exitError || !strings.Contains(stderr.String(), "names the hook's standard output") {
		t.Fatalf("exit %d, stderr %q", code, stderr.String())
	}
}
