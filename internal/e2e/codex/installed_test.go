package codex

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/spawngate/spawngate/internal/host/hosttest"
)

// installedOpen lists the TestDoctorInstallation scenarios today's
// spawngate (doctor or hook) gets wrong, by subtest name, with why. Each
// keeps the right expectation: doctor passes the README's installation,
// and under it no forbidden child starts. Its failure turns into a skip
// naming the reason; a listed scenario that passes fails, so that the
// list only shrinks.
var installedOpen = map[string]string{}

// requirementsTOML is the README's enforcing installation as
// /etc/codex/requirements.toml: managed hooks alone, hooks pinned on, the
// README's matcher, spawngate by its absolute path with a timeout above
// its --timeout. A second managed group, the catch-all recorder, passes
// every call and records what the hook saw: a recorder in user config
// would be dropped (allow_managed_hooks_only), and the scenarios need
// that evidence.
func (w *world) requirementsTOML() string {
	gate := spawngateBin + " hook codex --policy " + w.policyPath + " --timeout 20s"
	recorder := shellQuote(selfBin) + " record-hook " + shellQuote(w.records)
	return `allow_managed_hooks_only = true

[features]
hooks = true

[hooks]
PreToolUse = [
  { matcher = '` + readmeMatcher + `', hooks = [
    { type = "command", command = ` + strconv.Quote(gate) + `, timeout = 30 },
  ] },
  { hooks = [
    { type = "command", command = ` + strconv.Quote(recorder) + `, timeout = 30 },
  ] },
]
`
}

// managedGateKey is the spawngate hook's key under requirementsTOML, as
// hooks/list names it (installed_hook_state_ignored_refused checks it).
const managedGateKey = "/etc/codex/requirements.toml:pre_tool_use:0:0"

// withRequirements makes every later client start of w run in a private
// mount namespace where /etc is an overlay holding codex/requirements.toml
// with text, so that the managed requirements are that client's alone; the
// test is skipped where that cannot be done (it needs root and unshare -m).
func withRequirements(w *world, text string) {
	t := w.t
	t.Helper()
	unshare, err := exec.LookPath("unshare")
	if err != nil || os.Geteuid() != 0 {
		t.Skip("managed requirements need root and unshare -m to overlay /etc")
	}
	dir := filepath.Join(w.base, "etc-overlay")
	upper, work := filepath.Join(dir, "upper"), filepath.Join(dir, "work")
	mustWrite(t, filepath.Join(upper, "codex", "requirements.toml"), text)
	mustMkdir(t, work)
	// sh -c SCRIPT UPPER WORK ARGV...: $0 is UPPER, $1 WORK, the rest ARGV.
	script := `mount -t overlay overlay -o "lowerdir=/etc,upperdir=$0,workdir=$1" /etc || exit 97
shift; exec "$@"`
	w.launch = []string{unshare, "-m", "--propagation", "private", "--", "sh", "-c", script, upper, work}
}

// runDoctor runs spawngate doctor codex on the installation the client is
// about to run with: the requirements text under a root of its own
// standing in for /, the repository, HOME, and CODEX_HOME in its
// environment (doctor reads it from there). It returns doctor's exit code
// and report.
func runDoctor(w *world, requirements string) (int, string) {
	t := w.t
	t.Helper()
	fake := filepath.Join(w.base, "doctor-root")
	hosttest.MirrorRoot(t, fake) // the binary and policy the hook names are the machine's
	mustWrite(t, filepath.Join(fake, "etc", "codex", "requirements.toml"), requirements)
	ctx, cancel := contextFor()
	defer cancel()
	cmd := exec.CommandContext(ctx, spawngateBin, "doctor", "codex", "--project", w.repo, "--home", w.home, "--root", fake)
	cmd.Env = w.env()
	out, err := cmd.CombinedOutput()
	t.Logf("doctor: %v\n%s", err, bytes.TrimSpace(out))
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return ee.ExitCode(), string(out)
		}
		t.Fatalf("spawngate doctor codex: %v\n%s", err, out)
	}
	return 0, string(out)
}

