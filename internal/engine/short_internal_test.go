package engine

import (
	"testing"

	"github.com/spawngate/spawngate/internal/longtests"
)

// LongProperty skips a property test that judges thousands of plans on one
// goroutine unless the long tests run (SPAWNGATE_LONG=1, package
// longtests): go test ./... stays quick without it, and the race detector
// run in .ci/run passes -short, where such a test finds no race and takes
// ten times as long.
func LongProperty(t *testing.T) {
	t.Helper()
	longtests.Need(t, "a property test judging thousands of plans")
}
