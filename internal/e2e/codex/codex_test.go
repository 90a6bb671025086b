package codex

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// knownOpen lists the scenarios today's spawngate gets wrong, by subtest
// name. Each keeps the right expectation; its failure is turned into a skip
// naming the issue, and a pass is logged so the entry can be removed.
var knownOpen = map[string]string{
	"reader_in_workspace_write_session_never_writes": "issue 19 item 2: the child runs with the session's sandbox, not its definition's sandbox_mode",
	"reader_in_full_access_session_never_writes":     "issue 19 item 2: the child runs with the session's sandbox, not its definition's sandbox_mode",
	"definition_model_is_judged":                     "issue 19 item 3: the definition's model overrides the call's model",
	"reader_in_exec_read_only_session_starts":        "issue 19 item 7: codex exec reports approval never as bypassPermissions, even in a read-only sandbox",
}

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
	run    func(w *world) *result
	verify func(w *world, r *result, v *verdict)
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

// TestGate runs spawngate, wired as the README's "Use it from Codex" says,
// in front of the real client, and asserts what must happen.
func TestGate(t *testing.T) {
	needCodex(t)
	t.Parallel()
	cases := []gateCase{
		// Passing paths today.
		{
			name:   "writer_workspace_write_refused",
			setup:  setup{defs: defs("writer", defWriter)},
			plan:   simple(false, v1Spawn("writer", "Change the code."), "writer"),
			run:    execRun("-s", "read-only"),
			verify: refused("writer", "tools.write"),
		},
		{
			name:   "writer_danger_full_access_refused",
			setup:  setup{defs: defs("root", defFullAccess)},
			plan:   simple(false, v1Spawn("root", "Do anything."), "root"),
			run:    execRun("-s", "read-only"),
			verify: refused("root", "sandbox:danger-full-access"),
		},
		{
			name:  "writer_items_brief_refused",
			setup: setup{defs: defs("writer", defWriter)},
			plan: simple(false, map[string]any{"agent_type": "writer",
				"items": []any{map[string]any{"type": "text", "text": "Change the code."}}}, "writer"),
			run:    execRun("-s", "read-only"),
			verify: refused("writer", "tools.write"),
		},
		{
			name:   "writer_refused_on_request_session",
			setup:  setup{defs: defs("writer", defWriter)},
			plan:   simple(false, v1Spawn("writer", "Change the code."), "writer"),
			run:    appRun("on-request", "workspace-write"),
			verify: refused("writer", "tools.write"),
		},
		{
			name:   "unknown_type_refused",
			setup:  setup{defs: defs("reader", defReader)},
			plan:   simple(false, v1Spawn("nosuch", "Go."), "reader"),
			run:    appRun("on-request", "read-only"),
			verify: refused("reader", "agent.definition"),
		},
		{
			name:   "omitted_type_refused",
			setup:  setup{defs: defs("reader", defReader)},
			plan:   simple(false, v1Spawn("", "Go."), "reader"),
			run:    appRun("on-request", "read-only"),
			verify: refused("reader", ""),
		},
		{
			name:   "builtin_default_refused",
			setup:  setup{defs: defs("reader", defReader)},
			plan:   simple(false, v1Spawn("default", "Go."), "reader"),
			run:    appRun("on-request", "read-only"),
			verify: refused("reader", "agent.definition"),
		},
		{
			name:   "builtin_worker_refused",
			setup:  setup{defs: defs("reader", defReader)},
			plan:   simple(false, v1Spawn("worker", "Go."), "reader"),
			run:    appRun("on-request", "read-only"),
			verify: refused("reader", "agent.definition"),
		},
		{
			name:   "builtin_explorer_refused",
			setup:  setup{defs: defs("reader", defReader)},
			plan:   simple(false, v1Spawn("explorer", "Go."), "reader"),
			run:    appRun("on-request", "read-only"),
			verify: refused("reader", "agent.definition"),
		},
		{
			name:   "yolo_session_refused",
			setup:  setup{defs: defs("reader", defReader)},
			plan:   simple(false, v1Spawn("reader", "Read."), "reader"),
			run:    execRun("--dangerously-bypass-approvals-and-sandbox"),
			verify: refused("reader", "agent.permissions"),
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
			name:  "reader_in_read_only_session_starts",
			setup: setup{defs: defs("reader", defReader)},
			plan:  simple(false, v1Spawn("reader", "Read."), "reader"),
			run:   appRun("on-request", "read-only"),
			verify: func(w *world, r *result, v *verdict) {
				v.expect(len(r.childReqs("reader")) > 0, "the reader never started; spawn result %q", r.spawnOutput())
				v.expect(!exists(filepath.Join(w.repo, "inside.txt")), "the reader wrote in a read-only session")
			},
		},
		{
			name:  "trusted_hash_runs_hook",
			setup: setup{defs: defs("writer", defWriter), hook: hookTrustedHash},
			plan:  simple(false, v1Spawn("writer", "Change the code."), "writer"),
			run: func(w *world) *result {
				ctx, cancel := contextFor()
				defer cancel()
				w.trustHooks(ctx)
				return w.execCodex("-s", "read-only")
			},
			verify: refused("writer", "tools.write"),
		},
		{
			name: "nested_spawn_judged_inside_subagent",
			setup: setup{defs: defs("lead", defReader, "writer", defWriter),
				policy: "allowed_tools: [\"sandbox:read-only\", \"sandbox:workspace-write\"]\nworkspace_root: %REPO%\nbudget_cap_tokens: 400000\n"},
			plan: func(w *world) plan {
				return plan{spawn: v1Spawn("lead", "Lead the work."), children: map[string]childScript{
					"lead":   spawnThenWait("lead", false, v1Spawn("writer", "Change the code."), ""),
					"writer": runs("writer", writeCmd(filepath.Join(w.repo, "inside.txt"))),
				}}
			},
			run: appRun("on-request", "read-only"),
			verify: func(w *world, r *result, v *verdict) {
				v.expect(len(r.childReqs("lead")) > 0, "the lead never started; spawn result %q", r.spawnOutput())
				v.expect(len(r.childReqs("writer")) == 0, "the writer the lead spawned started")
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
					if out := q.output("lead_spawn"); out != "" {
						leadOut = out
					}
				}
				v.expect(strings.Contains(leadOut, "spawngate refused this sub-agent"), "the lead's spawn was not refused by spawngate: %q", leadOut)
			},
		},

		// Findings: written with the right expectation.
		{
			name:   "v2_flag_writer_never_starts",
			setup:  setup{defs: defs("writer", defWriter)},
			plan:   simple(true, v2Spawn("writer"), "writer"),
			run:    execRun("-s", "read-only", "--enable", "multi_agent_v2"),
			verify: neverStarts("writer"),
		},
		{
			name:   "v2_project_config_writer_never_starts",
			setup:  setup{defs: defs("writer", defWriter), projectConfig: "[features]\nmulti_agent_v2 = true\n"},
			plan:   simple(true, v2Spawn("writer"), "writer"),
			run:    execRun("-s", "read-only"),
			verify: neverStarts("writer"),
		},
		{
			name:   "v2_catch_all_matcher_writer_refused",
			setup:  setup{defs: defs("writer", defWriter), matcher: ".*"},
			plan:   simple(true, v2Spawn("writer"), "writer"),
			run:    appRun("on-request", "read-only", "--enable", "multi_agent_v2"),
			verify: refused("writer", "tools.write"),
		},
		{
			name:  "reader_in_workspace_write_session_never_writes",
			setup: setup{defs: defs("reader", defReader)},
			plan:  simple(false, v1Spawn("reader", "Read."), "reader"),
			run:   appRun("on-request", "workspace-write"),
			verify: func(w *world, r *result, v *verdict) {
				v.expect(!exists(filepath.Join(w.repo, "inside.txt")), "the read-only reader wrote in the repository")
			},
		},
		{
			name:  "reader_in_full_access_session_never_writes",
			setup: setup{defs: defs("reader", defReader)},
			plan:  simple(false, v1Spawn("reader", "Read."), "reader"),
			run:   appRun("on-request", "danger-full-access"),
			verify: func(w *world, r *result, v *verdict) {
				v.expect(!exists(filepath.Join(w.repo, "inside.txt")), "the read-only reader wrote in the repository")
				v.expect(!exists(filepath.Join(w.outside, "outside.txt")), "the read-only reader wrote outside the workspace")
			},
		},
		{
			name:  "reader_in_exec_workspace_write_session_never_writes",
			setup: setup{defs: defs("reader", defReader)},
			plan:  simple(false, v1Spawn("reader", "Read."), "reader"),
			run:   execRun("-s", "workspace-write"),
			verify: func(w *world, r *result, v *verdict) {
				v.expect(!exists(filepath.Join(w.repo, "inside.txt")), "the read-only reader wrote in the repository")
			},
		},
		{
			name:  "reader_in_exec_read_only_session_starts",
			setup: setup{defs: defs("reader", defReader)},
			plan:  simple(false, v1Spawn("reader", "Read."), "reader"),
			run:   execRun("-s", "read-only"),
			verify: func(w *world, r *result, v *verdict) {
				v.expect(len(r.childReqs("reader")) > 0, "the reader never started; spawn result %q", r.spawnOutput())
			},
		},
		{
			// The definition pins a model the policy does not allow; the
			// call names an allowed one. The child runs on the definition's.
			name: "definition_model_is_judged",
			setup: setup{defs: defs("pinned", defReader+"model = \"rogue-model\"\n"),
				policy: "allowed_tools: [\"sandbox:read-only\"]\nworkspace_root: %REPO%\nbudget_cap_tokens: 400000\nallowed_models: [\"gpt-6*\", \"main-model\"]\n"},
			plan: simple(false, map[string]any{"agent_type": "pinned", "message": "Read.", "model": "gpt-6.2-sol"}, "pinned"),
			run:  appRun("on-request", "read-only"),
			verify: func(w *world, r *result, v *verdict) {
				for _, q := range r.childReqs("pinned") {
					v.expect(false, "the child started on model %q, which the policy does not allow", q.Model)
					break
				}
			},
		},
	}
	for _, c := range cases {
		c := c
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			w := newWorld(t, c.setup, nil)
			w.model.script = c.plan(w).script
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
			c.verify(w, r, &v)
			check(t, r, v)
		})
	}
}
