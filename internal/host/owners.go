package host

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Owners says who may be able to change the files a gate is read from
// (its policy, checks and bundle) and the spawngate binary itself. A
// session that can change one can widen the policy and then spawn what it
// widened, so a hook refuses to judge by such a file, and a doctor fails
// an installation that names one.
//
// A file passes when it, and every folder above it (each link followed,
// and the folder holding each link), is owned by one of Trusted and
// writable by its owner alone. A folder writable by all but with the
// sticky bit (/tmp) passes for an entry a trusted user owns, which no one
// else can rename or delete there. A folder's every file and subfolder
// is held to the same rule.
//
// Ownership cannot tell the operator from a session that runs as a
// trusted user (root, say), who can write anything. Then the file must
// also lie outside Dirs, the folders such a session writes as a matter of
// course: its home and project folders.
type Owners struct {
	// Trusted are the users who may own what is checked: root, and for a
	// hook the owner of the spawngate binary that runs (whoever can
	// replace the binary needs no policy).
	Trusted []int
	// Session is the user the session runs as; -1 when not known, which
	// is taken as a trusted one (Dirs apply).
	Session int
	// Dirs are the session's home and project folders.
	Dirs []string
}

// OperatorOnly are the owners a doctor accepts: root alone, whoever runs
// the sessions, checked against every folder a session writes.
func OperatorOnly(dirs ...string) Owners {
	return Owners{Trusted: []int{0}, Session: -1, Dirs: dirs}
}

// maxOwnerEntries bounds the entries Check looks at under a folder, and
// maxOwnerLinks the links it follows in one path, as the kernel bounds
// them.
const (
	maxOwnerEntries = 100_000
	maxOwnerLinks   = 40
)

// Check returns nil when no one but a trusted user can change path (a
// file, or a folder and everything in it), and else an error saying who
// can, and how.
func (o Owners) Check(path string) error {
	abs, err := filepath.Abs(path)
	if err != nil {
		return &ChangeError{Path: path, Why: err.Error()}
	}
	c := &ownerCheck{o: o, stats: map[string]os.FileInfo{}}
	final, err := c.resolve(abs)
	if err != nil {
		return c.fail(path, err)
	}
	if err := c.tree(final, 0); err != nil {
		return c.fail(path, err)
	}
	if o.sessionTrusted() {
		for _, d := range o.Dirs {
			if d == "" {
				continue
			}
			for _, p := range []string{abs, final} {
				if Within(p, d) || Within(p, resolved(d)) {
					why := fmt.Sprintf("it lies in %s, a folder the session writes", d)
					if o.Session >= 0 {
						why += fmt.Sprintf(", and the session runs as %s, whom ownership cannot tell from the operator", o.sessionName())
					}
					return &ChangeError{Path: path, Why: why}
				}
			}
		}
	}
	return nil
}

// ChangeError says how a session could change a file a gate is read
// from, or the binary a hook runs.
type ChangeError struct {
	Path string
	Why  string
}

func (e *ChangeError) Error() string {
	return fmt.Sprintf("%s can be changed by the session: %s", e.Path, e.Why)
}

func (o Owners) sessionTrusted() bool {
	return o.Session < 0 || slices.Contains(o.Trusted, o.Session)
}

func (o Owners) sessionName() string {
	if o.Session == 0 {
		return "root"
	}
	return fmt.Sprintf("uid %d, who owns the spawngate binary", o.Session)
}

func (o Owners) trusted(uid int) bool { return slices.Contains(o.Trusted, uid) }

// Trusts tells whether the file fi describes is owned by one of Trusted:
// false too when its owner cannot be read. A doctor uses it where a host
// itself skips a file root does not own.
func (o Owners) Trusts(fi os.FileInfo) bool {
	uid, ok := ownerOf(fi)
	return ok && o.trusted(uid)
}

// ownerCheck is one Check: the folders looked at, by path.
type ownerCheck struct {
	o       Owners
	stats   map[string]os.FileInfo
	entries int
}

func (c *ownerCheck) fail(path string, err error) error {
	if ce, ok := err.(*ChangeError); ok {
		if ce.Path != path {
			ce.Why = ce.Path + " " + ce.Why
			ce.Path = path
		}
		return ce
	}
	return &ChangeError{Path: path, Why: err.Error()}
}

// lstat looks at one path once.
func (c *ownerCheck) lstat(p string) (os.FileInfo, error) {
	if fi, ok := c.stats[p]; ok {
		return fi, nil
	}
	fi, err := os.Lstat(p)
	if err != nil {
		return nil, &ChangeError{Path: p, Why: "cannot be looked at (" + Cause(err) + "), so who can change it is not known"}
	}
	c.stats[p] = fi
	return fi, nil
}

