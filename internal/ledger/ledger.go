package ledger

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spawngate/spawngate/internal/document"
)

// ErrTooLarge is wrapped by the Error of a ledger file larger than the
// limit Open was given.
var ErrTooLarge = errors.New("ledger too large")

// Error is why a ledger could not be used, with the file and the place in
// it. Err, when set, is the cause: a context's error for a wait for the
// lock that ended, ErrTooLarge, or the system's.
type Error struct {
	File string
	// Line and Column are 1-based, 0 when not known; Pointer is a JSON
	// pointer into the file, "" when none applies.
	Line, Column int
	Pointer      string
	Msg          string
	Err          error
}

// Error is the problem on one line: "<file>:3:5: /nonces_sha256/2: msg".
func (e *Error) Error() string { return document.Where(e.File, e.Line, e.Column, e.Pointer) + e.Msg }

func (e *Error) Unwrap() error { return e.Err }

// DefaultDir is the state directory ledgers live under when none is
// given: $XDG_STATE_HOME/spawngate, else ~/.local/state/spawngate. An
// XDG_STATE_HOME that is not absolute is ignored, as the XDG base
// directory specification says. getenv may be nil.
func DefaultDir(getenv func(string) string, home string) (string, error) {
	if getenv != nil {
		if x := getenv("XDG_STATE_HOME"); x != "" && filepath.IsAbs(x) {
			return filepath.Join(x, "spawngate"), nil
		}
	}
	if home == "" || !filepath.IsAbs(home) {
		return "", errors.New("no state directory: neither XDG_STATE_HOME nor a home directory is set")
	}
	return filepath.Join(home, ".local", "state", "spawngate"), nil
}

// Hash is the SHA-256 of a nonce as the ledger stores it: 64 lowercase
// hex digits.
func Hash(nonce string) string {
	sum := sha256.Sum256([]byte(nonce))
	return hex.EncodeToString(sum[:])
}

// Ledger is one session's ledger in a directory (the Dir store), locked
// from Open to Close.
type Ledger struct {
	file string
	lock *os.File
	// hashes are sorted and distinct; changed says Add added one.
	hashes  []string
	changed bool
}

// Path is the ledger file of a session under dir.
func Path(dir, session string) string {
	return filepath.Join(dir, "sessions", Hash(session)+".json")
}

// Open locks the ledger of a session under dir and reads it. A ledger that
// does not exist yet is empty; one larger than maxBytes, or that cannot be
// read or parsed, is an error. The wait for the lock ends with ctx. The
// caller must Close it, which releases the lock.
func Open(ctx context.Context, dir, session string, maxBytes int64) (*Ledger, error) {
	file := Path(dir, session)
	sessions := filepath.Dir(file)
	if err := os.MkdirAll(sessions, 0o700); err != nil {
		return nil, &Error{File: sessions, Msg: "cannot make the ledger folder: " + reason(err), Err: err}
	}
	lockFile := strings.TrimSuffix(file, ".json") + ".lock"
	lock, err := lockPath(ctx, lockFile)
	if err != nil {
		return nil, err
	}
	l := &Ledger{file: file, lock: lock}
	if err := l.read(maxBytes); err != nil {
		l.Close()
		return nil, err
	}
	return l, nil
}

// File is the ledger's file.
func (l *Ledger) File() string { return l.file }

// Hashes lists the hashes of the nonces the session handed out, sorted;
// never nil, so that it is written as a list.
func (l *Ledger) Hashes() []string { return append([]string{}, l.hashes...) }

// Has tells whether the session already handed out a nonce.
func (l *Ledger) Has(nonce string) bool {
	_, found := slices.BinarySearch(l.hashes, Hash(nonce))
	return found
}

// Add records a nonce, by its hash, for Commit to write.
func (l *Ledger) Add(nonce string) {
	h := Hash(nonce)
	if i, found := slices.BinarySearch(l.hashes, h); !found {
		l.hashes = slices.Insert(l.hashes, i, h)
		l.changed = true
	}
}

// Commit writes what Add added, atomically: a temporary file in the same
// folder, synced, renamed over the ledger. Without an addition it writes
// nothing. A ctx that has ended writes nothing and is an error: the
// decision it was for is past its deadline, and its spawn does not go
// ahead.
func (l *Ledger) Commit(ctx context.Context) error {
	if !l.changed {
		return nil
	}
	if err := ctx.Err(); err != nil {
		return &Error{File: l.file, Msg: "the decision ended before the ledger was written", Err: err}
	}
	if l.lock == nil {
		return &Error{File: l.file, Msg: "the ledger is closed"}
	}
	data, err := json.MarshalIndent(ledgerFile{Nonces: l.hashes}, "", "  ")
	if err != nil {
		return &Error{File: l.file, Msg: "cannot encode the ledger: " + err.Error(), Err: err}
	}
	data = append(data, '\n')
	dir := filepath.Dir(l.file)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(l.file)+".*.tmp")
	if err != nil {
		return &Error{File: l.file, Msg: "cannot write the ledger: " + reason(err), Err: err}
	}
	fail := func(err error) error {
		tmp.Close()
		os.Remove(tmp.Name())
		return &Error{File: tmp.Name(), Msg: "cannot write the ledger: " + reason(err), Err: err}
	}
	if _, err := tmp.Write(data); err != nil {
		return fail(err)
	}
	if err := tmp.Sync(); err != nil {
		return fail(err)
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return &Error{File: tmp.Name(), Msg: "cannot write the ledger: " + reason(err), Err: err}
	}
	if err := os.Rename(tmp.Name(), l.file); err != nil {
		os.Remove(tmp.Name())
		return &Error{File: l.file, Msg: "cannot replace the ledger: " + reason(err), Err: err}
	}
	syncDir(dir)
	l.changed = false
	return nil
}

