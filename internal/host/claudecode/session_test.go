package claudecode

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/spawngate/spawngate/internal/agent"
	"github.com/spawngate/spawngate/internal/document"
	"github.com/spawngate/spawngate/internal/host"
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

// TestStaleDefinitions: what changed after the session started is found
// by its change time, which no process can set back: a definition
// rewritten and its mtime set back (touch -r), one removed from a
// subfolder (the hook would fall through to another of its name), and
// the --agents file.
func TestStaleDefinitions(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("a session's start is read from /proc")
	}
	base := t.TempDir()
	project := filepath.Join(base, "p")
	files := map[string]string{
		"p/.claude/agents/team/reader.md": "---\nname: reader\ndescription: d\ntools: Read, Bash\n---\n",
		"p/.claude/agents/writer.md":      "---\nname: writer\ndescription: d\ntools: Read\n---\n",
		"home/.claude/agents/reader.md":   "---\nname: reader\ndescription: d\ntools: Read\n---\n",
		"p/agents.json":                   `{"lister": {"description": "d", "prompt": "p", "tools": ["Glob"]}}`,
	}
	for name, text := range files {
		p := filepath.Join(base, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	started := time.Now()
	// What is written from here on is later than the start by more than
	// the start is known to.
	for time.Since(started) < 2*staleSlack {
		time.Sleep(10 * time.Millisecond)
	}
	spawn := func(typ string) string {
		t.Helper()
		s := session{project: project, started: started, read: true, agents: []agentsFlag{{"agents.json"}}}
		env := host.Env{Home: filepath.Join(base, "home"), Root: filepath.Join(base, "none"), Limits: document.DefaultLimits}
		catalog, err := load(context.Background(), env, s)
		if err != nil {
			t.Fatal(err)
		}
		def, problem := resolve(catalog, typ)
		tr := translate(call{Call: agent.Call{Host: Name, Type: typ, Paths: []string{project}}}, def, problem)
		refuseStale(catalog, s, []agent.Translation{tr})
		p, _ := tr.Child["agent"].(map[string]any)["problem"].(string)
		return p
	}
	for _, typ := range []string{"reader", "writer", "lister"} {
		if p := spawn(typ); p != "" {
			t.Fatalf("%s, unchanged: %s", typ, p)
		}
	}
	past := started.Add(-time.Hour)
	// writer rewritten, its modification time set back.
	w := filepath.Join(project, ".claude", "agents", "writer.md")
	if err := os.WriteFile(w, []byte(files["p/.claude/agents/writer.md"]), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(w, past, past); err != nil {
		t.Fatal(err)
	}
	if p := spawn("writer"); !strings.Contains(p, "after the session started") {
		t.Errorf("writer rewritten with its mtime set back: %q", p)
	}
	// The team reader (Bash) removed: the user's reader (Read) is found
	// now, which is not the one the session runs.
	if err := os.Remove(filepath.Join(project, ".claude", "agents", "team", "reader.md")); err != nil {
		t.Fatal(err)
	}
	if p := spawn("reader"); !strings.Contains(p, "team changed at") {
		t.Errorf("reader removed from a subfolder: %q", p)
	}
	// The --agents file rewritten.
	if err := os.WriteFile(filepath.Join(project, "agents.json"), []byte(files["p/agents.json"]), 0o644); err != nil {
		t.Fatal(err)
	}
	if p := spawn("lister"); !strings.Contains(p, "agents.json changed at") {
		t.Errorf("the --agents file rewritten: %q", p)
	}
}
