// Package codex is the end-to-end suite for `spawngate hook codex` on the
// real Codex CLI. It holds no code the product uses: everything lives in its
// _test.go files.
//
// The suite runs the pinned Codex client (install.sh puts it in a cache
// outside the clone; SPAWNGATE_E2E_CODEX names the binary) headless, with
// `codex exec` or over `codex app-server`'s stdio JSON-RPC, in a scratch git
// repository with an isolated HOME and CODEX_HOME. The model is a scripted
// Responses API served by the test itself on 127.0.0.1: it makes the main
// agent call spawn_agent, makes each sub-agent (recognised by a marker in
// its definition's developer_instructions) run a shell command, and records
// every request, so a test sees whether a child started, which model it
// used, which sandbox Codex told it it had, and, on disk, whether its writes
// really happened. The server is internal/e2e/fakemodel, which every
// real-client suite shares; model_test.go and script_test.go hold what is
// Codex's own (its sub-agent headers, its turn metadata, the
// spawn_agent/wait_agent plans). spawngate is wired exactly as the README
// says; a second, catch-all PreToolUse hook (the test binary itself) records
// each payload, the hook's environment and what the session transcript held
// at that moment.
//
// Where `unshare -n` works, the whole suite re-executes itself in a fresh
// network namespace holding only a loopback interface, so neither Codex nor
// anything it starts can reach beyond 127.0.0.1.
//
// TestGate asserts what spawngate must do in front of the real client. A
// Codex child runs in its session's sandbox whatever its definition says,
// so each scenario names the session it runs in and checks it against the
// spawn's turn_context at hook time and the child's own requests; a writer
// refused for writing runs where it really could write. Scenarios that
// today's spawngate gets wrong are written with the right expectation and
// listed in knownOpen, which turns their failure into a skip naming the
// issue. TestHost pins down what Codex itself does (the
// child's effective sandbox, approval and model, tool names, hook trust,
// the transcript at hook time), with only the recording hook wired.
//
// TestDoctorInstallation runs the README's enforcing installation: managed
// hooks in /etc/codex/requirements.toml, which the client alone sees
// through an overlay of /etc in a mount namespace of its own (it needs
// root and unshare -m, and skips without them). spawngate doctor codex
// must pass it before every run; the scenarios then try what a session,
// the user's config and a repository can do to get a child past it.
//
// Run it:
//
//	export SPAWNGATE_E2E_CODEX="$(internal/e2e/codex/install.sh)"
//	SPAWNGATE_E2E=require go test ./internal/e2e/codex/
//
// Without SPAWNGATE_E2E_CODEX the tests skip, or fail when
// SPAWNGATE_E2E=require. Other knobs: SPAWNGATE_E2E_SPAWNGATE (a prebuilt
// spawngate instead of building ./cmd/spawngate), SPAWNGATE_E2E_NETNS=off
// (stay in the host's network namespace), SPAWNGATE_E2E_UPDATE=1 (rewrite
// testdata/payloads from the run).
package codex
