package engine

import "testing"

// LongProperty skips a property test that judges thousands of plans on one
// goroutine when go test runs with -short: the race detector run in
// .ci/run passes -short, because such a test finds no race there and takes
// ten times as long; go test ./... runs it in full.
func LongProperty(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("a long single-goroutine property test: run without -short")
	}
}
