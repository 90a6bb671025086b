package doctor

import (
	"cmp"
	"path/filepath"
	"strings"

	"github.com/spawngate/spawngate/internal/host"
)

// Machine is where the absolute paths a host names lie on the machine
// doctor runs on. Root stands in for / (a staged installation, a test),
// but for the session's own folders (the project and home given to
// doctor), which are given as they are: a hook command that names
// /usr/local/bin/spawngate is looked at in ROOT/usr/local/bin/spawngate,
// one that names $HOME/bin/spawngate in the --home folder.
//
// Messages name every path as the host sees it (/usr/local/bin/spawngate),
// never as it lies under Root; a finding's File, the file to edit, is
// where it lies on this machine, as before. A link under Root is followed
// on this machine, not under Root, and the folders above Root are checked
// for ownership too: a staged installation is held to no less than a
// real one.
type Machine struct {
	// Root is the folder that stands in for /; "" or "/" is the real root.
	Root string
	// Own are the session's folders, absolute: never under Root.
	Own []string
}

// Machine is where the paths the options' host names lie.
func (o Options) Machine() Machine {
	project, home, _ := o.Dirs()
	return Machine{Root: o.Root, Own: []string{project, home}}
}

// root is the clean absolute root, "" for the real one.
func (m Machine) root() string {
	r := cmp.Or(m.Root, string(filepath.Separator))
	if abs, err := filepath.Abs(r); err == nil {
		r = abs
	}
	if r == string(filepath.Separator) {
		return ""
	}
	return r
}

// OnDisk is where the path p, as the host names it, lies on this machine:
// p itself when it is relative, in one of the session's folders, or the
// root is the real one; else p under Root.
func (m Machine) OnDisk(p string) string {
	r := m.root()
	if r == "" || !filepath.IsAbs(p) {
		return p
	}
	for _, d := range m.Own {
		if d != "" && host.Within(p, d) {
			return p
		}
	}
	return filepath.Join(r, p)
}

// Shown is the path on this machine p as the host sees it: with Root
// taken off when it lies under Root, else p itself.
func (m Machine) Shown(p string) string {
	r := m.root()
	if r == "" || !filepath.IsAbs(p) {
		return p
	}
	for _, d := range m.Own {
		if d != "" && host.Within(p, d) {
			return p
		}
	}
	if rel, err := filepath.Rel(r, p); err == nil && filepath.IsLocal(rel) {
		return string(filepath.Separator) + rel
	}
	return p
}

// ShownIn is a message about files on this machine (an error of the
// policy reader, of the ownership check) with every path under Root named
// as the host sees it. The reader and the check name the paths they were
// given; this is the one place their words are mapped back.
func (m Machine) ShownIn(msg string) string {
	r := m.root()
	if r == "" {
		return msg
	}
	for _, d := range m.Own {
		// A session folder that lies under Root keeps its name.
		if d != "" && host.Within(d, r) {
			return msg
		}
	}
	return strings.ReplaceAll(msg, r+string(filepath.Separator), string(filepath.Separator))
}
