// Package claudecode is the end-to-end suite for `spawngate hook
// claude-code` on the real Claude Code client.
//
// Unit tests feed the hook payloads shaped like Claude Code's; only the
// real client shows which spawns reach the hook at all, what it hands the
// hook, and whether a refused child really never runs. So the tests here
// start the pinned client headless (`claude -p`) in a scratch git
// repository with an isolated HOME, wire the hook exactly as the README
// says, and point the client at a scripted Anthropic Messages API served
// from the test process on 127.0.0.1 (internal/e2e/fakemodel, which every
// real-client suite shares; modelapi_test.go holds what is Claude Code's
// own: how it marks a sub-agent). The script plays the main agent (it
// asks for a spawn, then ends), and a sub-agent is known to have started
// when a request to the model carries the unique marker written into its
// definition's body.
//
// The client is not vendored: install.sh puts it in a cache outside the
// clone and prints its path, which the tests take from SPAWNGATE_E2E_CLAUDE.
// Without it they skip, or fail when SPAWNGATE_E2E=require (as in CI).
// Where `unshare -n` works the test binary re-runs itself in a new network
// namespace with only loopback, so nothing the client does can leave the
// machine; the scripted server lives in that namespace too.
//
// Run it from the module root:
//
//	export SPAWNGATE_E2E_CLAUDE="$(internal/e2e/claudecode/install.sh)"
//	SPAWNGATE_E2E=require go test -count=1 ./internal/e2e/claudecode/
//
// Other knobs: SPAWNGATE_E2E_CLAUDE_VERSION picks the version install.sh
// installs; SPAWNGATE_E2E_SPAWNGATE tests a given spawngate binary instead
// of building one; SPAWNGATE_E2E_KEEP=DIR keeps each scenario's evidence
// (every model request, every hook call with its stdin, environment and
// parent command lines, the client's stream and debug log) under DIR;
// SPAWNGATE_E2E_UPDATE_PAYLOADS=1 rewrites the anonymised real payloads in
// testdata/payloads.
//
// TestGate holds the ordinary paths; TestFindings holds one scenario per
// finding about how the client really starts sub-agents, each with the
// facts it rests on (checked always, so a client that changes is noticed)
// and spawngate's expected answer. TestDoctorInstallation runs spawngate
// doctor claude-code on the README's managed installation before each run
// and holds it against every way in the findings found; TestAdversarial
// holds what an independent adversarial run found under that
// installation; TestHTTPHook holds the hook through spawngate serve, and
// the facts about HTTP hooks the README rests on.
//
// Scenarios that today's spawngate gets wrong are written as the right
// expectation and listed in knownOpen (adversarialOpen), which turns their
// failure into a skip naming why; a scenario listed there that passes
// fails, so the list is kept honest. Both lists are empty today.
package claudecode
