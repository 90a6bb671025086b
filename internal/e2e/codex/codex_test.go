package codex

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spawngate/spawngate/internal/e2e/fakemodel"
)

// knownOpen lists the scenarios today's spawngate gets wrong, by subtest
// name. Each keeps the right expectation; its failure is turned into a skip
// naming the issue, and a pass is logged so the entry can be removed.
var knownOpen = map[string]string{}

// verdict collects a scenario's failed expectations; check turns them into
// an error, or a skip for a knownOpen scenario.
type verdict []string

func (v *verdict) expect(ok bool, format string, args ...any) {
	if !ok {
		*v = append(*v, fmt.Sprintf(format, args...))
	}
}

func check(t *testing.T, r *result, v verdict) {
	t.Helper()
	if r.err != nil {
		v = append(v, fmt.Sprintf("the client run failed: %v", r.err))
	}
	name := t.Name()[strings.Index(t.Name(), "/")+1:]
	reason, open := knownOpen[name]
	if len(v) == 0 {
		if open {
			t.Logf("listed in knownOpen (%s) but passes now: remove it from the list", reason)
		}
		return
	}
	msg := strings.Join(v, "\n") + "\n--- what happened ---\n" + r.dump()
	if open {
		t.Skipf("known open (%s):\n%s", reason, msg)
	}
	t.Error(msg)
}

// Definition bodies the scenarios share (after name, description and
// developer_instructions, which newWorld writes).
const (
	defReader     = "sandbox_mode = \"read-only\"\n"
	defWriter     = "sandbox_mode = \"workspace-write\"\n"
	defFullAccess = "sandbox_mode = \"danger-full-access\"\n"
)

func v1Spawn(agentType, message string) map[string]any {
	args := map[string]any{"message": message}
	if agentType != "" {
		args["agent_type"] = agentType
	}
	return args
}

func v2Spawn(agentType string) map[string]any {
	args := map[string]any{"task_name": "e2e_task", "message": "Do the task."}
	if agentType != "" {
		args["agent_type"] = agentType
	}
	return args
}

// writeCmd writes a file at each path; the writes are independent, so one
// blocked write does not hide another.
func writeCmd(paths ...string) string {
	var parts []string
	for _, p := range paths {
		parts = append(parts, fmt.Sprintf("echo e2e > %s", shellQuote(p)))
	}
	return strings.Join(parts, "; ") + "; true"
}

// refusedBySpawngate checks that the main agent's spawn came back as
// spawngate's refusal and that, if given, the reason names the check.
func refusedBySpawngate(v *verdict, r *result, checkID string) {
	out := r.spawnOutput()
	v.expect(strings.Contains(out, "spawngate refused this sub-agent"), "the spawn's tool result is not spawngate's refusal: %q", out)
	if checkID != "" {
		v.expect(strings.Contains(out, checkID), "the refusal does not name %s: %q", checkID, out)
	}
}

// gateCase is one scenario with spawngate wired as the README says.
type gateCase struct {
	name  string
	setup setup
	plan  func(w *world) plan
	// run starts the session: codex exec with args, or the app-server.
	run func(w *world) *result
	// session is the sandbox the session really runs in, which its child
	// gets whatever its definition says: checked against the spawn's
	// turn_context at hook time and, when a child starts, against the
	// sandbox_mode of its own requests.
	session string
	verify  func(w *world, r *result, v *verdict)
}

func execRun(args ...string) func(*world) *result {
	return func(w *world) *result { return w.execCodex(args...) }
}

func appRun(approval, sandbox string, args ...string) func(*world) *result {
	return func(w *world) *result { return w.appSession(approval, sandbox, args...) }
}

// neverStarts is the verdict for every refused spawn: no request ever came
// from a sub-agent, the marked one or any other.
func neverStarts(name string) func(*world, *result, *verdict) {
	return func(w *world, r *result, v *verdict) {
		v.expect(len(r.childReqs(name)) == 0, "the %s sub-agent started (%d model requests carry its marker)", name, len(r.childReqs(name)))
		v.expect(!r.anyChild(), "a sub-agent made model requests")
	}
}

