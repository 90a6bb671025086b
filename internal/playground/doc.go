// Package playground is spawngate playground: a local page where an
// operator pastes or drops a plan, a policy and perhaps checks, and sees
// the HTML report of the same gate check uses, edits, and sees it again.
//
// serve judges by the operator's policy and no request may replace it (a
// plan may narrow the policy, never widen it); a page that judges by a
// pasted policy is therefore a tool of its own, for the operator's own
// machine. Its one decision endpoint is built from serve's machinery
// (server.Decisions), so its limits, admission, timeouts, token and error
// statuses are /v1/check's; only the gate differs, built from the request's
// policy and checks by a gate that reads no files (judge.Options.NoFiles)
// and kept in a small cache by their digest.
//
// The page's script only sends text and shows the answer: the verdict is
// the server's, and the report is shown in a sandboxed frame that runs no
// script, whatever the plan holds.
package playground
