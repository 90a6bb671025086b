//go:build unix

package host

import (
	"os"
	"path/filepath"
	"syscall"
)

// ownerOf is the uid that owns a file, -1 when the system does not say.
func ownerOf(fi os.FileInfo) (int, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return -1, false
	}
	return int(st.Uid), true
}

// HookOwners are the owners a hook accepts for what its gate is read
// from: root, and the owner of the spawngate binary running; the session
// is this process's user, the hook running as the session does.
func HookOwners(dirs ...string) Owners {
	o := Owners{Trusted: []int{0}, Session: os.Geteuid(), Dirs: dirs}
	if exe, err := os.Executable(); err == nil {
		if exe, err = filepath.EvalSymlinks(exe); err == nil {
			if fi, err := os.Stat(exe); err == nil {
				if uid, ok := ownerOf(fi); ok && uid != 0 {
					o.Trusted = append(o.Trusted, uid)
				}
			}
		}
	}
	return o
}