func refused(name, checkID string) func(*world, *result, *verdict) {
	return func(w *world, r *result, v *verdict) {
		neverStarts(name)(w, r, v)
		refusedBySpawngate(v, r, checkID)
	}
}

// simple is a plan where the main agent spawns with args and the child, if
// it starts, writes inside.txt in the repo and outside.txt outside it.
func simple(v2 bool, args map[string]any, child string) func(*world) plan {
	return func(w *world) plan {
		return plan{v2: v2, spawn: args, children: map[string]childScript{
			child: runs(child, writeCmd(filepath.Join(w.repo, "inside.txt"), filepath.Join(w.outside, "outside.txt"))),
		}}
	}
}

func defs(kv ...string) map[string]string {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return m
}

// Operator policies beside the default one (read-only and workspace-write
// allowed, writing not).
const (
	// policyWrite lets a workspace-write child write in the repository.
	policyWrite = "allowed_tools: [\"sandbox:read-only\", \"sandbox:workspace-write\"]\nworkspace_root: %REPO%\nbudget_cap_tokens: 400000\nallow_write: true\n"
	// policyReadOnly allows read-only children alone.
	policyReadOnly = "allowed_tools: [\"sandbox:read-only\"]\nworkspace_root: %REPO%\nbudget_cap_tokens: 400000\n"
	// policyNestedDepth lets the main agent's children start but none of
	// theirs (max_depth 1): only the hook inside a sub-agent, which knows
	// its caller is one, can refuse.
	policyNestedDepth = "allowed_tools: [\"sandbox:read-only\", \"sandbox:workspace-write\"]\nworkspace_root: %REPO%\nbudget_cap_tokens: 400000\nmax_depth: 1\n"
	// policyBriefSecrets turns a brief check on (brief_unreadable stays
	// refuse): the hash is of a credential no brief here carries.
	policyBriefSecrets = policyReadOnly + "brief_secrets:\n  parent_sha256: [\"aa10670c87f9d0f1efc59ed0729f9bc792c7665310c74dd6f5bafb6cf496a7a7\"]\n"
)

// policyModels is policyReadOnly with allowed_models.
func policyModels(models ...string) string {
	return policyReadOnly + "allowed_models: [\"" + strings.Join(models, "\", \"") + "\"]\n"
}

// writes is the verdict for an allowed writer: it started and wrote in the
// repository, and no further (the session's sandbox holds).
func writes(name string) func(*world, *result, *verdict) {
	return func(w *world, r *result, v *verdict) {
		v.expect(len(r.childReqs(name)) > 0, "the %s never started; spawn result %q", name, r.spawnOutput())
		v.expect(exists(filepath.Join(w.repo, "inside.txt")), "the %s did not write in the repository: %q", name, r.childOutput(name))
		v.expect(!exists(filepath.Join(w.outside, "outside.txt")), "the %s wrote outside the workspace", name)
	}
}

// startsReadOnly is the verdict for a child allowed in a read-only
// session: it started, tried both writes, and the sandbox stopped both.
func startsReadOnly(name string) func(*world, *result, *verdict) {
	return func(w *world, r *result, v *verdict) {
		v.expect(len(r.childReqs(name)) > 0, "the %s never started; spawn result %q", name, r.spawnOutput())
		out := r.childOutput(name)
		v.expect(strings.Count(out, "Read-only file system") == 2, "the %s's writes did not both fail on the read-only sandbox: %q", name, out)
		v.expect(!exists(filepath.Join(w.repo, "inside.txt")), "the %s wrote in the repository", name)
		v.expect(!exists(filepath.Join(w.outside, "outside.txt")), "the %s wrote outside the workspace", name)
	}
}

