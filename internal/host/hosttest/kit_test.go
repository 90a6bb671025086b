package hosttest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestWriteTree: folders, files and links, each where its name says.
func TestWriteTree(t *testing.T) {
	root := t.TempDir()
	WriteTree(t, root, map[string]string{
		"a/b/":      "",
		"a/c/d.md":  "text",
		"a/link.md": "->c/d.md",
	})
	if fi, err := os.Stat(filepath.Join(root, "a", "b")); err != nil || !fi.IsDir() {
		t.Errorf("a/b: %v, %v", fi, err)
	}
	if b, err := os.ReadFile(filepath.Join(root, "a", "link.md")); err != nil || string(b) != "text" {
		t.Errorf("through the link: %q, %v", b, err)
	}
	if target, err := os.Readlink(filepath.Join(root, "a", "link.md")); err != nil || target != "c/d.md" {
		t.Errorf("link to %q, %v", target, err)
	}
}

// TestInstall: the installation's folders and files, placeholders filled
// in, and the hook's command line read back as the hook reads it.
func TestInstall(t *testing.T) {
	base := Install(t, map[string]string{"home/x.json": `{"cmd": "{{BIN}} hook toy --policy {{POLICY}} --timeout 20s", "in": "{{PROJECT}}"}`})
	b, err := os.ReadFile(filepath.Join(base, "home", "x.json"))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"cmd": "` + filepath.Join(base, "bin", "spawngate") + ` hook toy --policy ` + filepath.Join(base, "policy.yaml") + ` --timeout 20s", "in": "` + filepath.Join(base, "proj") + `"}`
	if string(b) != want {
		t.Errorf("x.json = %s\nwant     %s", b, want)
	}
	if fi, err := os.Stat(filepath.Join(base, "bin", "spawngate")); err != nil || fi.Mode().Perm()&0o111 == 0 {
		t.Errorf("bin/spawngate: %v, %v", fi, err)
	}
	o := DoctorOptions(base, "toy")
	if o.Project != filepath.Join(base, "proj") || o.Home != filepath.Join(base, "home") || o.Root != filepath.Join(base, "root") || o.Owners != Owners {
		t.Errorf("options %+v", o)
	}
	line, err := o.ReadHook(t.Context(), "toy", []string{"--policy", "policy.yaml", "--timeout", "20s"}, base)
	if err != nil || line.Timeout != 20*time.Second || len(line.Files) != 1 || line.Files[0] != filepath.Join(base, "policy.yaml") {
		t.Errorf("ReadHook = %+v, %v", line, err)
	}
	for _, args := range [][]string{{"--policy", "missing.yaml"}, {"extra"}, {"--nope"}} {
		if _, err := o.ReadHook(t.Context(), "toy", args, base); err == nil {
			t.Errorf("ReadHook(%q) read", args)
		}
	}
	if _, err := o.ReadHook(t.Context(), "other", nil, base); err == nil || !strings.Contains(err.Error(), `"other"`) {
		t.Errorf("ReadHook for another host: %v", err)
	}
}
