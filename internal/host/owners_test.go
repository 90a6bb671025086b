//go:build unix

package host

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// ownersFor are owners under which this test's own files are the
// operator's (trusted) or the session's (not), whoever runs the test:
// as root a file is given away to another uid to be the session's.
func ownersFor(t *testing.T) (operator, session Owners, giveAway func(string)) {
	t.Helper()
	me := os.Geteuid()
	operator = Owners{Trusted: []int{0, me}, Session: 4242}
	session = Owners{Trusted: []int{0}, Session: me}
	giveAway = func(string) { t.Skip("only root can give a file to another user") }
	if me == 0 {
		session = Owners{Trusted: []int{0}, Session: 4242}
		giveAway = func(p string) {
			if err := os.Lchown(p, 4242, 4242); err != nil {
				t.Fatal(err)
			}
		}
	}
	return operator, session, giveAway
}

func write(t *testing.T, path, text string, mode os.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, mode); err != nil { // past the umask
		t.Fatal(err)
	}
}

func chmod(t *testing.T, path string, mode os.FileMode) {
	t.Helper()
	if err := os.Chmod(path, mode); err != nil {
		t.Fatal(err)
	}
}

// wantChange fails unless err says path can be changed, naming why.
func wantChange(t *testing.T, err error, why string) {
	t.Helper()
	var ce *ChangeError
	if !errors.As(err, &ce) {
		t.Fatalf("got %v, want a ChangeError saying %q", err, why)
	}
	if !strings.Contains(ce.Error(), why) {
		t.Fatalf("got %q, want it to say %q", ce.Error(), why)
	}
}

// The base folder t.TempDir makes is the test user's, mode 0700, under
// /tmp (sticky): a tree the operator owns, in every case below.
func TestOwnersCheck(t *testing.T) {
	operator, _, _ := ownersFor(t)
	t.Run("operator-owned-passes", func(t *testing.T) {
		base := t.TempDir()
		write(t, filepath.Join(base, "etc", "policy.yaml"), "x", 0o644)
		if err := operator.Check(filepath.Join(base, "etc", "policy.yaml")); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("group-writable-file", func(t *testing.T) {
		base := t.TempDir()
		p := filepath.Join(base, "policy.yaml")
		write(t, p, "x", 0o664)
		wantChange(t, operator.Check(p), "writable by its group")
	})
	t.Run("world-writable-folder", func(t *testing.T) {
		base := t.TempDir()
		p := filepath.Join(base, "etc", "policy.yaml")
		write(t, p, "x", 0o644)
		chmod(t, filepath.Join(base, "etc"), 0o777)
		wantChange(t, operator.Check(p), "writable by every user")
	})
	t.Run("sticky-folder-passes-an-operator-entry", func(t *testing.T) {
		base := t.TempDir()
		p := filepath.Join(base, "tmp", "policy.yaml")
		write(t, p, "x", 0o644)
		chmod(t, filepath.Join(base, "tmp"), 0o777|os.ModeSticky)
		if err := operator.Check(p); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("link-in-a-writable-folder", func(t *testing.T) {
		// The file is the operator's, but the link to it lies where anyone
		// can point it elsewhere.
		base := t.TempDir()
		real := filepath.Join(base, "etc", "policy.yaml")
		write(t, real, "x", 0o644)
		link := filepath.Join(base, "open", "policy.yaml")
		must(t, os.MkdirAll(filepath.Dir(link), 0o755))
		must(t, os.Symlink(real, link))
		if err := operator.Check(link); err != nil {
			t.Fatalf("a link in an operator's folder: %v", err)
		}
		chmod(t, filepath.Dir(link), 0o777)
		wantChange(t, operator.Check(link), filepath.Dir(link)+" is writable by every user")
	})
	t.Run("link-through-a-writable-folder", func(t *testing.T) {
		// a -> b/c -> the file: b, the folder the second link lies in, is
		// looked at too, though neither the path as written nor the
		// resolved one names it.
		base := t.TempDir()
		real := filepath.Join(base, "etc", "policy.yaml")
		write(t, real, "x", 0o644)
		mid := filepath.Join(base, "b")
		must(t, os.MkdirAll(mid, 0o755))
		must(t, os.Symlink(real, filepath.Join(mid, "c")))
		must(t, os.Symlink(filepath.Join("b", "c"), filepath.Join(base, "a")))
		if err := operator.Check(filepath.Join(base, "a")); err != nil {
			t.Fatal(err)
		}
		chmod(t, mid, 0o770)
		wantChange(t, operator.Check(filepath.Join(base, "a")), mid+" is writable by its group")
	})
	t.Run("folder-of-checks", func(t *testing.T) {
		base := t.TempDir()
		dir := filepath.Join(base, "checks")
		write(t, filepath.Join(dir, "a.rego"), "package a", 0o644)
		write(t, filepath.Join(dir, "sub", "b.rego"), "package b", 0o644)
		if err := operator.Check(dir); err != nil {
			t.Fatal(err)
		}
		chmod(t, filepath.Join(dir, "sub", "b.rego"), 0o646)
		wantChange(t, operator.Check(dir), "b.rego is writable by every user")
	})
	t.Run("missing", func(t *testing.T) {
		wantChange(t, operator.Check(filepath.Join(t.TempDir(), "none.yaml")), "cannot be looked at")
	})
}

// A file the session's own user owns, or lies in a folder it owns, is
// one it can change.
func TestOwnersCheckSessionOwned(t *testing.T) {
	_, session, giveAway := ownersFor(t)
	base := t.TempDir()
	p := filepath.Join(base, "conf", "policy.yaml")
	write(t, p, "x", 0o644)
	if os.Geteuid() != 0 {
		wantChange(t, session.Check(p), "is not root")
		return
	}
	if err := session.Check(p); err != nil {
		t.Fatalf("a root-owned tree: %v", err)
	}
	giveAway(p)
	wantChange(t, session.Check(p), "owned by uid 4242")
	must(t, os.Lchown(p, 0, 0))
	giveAway(filepath.Dir(p))
	wantChange(t, session.Check(p), filepath.Dir(p)+" is owned by uid 4242")
}

// A session that runs as a trusted user (root) could write anything it
// owns: a policy in its home or project folder, or reached through a
// link into one, is refused; one elsewhere passes.
func TestOwnersCheckTrustedSession(t *testing.T) {
	me := os.Geteuid()
	base := t.TempDir()
	home, project := filepath.Join(base, "home"), filepath.Join(base, "repo")
	o := Owners{Trusted: []int{0, me}, Session: me, Dirs: []string{home, project}}
	inHome := filepath.Join(home, ".config", "spawngate", "policy.yaml")
	write(t, inHome, "x", 0o644)
	wantChange(t, o.Check(inHome), "lies in "+home)
	outside := filepath.Join(base, "etc", "policy.yaml")
	write(t, outside, "x", 0o644)
	if err := o.Check(outside); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(base, "etc", "linked.yaml")
	must(t, os.Symlink(filepath.Join(project, "policy.yaml"), link))
	write(t, filepath.Join(project, "policy.yaml"), "x", 0o644)
	wantChange(t, o.Check(link), "lies in "+project)
	// Another session user: ownership tells, and the folders do not count.
	o.Session = 4242
	if err := o.Check(inHome); err != nil {
		t.Fatal(err)
	}
	// Doctor does not know the session's user.
	if err := OperatorOnly(home).Check(inHome); err == nil {
		t.Fatal("doctor passed a policy in the home folder")
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
