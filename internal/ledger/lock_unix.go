//go:build unix

package ledger

import (
	"context"
	"errors"
	"os"
	"syscall"
	"time"
)

// lockPath opens the lock file (making it if need be) and takes an
// exclusive flock on it, waiting until ctx ends. flock is tried without
// blocking and retried, since a blocking flock cannot be given up.
func lockPath(ctx context.Context, file string) (*os.File, error) {
	f, err := os.OpenFile(file, os.O_RDWR|os.O_CREATE|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return nil, &Error{File: file, Msg: "cannot open the ledger's lock file: " + reason(err), Err: err}
	}
	wait := time.Millisecond
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return f, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) && !errors.Is(err, syscall.EINTR) {
			f.Close()
			return nil, &Error{File: file, Msg: "cannot lock the ledger: " + err.Error(), Err: err}
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			f.Close()
			return nil, &Error{File: file, Msg: "the ledger is locked by another hook", Err: ctx.Err()}
		case <-t.C:
		}
		wait = min(2*wait, 20*time.Millisecond)
	}
}

// unlock releases the lock and closes the file.
func unlock(f *os.File) error {
	err := syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// syncDir makes a rename in dir durable; a folder that cannot be synced
// still holds the renamed file.
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
}
