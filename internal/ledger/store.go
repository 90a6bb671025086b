package ledger

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
)

// Store is where the ledgers of sessions are kept: a directory (Dir) for
// the processes of one machine, or a Redis server (Redis) for replicas
// that serve one session from several.
type Store interface {
	// Open reads a session's ledger, for one decision. A store holding
	// more than maxBytes of it (65 bytes a nonce) is an error wrapping
	// ErrTooLarge. The caller must Close it.
	Open(ctx context.Context, session string, maxBytes int64) (Session, error)
	// Check tells whether the store can be read and written now, for a
	// server that must not start without a ledger it can use.
	Check(ctx context.Context) error
	// Close lets go of what the store holds (connections).
	Close() error
	// String names the store in messages: its folder, or its URL without
	// a password.
	String() string
}

// Session is one session's ledger, open for one decision.
type Session interface {
	// Hashes lists the hashes of the nonces the session handed out,
	// sorted; never nil.
	Hashes() []string
	// Add records a nonce, by its hash, for Commit to keep.
	Add(nonce string)
	// Commit keeps what Add added. An error wrapping ErrClaimed says that
	// one of those nonces was handed out by another decision since Open:
	// the decision must be taken again on a fresh Open, never passed.
	Commit(ctx context.Context) error
	// Close ends the decision's hold on the ledger.
	Close() error
}

// ErrClaimed is wrapped by the Error of a Commit that found one of its
// nonces already handed out by another decision since its Open (a store
// shared by replicas, which are not locked against each other).
var ErrClaimed = errors.New("nonce claimed meanwhile")

// Dir is the Store in a directory: one locked file per session (Open).
type Dir string

// Open locks and reads the session's ledger file under the directory.
func (d Dir) Open(ctx context.Context, session string, maxBytes int64) (Session, error) {
	return Open(ctx, string(d), session, maxBytes)
}

// Check makes the folder of the ledgers and writes a file in it.
func (d Dir) Check(ctx context.Context) error {
	sessions := filepath.Join(string(d), "sessions")
	if err := os.MkdirAll(sessions, 0o700); err != nil {
		return &Error{File: sessions, Msg: "cannot make the ledger folder: " + reason(err), Err: err}
	}
	var b [8]byte
	rand.Read(b[:])
	probe := filepath.Join(sessions, ".check-"+hex.EncodeToString(b[:])+".tmp")
	f, err := os.OpenFile(probe, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return &Error{File: sessions, Msg: "cannot write in the ledger folder: " + reason(err), Err: err}
	}
	f.Close()
	if err := os.Remove(probe); err != nil {
		return &Error{File: probe, Msg: "cannot remove a file from the ledger folder: " + reason(err), Err: err}
	}
	return nil
}

// Close does nothing: a directory holds no connection.
func (d Dir) Close() error { return nil }

func (d Dir) String() string { return string(d) }

var (
	_ Store   = Dir("")
	_ Store   = (*Redis)(nil)
	_ Session = (*Ledger)(nil)
	_ Session = (*redisSession)(nil)
)