// installedCase is a scenario under the managed installation: doctor must
// pass it, and the client then runs with it.
type installedCase struct {
	name  string
	setup setup
	plan  func(w *world) plan
	// prepare changes the world (user config, hook state) after the
	// requirements are in place and before doctor and the client see it;
	// ctx bounds any client it asks.
	prepare func(ctx context.Context, w *world)
	run     func(w *world) *result
	session string
	verify  func(w *world, r *result, v *verdict)
	// namespace, when set, is where the main agent calls the v2 tools
	// (a tool_namespace of the config) instead of collaboration.
	namespace string
	// requirements, when set, changes requirementsTOML's text: an
	// installation that is not the README's.
	requirements func(string) string
	// doctorFails, when set, is a text doctor's report must hold: the
	// installation is one doctor must fail (exit 1), and verify checks
	// what the client then lets through.
	doctorFails string
}

// userAllowHook is a hook command that answers "allow" to every tool call
// and leaves a file behind when it runs.
func userAllowHook(w *world) string {
	return "touch " + shellQuote(filepath.Join(w.base, "user-hook-ran")) +
		`; echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow","permissionDecisionReason":"the user allows it"}}'`
}

// gateEntry is the hooks/list entry of the spawngate hook, nil if none.
func gateEntry(entries []hookEntry) *hookEntry {
	for i, e := range entries {
		if strings.Contains(e.Command, " hook codex ") {
			return &entries[i]
		}
	}
	return nil
}

// nestedUnder is a lead that may start (depth 1 under policyNestedDepth)
// and spawns a helper, which may not (depth 2): only the hook that runs
// inside the lead can refuse it.
func nestedUnder(w *world) plan {
	return plan{spawn: v1Spawn("lead", "Lead the work."), children: map[string]childScript{
		"lead":   spawnThenWait("lead", false, v1Spawn("helper", "Help."), ""),
		"helper": runs("helper", writeCmd(filepath.Join(w.repo, "inside.txt"))),
	}}
}

// helperRefusedInLead is the verdict for nestedUnder: the lead started,
// its spawn came back as spawngate's tree.depth refusal, and the helper
// never made a request nor wrote.
func helperRefusedInLead(w *world, r *result, v *verdict) {
	v.expect(len(r.childReqs("lead")) > 0, "the lead never started; spawn result %q", r.spawnOutput())
	v.expect(len(r.childReqs("helper")) == 0, "the helper the lead spawned started")
	v.expect(!exists(filepath.Join(w.repo, "inside.txt")), "inside.txt was written")
	var leadOut string
	for _, q := range r.childReqs("lead") {
		if out := q.Output("lead_spawn"); out != "" {
			leadOut = out
		}
	}
	v.expect(strings.Contains(leadOut, "spawngate refused this sub-agent") && strings.Contains(leadOut, "tree.depth"),
		"the lead's spawn was not refused by spawngate's tree.depth: %q", leadOut)
}

// userConfig writes $CODEX_HOME/config.toml with extra after the
// harness's own.
func userConfig(extra string) func(context.Context, *world) {
	return func(_ context.Context, w *world) {
		mustWrite(w.t, filepath.Join(w.codexHome, "config.toml"), w.configTOML(extra))
	}
}

// v2Renamed turns v2 on with its tools in namespace crew.
const v2Renamed = "[features.multi_agent_v2]\nenabled = true\ntool_namespace = \"crew\"\n"

// installedCheck is check with installedOpen.
func installedCheck(t *testing.T, r *result, v verdict) {
	t.Helper()
	name := t.Name()[strings.Index(t.Name(), "/")+1:]
	reason, open := installedOpen[name]
	if len(v) == 0 {
		if open {
			t.Errorf("listed in installedOpen (%s) but passes now: remove it from the list", reason)
		}
		return
	}
	msg := strings.Join(v, "\n")
	if r != nil {
		msg += "\n--- what happened ---\n" + r.dump()
	}
	if open {
		t.Skipf("known open (%s):\n%s", reason, msg)
	}
	t.Error(msg)
}

