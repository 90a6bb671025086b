// Package copilot is the end-to-end suite for `spawngate hook copilot` on
// the real GitHub Copilot CLI. It holds no code the product uses:
// everything lives in its _test.go files.
//
// Unit tests feed the hook payloads shaped like Copilot's; only the real
// client shows which spawns reach the hook, what it hands the hook, which
// answers it honours, and whether a refused child really never runs. So
// the tests start the pinned client headless (`copilot -p`, its native
// binary, which install.sh puts in a cache outside the clone and
// SPAWNGATE_E2E_COPILOT names) in a scratch git repository with its own
// HOME and XDG_CACHE_HOME, every proxy variable pointed at 127.0.0.1:9,
// and point it (COPILOT_PROVIDER_BASE_URL) at a scripted OpenAI Chat
// Completions API served from the test process on 127.0.0.1
// (internal/e2e/fakemodel, which every real-client suite shares). The
// script plays the main agent, which calls the task tool, and each child;
// a child really started when a model request's system prompt carries the
// marker written into its definition's body (a built-in child, which
// carries none, by its first message: the spawn's prompt). A recording
// wrapper in front of every hook keeps what the client handed it.
//
// Where `unshare -n` works the test binary re-runs itself in a new network
// namespace with only loopback, so nothing the client does can leave the
// machine. Scenarios that need /etc/github-copilot (policy.d hooks,
// managed settings) run the client in a mount namespace of its own over an
// overlay of /etc, never writing the machine's; they need root, and skip
// without it.
//
// TestHostTruth pins down, with stub hooks, what Copilot CLI 1.0.102 does:
// the payload and the hook's environment, which answers deny (the flat
// camelCase permissionDecision, exit 2, any failure) and which do not
// (hookSpecificOutput on the camelCase event, an explicit allow), which
// tools each tool set grants, the models children run on, background and
// nested spawns, and each way the gate is gone (a hook timeout,
// disableAllHooks in a trusted repository, a matcher of Agent,
// allowManagedHooksOnly for a user hook, --agent NAME), each marked as a
// known host fact beside its opposite; a policy.d hook holds against
// disableAllHooks and allowManagedHooksOnly.
//
// TestGate holds spawngate's answers on the real client, wired as the
// docs' user-level hook: readers start; writers, unknown types, built-ins
// and models the policy does not allow (the definition's, the call's) are
// refused with spawngate's reason as the tool result, in the background,
// nested and on the PascalCase event too, and a refused child never
// reaches the model. TestDoctorInstallation runs spawngate doctor copilot
// on the documented enforcing installation (spawngate and its policy in
// /usr/local/bin and /etc/spawngate, its hook in
// /etc/github-copilot/policy.d, allowManagedHooksOnly in managed
// settings), which it must pass, then the client under it against what a
// repository and the user can do; and on installations short of it,
// which doctor must fail, with what the client then lets through.
//
// A scenario today's spawngate gets wrong keeps the right expectation and
// is marked open, which turns its failure into a skip naming why; a
// marked scenario that passes fails, so the marks are kept honest.
// Scenarios that capture a real payload check it against
// examples/copilot/payloads.
//
// Run it from the module root:
//
//	export SPAWNGATE_E2E_COPILOT="$(internal/e2e/copilot/install.sh)"
//	SPAWNGATE_LONG=1 SPAWNGATE_E2E=require go test -count=1 ./internal/e2e/copilot/
//
// Without SPAWNGATE_LONG=1 and SPAWNGATE_E2E_COPILOT the tests skip, or
// fail when SPAWNGATE_E2E=require. Other knobs: SPAWNGATE_E2E_COPILOT_VERSION
// picks the version install.sh installs; SPAWNGATE_E2E_SPAWNGATE tests a
// given spawngate binary instead of building one; SPAWNGATE_E2E_NETNS=off
// stays in the host's network namespace; SPAWNGATE_E2E_KEEP=DIR keeps each
// scenario's evidence (every model request, every hook call with its
// stdin and environment, the client's output and debug log) under DIR;
// SPAWNGATE_E2E_UPDATE_PAYLOADS=1 rewrites examples/copilot/payloads.
package copilot
