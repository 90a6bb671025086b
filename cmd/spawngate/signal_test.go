package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The first SIGTERM stops the real process within a second, with exit 2,
// whatever phase it is in: waiting on standard input that never ends, or
// judging a plan whose evaluation would take seconds more.
func TestTheFirstSignalStopsTheProcess(t *testing.T) {
	bin, err := exec.LookPath("spawngate") // the test binary, as testscript.Main set it up
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	tools := strings.TrimSuffix(strings.Repeat(`"shell.run",`, 20), ",")
	var plan strings.Builder
	plan.WriteString(`{"policy": {"allowed_tools": ["fs.read"], "workspace_root": "/w", "budget_cap_tokens": 9}, "plan": [`)
	for i := range 20000 {
		if i > 0 {
			plan.WriteByte(',')
		}
		fmt.Fprintf(&plan, `{"role": "r%d", "tools": [%s], "paths": [], "budget_tokens": 1}`, i, tools)
	}
	plan.WriteString("]}")
	slow := filepath.Join(dir, "slow.json")
	if err := os.WriteFile(slow, []byte(plan.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		args  []string
		stdin bool // a standard input that never ends
		want  string
	}{
		{"reading", []string{"check", "-"}, true, "spawngate: <stdin>: interrupted\n"},
		{"evaluating", []string{"check", "--timeout", "60s", slow}, false, "spawngate: " + slow + ": interrupted\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cmd := exec.Command(bin, tc.args...)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			if tc.stdin {
				r, w, err := os.Pipe()
				if err != nil {
					t.Fatal(err)
				}
				defer w.Close()
				cmd.Stdin = r
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			time.Sleep(700 * time.Millisecond) // well into the phase
			sent := time.Now()
			if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
				t.Fatal(err)
			}
			err := cmd.Wait()
			took := time.Since(sent)
			var exit *exec.ExitError
			if !errors.As(err, &exit) || exit.ExitCode() != 2 {
				t.Fatalf("after SIGTERM: %v, want exit 2 (stderr %q)", err, stderr.String())
			}
			if took > time.Second {
				t.Errorf("stopped %s after the signal, more than a second", took)
			}
			if stderr.String() != tc.want {
				t.Errorf("stderr %q, want %q", stderr.String(), tc.want)
			}
		})
	}
}
