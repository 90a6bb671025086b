//go:build !unix

package ledger

import (
	"context"
	"errors"
	"os"
)

// errNoFlock is why a ledger cannot be locked here.
var errNoFlock = errors.New("no flock on this system")

// lockPath fails: without flock two hooks could lose each other's nonces,
// so a ledger is never used unlocked.
func lockPath(ctx context.Context, file string) (*os.File, error) {
	return nil, &Error{File: file, Msg: "the session ledger needs flock(2), which this system does not have", Err: errNoFlock}
}

func unlock(f *os.File) error { return f.Close() }

func syncDir(dir string) {}
