//go:build !linux

package claudecode

import (
	"os"
	"time"
)

// changed is when a file last changed. Only Linux's ctime is read: a
// session's start is known on Linux alone (/proc), so elsewhere no
// definition is held to it.
func changed(fi os.FileInfo) time.Time { return fi.ModTime() }
