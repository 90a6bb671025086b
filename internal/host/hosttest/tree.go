package hosttest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spawngate/spawngate/internal/agent"
)

// WriteTree writes files under root, their names slash-separated and
// relative to it, making the folders they need: a name ending in "/" is a
// folder, a content starting with "->" a symbolic link to what follows,
// anything else a file of that content (0o644).
func WriteTree(t testing.TB, root string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		path := filepath.Join(root, filepath.FromSlash(name))
		if strings.HasSuffix(name, "/") {
			if err := os.MkdirAll(path, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		var err error
		if target, ok := strings.CutPrefix(content, "->"); ok {
			err = os.Symlink(target, path)
		} else {
			err = os.WriteFile(path, []byte(content), 0o644)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

// OutsideRepo returns a temporary directory that no .git lies above, or
// skips the test: a host searches for project folders up to the closest
// repository, and a test of that search cannot hold inside one.
func OutsideRepo(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	if root := agent.RepoRoot(dir); root != dir {
		t.Skipf("the temporary directory %s lies in a repository at %s", dir, root)
	}
	return dir
}

// Repositories is a tree, for WriteTree, of the places a host's search for
// project folders starts from: folders inside a repository (repo/a/b), a
// worktree, whose .git is a file (worktree/src), a folder in no
// repository (plain/a), and a repository nested inside another
// (repo/a/b/sub). Lay it out under OutsideRepo.
func Repositories() map[string]string {
	return map[string]string{
		"repo/.git/":         "",
		"repo/a/b/":          "",
		"worktree/.git":      "gitdir: ../repo/.git/worktrees/w\n",
		"worktree/src/":      "",
		"plain/a/":           "",
		"repo/a/b/sub/.git/": "",
	}
}

// ModuleRoot is the folder of the module's go.mod, found from the test's
// working directory (its package's folder) up, for the examples and
// schemas a test reads.
func ModuleRoot(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod in the working directory or above it")
		}
		dir = parent
	}
}

// MirrorRoot makes root stand in for / as doctor --root reads it, with
// its own etc: every other top-level folder of the machine is linked into
// it, so that the absolute paths a hook command names (a binary, a policy
// under /tmp) are found under root as they are on the machine, while the
// host's configuration is root's own etc.
func MirrorRoot(t testing.TB, root string) {
	t.Helper()
	entries, err := os.ReadDir("/")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(root, "etc"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.Name() == "etc" || !e.IsDir() && e.Type()&os.ModeSymlink == 0 {
			continue
		}
		if err := os.Symlink(filepath.Join("/", e.Name()), filepath.Join(root, e.Name())); err != nil && !os.IsExist(err) {
			t.Fatal(err)
		}
	}
}
