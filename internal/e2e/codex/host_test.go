package codex

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/spawngate/spawngate/internal/e2e/fakemodel"
)

// TestHost pins down what Codex itself does, with no spawngate in the way
// (only the recording hook): the facts spawngate's Codex front end is built
// on. A failure here means the pinned client behaves differently from what
// the README and the hook assume, not that spawngate is wrong.
func TestHost(t *testing.T) {
	needCodex(t)
	t.Parallel()

	t.Run("child_sandbox_is_session_sandbox", func(t *testing.T) {
		t.Parallel()
		cases := []struct {
			name, def, session      string
			run                     func(*world) *result
			wantInside, wantOutside bool
			// wantMode is the spawn payload's permission_mode: it follows
			// the approval policy alone (never: bypassPermissions).
			wantMode string
		}{
			// A read-only reader in a workspace-write exec session writes in
			// the repo (and no further: the session's sandbox holds).
			{"exec_workspace_write_reader", defReader, "workspace-write", execRun("-s", "workspace-write"), true, false, "bypassPermissions"},
			// A workspace-write writer in a read-only session cannot write.
			{"exec_read_only_writer", defWriter, "read-only", execRun("-s", "read-only"), false, false, "bypassPermissions"},
			// A read-only reader in a full-access on-request session writes
			// anywhere, without any approval being asked.
			{"on_request_full_access_reader", defReader, "danger-full-access", appRun("on-request", "danger-full-access"), true, true, "default"},
			// And in a workspace-write on-request session, in the repo.
			{"on_request_workspace_write_reader", defReader, "workspace-write", appRun("on-request", "workspace-write"), true, false, "default"},
		}
		for _, c := range cases {
			c := c
			t.Run(c.name, func(t *testing.T) {
				t.Parallel()
				w := newWorld(t, setup{hook: hookNone, defs: defs("agent", c.def)})
				inside, outside := filepath.Join(w.repo, "inside.txt"), filepath.Join(w.outside, "outside.txt")
				w.model.Play(plan{spawn: v1Spawn("agent", "Go."), children: map[string]childScript{"agent": runs("agent", writeCmd(inside, outside))}}.scripts())
				r := c.run(w)
				var v verdict
				kids := r.childReqs("agent")
				v.expect(len(kids) >= 2, "the child did not run its command (%d requests)", len(kids))
				v.expect(exists(inside) == c.wantInside, "inside.txt written: %v, want %v", exists(inside), c.wantInside)
				v.expect(exists(outside) == c.wantOutside, "outside.txt written: %v, want %v", exists(outside), c.wantOutside)
				for _, q := range kids {
					v.expect(sandboxMode(q) == c.session, "the child's turn metadata says sandbox_mode %q, want the session's %q", sandboxMode(q), c.session)
				}
				for _, h := range r.spawnHooks() {
					v.expect(h.Payload["permission_mode"] == c.wantMode, "permission_mode %v, want %q", h.Payload["permission_mode"], c.wantMode)
				}
				if len(kids) > 0 {
					t.Logf("the child was told: %s", permissionsText(kids[0].Text()))
				}
				t.Logf("approvals asked: %d", len(r.approvals))
				check(t, r, v)
			})
		}
	})

	t.Run("child_approval_is_session_approval", func(t *testing.T) {
		t.Parallel()
		// The definition asks for approval never; the session is on-request.
		w := newWorld(t, setup{hook: hookNone, defs: defs("agent", defReader+"approval_policy = \"never\"\n")})
		w.model.Play(plan{spawn: v1Spawn("agent", "Go."), children: map[string]childScript{"agent": runs("agent", "true")}}.scripts())
		r := w.appSession("on-request", "read-only")
		var v verdict
		kids := r.childReqs("agent")
		v.expect(len(kids) > 0, "the child never started")
		main := r.mainReqs()
		if len(kids) > 0 && len(main) > 0 {
			// Told exactly what the main agent was told: the session's
			// approval (on-request asks the model to escalate), not never.
			v.expect(permissionsText(kids[0].Text()) == permissionsText(main[0].Text()),
				"the child was told other permissions than the main agent:\nchild: %s\nmain:  %s", permissionsText(kids[0].Text()), permissionsText(main[0].Text()))
			v.expect(!strings.Contains(kids[0].Text(), "Approval policy is currently never"), "the child was told approval never")
		}
		for _, h := range r.hooks {
			if h.Payload["agent_id"] == nil && strings.HasSuffix(fmt.Sprint(h.Payload["tool_name"]), "spawn_agent") {
				v.expect(h.Payload["permission_mode"] == "default", "the spawn payload says permission_mode %v, want \"default\" for on-request", h.Payload["permission_mode"])
			}
			if h.Payload["agent_id"] != nil {
				v.expect(h.Payload["permission_mode"] == "default", "the child's own hook payload says permission_mode %v, want the session's \"default\"", h.Payload["permission_mode"])
			}
		}
		check(t, r, v)
	})

	t.Run("child_model", func(t *testing.T) {
		t.Parallel()
		cases := []struct {
			name, def, callModel, want string
		}{
			// The definition's model wins over the call's.
			{"definition_overrides_call", "model = \"def-model\"\n", "gpt-6.2-sol", "def-model"},
			// No model in the definition: the call's, when it names one
			// (from the client's model catalog; an unknown one fails the spawn).
			{"call_without_definition_model", "", "gpt-6.2-sol", "gpt-6.2-sol"},
			// Neither: the session's model, the payload's "model".
			{"session_model", "", "", sessionModel},
		}
		for _, c := range cases {
			c := c
			t.Run(c.name, func(t *testing.T) {
				t.Parallel()
				w := newWorld(t, setup{hook: hookNone, defs: defs("agent", defReader+c.def)})
				args := v1Spawn("agent", "Go.")
				if c.callModel != "" {
					args["model"] = c.callModel
				}
				w.model.Play(plan{spawn: args, children: map[string]childScript{"agent": runs("agent", "true")}}.scripts())
				r := w.execCodex("-s", "read-only")
				var v verdict
				kids := r.childReqs("agent")
				v.expect(len(kids) > 0, "the child never started: %q", r.spawnOutput())
				for _, q := range kids {
					v.expect(q.Model == c.want, "the child's request went out on model %q, want %q", q.Model, c.want)
				}
				for _, h := range r.spawnHooks() {
					v.expect(h.Payload["model"] == sessionModel, "the spawn payload's model is %v, want the session's %q", h.Payload["model"], sessionModel)
				}
				check(t, r, v)
			})
		}
	})

	t.Run("definition_sandbox_settings_ignored", func(t *testing.T) {
		t.Parallel()
		cases := []struct {
			name string
			// defWidens: the definition asks for the outside folder as a
			// writable root and for network; otherwise the session does
			// (with -c), the control that shows the probes can see both.
			defWidens bool
			want      bool
		}{
			{"in_definition", true, false},
			{"in_session_control", false, true},
		}
		for _, c := range cases {
			c := c
			t.Run(c.name, func(t *testing.T) {
				t.Parallel()
				w := newWorld(t, setup{hook: hookNone})
				outside := filepath.Join(w.outside, "outside.txt")
				widen := fmt.Sprintf("\n[sandbox_workspace_write]\nwritable_roots = [%q]\nnetwork_access = true\n", w.outside)
				args := []string{"-s", "workspace-write"}
				if c.defWidens {
					w.setup.defs = defs("agent", defWriter+widen)
				} else {
					w.setup.defs = defs("agent", defWriter)
					args = append(args, "-c", fmt.Sprintf("sandbox_workspace_write.writable_roots=[%q]", w.outside),
						"-c", "sandbox_workspace_write.network_access=true")
				}
				writeDefs(t, w)
				host, port, _ := strings.Cut(strings.TrimPrefix(w.model.URL(), "http://"), ":")
				netProbe := fmt.Sprintf("(exec 3<>/dev/tcp/%s/%s) 2>/dev/null && echo NET-OPEN || echo NET-CLOSED", host, port)
				w.model.Play(plan{spawn: v1Spawn("agent", "Go."), children: map[string]childScript{
					"agent": runs("agent", writeCmd(outside)+"; "+netProbe),
				}}.scripts())
				r := w.execCodex(args...)
				var v verdict
				kids := r.childReqs("agent")
				v.expect(len(kids) >= 2, "the child did not run its command")
				v.expect(exists(outside) == c.want, "the child wrote in the extra writable root: %v, want %v", exists(outside), c.want)
				var out string
				for _, q := range kids {
					if o := q.Output("agent_cmd"); o != "" {
						out = o
					}
				}
				v.expect(strings.Contains(out, "NET-OPEN") == c.want, "the child reached 127.0.0.1: %v, want %v (%q)", strings.Contains(out, "NET-OPEN"), c.want, out)
				if len(kids) > 0 {
					t.Logf("the child was told: %s", permissionsText(kids[0].Text()))
				}
				check(t, r, v)
			})
		}
	})

	t.Run("command_line_precedence", func(t *testing.T) {
		t.Parallel()
		// Flags that say different things: -s wins over -c sandbox_mode,
		// and --add-dir grants nothing in a read-only session. The child
		// runs read-only, and the turn_context says so (no writable_roots).
		cases := []struct {
			name string
			args func(*world) []string
		}{
			{"sandbox_flag_over_config", func(*world) []string {
				return []string{"-s", "read-only", "-c", `sandbox_mode="workspace-write"`}
			}},
			{"add_dir_in_read_only", func(w *world) []string { return []string{"-s", "read-only", "--add-dir", w.outside} }},
		}
		for _, c := range cases {
			c := c
			t.Run(c.name, func(t *testing.T) {
				t.Parallel()
				w := newWorld(t, setup{hook: hookNone, defs: defs("agent", defReader)})
				w.model.Play(simple(false, v1Spawn("agent", "Go."), "agent")(w).scripts())
				r := w.execCodex(c.args(w)...)
				var v verdict
				expectSession(&v, r, "read-only")
				startsReadOnly("agent")(w, r, &v)
				if h := r.mainSpawnHook(); h != nil {
					t.Logf("turn_context sandbox_policy at hook time: %s", mustJSON(h.Transcript.sandboxPolicy()))
				}
				check(t, r, v)
			})
		}
	})

	t.Run("history", func(t *testing.T) {
		t.Parallel()
		// The parent's history is its user prompt; an assistant message the
		// parent says in the same response as the spawn call is not part of
		// it yet (logged, not asserted).
		const secret = "PARENT-ASSISTANT-SECRET-7d1f"
		cases := []struct {
			name     string
			v2       bool
			args     map[string]any
			wantSeen bool
		}{
			// v1: fork_context true forks the whole history (agent_type must
			// then be omitted: the child keeps the parent's type).
			{"v1_fork_context", false, map[string]any{"message": "Go.", "fork_context": true}, true},
			{"v1_fresh", false, v1Spawn("agent", "Go."), false},
			// No agent_type and no fork_context: a fresh default child.
			{"v1_omitted_type", false, v1Spawn("", "Go."), false},
			// v2: fork_turns defaults to "all", with the role still applied.
			{"v2_default_forks", true, v2Spawn("agent"), true},
			{"v2_fork_turns_none", true, map[string]any{"task_name": "e2e_task", "message": "Go.", "agent_type": "agent", "fork_turns": "none"}, false},
		}
		for _, c := range cases {
			c := c
			t.Run(c.name, func(t *testing.T) {
				t.Parallel()
				w := newWorld(t, setup{hook: hookNone, defs: defs("agent", defReader)})
				w.model.Play(plan{v2: c.v2, spawn: c.args, preface: secret}.scripts())
				args := []string{"-s", "read-only"}
				if c.v2 {
					args = append(args, "--enable", "multi_agent_v2")
				}
				r := w.execCodex(args...)
				var v verdict
				v.expect(r.anyChild(), "no child started: %q", r.spawnOutput())
				for _, q := range r.reqs {
					if q.Kind == fakemodel.Sub {
						seen := strings.Contains(q.Text(), userPrompt)
						v.expect(seen == c.wantSeen, "the child saw the parent's prompt: %v, want %v", seen, c.wantSeen)
						t.Logf("child saw the parent's prompt: %v; the parent's same-response assistant text: %v", seen, strings.Contains(q.Text(), secret))
						break
					}
				}
				check(t, r, v)
			})
		}
	})

	t.Run("permission_mode", func(t *testing.T) {
		t.Parallel()
		// What PreToolUse's permission_mode says for each session: it
		// follows the approval policy alone, never the sandbox. (Sessions
		// child_sandbox_is_session_sandbox and child_approval_is_session_
		// approval already run are checked there.)
		cases := []struct {
			name string
			run  func(*world) *result
			want string
		}{
			{"exec_yolo", execRun("--dangerously-bypass-approvals-and-sandbox"), "bypassPermissions"},
			// codex exec forces approval never over the configuration.
			{"exec_config_on_request", execRun("-s", "read-only", "-c", `approval_policy="on-request"`), "bypassPermissions"},
			{"app_never_read_only", appRun("never", "read-only"), "bypassPermissions"},
			{"app_untrusted_workspace_write", appRun("untrusted", "workspace-write"), "default"},
		}
		for _, c := range cases {
			c := c
			t.Run(c.name, func(t *testing.T) {
				t.Parallel()
				w := newWorld(t, setup{hook: hookNone, defs: defs("agent", defReader)})
				w.model.Play(plan{spawn: v1Spawn("agent", "Go.")}.scripts())
				r := c.run(w)
				var v verdict
				hs := r.spawnHooks()
				v.expect(len(hs) == 1, "want one spawn payload, got %d", len(hs))
				for _, h := range hs {
					v.expect(h.Payload["permission_mode"] == c.want, "permission_mode %v, want %q", h.Payload["permission_mode"], c.want)
					tc := h.Transcript.TurnContext
					t.Logf("permission_mode=%v; transcript turn_context: approval_policy=%v sandbox_policy=%s",
						h.Payload["permission_mode"], tc["approval_policy"], mustJSON(tc["sandbox_policy"]))
				}
				check(t, r, v)
			})
		}
	})

	t.Run("transcript_and_environment_at_hook_time", func(t *testing.T) {
		t.Parallel()
		w := newWorld(t, setup{hook: hookNone, defs: defs("agent", defReader)})
		w.model.Play(plan{spawn: v1Spawn("agent", "Go.")}.scripts())
		r := w.appSession("on-request", "workspace-write")
		var v verdict
		hs := r.spawnHooks()
		v.expect(len(hs) == 1, "want one spawn payload, got %d", len(hs))
		for _, h := range hs {
			tr := h.Transcript
			v.expect(tr.Exists, "the transcript did not exist when the hook ran")
			v.expect(tr.TurnContextForTurn, "the transcript held no turn_context for this turn when the hook ran")
			tc := tr.TurnContext
			v.expect(tc["approval_policy"] == "on-request", "turn_context approval_policy %v", tc["approval_policy"])
			sp, _ := tc["sandbox_policy"].(map[string]any)
			v.expect(sp["type"] == "workspace-write", "turn_context sandbox_policy %v", sp)
			v.expect(tc["model"] == sessionModel, "turn_context model %v", tc["model"])
			t.Logf("transcript at hook time: %d lines, mode %s, owner uid %d (the session's own user: writable by it)", tr.Lines, tr.Mode, tr.Owner)
			t.Logf("turn_context keys: %v", keys(tc))
			t.Logf("sandbox_policy: %s", mustJSON(tc["sandbox_policy"]))
			t.Logf("hook parent command line: %q", h.ParentCmdline)
			ours := map[string]bool{}
			for _, e := range w.env() {
				k, _, _ := strings.Cut(e, "=")
				ours[k] = true
			}
			var added []string
			for _, e := range h.Env {
				k, val, _ := strings.Cut(e, "=")
				if !ours[k] || k == "PATH" {
					added = append(added, k+"="+anonymise(w, val))
				}
			}
			t.Logf("environment the hook got beyond the client's own: %q", added)
		}
		check(t, r, v)
	})

	t.Run("untrusted_hook_skipped_silently", func(t *testing.T) {
		t.Parallel()
		w := newWorld(t, setup{hook: hookUntrusted, defs: defs("writer", defWriter)})
		w.model.Play(simple(false, v1Spawn("writer", "Change the code."), "writer")(w).scripts())
		ctx, cancel := contextFor()
		defer cancel()
		entries, err := w.listHooks(ctx)
		if err != nil {
			t.Fatal(err)
		}
		// A workspace-write session, where the gate would refuse the
		// writer: that it starts and writes shows the gate was skipped.
		r := w.execCodex("-s", "workspace-write")
		var v verdict
		for _, e := range entries {
			v.expect(e.TrustStatus == "untrusted", "hooks/list says %s for %s", e.TrustStatus, e.Key)
		}
		v.expect(len(r.hooks) == 0, "an untrusted hook ran")
		v.expect(len(r.childReqs("writer")) > 0, "the writer did not start with the untrusted gate skipped")
		v.expect(exists(filepath.Join(w.repo, "inside.txt")), "the writer did not write with the untrusted gate skipped")
		// The scratch paths carry the test's name, which says "untrusted".
		said := strings.ReplaceAll(r.stderr+r.stdout, w.base, "BASE")
		v.expect(!regexp.MustCompile(`(?i)untrusted|not trusted|review.*hook|hook.*trust|/hooks`).MatchString(said),
			"codex exec said something about the untrusted hook:\n%s", said)
		check(t, r, v)
	})

	t.Run("modified_hook_skipped_silently", func(t *testing.T) {
		t.Parallel()
		// Trusted, then edited (another policy path): the hash no longer
		// matches, hooks/list says "modified", and the gate is skipped while
		// the unchanged recorder still runs.
		w := newWorld(t, setup{hook: hookTrustedHash, defs: defs("writer", defWriter)})
		w.model.Play(simple(false, v1Spawn("writer", "Change the code."), "writer")(w).scripts())
		w.trustHooksComputed()
		w.policyPath += ".moved"
		mustWrite(t, w.policyPath, fmt.Sprintf(defaultPolicy, w.repo))
		mustWrite(t, filepath.Join(w.codexHome, "hooks.json"), w.hooksJSON())
		ctx, cancel := contextFor()
		defer cancel()
		entries, err := w.listHooks(ctx)
		if err != nil {
			t.Fatal(err)
		}
		// As above: a session in which the gate would refuse the writer.
		r := w.execCodex("-s", "workspace-write")
		var v verdict
		v.expect(len(entries) == 2 && entries[0].TrustStatus == "modified" && entries[1].TrustStatus == "trusted",
			"hooks/list trust statuses: %+v", entries)
		v.expect(len(r.spawnHooks()) == 1, "the unchanged recorder did not run")
		v.expect(len(r.childReqs("writer")) > 0, "the writer did not start with the modified gate skipped")
		v.expect(exists(filepath.Join(w.repo, "inside.txt")), "the writer did not write with the modified gate skipped")
		check(t, r, v)
	})

	t.Run("trust_hash", func(t *testing.T) {
		t.Parallel()
		w := newWorld(t, setup{hook: hookReadme})
		w.model.Play(plan{}.scripts())
		ctx, cancel := contextFor()
		defer cancel()
		entries, err := w.listHooks(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var v verdict
		for i, e := range entries {
			want := fmt.Sprintf("%s:pre_tool_use:%d:0", filepath.Join(w.codexHome, "hooks.json"), i)
			v.expect(e.Key == want, "hook key %q, want %q", e.Key, want)
			got := hookTrustHash("pre_tool_use", &e.Matcher, e.Command, e.TimeoutSec, nil)
			v.expect(got == e.CurrentHash, "computed %s for %s, hooks/list says %s", got, e.Key, e.CurrentHash)
		}
		// The hash is of the normalised handler: an omitted timeout is 600
		// and an absent matcher is left out, not written as "".
		v.expect(hookTrustHash("pre_tool_use", nil, "z", 600, nil) == "sha256:558b98a7bd06d94ba543ba81dec81d40988d04456b9c364b07098b6f22f5a089",
			"the hash of a matcher-less hook with the default timeout changed")
		msg := "hi"
		v.expect(hookTrustHash("pre_tool_use", strPtr(""), "x y", 30, &msg) == "sha256:20921ee4a0e77ab7900516089b862216ca28d2fdf9ffb2c6d2148075be500cea",
			"the hash of a hook with a statusMessage changed")
		check(t, &result{}, v)
	})

	t.Run("spawning_tools", func(t *testing.T) {
		t.Parallel()
		// Every tool the client offers that starts or restarts an agent
		// thread, per feature set; spawn_agents_on_csv (agent jobs) is not
		// in 0.171.0 at all, with or without its old feature flag.
		cases := []struct {
			name string
			args []string
			want []string
		}{
			// The default set, asked for with the old agent-jobs flag on: it
			// changes nothing.
			{"default_and_enable_fanout", []string{"--enable", "enable_fanout"}, []string{"multi_agent_v1.spawn_agent", "multi_agent_v1.resume_agent"}},
			{"multi_agent_v2", []string{"--enable", "multi_agent_v2"}, []string{"collaboration.spawn_agent", "collaboration.followup_task"}},
			{"multi_agent_off", []string{"--disable", "multi_agent"}, nil},
		}
		for _, c := range cases {
			c := c
			t.Run(c.name, func(t *testing.T) {
				t.Parallel()
				w := newWorld(t, setup{hook: hookNone})
				w.model.Play(fakemodel.Scripts{Main: func(*fakemodel.Request) fakemodel.Turn { return fakemodel.Say("done") }})
				r := w.execCodex(append([]string{"-s", "read-only"}, c.args...)...)
				var v verdict
				main := r.mainReqs()
				v.expect(len(main) > 0, "no request")
				if len(main) > 0 {
					t.Logf("tools offered: %v", main[0].Tools)
					for _, want := range c.want {
						v.expect(main[0].HasTool(want), "%s not offered", want)
					}
					for _, tool := range main[0].Tools {
						v.expect(!strings.Contains(tool, "csv") && !strings.Contains(tool, "agent_job"), "agent-job tool %s offered", tool)
						if c.want == nil {
							v.expect(!strings.Contains(tool, "agent"), "agent tool %s offered with multi_agent off", tool)
						}
					}
				}
				check(t, r, v)
			})
		}
	})

	t.Run("payloads", func(t *testing.T) {
		t.Parallel()
		// Real payloads, anonymised, for the hook's own tests: v1, v2 and a
		// spawn from inside a sub-agent. SPAWNGATE_E2E_UPDATE=1 rewrites them.
		cases := []struct {
			name string
			v2   bool
			run  func(*world) *result
		}{
			{"v1-exec", false, execRun("-s", "read-only")},
			{"v1-on-request", false, appRun("on-request", "workspace-write")},
			{"v2-exec", true, execRun("-s", "read-only", "--enable", "multi_agent_v2")},
			// The lead's definition says read-only; the session is
			// workspace-write, which is what the lead really runs with.
			{"nested-exec", false, execRun("-s", "workspace-write")},
		}
		for _, c := range cases {
			c := c
			t.Run(c.name, func(t *testing.T) {
				t.Parallel()
				w := newWorld(t, setup{hook: hookNone, defs: defs("lead", defReader, "writer", defWriter)})
				var args map[string]any
				if c.v2 {
					args = v2Spawn("writer")
				} else {
					args = v1Spawn("writer", "Change the code.")
				}
				p := plan{v2: c.v2, spawn: args}
				want := "spawn_agent"
				if c.v2 {
					want = "collaborationspawn_agent"
				}
				if strings.HasPrefix(c.name, "nested") {
					p.spawn = v1Spawn("lead", "Lead the work.")
					p.children = map[string]childScript{"lead": spawnThenWait("lead", false, v1Spawn("writer", "Change the code."), "")}
				}
				w.model.Play(p.scripts())
				r := c.run(w)
				var v verdict
				var rec *hookRecord
				for _, h := range r.spawnHooks() {
					h := h
					if strings.HasPrefix(c.name, "nested") == (h.Payload["agent_id"] != nil) {
						rec = &h
					}
				}
				v.expect(rec != nil, "no such spawn payload recorded")
				if rec != nil {
					v.expect(rec.Payload["tool_name"] == want, "tool_name %v, want %q", rec.Payload["tool_name"], want)
					if id, _ := rec.Payload["agent_id"].(string); id != "" {
						// Inside a sub-agent, transcript_path is the sub-agent's
						// own rollout (session_id stays the root's), so its
						// turn_context is the child's effective settings.
						tp, _ := rec.Payload["transcript_path"].(string)
						v.expect(strings.Contains(tp, id), "the nested transcript_path %q is not the sub-agent's own rollout", tp)
						v.expect(rec.Transcript.TurnContextForTurn, "the sub-agent's transcript had no turn_context for its turn at hook time")
						sp, _ := rec.Transcript.TurnContext["sandbox_policy"].(map[string]any)
						v.expect(sp["type"] == "workspace-write", "the sub-agent's turn_context says sandbox %v, want the session's workspace-write (its definition says read-only)", sp)
						t.Logf("sub-agent turn_context: approval_policy=%v sandbox_policy=%s model=%v", rec.Transcript.TurnContext["approval_policy"], mustJSON(sp), rec.Transcript.TurnContext["model"])
					}
					writePayload(t, w, c.name, rec.Payload)
				}
				check(t, r, v)
			})
		}
	})
}

func strPtr(s string) *string { return &s }

// hookTrustHash is how Codex 0.171.0 identifies a command hook for trust
// (hooks/list currentHash; config.toml [hooks.state."KEY"] trusted_hash):
// sha256 over the compact JSON, keys sorted at every level, of the hook's
// event label and its matcher group holding only this one handler, as
// normalised at load time (timeout defaulted to 600 and at least 1, async
// false unless set). Absent fields (no matcher, no statusMessage) are left
// out rather than written as null. Written here so that a doctor command
// can be checked against the real client.
func hookTrustHash(event string, matcher *string, command string, timeout int, statusMessage *string) string {
	handler := map[string]any{"type": "command", "command": command, "timeout": timeout, "async": false}
	if statusMessage != nil {
		handler["statusMessage"] = *statusMessage
	}
	identity := map[string]any{"event_name": event, "hooks": []any{handler}}
	if matcher != nil {
		identity["matcher"] = *matcher
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	// serde_json writes <, > and & as they are; Go would escape them.
	enc.SetEscapeHTML(false)
	if err := enc.Encode(identity); err != nil {
		panic(err)
	}
	sum := sha256.Sum256(bytes.TrimRight(buf.Bytes(), "\n"))
	return "sha256:" + hex.EncodeToString(sum[:])
}

// writeDefs (re)writes the world's definitions, for a case that needs the
// world's paths in them.
func writeDefs(t *testing.T, w *world) {
	t.Helper()
	for name, extra := range w.setup.defs {
		body := fmt.Sprintf("name = %q\ndescription = %q\ndeveloper_instructions = %q\n%s",
			name, "E2E agent "+name+".", marker(name)+": follow the task.", extra)
		mustWrite(t, filepath.Join(w.repo, ".codex", "agents", name+".toml"), body)
	}
}

// permissionsText is the permissions block Codex puts in a thread's
// developer message: what the agent is told its sandbox and approval are.
func permissionsText(text string) string {
	i := strings.Index(text, "<permissions instructions>")
	j := strings.Index(text, "</permissions instructions>")
	if i < 0 || j < i {
		return "(no permissions block)"
	}
	return strings.Join(strings.Fields(text[i+len("<permissions instructions>"):j]), " ")
}

func keys(m map[string]any) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

var uuidRe = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)

// anonymise replaces the scratch paths with stable stand-ins and every
// UUID with a numbered fake of the same shape (UUIDv7-looking).
func anonymise(w *world, s string) string {
	s = strings.ReplaceAll(s, w.repo, "/home/dev/project")
	s = strings.ReplaceAll(s, w.codexHome, "/home/dev/.codex")
	s = strings.ReplaceAll(s, w.home, "/home/dev")
	s = strings.ReplaceAll(s, w.base, "/home/dev/scratch")
	seen := map[string]string{}
	return uuidRe.ReplaceAllStringFunc(s, func(u string) string {
		if f, ok := seen[u]; ok {
			return f
		}
		f := fmt.Sprintf("019a0000-0000-7000-8000-%012d", len(seen)+1)
		seen[u] = f
		return f
	})
}

// writePayload keeps a real payload under testdata/payloads: compared with
// the stored one by shape (its keys), rewritten under SPAWNGATE_E2E_UPDATE=1.
func writePayload(t *testing.T, w *world, name string, payload map[string]any) {
	t.Helper()
	b, err := json.MarshalIndent(payload, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	text := anonymise(w, string(b)) + "\n"
	path := filepath.Join("testdata", "payloads", name+".json")
	if os.Getenv("SPAWNGATE_E2E_UPDATE") == "1" {
		mustWrite(t, path, text)
		return
	}
	stored, err := os.ReadFile(path)
	if err != nil {
		t.Errorf("no stored payload %s (SPAWNGATE_E2E_UPDATE=1 writes it): %v", path, err)
		return
	}
	var a, b2 map[string]any
	if json.Unmarshal(stored, &a) != nil || json.Unmarshal([]byte(text), &b2) != nil {
		t.Errorf("payload %s does not parse", path)
		return
	}
	if fmt.Sprint(keys(a)) != fmt.Sprint(keys(b2)) {
		t.Errorf("payload %s changed shape: stored keys %v, now %v:\n%s", path, keys(a), keys(b2), text)
	}
}
