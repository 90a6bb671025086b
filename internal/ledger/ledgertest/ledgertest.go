// Package ledgertest finds the Redis server that tests of a shared
// session ledger run against.
//
// SPAWNGATE_REDIS_URL names it (redis://127.0.0.1:6379/15,
// unix:///run/redis.sock?db=15). Without it those tests skip, unless
// SPAWNGATE_REDIS=require, as in CI: then they fail, so that a server
// that did not start cannot pass for a green run.
package ledgertest

import (
	"os"
	"testing"
)

const (
	// EnvURL names the Redis server the tests use.
	EnvURL = "SPAWNGATE_REDIS_URL"
	// EnvRequire set to "require" makes a missing server a failure.
	EnvRequire = "SPAWNGATE_REDIS"
)

// RedisURL is the URL of the Redis server to test against; without one the
// test skips, or fails when it is required. Tests must use keys of their
// own (a fresh session id), never flush: the server may be shared.
func RedisURL(t testing.TB) string {
	t.Helper()
	if u := os.Getenv(EnvURL); u != "" {
		return u
	}
	if os.Getenv(EnvRequire) == "require" {
		t.Fatalf("%s=require, and %s names no Redis server", EnvRequire, EnvURL)
	}
	t.Skipf("no Redis server: set %s to run this test against one", EnvURL)
	return ""
}
