package ledger

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"
)

// KeyPrefix begins the Redis key of every session's ledger: the key is
// KeyPrefix followed by the SHA-256 of the session id, in hex.
const KeyPrefix = "spawngate:ledger:"

// Redis is the Store in a Redis server, which every replica naming it
// shares. A session's ledger is one Redis set of nonce hashes under
// KeyPrefix+Hash(session), which expires ttl after the last nonce the
// session was handed.
//
// Replicas are not locked against each other: a decision reads the set,
// is judged, and a passed one claims its nonces with one script that
// adds them only when none is in the set yet (set-if-absent for every
// nonce at once, atomic in the server). A claim that finds one there
// fails with ErrClaimed, and the decision is taken again on what the set
// now holds, which refuses the reuse. So two replicas handed one nonce at
// the same moment never both pass it.
type Redis struct {
	client *redis.Client
	name   string
	ttl    time.Duration
}

// NewRedis makes the store of a Redis URL: redis://[user:password@]host:port/db,
// rediss:// for TLS, or unix:///path/to/socket?db=N. It connects on
// first use, not here. Every command ends with its caller's context, and
// none is retried: an error is the caller's to fail closed on. ttl is
// how long a session's ledger is kept after its last nonce (at least a
// second).
func NewRedis(rawURL string, ttl time.Duration) (*Redis, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, &Error{File: "Redis URL", Msg: "cannot read the URL: " + strings.TrimPrefix(reasonURL(err), "parse ")}
	}
	name := u.Redacted()
	opt, err := redis.ParseURL(rawURL)
	if err != nil {
		return nil, &Error{File: name, Msg: "not a Redis URL the ledger can use: " + strings.TrimPrefix(err.Error(), "redis: "), Err: err}
	}
	if ttl < time.Second {
		return nil, &Error{File: name, Msg: fmt.Sprintf("a session's ledger must be kept at least a second, not %s", ttl)}
	}
	// Deadlines come from the decision's context. A retry could run a
	// claim twice, and a claim that is not known to have happened is an
	// error anyway.
	opt.ContextTimeoutEnabled = true
	opt.MaxRetries = -1
	opt.DialerRetries = 2
	opt.Protocol = 2 // every server with scripts speaks RESP2
	opt.DisableIdentity = true
	opt.MaintNotificationsConfig = &maintnotifications.Config{Mode: maintnotifications.ModeDisabled}
	quietOnce.Do(func() { redis.SetLogger(quiet{}) })
	return &Redis{client: redis.NewClient(opt), name: name, ttl: ttl}, nil
}

// quiet drops the client library's own log lines, which it would write
// to stderr: a hook's stderr is the host's to read, the server's is its
// JSON log. What fails reaches the caller as an error instead.
type quiet struct{}

func (quiet) Printf(context.Context, string, ...any) {}

var quietOnce sync.Once

// readScript reads a session's set, unless it holds more than ARGV[1]
// members: then it answers their number alone.
var readScript = redis.NewScript(`
local n = redis.call('SCARD', KEYS[1])
if n > tonumber(ARGV[1]) then return n end
return redis.call('SMEMBERS', KEYS[1])
`)

// claimScript adds ARGV[2..] to a session's set only when none of them is
// in it yet, and then keeps the set ARGV[1] milliseconds more; it answers
// 1 when it added them, 0 when one was there.
var claimScript = redis.NewScript(`
for i = 2, #ARGV do
  if redis.call('SISMEMBER', KEYS[1], ARGV[i]) == 1 then return 0 end
end
for i = 2, #ARGV do
  redis.call('SADD', KEYS[1], ARGV[i])
end
redis.call('PEXPIRE', KEYS[1], ARGV[1])
return 1
`)

// bytesPerNonce is what one nonce counts for against the limit on a
// ledger's size, as in a ledger file.
const bytesPerNonce = 65

