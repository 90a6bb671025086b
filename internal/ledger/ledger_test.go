package ledger

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

const maxBytes = 1 << 20

func open(t *testing.T, dir, session string) *Ledger {
	t.Helper()
	l, err := Open(context.Background(), dir, session, maxBytes)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func hashesOf(nonces ...string) []string {
	var out []string
	for _, n := range nonces {
		out = append(out, Hash(n))
	}
	slices.Sort(out)
	return out
}

func TestDefaultDir(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	for _, tc := range []struct {
		name string
		env  map[string]string
		home string
		want string
	}{
		{"xdg", map[string]string{"XDG_STATE_HOME": "/x/state"}, "/home/u", "/x/state/spawngate"},
		{"home", nil, "/home/u", "/home/u/.local/state/spawngate"},
		{"relative xdg is ignored", map[string]string{"XDG_STATE_HOME": "state"}, "/home/u", "/home/u/.local/state/spawngate"},
		{"neither", nil, "", ""},
		{"relative home", nil, "home", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := DefaultDir(env(tc.env), tc.home)
			if got != tc.want || (err != nil) != (tc.want == "") {
				t.Fatalf("DefaultDir = %q, %v; want %q", got, err, tc.want)
			}
		})
	}
	if got, _ := DefaultDir(nil, "/h"); got != "/h/.local/state/spawngate" {
		t.Fatalf("nil getenv: %q", got)
	}
}