// refusedUnwritten is refused, and nothing was written anywhere.
func refusedUnwritten(name, checkID string) func(*world, *result, *verdict) {
	return func(w *world, r *result, v *verdict) {
		refused(name, checkID)(w, r, v)
		v.expect(!exists(filepath.Join(w.repo, "inside.txt")), "inside.txt was written")
		v.expect(!exists(filepath.Join(w.outside, "outside.txt")), "outside.txt was written")
	}
}

// blockedUnwritten holds a spawn that spawngate could not judge and
// blocked (exit 2, the reason on stderr), and no file written.
func blockedUnwritten(name, reason string) func(*world, *result, *verdict) {
	return func(w *world, r *result, v *verdict) {
		neverStarts(name)(w, r, v)
		out := r.spawnOutput()
		v.expect(strings.Contains(out, "blocked by PreToolUse hook") && strings.Contains(out, reason), "the spawn was not blocked by spawngate saying %q: %q", reason, out)
		v.expect(!exists(filepath.Join(w.repo, "inside.txt")), "inside.txt was written")
		v.expect(!exists(filepath.Join(w.outside, "outside.txt")), "outside.txt was written")
	}
}

// also runs more checks after a verdict.
func also(first func(*world, *result, *verdict), more func(*world, *result, *verdict)) func(*world, *result, *verdict) {
	return func(w *world, r *result, v *verdict) {
		first(w, r, v)
		more(w, r, v)
	}
}

// childModel checks the model the started child's requests went out on.
func childModel(name, want string) func(*world, *result, *verdict) {
	return func(w *world, r *result, v *verdict) {
		for _, q := range r.childReqs(name) {
			v.expect(q.Model == want, "the %s's request went out on model %q, want %q", name, q.Model, want)
		}
	}
}

// expectSession checks that the session really ran in sandbox: the
// main spawn's transcript held this turn's turn_context when the hook
// ran, saying so, and every sub-agent request says so too.
func expectSession(v *verdict, r *result, sandbox string) {
	h := r.mainSpawnHook()
	v.expect(h != nil, "the recorder saw no spawn payload from the main agent")
	if h != nil {
		v.expect(h.Transcript.TurnContextForTurn, "the transcript held no turn_context for the spawn's turn when the hook ran")
		v.expect(h.Transcript.sandboxPolicy()["type"] == sandbox, "the spawn's turn_context says sandbox %s, want %s", mustJSON(h.Transcript.sandboxPolicy()), sandbox)
	}
	for _, q := range r.reqs {
		if q.Kind == fakemodel.Sub {
			v.expect(sandboxMode(q) == sandbox, "a sub-agent's request says sandbox_mode %q, want the session's %q", sandboxMode(q), sandbox)
		}
	}
}

// sessionSays checks a field of the spawn's sandbox_policy at hook time,
// the evidence that the session really had the setting a scenario gives it.
func sessionSays(key string, want func(any) bool) func(*world, *result, *verdict) {
	return func(w *world, r *result, v *verdict) {
		if h := r.mainSpawnHook(); h != nil {
			got := h.Transcript.sandboxPolicy()[key]
			v.expect(want(got), "the spawn's turn_context sandbox_policy.%s is %s", key, mustJSON(got))
		}
	}
}

// holds tells whether a JSON list holds s.
func holds(s string) func(any) bool {
	return func(v any) bool {
		list, _ := v.([]any)
		for _, e := range list {
			if e == s {
				return true
			}
		}
		return false
	}
}