// Open reads the session's set.
func (r *Redis) Open(ctx context.Context, session string, maxBytes int64) (Session, error) {
	key := KeyPrefix + Hash(session)
	where := r.name + " key " + key
	most := maxBytes / bytesPerNonce
	v, err := readScript.Run(ctx, r.client, []string{key}, most).Result()
	if err != nil {
		return nil, r.fail(ctx, where, err)
	}
	switch v := v.(type) {
	case int64:
		return nil, &Error{File: where, Msg: fmt.Sprintf("the ledger holds %d nonces, more than %d bytes allow (%d bytes a nonce)", v, maxBytes, bytesPerNonce), Err: ErrTooLarge}
	case []any:
		hashes := make([]string, 0, len(v))
		for _, m := range v {
			s, ok := m.(string)
			if !ok || !isHash(s) {
				return nil, &Error{File: where, Msg: "the ledger is corrupt: a member is not a SHA-256 as 64 lowercase hex digits"}
			}
			hashes = append(hashes, s)
		}
		slices.Sort(hashes)
		return &redisSession{store: r, key: key, where: where, hashes: slices.Compact(hashes)}, nil
	}
	return nil, &Error{File: where, Msg: fmt.Sprintf("the ledger is corrupt: the server answered a %T", v)}
}

// Check pings the server and writes (and removes) a key, so that a server
// that cannot be reached, needs a password, or takes no writes (a
// replica) is found at start.
func (r *Redis) Check(ctx context.Context) error {
	var b [8]byte
	rand.Read(b[:])
	probe := KeyPrefix + "check:" + hex.EncodeToString(b[:])
	if err := r.client.Set(ctx, probe, "1", time.Minute).Err(); err != nil {
		return r.fail(ctx, r.name, err)
	}
	if err := r.client.Del(ctx, probe).Err(); err != nil {
		return r.fail(ctx, r.name, err)
	}
	return nil
}

// Close closes the connections.
func (r *Redis) Close() error { return r.client.Close() }

func (r *Redis) String() string { return r.name }

// fail is a command's error as an Error: a deadline or a cancellation
// stays one (errors.Is), so that the caller can say which limit ended it.
func (r *Redis) fail(ctx context.Context, where string, err error) error {
	var ne net.Error
	switch {
	case errors.Is(err, context.Canceled) || errors.Is(ctx.Err(), context.Canceled):
		return &Error{File: where, Msg: "the decision ended while the session ledger was being read or written", Err: context.Canceled}
	case errors.Is(err, context.DeadlineExceeded) || errors.Is(ctx.Err(), context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout()):
		return &Error{File: where, Msg: "the session ledger did not answer", Err: context.DeadlineExceeded}
	case strings.HasPrefix(err.Error(), "WRONGTYPE"):
		return &Error{File: where, Msg: "the ledger is corrupt: the key holds something other than a set", Err: err}
	}
	return &Error{File: where, Msg: "the session ledger cannot be used: " + strings.TrimPrefix(err.Error(), "redis: "), Err: err}
}

// redisSession is one decision's view of a session's set.
type redisSession struct {
	store  *Redis
	key    string
	where  string
	hashes []string // sorted, distinct: the set as Open read it
	added  []string // sorted, distinct, none in hashes
}

func (s *redisSession) Hashes() []string { return append([]string{}, s.hashes...) }

// Add records a nonce that the set did not hold when it was read.
func (s *redisSession) Add(nonce string) {
	h := Hash(nonce)
	if _, found := slices.BinarySearch(s.hashes, h); found {
		return
	}
	if i, found := slices.BinarySearch(s.added, h); !found {
		s.added = slices.Insert(s.added, i, h)
	}
}

// Commit claims what Add added, all or none.
func (s *redisSession) Commit(ctx context.Context) error {
	if len(s.added) == 0 {
		return nil
	}
	if err := ctx.Err(); err != nil {
		return &Error{File: s.where, Msg: "the decision ended before the ledger was written", Err: err}
	}
	args := make([]any, 0, 1+len(s.added))
	args = append(args, strconv.FormatInt(s.store.ttl.Milliseconds(), 10))
	for _, h := range s.added {
		args = append(args, h)
	}
	n, err := claimScript.Run(ctx, s.store.client, []string{s.key}, args...).Int64()
	if err != nil {
		return s.store.fail(ctx, s.where, err)
	}
	if n != 1 {
		return &Error{File: s.where, Msg: "a nonce of this spawn was handed out by another decision meanwhile", Err: ErrClaimed}
	}
	s.hashes = slices.Concat(s.hashes, s.added)
	slices.Sort(s.hashes)
	s.added = nil
	return nil
}

// Close does nothing: a Redis ledger is not locked.
func (s *redisSession) Close() error { return nil }

// reasonURL is a URL error without the URL, which may carry a password.
func reasonURL(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err.Error()
	}
	return err.Error()
}