// The ledger keeps hashes only, sorted, in a file named by the hash of the
// session id, and a second Open sees what the first committed.
func TestLedgerKeepsHashesOnly(t *testing.T) {
	dir := t.TempDir()
	session := "../../etc/passwd\x00 any id at all"
	l := open(t, dir, session)
	if len(l.Hashes()) != 0 {
		t.Fatalf("a new ledger holds %v", l.Hashes())
	}
	for _, n := range []string{"R-zeta", "R-alpha", "R-zeta"} {
		l.Add(n)
	}
	if err := l.Commit(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	want := filepath.Join(dir, "sessions", Hash(session)+".json")
	if l.File() != want {
		t.Fatalf("file %q, want %q", l.File(), want)
	}
	data, err := os.ReadFile(want)
	if err != nil {
		t.Fatal(err)
	}
	wantText := fmt.Sprintf("{\n  \"nonces_sha256\": [\n    %q,\n    %q\n  ]\n}\n", hashesOf("R-zeta", "R-alpha")[0], hashesOf("R-zeta", "R-alpha")[1])
	if string(data) != wantText {
		t.Fatalf("ledger file:\n%s\nwant:\n%s", data, wantText)
	}
	for _, secret := range []string{"R-zeta", "R-alpha", "passwd", "any id"} {
		if strings.Contains(string(data), secret) {
			t.Fatalf("the ledger holds %q", secret)
		}
	}
	for _, f := range []string{want, filepath.Dir(want)} {
		info, err := os.Stat(f)
		if err != nil {
			t.Fatal(err)
		}
		if perm := info.Mode().Perm(); perm&0o077 != 0 {
			t.Fatalf("%s is %v: others can read it", f, perm)
		}
	}
	l2 := open(t, dir, session)
	defer l2.Close()
	if !slices.Equal(l2.Hashes(), hashesOf("R-alpha", "R-zeta")) || !l2.Has("R-alpha") || l2.Has("R-beta") {
		t.Fatalf("reopened ledger holds %v", l2.Hashes())
	}
	other := open(t, dir, "another session")
	defer other.Close()
	if len(other.Hashes()) != 0 {
		t.Fatalf("another session sees %v", other.Hashes())
	}
}

// A ledger that cannot be read or parsed is an error naming the file and
// the place, never an empty ledger.
func TestCorruptLedgerFailsClosed(t *testing.T) {
	good := Hash("R-x")
	for _, tc := range []struct {
		name, data, want string
	}{
		{"empty", "", ": the ledger is corrupt: it is empty"},
		{"truncated", `{"nonces_sha256": ["` + good[:10], ":1:31: the ledger is corrupt: it ends in the middle of its JSON"},
		{"not json", "nonce\n", ":1:2: the ledger is corrupt: invalid character 'o' in literal null (expecting 'u')"},
		{"a list", `["` + good + `"]`, ": the ledger is corrupt: it is not a JSON object"},
		{"null", `null`, ": the ledger is corrupt: it is not a JSON object"},
		{"no key", `{}`, ": the ledger is corrupt: nonces_sha256 is missing"},
		{"unknown key", `{"nonces_sha256": [], "nonces": ["R-x"]}`, ": /nonces: the ledger is corrupt: unknown key \"nonces\""},
		{"not a list", `{"nonces_sha256": "x"}`, ": /nonces_sha256: the ledger is corrupt: not a list"},
		{"null list", `{"nonces_sha256": null}`, ": /nonces_sha256: the ledger is corrupt: not a list"},
		{"a nonce, not a hash", `{"nonces_sha256": ["` + good + `", "R-x"]}`, ": /nonces_sha256/1: the ledger is corrupt: not a SHA-256 as 64 lowercase hex digits"},
		{"upper case", `{"nonces_sha256": ["` + strings.ToUpper(good) + `"]}`, ": /nonces_sha256/0: the ledger is corrupt: not a SHA-256 as 64 lowercase hex digits"},
		{"a number", `{"nonces_sha256": [1]}`, ": /nonces_sha256/0: the ledger is corrupt: not a SHA-256 as 64 lowercase hex digits"},
		{"two objects", "{\"nonces_sha256\": []}\n{}", ":2:2: the ledger is corrupt: more after its one JSON object"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			file := Path(dir, "s")
			if err := os.MkdirAll(filepath.Dir(file), 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(file, []byte(tc.data), 0o600); err != nil {
				t.Fatal(err)
			}
			l, err := Open(context.Background(), dir, "s", maxBytes)
			if err == nil {
				l.Close()
				t.Fatalf("a corrupt ledger opened, holding %v", l.Hashes())
			}
			var le *Error
			if !errors.As(err, &le) || le.File != file {
				t.Fatalf("error %v does not name %s", err, file)
			}
			if got := strings.TrimPrefix(err.Error(), file); got != tc.want || strings.Contains(got, "\n") {
				t.Fatalf("error\n%q, want\n%q", got, tc.want)
			}
			// The lock is released: the next hook is not stuck behind it.
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			if _, err := lockPath(ctx, strings.TrimSuffix(file, ".json")+".lock"); err != nil {
				t.Fatalf("the lock was kept after a failed Open: %v", err)
			}
		})
	}
	t.Run("too large", func(t *testing.T) {
		dir := t.TempDir()
		l := open(t, dir, "s")
		for i := range 20 {
			l.Add(strconv.Itoa(i))
		}
		if err := l.Commit(context.Background()); err != nil {
			t.Fatal(err)
		}
		l.Close()
		_, err := Open(context.Background(), dir, "s", 100)
		if !errors.Is(err, ErrTooLarge) || !strings.HasSuffix(err.Error(), ": the ledger is larger than 100 bytes") {
			t.Fatalf("got %v", err)
		}
	})
	t.Run("a folder", func(t *testing.T) {
		dir := t.TempDir()
		if err := os.MkdirAll(Path(dir, "s"), 0o700); err != nil {
			t.Fatal(err)
		}
		if _, err := Open(context.Background(), dir, "s", maxBytes); err == nil || !strings.Contains(err.Error(), "not a regular file") {
			t.Fatalf("got %v", err)
		}
	})
	t.Run("state dir is a file", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "f")
		if err := os.WriteFile(dir, nil, 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := Open(context.Background(), dir, "s", maxBytes)
		if err == nil || !strings.HasPrefix(err.Error(), filepath.Join(dir, "sessions")+": cannot make the ledger folder: ") {
			t.Fatalf("got %v", err)
		}
	})
}

