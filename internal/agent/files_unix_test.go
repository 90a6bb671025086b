//go:build unix

package agent_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/spawngate/spawngate/internal/agent"
	"github.com/spawngate/spawngate/internal/document"
	"github.com/spawngate/spawngate/internal/host/hosttest"
)

// TestReadFileRefusesNonRegular holds ReadFile to opening only regular
// files: a FIFO named like a definition would hold the gate until a writer
// came, and a link to a device reads whatever the device gives.
func TestReadFileRefusesNonRegular(t *testing.T) {
	root := t.TempDir()
	fifo := filepath.Join(root, "agents", "pipe.md")
	if err := os.MkdirAll(filepath.Dir(fifo), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skipf("cannot make a FIFO here: %v", err)
	}
	hosttest.WriteTree(t, root, map[string]string{
		"agents/linked.md": "->pipe.md",
		"agents/null.md":   "->/dev/null",
	})
	read := func(context.Context, string, []byte) *agent.Definition {
		t.Error("the reader was given a file that is not a regular one")
		return nil
	}
	for _, name := range []string{"pipe.md", "linked.md", "null.md"} {
		t.Run(name, func(t *testing.T) {
			file := filepath.Join(root, "agents", name)
			done := make(chan *agent.Definition, 1)
			go func() { done <- agent.ReadFile(context.Background(), file, document.DefaultLimits, read) }()
			var d *agent.Definition
			select {
			case d = <-done:
			case <-time.After(5 * time.Second):
				// Open the FIFO for writing, so that the blocked read ends.
				if w, err := os.OpenFile(fifo, os.O_WRONLY, 0); err == nil {
					w.Close()
				}
				t.Fatalf("ReadFile(%s) blocked", name)
			}
			if d == nil || d.Err == nil || d.Name != "" || d.Skipped != "" || d.Lines == nil {
				t.Fatalf("%+v, want an unnamed definition that does not parse", d)
			}
			if d.Err.Source != file || !strings.HasPrefix(d.Err.Msg, "is not a regular file (") || !strings.HasSuffix(d.Err.Msg, "): a definition must be a file") {
				t.Errorf("Err = %v", d.Err)
			}
		})
	}
	// Files lists them, for ReadFile to refuse: a definition the gate
	// cannot read is never passed over.
	files, err := agent.Files(context.Background(), filepath.Join(root, "agents"), ".md", true)
	if err != nil || len(files) != 2 {
		t.Errorf("Files = %q, %v; want the FIFO (once, through either name) and the device", files, err)
	}
}