// TestGate runs spawngate, wired as docs/codex.md says,
// in front of the real client, and asserts what must happen. The child
// runs in the session's sandbox whatever its definition says, so each
// scenario names the session it runs in, and a "writer" refused for
// writing runs where it really could write.
func TestGate(t *testing.T) {
	needCodex(t)
	t.Parallel()
	cases := []gateCase{
		// Children that could write, refused: the default policy allows
		// sandbox:workspace-write but not writing.
		{
			name:    "writer_workspace_write_refused",
			setup:   setup{defs: defs("writer", defWriter)},
			plan:    simple(false, v1Spawn("writer", "Change the code."), "writer"),
			run:     execRun("-s", "workspace-write"),
			session: "workspace-write",
			verify:  refusedUnwritten("writer", "tools.write"),
		},
		{
			name:    "writer_danger_full_access_refused",
			setup:   setup{defs: defs("root", defFullAccess)},
			plan:    simple(false, v1Spawn("root", "Do anything."), "root"),
			run:     appRun("on-request", "danger-full-access"),
			session: "danger-full-access",
			verify:  refusedUnwritten("root", "sandbox:danger-full-access"),
		},
		{
			name:  "writer_items_brief_refused",
			setup: setup{defs: defs("writer", defWriter)},
			plan: simple(false, map[string]any{"agent_type": "writer",
				"items": []any{map[string]any{"type": "text", "text": "Change the code."}}}, "writer"),
			run:     execRun("-s", "workspace-write"),
			session: "workspace-write",
			verify:  refusedUnwritten("writer", "tools.write"),
		},
		{
			name:    "writer_refused_on_request_session",
			setup:   setup{defs: defs("writer", defWriter)},
			plan:    simple(false, v1Spawn("writer", "Change the code."), "writer"),
			run:     appRun("on-request", "workspace-write"),
			session: "workspace-write",
			verify:  refusedUnwritten("writer", "tools.write"),
		},
		{
			name:    "trusted_hash_runs_hook",
			setup:   setup{defs: defs("writer", defWriter), hook: hookTrustedHash},
			plan:    simple(false, v1Spawn("writer", "Change the code."), "writer"),
			session: "workspace-write",
			run: func(w *world) *result {
				ctx, cancel := contextFor()
				defer cancel()
				w.trustHooks(ctx)
				return w.execCodex("-s", "workspace-write")
			},
			verify: refusedUnwritten("writer", "tools.write"),
		},
		// The session's sandbox, not the definition's: a reader in a
		// session that writes would write, and is refused.
		{
			name:    "reader_in_workspace_write_session_refused",
			setup:   setup{defs: defs("reader", defReader)},
			plan:    simple(false, v1Spawn("reader", "Read."), "reader"),
			run:     appRun("on-request", "workspace-write"),
			session: "workspace-write",
			verify:  refusedUnwritten("reader", "tools.write"),
		},
		{
			name:    "reader_in_exec_workspace_write_session_refused",
			setup:   setup{defs: defs("reader", defReader)},
			plan:    simple(false, v1Spawn("reader", "Read."), "reader"),
			run:     execRun("-s", "workspace-write"),
			session: "workspace-write",
			verify:  refusedUnwritten("reader", "tools.write"),
		},
		{
			name:    "reader_in_full_access_session_refused",
			setup:   setup{defs: defs("reader", defReader)},
			plan:    simple(false, v1Spawn("reader", "Read."), "reader"),
			run:     appRun("on-request", "danger-full-access"),
			session: "danger-full-access",
			verify:  refusedUnwritten("reader", "sandbox:danger-full-access"),
		},
		// ... and a writer in a read-only session cannot write: it starts.
		{
			name:    "writer_in_read_only_session_starts_and_cannot_write",
			setup:   setup{defs: defs("writer", defWriter)},
			plan:    simple(false, v1Spawn("writer", "Change the code."), "writer"),
			run:     execRun("-s", "read-only"),
			session: "read-only",
			verify:  startsReadOnly("writer"),
		},
		{
			name:    "v2_writer_in_read_only_session_starts_and_cannot_write",
			setup:   setup{defs: defs("writer", defWriter)},
			plan:    simple(true, v2Spawn("writer"), "writer"),
			run:     appRun("on-request", "read-only", "--enable", "multi_agent_v2"),
			session: "read-only",
			verify:  startsReadOnly("writer"),
		},
		{
			name:    "reader_in_read_only_session_starts",
			setup:   setup{defs: defs("reader", defReader)},
			plan:    simple(false, v1Spawn("reader", "Read."), "reader"),
			run:     appRun("on-request", "read-only"),
			session: "read-only",
			verify:  startsReadOnly("reader"),
		},
		{
			// codex exec forces approval never: in a sandbox that is not
			// bypass (issue 19 item 7).
			name:    "reader_in_exec_read_only_session_starts",
			setup:   setup{defs: defs("reader", defReader)},
			plan:    simple(false, v1Spawn("reader", "Read."), "reader"),
			run:     execRun("-s", "read-only"),
			session: "read-only",
			verify:  startsReadOnly("reader"),
		},
		// The command line says more than one thing: Codex's own
		// precedence decides what the child gets.
		{
			// A read-only session ignores --add-dir (nothing is writable),
			// and so does its turn_context.
			name:    "reader_in_exec_read_only_session_with_add_dir_starts",
			setup:   setup{defs: defs("reader", defReader)},
			plan:    simple(false, v1Spawn("reader", "Read."), "reader"),
			session: "read-only",
			run: func(w *world) *result {
				return w.execCodex("-s", "read-only", "--add-dir", w.outside)
			},
			verify: startsReadOnly("reader"),
		},
		{
			// -c agents.NAME on the command line replaces the project's
			// definition of the name (Codex 0.171.0): the hook reads the
			// files, not that, and does not judge the session. Its
			// opposite is reader_in_exec_read_only_session_starts.
			name:    "role_given_with_c_refused",
			setup:   setup{defs: defs("reader", defReader)},
			plan:    simple(false, v1Spawn("reader", "Read."), "reader"),
			run:     execRun("-s", "read-only", "-c", `agents.reader={description="a reader",config_file="/nonexistent/reader.toml"}`),
			session: "read-only",
			verify:  blockedUnwritten("reader", "-c agents.reader="),
		},
		{
			// A profile (CODEX_HOME/NAME.config.toml) can declare roles and
			// servers the hook does not read.
			name:  "profile_refused",
			setup: setup{defs: defs("reader", defReader)},
			plan:  simple(false, v1Spawn("reader", "Read."), "reader"),
			run: func(w *world) *result {
				mustWrite(w.t, filepath.Join(w.codexHome, "wide.config.toml"), "[agents.reader]\ndescription = \"a reader\"\n")
				return w.execCodex("--profile", "wide", "-s", "read-only")
			},
			session: "read-only",
			verify:  blockedUnwritten("reader", "--profile wide"),
		},
		{
			// -s wins over -c sandbox_mode.
			name:    "exec_sandbox_flag_over_config_override_starts",
			setup:   setup{defs: defs("reader", defReader)},
			plan:    simple(false, v1Spawn("reader", "Read."), "reader"),
			run:     execRun("-s", "read-only", "-c", `sandbox_mode="workspace-write"`),
			session: "read-only",
			verify:  startsReadOnly("reader"),
		},
		{
			// A policy that lets a workspace-write child write: it starts
			// and writes in the repository, and no further.
			name:    "writer_allowed_to_write_writes",
			setup:   setup{defs: defs("writer", defWriter), policy: policyWrite},
			plan:    simple(false, v1Spawn("writer", "Change the code."), "writer"),
			run:     execRun("-s", "workspace-write"),
			session: "workspace-write",
			verify:  writes("writer"),
		},
		// What the session adds to its sandbox, under a policy that lets a
		// workspace-write child write.
		{
			name: "session_network_access_refused",
			setup: setup{defs: defs("writer", defWriter), policy: policyWrite,
				sandboxWorkspaceWrite: "network_access = true\n"},
			plan:    simple(false, v1Spawn("writer", "Change the code."), "writer"),
			run:     execRun("-s", "workspace-write"),
			session: "workspace-write",
			verify: also(refusedUnwritten("writer", "sandbox:network"),
				sessionSays("network_access", func(v any) bool { return v == true })),
		},
		{
			name: "session_writable_root_slash_refused",
			setup: setup{defs: defs("writer", defWriter), policy: policyWrite,
				sandboxWorkspaceWrite: "writable_roots = [\"/\"]\n"},
			plan:    simple(false, v1Spawn("writer", "Change the code."), "writer"),
			run:     execRun("-s", "workspace-write"),
			session: "workspace-write",
			// A root of / holds the session's own transcript, which it could
			// rewrite: the hook cannot trust what it records, and blocks.
			verify: also(blockedUnwritten("writer", "the session can rewrite its own transcript"), sessionSays("writable_roots", holds("/"))),
		},
		{
			name:    "session_add_dir_outside_refused",
			setup:   setup{defs: defs("writer", defWriter), policy: policyWrite},
			plan:    simple(false, v1Spawn("writer", "Change the code."), "writer"),
			session: "workspace-write",
			run: func(w *world) *result {
				return w.execCodex("-s", "workspace-write", "--add-dir", w.outside)
			},
			verify: func(w *world, r *result, v *verdict) {
				refusedUnwritten("writer", "paths.escape")(w, r, v)
				sessionSays("writable_roots", holds(w.outside))(w, r, v)
			},
		},
		{
			name:    "yolo_session_refused",
			setup:   setup{defs: defs("reader", defReader)},
			plan:    simple(false, v1Spawn("reader", "Read."), "reader"),
			run:     execRun("--dangerously-bypass-approvals-and-sandbox"),
			session: "danger-full-access",
			verify:  refusedUnwritten("reader", "agent.permissions"),
		},

		// Which definition.
		{
			name:    "unknown_type_refused",
			setup:   setup{defs: defs("reader", defReader)},
			plan:    simple(false, v1Spawn("nosuch", "Go."), "reader"),
			run:     appRun("on-request", "read-only"),
			session: "read-only",
			verify:  refused("reader", "agent.definition"),
		},
		{
			name:    "omitted_type_refused",
			setup:   setup{defs: defs("reader", defReader)},
			plan:    simple(false, v1Spawn("", "Go."), "reader"),
			run:     appRun("on-request", "read-only"),
			session: "read-only",
			verify:  refused("reader", ""),
		},
		{
			name:    "builtin_default_refused",
			setup:   setup{defs: defs("reader", defReader)},
			plan:    simple(false, v1Spawn("default", "Go."), "reader"),
			run:     appRun("on-request", "read-only"),
			session: "read-only",
			verify:  refused("reader", "agent.definition"),
		},
		{
			name:    "builtin_worker_refused",
			setup:   setup{defs: defs("reader", defReader)},
			plan:    simple(false, v1Spawn("worker", "Go."), "reader"),
			run:     appRun("on-request", "read-only"),
			session: "read-only",
			verify:  refused("reader", "agent.definition"),
		},
		{
			name:    "builtin_explorer_refused",
			setup:   setup{defs: defs("reader", defReader)},
			plan:    simple(false, v1Spawn("explorer", "Go."), "reader"),
			run:     appRun("on-request", "read-only"),
			session: "read-only",
			verify:  refused("reader", "agent.definition"),
		},
		{
			name:  "missing_policy_blocks",
			setup: setup{defs: defs("reader", defReader), policy: "-"},
			plan:  simple(false, v1Spawn("reader", "Read."), "reader"),
			run:   appRun("on-request", "read-only"),
			verify: func(w *world, r *result, v *verdict) {
				neverStarts("reader")(w, r, v)
				out := r.spawnOutput()
				v.expect(strings.Contains(out, "blocked by PreToolUse hook") && strings.Contains(out, "spawngate"),
					"the spawn was not blocked by spawngate's exit 2: %q", out)
			},
		},
		{
			// The lead may start (depth 1); the child it spawns in turn may
			// not (depth 2 under max_depth 1). Only the hook that runs
			// inside the lead, with its agent_id, can know that.
			name:    "nested_spawn_judged_inside_subagent",
			setup:   setup{defs: defs("lead", defReader, "helper", defReader), policy: policyNestedDepth},
			session: "read-only",
			plan: func(w *world) plan {
				return plan{spawn: v1Spawn("lead", "Lead the work."), children: map[string]childScript{
					"lead":   spawnThenWait("lead", false, v1Spawn("helper", "Help."), ""),
					"helper": runs("helper", writeCmd(filepath.Join(w.repo, "inside.txt"))),
				}}
			},
			run: appRun("on-request", "read-only"),
			verify: func(w *world, r *result, v *verdict) {
				v.expect(len(r.childReqs("lead")) > 0, "the lead never started; spawn result %q", r.spawnOutput())
				v.expect(len(r.childReqs("helper")) == 0, "the helper the lead spawned started")
				var nested []hookRecord
				for _, h := range r.spawnHooks() {
					if h.Payload["agent_id"] != nil {
						nested = append(nested, h)
					}
				}
				v.expect(len(nested) == 1, "want one spawn hook inside the sub-agent (with agent_id), got %d", len(nested))
				if len(nested) == 1 {
					v.expect(nested[0].Payload["agent_type"] == "lead", "the nested payload's agent_type is %v, want lead", nested[0].Payload["agent_type"])
				}
				var leadOut string
				for _, q := range r.childReqs("lead") {
					if out := q.Output("lead_spawn"); out != "" {
						leadOut = out
					}
				}
				v.expect(strings.Contains(leadOut, "spawngate refused this sub-agent") && strings.Contains(leadOut, "tree.depth"),
					"the lead's spawn was not refused by spawngate's tree.depth: %q", leadOut)
			},
		},

		// The v2 spawn tool, in a session that could write.
		{
			name:    "v2_flag_writer_never_starts",
			setup:   setup{defs: defs("writer", defWriter)},
			plan:    simple(true, v2Spawn("writer"), "writer"),
			run:     execRun("-s", "workspace-write", "--enable", "multi_agent_v2"),
			session: "workspace-write",
			verify:  refusedUnwritten("writer", "tools.write"),
		},
		{
			name:    "v2_project_config_writer_never_starts",
			setup:   setup{defs: defs("writer", defWriter), projectConfig: "[features]\nmulti_agent_v2 = true\n"},
			plan:    simple(true, v2Spawn("writer"), "writer"),
			run:     execRun("-s", "workspace-write"),
			session: "workspace-write",
			verify:  refusedUnwritten("writer", "tools.write"),
		},
		{
			name:    "v2_catch_all_matcher_writer_refused",
			setup:   setup{defs: defs("writer", defWriter), matcher: ".*"},
			plan:    simple(true, v2Spawn("writer"), "writer"),
			run:     appRun("on-request", "workspace-write", "--enable", "multi_agent_v2"),
			session: "workspace-write",
			verify:  refusedUnwritten("writer", "tools.write"),
		},
		// v2 hands the child the parent's turns unless fork_turns says
		// "none": a brief the brief checks cannot read.
		{
			name:  "v2_fork_turns_none_starts_under_brief_check",
			setup: setup{defs: defs("reader", defReader), policy: policyBriefSecrets},
			plan: simple(true, map[string]any{"task_name": "e2e_task", "message": "Read.", "agent_type": "reader", "fork_turns": "none"},
				"reader"),
			run:     execRun("-s", "read-only", "--enable", "multi_agent_v2"),
			session: "read-only",
			verify: also(startsReadOnly("reader"), func(w *world, r *result, v *verdict) {
				for _, q := range r.childReqs("reader") {
					v.expect(!strings.Contains(q.Text(), userPrompt), "the child was handed the parent's prompt with fork_turns none")
				}
			}),
		},
		{
			name:    "v2_fork_turns_absent_refused_under_brief_check",
			setup:   setup{defs: defs("reader", defReader), policy: policyBriefSecrets},
			plan:    simple(true, v2Spawn("reader"), "reader"),
			run:     execRun("-s", "read-only", "--enable", "multi_agent_v2"),
			session: "read-only",
			verify:  refused("reader", "fork_turns"),
		},

		// The model the child really runs: the definition's, else the
		// call's, else the session's.
		{
			// The definition pins a model the policy does not allow; the
			// call names an allowed one. The child would run on the
			// definition's.
			name:    "definition_model_is_judged",
			setup:   setup{defs: defs("pinned", defReader+"model = \"rogue-model\"\n"), policy: policyModels("gpt-6*", sessionModel)},
			plan:    simple(false, map[string]any{"agent_type": "pinned", "message": "Read.", "model": "gpt-6.2-sol"}, "pinned"),
			run:     appRun("on-request", "read-only"),
			session: "read-only",
			verify:  refused("pinned", "model.allowlist"),
		},
		{
			name:    "call_model_is_judged",
			setup:   setup{defs: defs("reader", defReader), policy: policyModels(sessionModel)},
			plan:    simple(false, map[string]any{"agent_type": "reader", "message": "Read.", "model": "gpt-6.2-sol"}, "reader"),
			run:     execRun("-s", "read-only"),
			session: "read-only",
			verify:  refused("reader", "model.allowlist"),
		},
		{
			name:    "call_model_allowed_starts",
			setup:   setup{defs: defs("reader", defReader), policy: policyModels("gpt-6*")},
			plan:    simple(false, map[string]any{"agent_type": "reader", "message": "Read.", "model": "gpt-6.2-sol"}, "reader"),
			run:     execRun("-s", "read-only"),
			session: "read-only",
			verify:  also(startsReadOnly("reader"), childModel("reader", "gpt-6.2-sol")),
		},
		{
			// Issue 19 item 8: no model anywhere but the session's, which
			// the policy allows.
			name:    "session_model_allowed_starts",
			setup:   setup{defs: defs("reader", defReader), policy: policyModels(sessionModel)},
			plan:    simple(false, v1Spawn("reader", "Read."), "reader"),
			run:     execRun("-s", "read-only"),
			session: "read-only",
			verify:  also(startsReadOnly("reader"), childModel("reader", sessionModel)),
		},
		{
			name:    "session_model_not_allowed_refused",
			setup:   setup{defs: defs("reader", defReader), policy: policyModels("gpt-6*")},
			plan:    simple(false, v1Spawn("reader", "Read."), "reader"),
			run:     execRun("-s", "read-only"),
			session: "read-only",
			verify:  refused("reader", "model.allowlist"),
		},
	}
	// A knownOpen entry that names no scenario would excuse nothing and
	// hide that the scenario it meant is gone.
	names := map[string]bool{}
	for _, c := range cases {
		names[c.name] = true
	}
	for name := range knownOpen {
		if !names[name] {
			t.Errorf("knownOpen names %q, which is no TestGate scenario", name)
		}
	}
	for _, c := range cases {
		c := c
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			w := newWorld(t, c.setup)
			w.model.Play(c.plan(w).scripts())
			r := c.run(w)
			// A run that failed, or never got its spawn call answered, would
			// pass every "never starts" check without proving anything.
			if r.err != nil {
				t.Fatalf("the client run failed: %v\n%s", r.err, r.dump())
			}
			if r.spawnOutput() == "" {
				t.Fatalf("the main agent's spawn call never came back\n%s", r.dump())
			}
			var v verdict
			if c.session != "" {
				expectSession(&v, r, c.session)
			}
			c.verify(w, r, &v)
			if h := r.mainSpawnHook(); h != nil {
				t.Logf("spawn payload permission_mode=%v model=%v; turn_context: approval_policy=%v model=%v sandbox_policy=%s; spawn result: %q",
					h.Payload["permission_mode"], h.Payload["model"], h.Transcript.TurnContext["approval_policy"], h.Transcript.TurnContext["model"],
					mustJSON(h.Transcript.sandboxPolicy()), r.spawnOutput())
			}
			check(t, r, v)
		})
	}
}