// resolve follows abs to the file it names, component by component, as
// the kernel does, and checks each folder an entry on the way is looked
// up in: whoever can write that folder can put another entry in its
// place. It returns the path with every link resolved.
func (c *ownerCheck) resolve(abs string) (string, error) {
	rest := strings.Split(strings.TrimPrefix(filepath.Clean(abs), string(filepath.Separator)), string(filepath.Separator))
	cur := string(filepath.Separator)
	links := 0
	for len(rest) > 0 {
		name := rest[0]
		rest = rest[1:]
		switch name {
		case "", ".":
			continue
		case "..":
			cur = filepath.Dir(cur)
			continue
		}
		next := filepath.Join(cur, name)
		fi, err := c.lstat(next)
		if err != nil {
			return "", err
		}
		if err := c.folder(cur, fi); err != nil {
			return "", err
		}
		if fi.Mode()&os.ModeSymlink == 0 {
			cur = next
			continue
		}
		if links++; links > maxOwnerLinks {
			return "", &ChangeError{Path: abs, Why: fmt.Sprintf("follows more than %d links", maxOwnerLinks)}
		}
		target, err := os.Readlink(next)
		if err != nil {
			return "", &ChangeError{Path: next, Why: "cannot be read (" + Cause(err) + ")"}
		}
		if filepath.IsAbs(target) {
			cur = string(filepath.Separator)
		}
		rest = append(strings.Split(target, string(filepath.Separator)), rest...)
	}
	return cur, nil
}

// folder checks a folder an entry (entry is its Lstat) is looked up in.
func (c *ownerCheck) folder(dir string, entry os.FileInfo) error {
	fi, err := c.lstat(dir)
	if err != nil {
		return err
	}
	uid, _ := ownerOf(fi)
	if !c.o.trusted(uid) {
		return &ChangeError{Path: dir, Why: c.ownedBy(uid)}
	}
	if w := writableBy(fi.Mode()); w != "" {
		if fi.Mode()&os.ModeSticky != 0 {
			// Only an entry's owner may rename or delete it here.
			if euid, _ := ownerOf(entry); c.o.trusted(euid) {
				return nil
			}
		}
		return &ChangeError{Path: dir, Why: "is writable by " + w}
	}
	return nil
}

// tree checks a resolved file, or a folder and all it holds.
func (c *ownerCheck) tree(p string, depth int) error {
	fi, err := c.lstat(p)
	if err != nil {
		return err
	}
	uid, _ := ownerOf(fi)
	if !c.o.trusted(uid) {
		return &ChangeError{Path: p, Why: c.ownedBy(uid)}
	}
	if w := writableBy(fi.Mode()); w != "" {
		return &ChangeError{Path: p, Why: "is writable by " + w}
	}
	if !fi.IsDir() {
		return nil
	}
	if depth > maxOwnerLinks {
		return &ChangeError{Path: p, Why: "is nested too deep to check"}
	}
	entries, err := os.ReadDir(p)
	if err != nil {
		return &ChangeError{Path: p, Why: "cannot be read (" + Cause(err) + "), so who can change what it holds is not known"}
	}
	for _, e := range entries {
		if c.entries++; c.entries > maxOwnerEntries {
			return &ChangeError{Path: p, Why: fmt.Sprintf("holds more than %d entries to check", maxOwnerEntries)}
		}
		child := filepath.Join(p, e.Name())
		if e.Type()&os.ModeSymlink != 0 {
			target, err := c.resolve(child)
			if err != nil {
				return err
			}
			if Within(p, target) {
				continue // a link back up: what it leads to is being checked
			}
			child = target
		}
		if err := c.tree(child, depth+1); err != nil {
			return err
		}
	}
	return nil
}

func (c *ownerCheck) ownedBy(uid int) string {
	if uid < 0 {
		return "has an owner that cannot be read"
	}
	return fmt.Sprintf("is owned by uid %d, who is not root%s: that user can change it", uid, map[bool]string{true: " nor the owner of the spawngate binary", false: ""}[len(c.o.Trusted) > 1])
}

// writableBy says who but the owner may write a file of this mode: "its
// group", "every user", or "" for no one.
func writableBy(m os.FileMode) string {
	switch {
	case m&os.ModeSymlink != 0:
		return ""
	case m.Perm()&0o002 != 0:
		return "every user"
	case m.Perm()&0o020 != 0:
		return "its group"
	}
	return ""
}

// resolved is a folder with its links resolved, or as given when it
// cannot be.
func resolved(dir string) string {
	if r, err := filepath.EvalSymlinks(dir); err == nil {
		return r
	}
	return dir
}
