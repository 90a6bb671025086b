package claudecode

import (
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"
)

// TestSessionProcess: CLAUDE_PID is taken only for a process that can be
// the session's: this process or an ancestor (a command hook's client),
// or one working in the project folder (an HTTP hook's client).
func TestSessionProcess(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc")
	}
	project := t.TempDir()
	if err := sessionProcess(os.Getpid(), "/elsewhere"); err != nil {
		t.Errorf("this process: %v", err)
	}
	if err := sessionProcess(os.Getppid(), "/elsewhere"); err != nil {
		t.Errorf("the parent: %v", err)
	}
	start := func(dir string) *exec.Cmd {
		cmd := exec.Command("sleep", "60")
		cmd.Dir = dir
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
		return cmd
	}
	in := start(project)
	if err := sessionProcess(in.Process.Pid, project); err != nil {
		t.Errorf("a process working in the project: %v", err)
	}
	out := start(t.TempDir())
	if err := sessionProcess(out.Process.Pid, project); err == nil || !strings.Contains(err.Error(), "is not an ancestor of this hook, and it works in") {
		t.Errorf("a process working elsewhere: %v", err)
	}
	if err := sessionProcess(1<<22+7, project); err == nil || !strings.Contains(err.Error(), "cannot be read") {
		t.Errorf("no such process: %v", err)
	}
}
