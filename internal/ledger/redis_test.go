package ledger

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/spawngate/spawngate/internal/ledger/ledgertest"
)

// newRedis is a store on the test server, closed with the test.
func newRedis(t *testing.T, rawURL string) *Redis {
	t.Helper()
	r, err := NewRedis(rawURL, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

// freshSession is a session id no other test, or earlier run, uses.
func freshSession(t *testing.T) string {
	var b [8]byte
	rand.Read(b[:])
	return t.Name() + "/" + hex.EncodeToString(b[:])
}

func openSession(t *testing.T, s Store, session string) Session {
	t.Helper()
	l, err := s.Open(context.Background(), session, maxBytes)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// A Redis ledger keeps hashes only, in a set named by the hash of the
// session id, which expires; what one store claims another store on the
// same server (another replica) reads.
func TestRedisKeepsHashesOnly(t *testing.T) {
	u := ledgertest.RedisURL(t)
	a, b := newRedis(t, u), newRedis(t, u)
	ctx := context.Background()
	if err := a.Check(ctx); err != nil {
		t.Fatal(err)
	}
	session := freshSession(t)
	l := openSession(t, a, session)
	if h := l.Hashes(); h == nil || len(h) != 0 {
		t.Fatalf("a new ledger holds %#v", h)
	}
	for _, n := range []string{"R-zeta", "R-alpha", "R-zeta"} {
		l.Add(n)
	}
	if err := l.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if err := l.Commit(ctx); err != nil { // nothing new: nothing to claim
		t.Fatal(err)
	}
	if !slices.Equal(l.Hashes(), hashesOf("R-alpha", "R-zeta")) {
		t.Fatalf("after the claim the session holds %v", l.Hashes())
	}
	l.Close()
	key := KeyPrefix + Hash(session)
	members, err := a.client.SMembers(ctx, key).Result()
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(members)
	if !slices.Equal(members, hashesOf("R-alpha", "R-zeta")) {
		t.Fatalf("the set holds %v", members)
	}
	for _, m := range members {
		for _, secret := range []string{"R-zeta", "R-alpha", "Test"} {
			if strings.Contains(m, secret) {
				t.Fatalf("the set holds %q", secret)
			}
		}
	}
	if ttl, err := a.client.PTTL(ctx, key).Result(); err != nil || ttl <= 0 || ttl > time.Hour {
		t.Fatalf("the set expires in %v (%v), want within the store's hour", ttl, err)
	}
	// Another replica sees the nonces, and another session none.
	if got := openSession(t, b, session).Hashes(); !slices.Equal(got, hashesOf("R-alpha", "R-zeta")) {
		t.Fatalf("the other store reads %v", got)
	}
	if got := openSession(t, b, freshSession(t)).Hashes(); len(got) != 0 {
		t.Fatalf("another session reads %v", got)
	}
}

// A claim is all or none: a nonce another decision claimed since this
// one read the set makes the whole claim fail with ErrClaimed, and adds
// none of its nonces.
func TestRedisClaimIsAllOrNone(t *testing.T) {
	u := ledgertest.RedisURL(t)
	a, b := newRedis(t, u), newRedis(t, u)
	ctx := context.Background()
	session := freshSession(t)
	first, second := openSession(t, a, session), openSession(t, b, session)
	first.Add("R-shared")
	if err := first.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	second.Add("R-own")
	second.Add("R-shared")
	err := second.Commit(ctx)
	var e *Error
	if !errors.Is(err, ErrClaimed) || !errors.As(err, &e) || !strings.Contains(e.File, KeyPrefix+Hash(session)) {
		t.Fatalf("a claim of a nonce claimed meanwhile: %v", err)
	}
	if got := openSession(t, a, session).Hashes(); !slices.Equal(got, hashesOf("R-shared")) {
		t.Fatalf("after a failed claim the set holds %v", got)
	}
	// A nonce the set already held when it was read is not claimed again
	// (a check excepted by an exception may pass it): the claim of the
	// rest goes ahead.
	third := openSession(t, b, session)
	third.Add("R-shared")
	third.Add("R-fresh")
	if err := third.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if got := openSession(t, a, session).Hashes(); !slices.Equal(got, hashesOf("R-shared", "R-fresh")) {
		t.Fatalf("the set holds %v", got)
	}
}

// Replicas racing on one session: every distinct nonce is kept, and of
// the decisions handing out one shared nonce exactly one claims it.
func TestRedisReplicasRacing(t *testing.T) {
	u := ledgertest.RedisURL(t)
	stores := []*Redis{newRedis(t, u), newRedis(t, u), newRedis(t, u)}
	session := freshSession(t)
	const n = 24
	var wg sync.WaitGroup
	sharedWins := make(chan error, n)
	errs := make(chan error, n)
	for i := range n {
		store := stores[i%len(stores)]
		wg.Go(func() {
			errs <- claim(store, session, fmt.Sprintf("R-own-%d", i))
		})
		wg.Go(func() {
			sharedWins <- claim(store, session, "R-shared")
		})
	}
	wg.Wait()
	close(errs)
	close(sharedWins)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	won := 0
	for err := range sharedWins {
		switch {
		case err == nil:
			won++
		case errors.Is(err, ErrClaimed), errors.Is(err, errSeen):
		default:
			t.Fatal(err)
		}
	}
	if won != 1 {
		t.Fatalf("the shared nonce was claimed %d times, want once", won)
	}
	want := []string{"R-shared"}
	for i := range n {
		want = append(want, fmt.Sprintf("R-own-%d", i))
	}
	if got := openSession(t, stores[0], session).Hashes(); !slices.Equal(got, hashesOf(want...)) {
		t.Fatalf("kept %d of %d nonces", len(got), len(want))
	}
}

var errSeen = errors.New("already in the set when read")

// claim is one decision: read, and claim a nonce the set did not hold.
func claim(s Store, session, nonce string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	l, err := s.Open(ctx, session, maxBytes)
	if err != nil {
		return err
	}
	defer l.Close()
	if slices.Contains(l.Hashes(), Hash(nonce)) {
		return errSeen
	}
	l.Add(nonce)
	return l.Commit(ctx)
}

// A set that is not a ledger, or larger than the limit, is an error, never
// an empty ledger.
func TestRedisCorruptOrTooLarge(t *testing.T) {
	u := ledgertest.RedisURL(t)
	r := newRedis(t, u)
	ctx := context.Background()
	for _, tc := range []struct {
		name  string
		setup func(key string) error
		max   int64
		want  string
		is    error
	}{
		{"not a set", func(key string) error { return r.client.Set(ctx, key, "x", time.Minute).Err() }, maxBytes,
			"the ledger is corrupt: the key holds something other than a set", nil},
		{"not a hash", func(key string) error { return r.client.SAdd(ctx, key, Hash("R-a"), "R-plain").Err() }, maxBytes,
			"the ledger is corrupt: a member is not a SHA-256 as 64 lowercase hex digits", nil},
		{"too many", func(key string) error { return r.client.SAdd(ctx, key, Hash("R-a"), Hash("R-b"), Hash("R-c")).Err() }, 2 * 65,
			"the ledger holds 3 nonces, more than 130 bytes allow (65 bytes a nonce)", ErrTooLarge},
	} {
		t.Run(tc.name, func(t *testing.T) {
			session := freshSession(t)
			key := KeyPrefix + Hash(session)
			if err := tc.setup(key); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { r.client.Del(context.Background(), key) })
			_, err := r.Open(ctx, session, tc.max)
			var e *Error
			if !errors.As(err, &e) || e.Msg != tc.want || e.File != r.String()+" key "+key || (tc.is != nil && !errors.Is(err, tc.is)) {
				t.Fatalf("got %v", err)
			}
		})
	}
	// At the limit, it is read.
	session := freshSession(t)
	key := KeyPrefix + Hash(session)
	if err := r.client.SAdd(ctx, key, Hash("R-a"), Hash("R-b")).Err(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.client.Del(context.Background(), key) })
	if l, err := r.Open(ctx, session, 2*65); err != nil || len(l.Hashes()) != 2 {
		t.Fatalf("a ledger at the limit: %v", err)
	}
}

// A server that cannot be reached, or does not answer, is an error: a
// deadline stays one, for the caller to name its limit. No server is
// needed: a closed port and a listener that never answers stand in.
func TestRedisUnreachable(t *testing.T) {
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := closed.Addr().String()
	closed.Close()
	r := newRedis(t, "redis://"+addr+"/0")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for name, err := range map[string]error{"open": openErr(r, ctx), "check": r.Check(ctx)} {
		var e *Error
		if !errors.As(err, &e) || !strings.HasPrefix(e.File, "redis://"+addr+"/0") || !strings.HasPrefix(e.Msg, "the session ledger cannot be used: ") ||
			errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("%s on a closed port: %v", name, err)
		}
	}

	// Accepts, reads, never answers.
	silent, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	var conns sync.WaitGroup
	defer conns.Wait()
	go func() {
		for {
			c, err := silent.Accept()
			if err != nil {
				return
			}
			conns.Go(func() {
				buf := make([]byte, 512)
				for {
					if _, err := c.Read(buf); err != nil {
						c.Close()
						return
					}
				}
			})
		}
	}()
	mute := newRedis(t, "redis://"+silent.Addr().String()+"/0")
	short, cancelShort := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancelShort()
	err = openErr(mute, short)
	var e *Error
	if !errors.As(err, &e) || e.Msg != "the session ledger did not answer" || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a server that does not answer: %v", err)
	}
	mute.Close()
	silent.Close()
}

