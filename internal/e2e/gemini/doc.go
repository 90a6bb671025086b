// Package gemini is the end-to-end suite for `spawngate hook gemini` on
// the real Gemini CLI. It holds no code the product uses: everything lives
// in its _test.go files.
//
// Unit tests feed the hook payloads shaped like Gemini's; only the real
// client shows which spawns reach the hook, what it hands the hook, which
// answers it honours, and whether a refused child really never runs. So
// the tests start the pinned client headless (`node bundle/gemini.js -p
// ... --approval-mode yolo`, the bundle install.sh puts in a cache outside
// the clone and SPAWNGATE_E2E_GEMINI names) in a scratch git repository
// with its own HOME, every proxy variable pointed at 127.0.0.1:9, and
// point it (GOOGLE_GEMINI_BASE_URL) at a scripted Gemini API served from
// the test process on 127.0.0.1 (internal/e2e/fakemodel's GeminiAPI, the
// model every real-client suite shares). The script plays the main agent,
// which calls invoke_agent, and each child, which ends with complete_task
// (a child that does not fails); a child really started when a model
// request's system instruction carries the marker written into its
// definition's body (a built-in child, which carries none, by its first
// message: the spawn's prompt). A recording wrapper in front of every hook
// keeps what the client handed it.
//
// Where `unshare -n` works the test binary re-runs itself in a new network
// namespace with only loopback, so nothing the client does can leave the
// machine. Scenarios that need /etc/gemini-cli (system settings, policy
// rules) run the client in a mount namespace of its own over an overlay
// of /etc, never writing the machine's; they need root, and skip without
// it.
//
// TestHostTruth pins down, with stub hooks, what Gemini CLI 0.61.0 does:
// the payload and the hook's environment, which answers deny (a JSON deny
// on stdout whatever the exit code, exit 2 with text on stderr, a missing
// binary) and which do not (exit 1, exit 2 with no output, a signal, a
// timeout), what each definition and built-in is given and on which
// model, and each way the gate is gone (hooksConfig.enabled: false in a
// trusted project, hooksConfig.disabled naming even a system hook,
// GEMINI_CLI_SYSTEM_SETTINGS_PATH in the environment, --acp, driven as an
// IDE drives it), each marked as a known host fact beside its opposite: a
// system hook that says hooksConfig.enabled: true, and a rule of the
// policy engine in /etc/gemini-cli/policies, which holds in every headless
// one of those setups (not under --acp with yolo, which reads no rule).
//
// TestGate holds spawngate's answers on the real client: readers start;
// writers, built-ins and models the policy does not allow (the
// definition's, and the one project settings give it) are refused with
// spawngate's reason as the tool result, the definition that wins a name
// is the one judged, an MCP server of a refused definition never starts,
// and a refused child never reaches the model. TestDoctorInstallation runs
// spawngate doctor gemini on the documented installation (spawngate and
// its policy in /usr/local/bin and /etc/spawngate, its hook in
// /etc/gemini-cli/settings.json with hooksConfig.enabled: true), which it
// must pass, writing its backstop into /etc/gemini-cli/policies, and on
// installations short of it, which it must fail; the client under each
// shows what gets through, and that the backstop refuses what the policy
// refuses where a project or the environment took the hook away.
//
// A scenario today's spawngate gets wrong keeps the right expectation and
// is marked open, which turns its failure into a skip naming why; a
// marked scenario that passes fails, so the marks are kept honest.
// Scenarios that capture a real payload check it against
// examples/gemini/payloads.
//
// Run it from the module root:
//
//	export SPAWNGATE_E2E_GEMINI="$(internal/e2e/gemini/install.sh)"
//	SPAWNGATE_LONG=1 SPAWNGATE_E2E=require go test -count=1 ./internal/e2e/gemini/
//
// Without SPAWNGATE_LONG=1 and SPAWNGATE_E2E_GEMINI the tests skip, or
// fail when SPAWNGATE_E2E=require. Other knobs: SPAWNGATE_E2E_GEMINI_VERSION
// picks the version install.sh installs; SPAWNGATE_E2E_SPAWNGATE tests a
// given spawngate binary instead of building one; SPAWNGATE_E2E_NETNS=off
// stays in the host's network namespace; SPAWNGATE_E2E_KEEP=DIR keeps each
// scenario's evidence (every model request, every hook call with its
// stdin and environment, the client's output) under DIR;
// SPAWNGATE_E2E_UPDATE_PAYLOADS=1 rewrites examples/gemini/payloads.
package gemini
