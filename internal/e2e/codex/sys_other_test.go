//go:build !linux

package codex

import (
	"errors"
	"io"
	"os"
)

// The suite runs the Linux client; elsewhere it still compiles, and the
// network namespace is never entered (reexecInNetns needs unshare).
func loopbackUp() error { return errors.New("network namespaces are Linux only") }

func fileOwner(os.FileInfo) int { return -1 }

func readAllLimited(r io.Reader, n int64) ([]byte, error) { return io.ReadAll(io.LimitReader(r, n)) }
