package claudecode

import (
	"os"
	"syscall"
	"time"
)

// changed is when a file's inode last changed (its ctime): written,
// renamed, linked or chmodded. Unlike the modification time, no process
// can set it back (touch -r sets the mtime only).
func changed(fi os.FileInfo) time.Time {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return time.Unix(st.Ctim.Sec, st.Ctim.Nsec)
	}
	return fi.ModTime()
}