func openErr(s Store, ctx context.Context) error {
	l, err := s.Open(ctx, "s", maxBytes)
	if err == nil {
		l.Close()
		return errors.New("opened")
	}
	return err
}

// A Redis URL that cannot be used is an error at once, and a password in
// one is never shown.
func TestNewRedis(t *testing.T) {
	for _, tc := range []struct {
		url  string
		ttl  time.Duration
		want string
	}{
		{"http://127.0.0.1:6379", time.Hour, "http://127.0.0.1:6379: not a Redis URL the ledger can use: invalid URL scheme: http"},
		{"redis://:s3cret@127.0.0.1:6379/x", time.Hour, "redis://:xxxxx@127.0.0.1:6379/x: not a Redis URL the ledger can use: invalid database number: \"x\""},
		{"redis://127.0.0.1:6379/0?color=red", time.Hour, "redis://127.0.0.1:6379/0?color=red: not a Redis URL the ledger can use: unexpected option: color"},
		{"redis://127.0.0.1:6379/0", time.Millisecond, "redis://127.0.0.1:6379/0: a session's ledger must be kept at least a second, not 1ms"},
		{"redis://:s3cret@[::1", time.Hour, "Redis URL: cannot read the URL: missing ']' in host"},
	} {
		_, err := NewRedis(tc.url, tc.ttl)
		if err == nil || err.Error() != tc.want || strings.Contains(err.Error(), "s3cret") {
			t.Errorf("%s: %v\nwant %s", tc.url, err, tc.want)
		}
	}
	r, err := NewRedis("redis://user:s3cret@127.0.0.1:6379/2", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if r.String() != "redis://user:xxxxx@127.0.0.1:6379/2" {
		t.Fatalf("name %q", r.String())
	}
}
