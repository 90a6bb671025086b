// Package judge is the one pipeline every front end of spawngate calls:
// check, the hooks, the agent-definition check, and the server. It reads a
// document, loads it against the schemas, evaluates it with the Rego
// checks and assembles the result, within a deadline. It knows nothing of
// flags, standard error or exit codes: it returns a report.Result or a
// typed *Error, and each front end says what that means in its own
// protocol (an exit code, a host's hook answer, an HTTP status).
//
// It also reads what the operator brings beside the built-in checks:
// folders of Rego checks (checks.go), OPA bundles carrying checks and the
// operator policy (bundle.go, read bounded and verified first in
// bundlefiles.go), and runs their Rego tests for spawngate
// verify (verify.go).
package judge