// Close releases the lock. What Add added and Commit did not write is
// lost.
func (l *Ledger) Close() error {
	if l.lock == nil {
		return nil
	}
	err := unlock(l.lock)
	l.lock = nil
	return err
}

// ledgerFile is the ledger file.
type ledgerFile struct {
	Nonces []string `json:"nonces_sha256"`
}

func (l *Ledger) read(maxBytes int64) error {
	f, err := os.Open(l.file)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return &Error{File: l.file, Msg: "cannot read the ledger: " + reason(err), Err: err}
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return &Error{File: l.file, Msg: "cannot read the ledger: " + reason(err), Err: err}
	}
	if !info.Mode().IsRegular() {
		return &Error{File: l.file, Msg: "the ledger is not a regular file"}
	}
	data, err := io.ReadAll(io.LimitReader(f, maxBytes+1))
	if err != nil {
		return &Error{File: l.file, Msg: "cannot read the ledger: " + reason(err), Err: err}
	}
	if int64(len(data)) > maxBytes {
		return &Error{File: l.file, Msg: fmt.Sprintf("the ledger is larger than %d bytes", maxBytes), Err: ErrTooLarge}
	}
	hashes, err := parse(l.file, data)
	if err != nil {
		return err
	}
	l.hashes = hashes
	return nil
}

// parse reads a ledger file strictly: one object with nonces_sha256 and
// nothing else, each entry 64 lowercase hex digits. It returns the hashes
// sorted and distinct.
func parse(file string, data []byte) ([]string, error) {
	corrupt := func(pointer, format string, args ...any) error {
		return &Error{File: file, Pointer: pointer, Msg: "the ledger is corrupt: " + fmt.Sprintf(format, args...)}
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, corrupt("", "it is empty")
	}
	var raw map[string]json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&raw); err != nil {
		var se *json.SyntaxError
		var te *json.UnmarshalTypeError
		switch {
		case errors.As(err, &se):
			// Offset counts the bytes read, the bad one included.
			line, col := position(data, max(se.Offset-1, 0))
			return nil, &Error{File: file, Line: line, Column: col, Msg: "the ledger is corrupt: " + se.Error()}
		case errors.Is(err, io.ErrUnexpectedEOF):
			line, col := position(data, int64(len(data)))
			return nil, &Error{File: file, Line: line, Column: col, Msg: "the ledger is corrupt: it ends in the middle of its JSON"}
		case errors.As(err, &te):
			return nil, corrupt("", "it is not a JSON object")
		}
		return nil, corrupt("", "%s", err.Error())
	}
	if raw == nil {
		return nil, corrupt("", "it is not a JSON object")
	}
	if _, err := dec.Token(); err != io.EOF {
		line, col := position(data, dec.InputOffset())
		return nil, &Error{File: file, Line: line, Column: col, Msg: "the ledger is corrupt: more after its one JSON object"}
	}
	for k := range raw {
		if k != "nonces_sha256" {
			return nil, corrupt("/"+k, "unknown key %q", k)
		}
	}
	list, ok := raw["nonces_sha256"]
	if !ok {
		return nil, corrupt("", "nonces_sha256 is missing")
	}
	var entries []any
	if err := json.Unmarshal(list, &entries); err != nil || entries == nil {
		return nil, corrupt("/nonces_sha256", "not a list")
	}
	hashes := make([]string, 0, len(entries))
	for i, e := range entries {
		s, ok := e.(string)
		if !ok || !isHash(s) {
			return nil, corrupt(fmt.Sprintf("/nonces_sha256/%d", i), "not a SHA-256 as 64 lowercase hex digits")
		}
		hashes = append(hashes, s)
	}
	slices.Sort(hashes)
	return slices.Compact(hashes), nil
}

func isHash(s string) bool {
	if len(s) != 64 {
		return false
	}
	for _, r := range s {
		if (r < '0' || r > '9') && (r < 'a' || r > 'f') {
			return false
		}
	}
	return true
}

// position is the 1-based line and column of a byte offset.
func position(data []byte, offset int64) (int, int) {
	if offset > int64(len(data)) {
		offset = int64(len(data))
	}
	before := data[:offset]
	line := bytes.Count(before, []byte("\n")) + 1
	col := len(before) - bytes.LastIndexByte(before, '\n')
	return line, col
}

// reason is the system's reason without the path, which the Error names.
func reason(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	var le *os.LinkError
	if errors.As(err, &le) {
		return le.Err.Error()
	}
	return err.Error()
}