// While one hook holds the ledger, another waits, and a wait that ends
// with its context is an error; once the first closes, the second sees
// what it committed.
func TestLockWaitIsBoundedAndSerializes(t *testing.T) {
	dir := t.TempDir()
	first := open(t, dir, "s")
	first.Add("R-first")
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	// The wait must end with its context; a minute is the bound a busy
	// machine cannot break and a wait that ignores its context does.
	opened := make(chan error, 1)
	go func() {
		_, err := Open(ctx, dir, "s", maxBytes)
		opened <- err
	}()
	select {
	case err := <-opened:
		if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "locked by another hook") {
			t.Fatalf("a second Open under the lock: %v", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("a second Open under the lock still waits a minute after its context ended")
	}
	got := make(chan []string, 1)
	go func() {
		l, err := Open(context.Background(), dir, "s", maxBytes)
		if err != nil {
			got <- []string{err.Error()}
			return
		}
		defer l.Close()
		got <- l.Hashes()
	}()
	time.Sleep(30 * time.Millisecond) // the second is waiting now
	if err := first.Commit(context.Background()); err != nil {
		t.Fatal(err)
	}
	first.Close()
	if h := <-got; !slices.Equal(h, hashesOf("R-first")) {
		t.Fatalf("the second Open saw %v", h)
	}
	if err := first.Commit(context.Background()); err != nil { // nothing new: nothing to write
		t.Fatal(err)
	}
	first.Add("R-late")
	if err := first.Commit(context.Background()); err == nil {
		t.Fatal("a closed ledger was written")
	}
}

// addOne is one hook's turn: lock, read, add a nonce, write, unlock.
func addOne(dir, session, nonce string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	l, err := Open(ctx, dir, session, maxBytes)
	if err != nil {
		return err
	}
	defer l.Close()
	if l.Has(nonce) {
		return fmt.Errorf("nonce %s already there", nonce)
	}
	l.Add(nonce)
	return l.Commit(ctx)
}

// Many goroutines racing on one ledger keep every nonce.
func TestConcurrentGoroutinesKeepEveryNonce(t *testing.T) {
	dir := t.TempDir()
	const n = 64
	var wg sync.WaitGroup
	errs := make(chan error, n)
	var want []string
	for i := range n {
		nonce := fmt.Sprintf("R-g%d", i)
		want = append(want, nonce)
		wg.Go(func() { errs <- addOne(dir, "race", nonce) })
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	l := open(t, dir, "race")
	defer l.Close()
	if !slices.Equal(l.Hashes(), hashesOf(want...)) {
		t.Fatalf("kept %d of %d nonces", len(l.Hashes()), n)
	}
}

// Separate processes racing on one ledger (as hooks do) keep every nonce:
// the test binary runs itself as the racing hooks.
func TestConcurrentProcessesKeepEveryNonce(t *testing.T) {
	if os.Getenv("LEDGER_RACE_DIR") != "" {
		t.Skip("inside a racing process")
	}
	dir := t.TempDir()
	const procs, each = 6, 15
	var cmds []*exec.Cmd
	var want []string
	for p := range procs {
		cmd := exec.Command(os.Args[0], "-test.run=^TestRacingProcess$")
		cmd.Env = append(os.Environ(), "LEDGER_RACE_DIR="+dir, "LEDGER_RACE_ID="+strconv.Itoa(p), "LEDGER_RACE_N="+strconv.Itoa(each))
		cmd.Stderr = os.Stderr
		for i := range each {
			want = append(want, fmt.Sprintf("R-p%d-%d", p, i))
		}
		cmds = append(cmds, cmd)
	}
	for _, c := range cmds {
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range cmds {
		if err := c.Wait(); err != nil {
			t.Fatalf("a racing process failed: %v", err)
		}
	}
	l := open(t, dir, "race")
	defer l.Close()
	if !slices.Equal(l.Hashes(), hashesOf(want...)) {
		t.Fatalf("kept %d of %d nonces", len(l.Hashes()), len(want))
	}
	leftovers, _ := filepath.Glob(filepath.Join(dir, "sessions", ".*.tmp"))
	if len(leftovers) > 0 {
		t.Fatalf("temporary files left: %v", leftovers)
	}
}

// TestRacingProcess is one racing hook process of
// TestConcurrentProcessesKeepEveryNonce; alone it does nothing.
func TestRacingProcess(t *testing.T) {
	dir := os.Getenv("LEDGER_RACE_DIR")
	if dir == "" {
		t.Skip("run by TestConcurrentProcessesKeepEveryNonce")
	}
	n, _ := strconv.Atoi(os.Getenv("LEDGER_RACE_N"))
	for i := range n {
		if err := addOne(dir, "race", fmt.Sprintf("R-p%s-%d", os.Getenv("LEDGER_RACE_ID"), i)); err != nil {
			t.Fatal(err)
		}
	}
}