// TestDoctorInstallation: the README's enforcing installation (managed
// hooks in /etc/codex/requirements.toml, seen by the client alone through
// an overlay of /etc), which spawngate doctor codex must pass before every
// run, holds: the allowed reader starts, and neither the session's flags
// nor the user's or the repository's config gets a forbidden child past
// it.
func TestDoctorInstallation(t *testing.T) {
	needCodex(t)
	t.Parallel()
	cases := []installedCase{
		{
			name:    "installed_reader_read_only_session_starts",
			setup:   setup{defs: defs("reader", defReader)},
			plan:    simple(false, v1Spawn("reader", "Read."), "reader"),
			run:     appRun("on-request", "read-only"),
			session: "read-only",
			verify:  startsReadOnly("reader"),
		},
		{
			name:    "installed_writer_workspace_write_refused",
			setup:   setup{defs: defs("writer", defWriter)},
			plan:    simple(false, v1Spawn("writer", "Change the code."), "writer"),
			run:     execRun("-s", "workspace-write"),
			session: "workspace-write",
			verify:  refusedUnwritten("writer", "tools.write"),
		},
		{
			name:    "installed_v2_flag_writer_refused",
			setup:   setup{defs: defs("writer", defWriter)},
			plan:    simple(true, v2Spawn("writer"), "writer"),
			run:     execRun("-s", "workspace-write", "--enable", "multi_agent_v2"),
			session: "workspace-write",
			verify:  refusedUnwritten("writer", "tools.write"),
		},
		{
			name:    "installed_v2_project_config_writer_refused",
			setup:   setup{defs: defs("writer", defWriter), projectConfig: "[features]\nmulti_agent_v2 = true\n"},
			plan:    simple(true, v2Spawn("writer"), "writer"),
			run:     appRun("on-request", "workspace-write"),
			session: "workspace-write",
			verify:  refusedUnwritten("writer", "tools.write"),
		},
		{
			// The feature written as a table, as Codex also reads it.
			name:    "installed_v2_table_form_writer_refused",
			setup:   setup{defs: defs("writer", defWriter), projectConfig: "[features.multi_agent_v2]\nenabled = true\n"},
			plan:    simple(true, v2Spawn("writer"), "writer"),
			run:     execRun("-s", "workspace-write"),
			session: "workspace-write",
			verify:  refusedUnwritten("writer", "tools.write"),
		},
		{
			// A repository renames the v2 namespace: the payload then names
			// crewspawn_agent.
			name:      "installed_v2_namespace_renamed_writer_refused",
			setup:     setup{defs: defs("writer", defWriter), projectConfig: v2Renamed},
			plan:      simple(true, v2Spawn("writer"), "writer"),
			namespace: "crew",
			run:       execRun("-s", "workspace-write"),
			session:   "workspace-write",
			verify:    refusedUnwritten("writer", "tools.write"),
		},
		{
			name:      "installed_user_v2_namespace_renamed_writer_refused",
			setup:     setup{defs: defs("writer", defWriter)},
			plan:      simple(true, v2Spawn("writer"), "writer"),
			prepare:   userConfig("\n" + v2Renamed),
			namespace: "crew",
			run:       execRun("-s", "workspace-write"),
			session:   "workspace-write",
			verify:    refusedUnwritten("writer", "tools.write"),
		},
		{
			// A trusted hook of the user's own that answers "allow" is
			// dropped (allow_managed_hooks_only): it never runs.
			name:  "installed_user_allow_hook_refused",
			setup: setup{defs: defs("writer", defWriter)},
			plan:  simple(false, v1Spawn("writer", "Change the code."), "writer"),
			prepare: func(ctx context.Context, w *world) {
				cmd, matcher := userAllowHook(w), ""
				key := filepath.Join(w.codexHome, "config.toml") + ":pre_tool_use:0:0"
				userConfig(fmt.Sprintf(
					"\n[hooks]\nPreToolUse = [{ matcher = \"\", hooks = [{ type = \"command\", command = %s, timeout = 30 }] }]\n\n[hooks.state.%q]\ntrusted_hash = %q\n",
					strconv.Quote(cmd), key, hookTrustHash("pre_tool_use", &matcher, cmd, 30, nil)))(ctx, w)
				// Without the requirements the client lists the hook as
				// trusted and enabled: it would run.
				launch := w.launch
				w.launch = nil
				entries, err := w.listHooks(ctx)
				w.launch = launch
				if err != nil {
					w.t.Fatalf("hooks/list without the requirements: %v", err)
				}
				if len(entries) != 1 || entries[0].Key != key || entries[0].TrustStatus != "trusted" || !entries[0].Enabled {
					w.t.Fatalf("without the requirements the user's allow hook is not listed trusted and enabled: %+v", entries)
				}
				under, err := w.listHooks(ctx)
				if err != nil {
					w.t.Fatalf("hooks/list under the requirements: %v", err)
				}
				listed := "does not list it"
				for _, e := range under {
					if e.Key == key {
						listed = fmt.Sprintf("lists it: %+v", e)
					}
				}
				w.t.Logf("hooks/list under the requirements %s", listed)
			},
			run:     execRun("-s", "workspace-write"),
			session: "workspace-write",
			verify: also(refusedUnwritten("writer", "tools.write"), func(w *world, r *result, v *verdict) {
				v.expect(!exists(filepath.Join(w.base, "user-hook-ran")), "the user's allow hook ran beside the managed ones")
			}),
		},
		{
			name:    "installed_user_config_hooks_off_refused",
			setup:   setup{defs: defs("writer", defWriter)},
			plan:    simple(false, v1Spawn("writer", "Change the code."), "writer"),
			prepare: userConfig("\n[features]\nhooks = false\n"),
			run:     execRun("-s", "workspace-write"),
			session: "workspace-write",
			verify:  refusedUnwritten("writer", "tools.write"),
		},
		{
			name:    "installed_project_config_hooks_off_refused",
			setup:   setup{defs: defs("writer", defWriter), projectConfig: "[features]\nhooks = false\n"},
			plan:    simple(false, v1Spawn("writer", "Change the code."), "writer"),
			run:     appRun("on-request", "workspace-write"),
			session: "workspace-write",
			verify:  refusedUnwritten("writer", "tools.write"),
		},
		{
			// The repository turns hooks off and v2 on at once.
			name:    "installed_project_config_hooks_off_v2_refused",
			setup:   setup{defs: defs("writer", defWriter), projectConfig: "[features]\nhooks = false\nmulti_agent_v2 = true\n"},
			plan:    simple(true, v2Spawn("writer"), "writer"),
			run:     execRun("-s", "workspace-write"),
			session: "workspace-write",
			verify:  refusedUnwritten("writer", "tools.write"),
		},
		{
			// What doctor cannot see: the command line.
			name:    "installed_cli_disable_hooks_refused",
			setup:   setup{defs: defs("writer", defWriter)},
			plan:    simple(false, v1Spawn("writer", "Change the code."), "writer"),
			run:     execRun("-s", "workspace-write", "--disable", "hooks"),
			session: "workspace-write",
			verify:  refusedUnwritten("writer", "tools.write"),
		},
		{
			// No trusted_hash is stored for the managed hook, and user
			// config's state for it says disabled, with a hash that matches
			// nothing: managed hooks take no trust state.
			name:  "installed_hook_state_ignored_refused",
			setup: setup{defs: defs("writer", defWriter)},
			plan:  simple(false, v1Spawn("writer", "Change the code."), "writer"),
			prepare: func(ctx context.Context, w *world) {
				entries, err := w.listHooks(ctx)
				if err != nil {
					w.t.Fatalf("hooks/list under the requirements: %v", err)
				}
				gate := gateEntry(entries)
				if gate == nil || gate.Key != managedGateKey || gate.TrustStatus != "managed" || !gate.Enabled {
					w.t.Fatalf("hooks/list under the requirements does not list the spawngate hook as %s, managed and enabled: %+v", managedGateKey, entries)
				}
				userConfig(fmt.Sprintf("\n[hooks.state.%q]\nenabled = false\ntrusted_hash = %q\n", gate.Key, "sha256:"+strings.Repeat("0", 64)))(ctx, w)
				after, err := w.listHooks(ctx)
				if err != nil {
					w.t.Fatalf("hooks/list under the requirements, with the state: %v", err)
				}
				if g := gateEntry(after); g != nil {
					w.t.Logf("hooks/list with enabled = false stored for %s: trustStatus=%s enabled=%v", g.Key, g.TrustStatus, g.Enabled)
				}
			},
			run:     execRun("-s", "workspace-write"),
			session: "workspace-write",
			verify:  refusedUnwritten("writer", "tools.write"),
		},
		{
			// A project the user never trusted: its config is not read,
			// and managed hooks run all the same.
			name:  "installed_untrusted_project_refused",
			setup: setup{defs: defs("writer", defWriter)},
			plan:  simple(false, v1Spawn("writer", "Change the code."), "writer"),
			prepare: func(ctx context.Context, w *world) {
				trust := fmt.Sprintf("[projects.%q]\ntrust_level = \"trusted\"\n", w.repo)
				cfg := w.configTOML("")
				if !strings.Contains(cfg, trust) {
					w.t.Fatalf("config.toml holds no %q", trust)
				}
				mustWrite(w.t, filepath.Join(w.codexHome, "config.toml"), strings.Replace(cfg, trust, "", 1))
			},
			run:     execRun("-s", "workspace-write"),
			session: "workspace-write",
			// Codex loads no layer of an untrusted project, its agents
			// included: the project's writer is no definition to it.
			verify: refusedUnwritten("writer", "agent.definition"),
		},
		{
			// The control: without [features] hooks = true in
			// requirements, the same repository turns the managed hooks
			// off. Doctor fails that installation, and rightly: no hook
			// runs, and the writer starts and writes.
			name:         "unpinned_project_config_hooks_off_writer_starts",
			setup:        setup{defs: defs("writer", defWriter), projectConfig: "[features]\nhooks = false\n"},
			plan:         simple(false, v1Spawn("writer", "Change the code."), "writer"),
			requirements: func(s string) string { return strings.Replace(s, "[features]\nhooks = true\n", "", 1) },
			doctorFails:  "[features] hooks = false in project config turns off every hook",
			run:          execRun("-s", "workspace-write"),
			verify: func(w *world, r *result, v *verdict) {
				v.expect(len(r.hooks) == 0, "%d hook calls were recorded with hooks turned off", len(r.hooks))
				v.expect(len(r.childReqs("writer")) > 0, "the writer did not start with the hooks off; spawn result %q", r.spawnOutput())
				v.expect(exists(filepath.Join(w.repo, "inside.txt")), "the writer did not write with the hooks off")
			},
		},
		// What a sub-agent's definition (a config layer of the child's)
		// does to the hooks of the spawns the child makes in turn.
		{
			name:    "installed_definition_hooks_off_nested_refused",
			setup:   setup{policy: policyNestedDepth, defs: defs("lead", defReader+"\n[features]\nhooks = false\n", "helper", defReader)},
			plan:    nestedUnder,
			run:     appRun("on-request", "read-only"),
			session: "read-only",
			verify:  helperRefusedInLead,
		},
		{
			name: "installed_definition_gate_state_off_nested_refused",
			setup: setup{policy: policyNestedDepth, defs: defs("lead", defReader+fmt.Sprintf("\n[hooks.state.%q]\nenabled = false\n", managedGateKey),
				"helper", defReader)},
			plan:    nestedUnder,
			run:     execRun("-s", "read-only"),
			session: "read-only",
			verify:  helperRefusedInLead,
		},
	}
	names := map[string]bool{}
	for _, c := range cases {
		names[c.name] = true
	}
	for name := range installedOpen {
		if !names[name] {
			t.Errorf("installedOpen names %q, which is no TestDoctorInstallation scenario", name)
		}
	}
	for _, c := range cases {
		c := c
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			s := c.setup
			s.hook = hookManaged
			w := newWorld(t, s)
			p := c.plan(w)
			scripts := p.scripts()
			if c.namespace != "" {
				// The main agent's v2 spawn and wait, called in namespace ns.
				scripts.Main = spawnThenWaitIn(c.namespace, p.spawn)
			}
			w.model.Play(scripts)
			req := w.requirementsTOML()
			if c.requirements != nil {
				req = c.requirements(req)
			}
			withRequirements(w, req)
			if c.prepare != nil {
				ctx, cancel := contextFor()
				c.prepare(ctx, w)
				cancel()
			}
			var v verdict
			// A doctor that disagrees is reported, and the client still
			// runs: what it does then is part of the evidence.
			switch code, out := runDoctor(w, req); {
			case c.doctorFails == "" && code != 0:
				v = append(v, fmt.Sprintf("spawngate doctor codex does not pass the installation (exit %d):\n%s", code, out))
			case c.doctorFails != "" && (code != 1 || !strings.Contains(out, c.doctorFails)):
				v = append(v, fmt.Sprintf("spawngate doctor codex does not fail the installation with %q (exit %d):\n%s", c.doctorFails, code, out))
			}
			r := c.run(w)
			switch {
			case r.err != nil:
				v = append(v, fmt.Sprintf("the client run failed: %v", r.err))
			case r.spawnOutput() == "":
				// A run whose spawn never came back would pass every
				// "never starts" check without proving anything.
				v = append(v, "the main agent's spawn call never came back")
			default:
				if c.session != "" {
					expectSession(&v, r, c.session)
				}
				c.verify(w, r, &v)
			}
			if h := r.mainSpawnHook(); h != nil {
				t.Logf("spawn payload tool_name=%v permission_mode=%v; turn_context: approval_policy=%v sandbox_policy=%s; spawn result: %q",
					h.Payload["tool_name"], h.Payload["permission_mode"], h.Transcript.TurnContext["approval_policy"],
					mustJSON(h.Transcript.sandboxPolicy()), r.spawnOutput())
			}
			installedCheck(t, r, v)
		})
	}
}
