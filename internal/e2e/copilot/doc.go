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
// camelCase permissionDecision, exit 2) and which do not, and each way
// the gate is gone (a hook timeout, disableAllHooks in a trusted
// repository, allowManagedHooksOnly for a user hook), each marked as a
// known host fact beside its opposite; a policy.d hook holds against
// both. TestGate holds spawngate's answers on the real client: readers
// start, writers, unknown types, built-ins and models the policy does not
// allow are refused with the reason in the tool result, in the
// background and nested too. TestDoctorInstallation runs spawngate doctor
// copilot on the documented enforcing installation, then the client
// under it, and on broken ones. Scenarios that capture a real payload
// check it against examples/copilot/payloads.
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
