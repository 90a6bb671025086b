package cli

import "github.com/spawngate/spawngate/internal/report"

// The exit codes of spawngate, the one place they are decided. check and
// agents answer with them; the hooks answer in their host's protocol
// instead, and never with exitBlock (see hook.go).
const (
	// exitPass: every child of every plan may be dispatched.
	exitPass = 0
	// exitBlock: at least one child is refused, and nothing errored.
	exitBlock = 1
	// exitError: the gate could not evaluate: a usage error, a document or
	// policy that is absent, empty, unreadable or invalid, no policy at
	// all, a timeout, a signal, an internal error.
	exitError = 2
)

// exitCode is the exit code for a verdict. Anything that is not a known
// verdict is an error: it never exits 0.
func exitCode(v report.Verdict) int {
	switch v {
	case report.Pass:
		return exitPass
	case report.Block:
		return exitBlock
	}
	return exitError
}
