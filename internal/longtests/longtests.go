// Package longtests is the one switch that turns on the tests that must
// be long: the property runs over the reference model and the other long
// randomized loops, and the suites that drive the real Claude Code and
// Codex clients. The README's test command, go test ./..., leaves them
// out and stays quick; SPAWNGATE_LONG=1 go test ./... runs everything,
// and .ci/run sets it. go test -short turns them off again (the race
// detector's run, where they find nothing and take ten times as long).
package longtests

import (
	"flag"
	"os"
	"testing"
)

// Env is the switch: SPAWNGATE_LONG=1.
const Env = "SPAWNGATE_LONG"

// On tells whether the long tests run. Before go test has read its flags
// (a TestMain before m.Run) only the switch is known; each test asks
// again, -short included, when it runs.
func On() bool {
	return os.Getenv(Env) == "1" && !(flag.Parsed() && testing.Short())
}

// Need skips t unless the long tests run, saying what it is and how to
// run it.
func Need(t testing.TB, what string) {
	t.Helper()
	if !On() {
		t.Skipf("%s is a long test: %s=1 runs it (.ci/run does)", what, Env)
	}
}
