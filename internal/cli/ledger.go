package cli

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/spawngate/spawngate/internal/ledger"
)

// ledgerFlags are where hook and serve keep the session ledgers, which
// the operator policy's brief_retask turns on: a folder (--state-dir), or
// a Redis server that replicas share (--ledger).
type ledgerFlags struct {
	stateDir string
	url      string
	ttl      time.Duration
}

// DefaultLedgerTTL is how long a Redis ledger keeps a session after its
// last nonce: Claude Code keeps a session's transcript, which --resume
// picks up, for 30 days by default.
const DefaultLedgerTTL = 30 * 24 * time.Hour

func (c *command) ledgerFlags(l *ledgerFlags) {
	c.fs.Func("state-dir", "the `DIR` the session ledgers are kept in: the SHA-256 of each re-task nonce a session handed out, so that a later spawn reusing one is refused; used only when the operator policy sets brief_retask (default: $XDG_STATE_HOME/spawngate, else ~/.local/state/spawngate)", func(s string) error {
		if s == "" {
			return errors.New("is empty: name a folder for the session ledgers")
		}
		l.stateDir = s
		return nil
	})
	c.fs.Func("ledger", "keep the session ledgers in the Redis server at `URL` instead of a folder (redis://HOST:PORT/DB, rediss:// for TLS, unix:///PATH?db=DB), shared by every replica and machine that names it", func(s string) error {
		if s == "" {
			return errors.New("is empty: name a Redis server, redis://HOST:PORT/DB")
		}
		l.url = s
		return nil
	})
	c.fs.DurationVar(&l.ttl, "ledger-ttl", DefaultLedgerTTL, "how long the --ledger server keeps a session's nonces after its last one, as a `duration`; a session idle longer forgets them")
}

// checkLedger refuses ledger flags that contradict each other, or a Redis
// URL that cannot be used.
func (c *command) checkLedger(l *ledgerFlags) error {
	set := map[string]bool{}
	c.fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	switch {
	case l.url != "" && l.stateDir != "":
		return &usageError{"--ledger and --state-dir go apart: the session ledgers are kept in one place"}
	case set["ledger-ttl"] && l.url == "":
		return &usageError{"--ledger-ttl needs --ledger: a folder's ledgers do not expire"}
	case l.ttl < time.Second:
		return &usageError{"--ledger-ttl must be at least 1s"}
	}
	if l.url != "" {
		r, err := ledger.NewRedis(l.url, l.ttl)
		if err != nil {
			return &usageError{"--ledger " + err.Error()}
		}
		r.Close()
	}
	return nil
}

// store is the ledger the flags name: Redis for --ledger, the folder of
// --state-dir, else nil (the caller's default).
func (l *ledgerFlags) store() (ledger.Store, error) {
	switch {
	case l.url != "":
		return ledger.NewRedis(l.url, l.ttl)
	case l.stateDir != "":
		return ledger.Dir(l.stateDir), nil
	}
	return nil, nil
}

// serverStore is the ledger a server keeps: the flags', else the default
// folder of the server's own environment, else none (a policy that sets
// brief_retask then cannot be served).
func (l *ledgerFlags) serverStore(home string) (ledger.Store, error) {
	s, err := l.store()
	if s != nil || err != nil {
		return s, err
	}
	if dir, err := ledger.DefaultDir(os.Getenv, home); err == nil {
		return ledger.Dir(dir), nil
	}
	return nil, nil
}

// ledgerHint says how to give a server a ledger it can use.
func ledgerHint(l *ledgerFlags) string {
	switch {
	case l.url != "":
		return fmt.Sprintf(" (--ledger %s)", flagValue(l.url))
	case l.stateDir != "":
		return " (--state-dir)"
	}
	return ": give --state-dir DIR for one server, or --ledger redis://HOST:PORT/DB for replicas"
}

// flagValue is a Redis URL as messages show it: without a password.
func flagValue(u string) string {
	if r, err := ledger.NewRedis(u, DefaultLedgerTTL); err == nil {
		defer r.Close()
		return r.String()
	}
	return "URL"
}

// ledgerName names a server's ledger in its log: "none" without one.
func ledgerName(s ledger.Store) string {
	if s == nil {
		return "none"
	}
	return s.String()
}
