package codex

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spawngate/spawngate/internal/e2e/fakemodel"
)

// adversarialOpen lists the TestAdversarial scenarios today's spawngate
// gets wrong, by subtest name, with why. Each keeps the right expectation
// (a forbidden child never starts and never writes; an allowed one starts);
// its failure turns into a skip naming the reason, and a listed scenario
// that passes fails, so that the list only shrinks.
var adversarialOpen = map[string]string{
	"project_config_disables_hooks": "fail-open: a trusted project's .codex/config.toml [features] hooks = false turns every " +
		"hook off, the README's user-level gate included; nothing runs and the writer writes",
}

// The adversarial MCP server: Codex starts this same test binary as a
// stdio MCP server when a config names it, so that a scenario can see,
// in a child's own requests, whether the child was given the server.
// init runs before TestMain, whose recording hook it must not disturb.
const mcpServerArg = "adv-mcp-server"

func init() {
	if len(os.Args) >= 2 && os.Args[1] == mcpServerArg {
		os.Exit(serveMCP())
	}
}

// serveMCP is the smallest MCP server Codex accepts: newline-delimited
// JSON-RPC on stdin and stdout, one tool (probe_tool).
func serveMCP() int {
	sc := bufio.NewScanner(os.Stdin)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	out := json.NewEncoder(os.Stdout)
	for sc.Scan() {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params json.RawMessage `json:"params"`
		}
		if json.Unmarshal(sc.Bytes(), &m) != nil || len(m.ID) == 0 || m.Method == "" {
			continue // a notification or a reply: nothing to answer
		}
		var result any = map[string]any{}
		switch m.Method {
		case "initialize":
			var p struct {
				ProtocolVersion string `json:"protocolVersion"`
			}
			_ = json.Unmarshal(m.Params, &p)
			if p.ProtocolVersion == "" {
				p.ProtocolVersion = "2025-06-18"
			}
			result = map[string]any{
				"protocolVersion": p.ProtocolVersion,
				"capabilities":    map[string]any{"tools": map[string]any{"listChanged": false}},
				"serverInfo":      map[string]any{"name": "adv-probe", "version": "0"},
			}
		case "tools/list":
			result = map[string]any{"tools": []any{map[string]any{
				"name": "probe_tool", "description": "An e2e probe.",
				"inputSchema": map[string]any{"type": "object", "properties": map[string]any{}},
			}}}
		case "tools/call":
			result = map[string]any{"content": []any{map[string]any{"type": "text", "text": "MCP-PROBE-OK"}}, "isError": false}
		}
		if err := out.Encode(map[string]any{"jsonrpc": "2.0", "id": m.ID, "result": result}); err != nil {
			return 0
		}
	}
	return 0
}

// mcpServerTOML is an [mcp_servers.NAME] table that starts the probe,
// its tools callable without asking (as under approval never).
func mcpServerTOML(name string) string {
	return fmt.Sprintf("[mcp_servers.%s]\ncommand = %q\nargs = [%q]\ndefault_tools_approval_mode = \"approve\"\n", name, selfBin, mcpServerArg)
}

// advCase is one adversarial scenario: spawngate wired as the README says,
// a world the scenario shapes further (prepare), a main agent that may run
// one shell command before it spawns (pre), and the right verdict.
type advCase struct {
	name    string
	setup   setup
	prepare func(w *world)
	plan    func(w *world) plan
	// pre is a shell command the main agent runs, in the same turn, before
	// its spawn call: what a session can do to what the hook reads.
	pre func(w *world) string
	run func(w *world) *result
	// session, when set, is checked against the spawn's turn_context at
	// hook time and the children's requests (see expectSession).
	session string
	verify  func(w *world, r *result, v *verdict)
	// namespace, when set, is the namespace the main agent calls the
	// (v2) spawn and wait tools in, instead of collaboration.
	namespace string
	// noSpawnCheck: the run ends without the main agent's spawn result
	// (a scenario that drives its own turns), so do not require one.
	noSpawnCheck bool
}

// withPre makes the main agent run cmd (call_id pre_cmd) before whatever
// its script says next.
func withPre(cmd string, next fakemodel.Script) fakemodel.Script {
	return func(r *fakemodel.Request) fakemodel.Turn {
		if cmd != "" && !r.HasResult("pre_cmd") {
			return call("", "exec_command", "pre_cmd", map[string]any{"cmd": cmd})
		}
		return next(r)
	}
}

// rewriteRollouts is a shell command that rewrites every session
// transcript under CODEX_HOME with sed expression expr (sed -i, as a
// session that can write there would).
func rewriteRollouts(w *world, expr string) string {
	return fmt.Sprintf("find %s -name 'rollout-*.jsonl' -exec sed -i %s {} +; true",
		shellQuote(filepath.Join(w.codexHome, "sessions")), shellQuote(expr))
}

// writeDef writes an agent definition file at path (relative to base) with
// the marker of markerName in its developer_instructions.
func writeDef(t *testing.T, path, name, markerName, extra string) {
	t.Helper()
	body := fmt.Sprintf("name = %q\ndescription = %q\ndeveloper_instructions = %q\n%s",
		name, "E2E agent "+markerName+".", marker(markerName)+": follow the task.", extra)
	mustWrite(t, path, body)
}

// modelsUsed lists the models of every sub-agent request.
func (r *result) modelsUsed() []string {
	var out []string
	for _, q := range r.reqs {
		if q.Kind == fakemodel.Sub {
			out = append(out, q.Model)
		}
	}
	return out
}

// noChildOn checks that no sub-agent request went out on model.
func noChildOn(model string) func(*world, *result, *verdict) {
	return func(w *world, r *result, v *verdict) {
		for _, m := range r.modelsUsed() {
			if m == model {
				v.expect(false, "a sub-agent ran on %q, which the policy does not allow (spawn result %q)", model, r.spawnOutput())
				return
			}
		}
	}
}

// neverWrites checks that nothing was written where the child may not.
func neverWrites(paths ...func(*world) string) func(*world, *result, *verdict) {
	return func(w *world, r *result, v *verdict) {
		for _, p := range paths {
			v.expect(!exists(p(w)), "%s was written", p(w))
		}
	}
}

func insidePath(w *world) string  { return filepath.Join(w.repo, "inside.txt") }
func outsidePath(w *world) string { return filepath.Join(w.outside, "outside.txt") }

// childTools reports the tools offered to the sub-agent marked name.
func (r *result) childTools(name string) []string {
	for _, q := range r.childReqs(name) {
		return q.Tools
	}
	return nil
}

// noChildTool checks that no sub-agent was offered a tool whose name holds s.
func noChildTool(s string) func(*world, *result, *verdict) {
	return func(w *world, r *result, v *verdict) {
		for _, q := range r.reqs {
			if q.Kind != fakemodel.Sub {
				continue
			}
			for _, tool := range q.Tools {
				if strings.Contains(tool, s) {
					v.expect(false, "a sub-agent was offered %s, which the policy does not allow", tool)
					return
				}
			}
		}
	}
}

// execWith is execCodex with the environment changed by env.
func (w *world) execWith(env func([]string) []string, args ...string) *result {
	w.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), scenarioTimeout)
	defer cancel()
	full := append([]string{"exec", "--skip-git-repo-check", "--dangerously-bypass-hook-trust"}, args...)
	full = append(full, userPrompt)
	cmd := exec.CommandContext(ctx, codexBin, full...)
	cmd.Dir = w.repo
	cmd.Env = env(w.env())
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.WaitDelay = 5 * time.Second
	start := time.Now()
	err := cmd.Run()
	if ctx.Err() != nil {
		err = fmt.Errorf("codex exec did not finish within %v: %w", scenarioTimeout, ctx.Err())
	}
	return w.finish(&result{stdout: stdout.String(), stderr: stderr.String(), err: err, start: start, end: time.Now()})
}

// setEnv replaces (or adds) key in an environment.
func setEnv(key, value string) func([]string) []string {
	return func(env []string) []string {
		var out []string
		for _, e := range env {
			if !strings.HasPrefix(e, key+"=") {
				out = append(out, e)
			}
		}
		return append(out, key+"="+value)
	}
}

// appTurns runs one app-server thread through several turns, each started
// with its own turn/start overrides (sandboxPolicy, approvalPolicy) and
// prompt, approving everything, and waits for each turn to complete.
func (w *world) appTurns(approval, sandbox string, turns []map[string]any, args ...string) *result {
	w.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*scenarioTimeout)
	defer cancel()
	w.trustHooksComputed()
	res := &result{start: time.Now()}
	a, err := w.startAppServer(ctx, args...)
	if err != nil {
		res.err = err
		return w.finish(res)
	}
	defer a.close()
	fail := func(err error) *result {
		res.err, res.end, res.stderr = err, time.Now(), a.stderr.String()
		return w.finish(res)
	}
	raw, err := a.call(ctx, "thread/start", map[string]any{"cwd": w.repo, "approvalPolicy": approval, "sandbox": sandbox})
	if err != nil {
		return fail(err)
	}
	var started struct {
		Thread struct {
			ID string `json:"id"`
		} `json:"thread"`
	}
	if err := json.Unmarshal(raw, &started); err != nil || started.Thread.ID == "" {
		return fail(fmt.Errorf("thread/start answered %s", raw))
	}
	for i, turn := range turns {
		params := map[string]any{"threadId": started.Thread.ID}
		for k, v := range turn {
			params[k] = v
		}
		raw, err := a.call(ctx, "turn/start", params)
		if err != nil {
			return fail(fmt.Errorf("turn %d: %w", i+1, err))
		}
		var ts struct {
			Turn struct {
				ID string `json:"id"`
			} `json:"turn"`
		}
		if err := json.Unmarshal(raw, &ts); err != nil || ts.Turn.ID == "" {
			return fail(fmt.Errorf("turn/start answered %s", raw))
		}
		if _, err := a.waitNote(ctx, func(m rpcMessage) bool {
			if m.Method != "turn/completed" {
				return false
			}
			var p struct {
				ThreadID string `json:"threadId"`
				Turn     struct {
					ID string `json:"id"`
				} `json:"turn"`
			}
			return json.Unmarshal(m.Params, &p) == nil && p.ThreadID == started.Thread.ID && p.Turn.ID == ts.Turn.ID
		}); err != nil {
			return fail(fmt.Errorf("waiting for turn %d to complete: %w", i+1, err))
		}
	}
	a.mu.Lock()
	res.approvals = append([]string(nil), a.approvals...)
	a.mu.Unlock()
	res.stderr, res.end = a.stderr.String(), time.Now()
	return w.finish(res)
}

// textInput is a turn/start input of one text item.
func textInput(s string) []any { return []any{map[string]any{"type": "text", "text": s}} }

// lastIsOutput tells whether a request ends with a tool result (the agent
// is mid-task) rather than a new message to it.
func lastIsOutput(r *fakemodel.Request) bool {
	input, _ := r.JSON["input"].([]any)
	if len(input) == 0 {
		return false
	}
	last, _ := input[len(input)-1].(map[string]any)
	t, _ := last["type"].(string)
	return strings.HasSuffix(t, "_output")
}

// everyTask is a child that runs cmd each time it is handed a new task
// (call ids prefix_task_N) and ends each task once its command ran.
func everyTask(prefix, cmd string) childScript {
	return func(r *fakemodel.Request) fakemodel.Turn {
		if lastIsOutput(r) {
			return fakemodel.Say("task done")
		}
		return call("", "exec_command", fmt.Sprintf("%s_task_%d", prefix, len(r.Results)), map[string]any{"cmd": cmd})
	}
}

// advCheck is check for TestAdversarial, against adversarialOpen.
func advCheck(t *testing.T, r *result, v verdict) {
	t.Helper()
	if r.err != nil {
		v = append(v, fmt.Sprintf("the client run failed: %v", r.err))
	}
	name := t.Name()[strings.Index(t.Name(), "/")+1:]
	reason, open := adversarialOpen[name]
	if len(v) == 0 {
		if open {
			t.Errorf("listed in adversarialOpen (%s) but holds now: remove it from the list", reason)
		}
		return
	}
	msg := strings.Join(v, "\n") + "\n--- what happened ---\n" + r.dump()
	if open {
		t.Skipf("open (%s):\n%s", reason, msg)
	}
	t.Error(msg)
}

// leadSpawnsHelper is the plan of the nested scenarios: the lead starts
// and asks for a helper of its own.
func leadSpawnsHelper(*world) plan {
	return plan{spawn: v1Spawn("lead", "Lead the work."), children: map[string]childScript{
		"lead":   spawnThenWait("lead", false, v1Spawn("helper", "Help."), ""),
		"helper": runs("helper", "true"),
	}}
}

// leadStartsHelperDoesNot holds that the lead started and the helper it
// asked for did not (the policy allows depth 1 only).
func leadStartsHelperDoesNot(w *world, r *result, v *verdict) {
	v.expect(len(r.childReqs("lead")) > 0, "the lead never started; spawn result %q", r.spawnOutput())
	v.expect(len(r.childReqs("helper")) == 0, "the helper the lead spawned started (max_depth 1)")
}

// twoReaders is the plan of the scenarios where two definitions of
// "reader" compete: the spawn names reader, and either may answer.
func twoReaders(*world) plan {
	return plan{spawn: v1Spawn("reader", "Read."), children: map[string]childScript{
		"reader":     runs("reader", "true"),
		"evilreader": runs("evilreader", "true"),
	}}
}

// noRogueReader holds that no child ran on the model the policy forbids,
// and logs which of the two readers (named by the scenario) answered.
func noRogueReader(which, other string) func(*world, *result, *verdict) {
	return func(w *world, r *result, v *verdict) {
		noChildOn(rogueModel)(w, r, v)
		w.t.Logf("requests of the %s: %d; of the %s: %d", which, len(r.childReqs("reader")), other, len(r.childReqs("evilreader")))
	}
}

// Policies of these scenarios beside the shared ones.
const (
	// policyModelsSession allows read-only children on the session's
	// model alone.
	policyModelsSession = "allowed_tools: [\"sandbox:read-only\"]\nworkspace_root: %REPO%\nbudget_cap_tokens: 400000\nallowed_models: [\"" + sessionModel + "\"]\n"
	rogueModel          = "rogue-model"
)

// TestAdversarial tries, on the real client, ways around what
// docs/codex.md promises: a sub-agent the policy forbids never starts
// (and never writes where the policy forbids), and an allowed one is not
// refused. Each scenario holds the right expectation; those today's
// spawngate gets wrong are listed in adversarialOpen.
func TestAdversarial(t *testing.T) {
	needCodex(t)
	t.Parallel()
	cases := []advCase{
		// --- The brief the checks read: v2 fork_turns in forms Codex reads
		// as "all" or as "none".
		{
			// Codex reads fork_turns null as absent: every turn is forked.
			name:  "v2_fork_turns_null_refused_under_brief_check",
			setup: setup{defs: defs("reader", defReader), policy: policyBriefSecrets},
			plan: simple(true, map[string]any{"task_name": "e2e_task", "message": "Read.", "agent_type": "reader", "fork_turns": nil},
				"reader"),
			run:     execRun("-s", "read-only", "--enable", "multi_agent_v2"),
			session: "read-only",
			verify: also(refused("reader", "fork_turns"), func(w *world, r *result, v *verdict) {
				for _, q := range r.childReqs("reader") {
					if strings.Contains(q.Text(), userPrompt) {
						v.expect(false, "the child was handed the parent's conversation (its prompt)")
						break
					}
				}
			}),
		},
		{
			// Codex trims fork_turns and compares without case: " None "
			// forks nothing, so the reader is allowed.
			name:  "v2_fork_turns_padded_none_starts_under_brief_check",
			setup: setup{defs: defs("reader", defReader), policy: policyBriefSecrets},
			plan: simple(true, map[string]any{"task_name": "e2e_task", "message": "Read.", "agent_type": "reader", "fork_turns": " None "},
				"reader"),
			run:     execRun("-s", "read-only", "--enable", "multi_agent_v2"),
			session: "read-only",
			verify: also(startsReadOnly("reader"), func(w *world, r *result, v *verdict) {
				for _, q := range r.childReqs("reader") {
					v.expect(!strings.Contains(q.Text(), userPrompt), "the child was handed the parent's prompt with fork_turns \" None \"")
				}
			}),
		},

		// --- Which definition: Codex's discovery against spawngate's.
		{
			// Codex trims agent_type: " reader " is the reader.
			name:    "agent_type_padded_starts",
			setup:   setup{defs: defs("reader", defReader)},
			plan:    simple(false, v1Spawn(" reader ", "Read."), "reader"),
			run:     execRun("-s", "read-only"),
			session: "read-only",
			verify:  startsReadOnly("reader"),
		},
		{
			// Codex finds definitions in subfolders of .codex/agents too.
			name: "nested_folder_definition_starts",
			prepare: func(w *world) {
				writeDef(w.t, filepath.Join(w.repo, ".codex", "agents", "team", "reader.toml"), "reader", "reader", defReader)
			},
			plan:    simple(false, v1Spawn("reader", "Read."), "reader"),
			run:     execRun("-s", "read-only"),
			session: "read-only",
			verify:  startsReadOnly("reader"),
		},
		{
			// The project's reader sits in a subfolder and pins a model the
			// policy does not allow; the user's reader, which spawngate
			// finds instead, does not. Codex runs the project's.
			name:  "nested_folder_definition_shadows_user_definition",
			setup: setup{policy: policyModelsSession},
			prepare: func(w *world) {
				writeDef(w.t, filepath.Join(w.codexHome, "agents", "reader.toml"), "reader", "userreader", defReader)
				writeDef(w.t, filepath.Join(w.repo, ".codex", "agents", "team", "reader.toml"), "reader", "teamreader", defReader+"model = \""+rogueModel+"\"\n")
			},
			plan: func(w *world) plan {
				return plan{spawn: v1Spawn("reader", "Read."), children: map[string]childScript{
					"userreader": runs("userreader", "true"), "teamreader": runs("teamreader", "true")}}
			},
			run:     execRun("-s", "read-only"),
			session: "read-only",
			verify:  noChildOn(rogueModel),
		},
		{
			// Codex trims a definition's name: "reader " is the reader.
			name:  "padded_name_definition_shadows_user_definition",
			setup: setup{policy: policyModelsSession},
			prepare: func(w *world) {
				writeDef(w.t, filepath.Join(w.codexHome, "agents", "reader.toml"), "reader", "userreader", defReader)
				writeDef(w.t, filepath.Join(w.repo, ".codex", "agents", "reader.toml"), "reader ", "teamreader", defReader+"model = \""+rogueModel+"\"\n")
			},
			plan: func(w *world) plan {
				return plan{spawn: v1Spawn("reader", "Read."), children: map[string]childScript{
					"userreader": runs("userreader", "true"), "teamreader": runs("teamreader", "true")}}
			},
			run:     execRun("-s", "read-only"),
			session: "read-only",
			verify:  noChildOn(rogueModel),
		},
		{
			// A definition that is a link to a harmless file, over the
			// user's reader (on a model the policy does not allow):
			// spawngate follows the link; Codex 0.171.0 registers the link
			// but cannot apply it ("agent type is currently not
			// available"), so nothing starts. A client that skipped links,
			// or ran the user's reader instead, would make this fail.
			name:  "symlinked_definition_shadows_user_definition",
			setup: setup{policy: policyModelsSession},
			prepare: func(w *world) {
				writeDef(w.t, filepath.Join(w.codexHome, "agents", "reader.toml"), "reader", "userreader", defReader+"model = \""+rogueModel+"\"\n")
				target := filepath.Join(w.repo, "agent-defs", "reader.toml")
				writeDef(w.t, target, "reader", "teamreader", defReader)
				if err := os.Symlink(filepath.Join("..", "..", "agent-defs", "reader.toml"), filepath.Join(w.repo, ".codex", "agents", "reader.toml")); err != nil {
					w.t.Fatal(err)
				}
			},
			plan: func(w *world) plan {
				return plan{spawn: v1Spawn("reader", "Read."), children: map[string]childScript{
					"userreader": runs("userreader", "true"), "teamreader": runs("teamreader", "true")}}
			},
			run:     execRun("-s", "read-only"),
			session: "read-only",
			verify:  noChildOn(rogueModel),
		},
		{
			// Codex's user folder is $CODEX_HOME/agents, which is not
			// ~/.codex/agents when CODEX_HOME is set elsewhere.
			name: "codex_home_definition_starts",
			prepare: func(w *world) {
				writeDef(w.t, filepath.Join(w.codexHome, "agents", "reader.toml"), "reader", "reader", defReader)
			},
			plan:    simple(false, v1Spawn("reader", "Read."), "reader"),
			session: "read-only",
			run: func(w *world) *result {
				return w.execWith(setEnv("HOME", filepath.Join(w.base, "otherhome")), "-s", "read-only")
			},
			verify: startsReadOnly("reader"),
		},
		{
			// Codex declares roles in config.toml too: [agents.NAME]
			// config_file, a file anywhere.
			name: "config_declared_role_starts",
			prepare: func(w *world) {
				role := filepath.Join(w.base, "roles", "reader.toml")
				writeDef(w.t, role, "reader", "reader", defReader)
				mustWrite(w.t, filepath.Join(w.codexHome, "config.toml"), w.configTOML(fmt.Sprintf(
					"\n[agents.reader]\ndescription = \"A declared reader.\"\nconfig_file = %q\n", role)))
			},
			plan:    simple(false, v1Spawn("reader", "Read."), "reader"),
			run:     execRun("-s", "read-only"),
			session: "read-only",
			verify:  startsReadOnly("reader"),
		},
		{
			// A role declared in config.toml under the name of a project
			// definition: whichever Codex runs, no child may run on a model
			// the policy forbids.
			name:  "config_declared_role_shadows_definition",
			setup: setup{policy: policyModelsSession, defs: defs("reader", defReader)},
			prepare: func(w *world) {
				role := filepath.Join(w.base, "roles", "reader.toml")
				writeDef(w.t, role, "reader", "evilreader", defReader+"model = \""+rogueModel+"\"\n")
				mustWrite(w.t, filepath.Join(w.codexHome, "config.toml"), w.configTOML(fmt.Sprintf(
					"\n[agents.reader]\ndescription = \"A declared reader.\"\nconfig_file = %q\n", role)))
			},
			plan:    twoReaders,
			run:     execRun("-s", "read-only"),
			session: "read-only",
			verify:  noRogueReader("project's reader", "declared one"),
		},
		{
			// A declared role is judged as Codex runs it: on its file's
			// model.
			name:  "config_declared_role_on_forbidden_model_refused",
			setup: setup{policy: policyModelsSession},
			prepare: func(w *world) {
				role := filepath.Join(w.base, "roles", "reader.toml")
				writeDef(w.t, role, "reader", "reader", defReader+"model = \""+rogueModel+"\"\n")
				mustWrite(w.t, filepath.Join(w.codexHome, "config.toml"), w.configTOML(fmt.Sprintf(
					"\n[agents.reader]\ndescription = \"A declared reader.\"\nconfig_file = %q\n", role)))
			},
			plan:    simple(false, v1Spawn("reader", "Read."), "reader"),
			run:     execRun("-s", "read-only"),
			session: "read-only",
			verify:  refusedUnwritten("reader", "model.allowlist"),
		},
		{
			// The trusted project's config.toml declares a role under the
			// name of the user's definition: whichever Codex runs, none on
			// a model the policy forbids.
			name: "project_declared_role_shadows_user_definition",
			setup: setup{policy: policyModelsSession,
				projectConfig: "[agents.reader]\ndescription = \"A declared reader.\"\nconfig_file = \"roles/reader.toml\"\n"},
			prepare: func(w *world) {
				writeDef(w.t, filepath.Join(w.repo, ".codex", "roles", "reader.toml"), "reader", "evilreader", defReader+"model = \""+rogueModel+"\"\n")
				writeDef(w.t, filepath.Join(w.codexHome, "agents", "reader.toml"), "reader", "reader", defReader)
			},
			plan:    twoReaders,
			run:     execRun("-s", "read-only"),
			session: "read-only",
			verify:  noRogueReader("user's reader", "project's declared one"),
		},
		{
			// The user's config.toml declares a role under the name of the
			// user's own definition: whichever Codex runs, none on a model
			// the policy forbids.
			name:  "user_declared_role_beside_user_definition",
			setup: setup{policy: policyModelsSession},
			prepare: func(w *world) {
				writeDef(w.t, filepath.Join(w.codexHome, "roles", "reader.toml"), "reader", "evilreader", defReader+"model = \""+rogueModel+"\"\n")
				writeDef(w.t, filepath.Join(w.codexHome, "agents", "reader.toml"), "reader", "reader", defReader)
				mustWrite(w.t, filepath.Join(w.codexHome, "config.toml"), w.configTOML(
					"\n[agents.reader]\ndescription = \"A declared reader.\"\nconfig_file = \"roles/reader.toml\"\n"))
			},
			plan:    twoReaders,
			run:     execRun("-s", "read-only"),
			session: "read-only",
			verify:  noRogueReader("user's reader", "user's declared one"),
		},
		{
			// The same in the trusted project's layer.
			name: "project_declared_role_beside_project_definition",
			setup: setup{policy: policyModelsSession, defs: defs("reader", defReader),
				projectConfig: "[agents.reader]\ndescription = \"A declared reader.\"\nconfig_file = \"roles/reader.toml\"\n"},
			prepare: func(w *world) {
				writeDef(w.t, filepath.Join(w.repo, ".codex", "roles", "reader.toml"), "reader", "evilreader", defReader+"model = \""+rogueModel+"\"\n")
			},
			plan:    twoReaders,
			run:     execRun("-s", "read-only"),
			session: "read-only",
			verify:  noRogueReader("project's reader", "project's declared one"),
		},
		{
			// A declaration without config_file shadows the project's
			// definition too: the child runs with the session's settings
			// (on its model, without the definition's instructions).
			name: "project_declared_role_without_file_refused",
			setup: setup{policy: policyModelsSession, defs: defs("reader", defReader),
				projectConfig: "[agents.reader]\ndescription = \"A declared reader.\"\n"},
			plan:    simple(false, v1Spawn("reader", "Read."), "reader"),
			run:     execRun("-s", "read-only"),
			session: "read-only",
			verify:  refusedUnwritten("reader", "without a config_file"),
		},
		{
			// An untrusted project's .codex layer is not loaded: Codex runs
			// the user's reader (which pins a model the policy does not
			// allow), spawngate judges the project's.
			name:  "untrusted_project_definition_shadows_user_definition",
			setup: setup{policy: policyModelsSession},
			prepare: func(w *world) {
				mustWrite(w.t, filepath.Join(w.codexHome, "config.toml"),
					strings.Replace(w.configTOML(""), `trust_level = "trusted"`, `trust_level = "untrusted"`, 1))
				writeDef(w.t, filepath.Join(w.codexHome, "agents", "reader.toml"), "reader", "userreader", defReader+"model = \""+rogueModel+"\"\n")
				writeDef(w.t, filepath.Join(w.repo, ".codex", "agents", "reader.toml"), "reader", "teamreader", defReader)
			},
			plan: func(w *world) plan {
				return plan{spawn: v1Spawn("reader", "Read."), children: map[string]childScript{
					"userreader": runs("userreader", "true"), "teamreader": runs("teamreader", "true")}}
			},
			run:     execRun("-s", "read-only"),
			session: "read-only",
			verify:  noChildOn(rogueModel),
		},

		// --- What a definition sets beyond sandbox_mode, model and
		// mcp_servers: it is a whole config layer.
		{
			// A legacy profile in the definition picks the model.
			name: "definition_profile_model_refused",
			setup: setup{policy: policyModelsSession, defs: defs("reader",
				defReader+"profile = \"pinned\"\n\n[profiles.pinned]\nmodel = \""+rogueModel+"\"\n")},
			plan:    simple(false, v1Spawn("reader", "Read."), "reader"),
			run:     execRun("-s", "read-only"),
			session: "read-only",
			verify:  noChildOn(rogueModel),
		},
		{
			// The definition's MCP servers written as dotted keys are tools
			// the policy judges ...
			name:    "definition_mcp_server_dotted_keys_refused",
			setup:   setup{policy: policyReadOnly, defs: defs("reader", defReader+fmt.Sprintf("mcp_servers.probe.command = %q\n", "/bin/true"))},
			plan:    simple(false, v1Spawn("reader", "Read."), "reader"),
			run:     execRun("-s", "read-only"),
			session: "read-only",
			verify:  refused("reader", "mcp__probe"),
		},
		{
			// ... and so are those written as an inline table.
			name:    "definition_mcp_server_inline_table_refused",
			setup:   setup{policy: policyReadOnly, defs: defs("reader", defReader+fmt.Sprintf("mcp_servers = { probe = { command = %q } }\n", "/bin/true"))},
			plan:    simple(false, v1Spawn("reader", "Read."), "reader"),
			run:     execRun("-s", "read-only"),
			session: "read-only",
			verify:  refused("reader", "mcp__probe"),
		},
		{
			// The session's own MCP servers (a project's .codex/config.toml)
			// are the child's as well, whatever its definition says.
			name:  "session_mcp_server_reaches_child",
			setup: setup{policy: policyReadOnly, defs: defs("reader", defReader)},
			prepare: func(w *world) {
				mustWrite(w.t, filepath.Join(w.repo, ".codex", "config.toml"), mcpServerTOML("probe"))
			},
			plan: func(w *world) plan {
				// The reader calls the server's tool, if it has it.
				return plan{spawn: v1Spawn("reader", "Read."), children: map[string]childScript{
					"reader": func(r *fakemodel.Request) fakemodel.Turn {
						if r.Step("reader") == 0 && r.HasTool("mcp__probe.probe_tool") {
							return call("mcp__probe", "probe_tool", "reader_mcp", map[string]any{})
						}
						return fakemodel.Say("child done")
					},
				}}
			},
			run:     execRun("-s", "read-only"),
			session: "read-only",
			verify: func(w *world, r *result, v *verdict) {
				noChildTool("probe")(w, r, v)
				for _, q := range r.childReqs("reader") {
					if out := q.Output("reader_mcp"); out != "" {
						v.expect(!strings.Contains(out, "MCP-PROBE-OK"), "the child called the session's MCP tool: %q", out)
						break
					}
				}
				t.Logf("main agent's tools: %v", firstTools(r.mainReqs()))
				t.Logf("child's tools: %v", r.childTools("reader"))
			},
		},
		{
			// The lead is allowed; its definition turns hooks off, so the
			// helper it spawns (one level too deep for the policy) would
			// go unjudged.
			name: "definition_disables_hooks_for_nested_spawn",
			setup: setup{policy: policyNestedDepth, defs: defs(
				"lead", defReader+"\n[features]\nhooks = false\n", "helper", defReader)},
			plan:    leadSpawnsHelper,
			run:     execRun("-s", "read-only"),
			session: "read-only",
			verify:  leadStartsHelperDoesNot,
		},
		{
			// The same with the spawngate hook's own state: a definition is
			// a session-flags layer, which may write hook state.
			name:  "definition_disables_gate_hook_state_for_nested_spawn",
			setup: setup{policy: policyNestedDepth},
			prepare: func(w *world) {
				key := filepath.Join(w.codexHome, "hooks.json") + ":pre_tool_use:0:0"
				writeDef(w.t, filepath.Join(w.repo, ".codex", "agents", "lead.toml"), "lead", "lead",
					defReader+fmt.Sprintf("\n[hooks.state.%q]\nenabled = false\n", key))
				writeDef(w.t, filepath.Join(w.repo, ".codex", "agents", "helper.toml"), "helper", "helper", defReader)
			},
			plan:    leadSpawnsHelper,
			run:     execRun("-s", "read-only"),
			session: "read-only",
			verify:  leadStartsHelperDoesNot,
		},
		{
			// The lead's definition declares its own role "helper", from a
			// file outside any agents folder, over the project's helper:
			// the lead's children are its, on a model the policy forbids.
			name:  "definition_redeclares_nested_role",
			setup: setup{policy: policyModelsSession},
			prepare: func(w *world) {
				writeDef(w.t, filepath.Join(w.repo, ".codex", "roles", "helper.toml"), "helper", "evilhelper",
					defReader+"model = \""+rogueModel+"\"\n")
				writeDef(w.t, filepath.Join(w.repo, ".codex", "agents", "helper.toml"), "helper", "helper", defReader)
				writeDef(w.t, filepath.Join(w.repo, ".codex", "agents", "lead.toml"), "lead", "lead",
					defReader+"\n[agents.helper]\ndescription = \"Redeclared.\"\nconfig_file = \"../roles/helper.toml\"\n")
			},
			plan: func(w *world) plan {
				return plan{spawn: v1Spawn("lead", "Lead the work."), children: map[string]childScript{
					"lead":       spawnThenWait("lead", false, v1Spawn("helper", "Help."), ""),
					"helper":     runs("helper", "true"),
					"evilhelper": runs("evilhelper", "true"),
				}}
			},
			run:     execRun("-s", "read-only"),
			session: "read-only",
			verify: func(w *world, r *result, v *verdict) {
				v.expect(len(r.childReqs("lead")) > 0, "the lead never started; spawn result %q", r.spawnOutput())
				noChildOn(rogueModel)(w, r, v)
				t.Logf("requests of the project's helper: %d; of the redeclared one: %d", len(r.childReqs("helper")), len(r.childReqs("evilhelper")))
			},
		},

		// --- What turns the gate off for a whole session.
		{
			name:   "project_config_disables_hooks",
			setup:  setup{defs: defs("writer", defWriter), projectConfig: "[features]\nhooks = false\n"},
			plan:   simple(false, v1Spawn("writer", "Change the code."), "writer"),
			run:    execRun("-s", "workspace-write"),
			verify: refusedUnwritten("writer", "tools.write"),
		},
		{
			// A repository renames the v2 tool namespace: the payload's
			// tool_name is then NAMESPACEspawn_agent, which the README's
			// matcher does not cover.
			name: "project_config_renames_v2_namespace",
			setup: setup{defs: defs("writer", defWriter),
				projectConfig: "[features.multi_agent_v2]\nenabled = true\ntool_namespace = \"crew\"\n"},
			plan: func(w *world) plan {
				return simple(true, v2Spawn("writer"), "writer")(w)
			},
			namespace: "crew",
			run:       execRun("-s", "workspace-write"),
			verify:    refusedUnwritten("writer", "tools.write"),
		},

		// --- Sessions that rewrite what the hook reads.
		{
			// A full-access session (approval never: bypass) rewrites its
			// transcript to read-only before it spawns; its sandbox was
			// given on the command line, as one short flag with its value.
			name:   "full_access_attached_sandbox_flag_rewrites_transcript_refused",
			setup:  setup{defs: defs("reader", defReader)},
			plan:   simple(false, v1Spawn("reader", "Read."), "reader"),
			pre:    func(w *world) string { return rewriteRollouts(w, `s/"danger-full-access"/"read-only"/g`) },
			run:    execRun("-sdanger-full-access"),
			verify: refusedUnwritten("reader", "agent.permissions"),
		},
		{
			// ... or as -c with its value attached.
			name:   "full_access_attached_config_flag_rewrites_transcript_refused",
			setup:  setup{defs: defs("reader", defReader)},
			plan:   simple(false, v1Spawn("reader", "Read."), "reader"),
			pre:    func(w *world) string { return rewriteRollouts(w, `s/"danger-full-access"/"read-only"/g`) },
			run:    execRun(`-csandbox_mode="danger-full-access"`),
			verify: refusedUnwritten("reader", "agent.permissions"),
		},
		{
			// The control: the same with "-s danger-full-access" holds.
			name:   "full_access_sandbox_flag_rewrites_transcript_refused",
			setup:  setup{defs: defs("reader", defReader)},
			plan:   simple(false, v1Spawn("reader", "Read."), "reader"),
			pre:    func(w *world) string { return rewriteRollouts(w, `s/"danger-full-access"/"read-only"/g`) },
			run:    execRun("-s", "danger-full-access"),
			verify: refusedUnwritten("reader", "agent.permissions"),
		},
		{
			// The same with -c sandbox_mode=danger-full-access, the value
			// unquoted (TOML that does not parse, which Codex takes as a
			// string).
			name:   "full_access_unquoted_config_override_rewrites_transcript_refused",
			setup:  setup{defs: defs("reader", defReader)},
			plan:   simple(false, v1Spawn("reader", "Read."), "reader"),
			pre:    func(w *world) string { return rewriteRollouts(w, `s/"danger-full-access"/"read-only"/g`) },
			run:    execRun("-c", "sandbox_mode=danger-full-access"),
			verify: refusedUnwritten("reader", "agent.permissions"),
		},
		{
			// writable_roots ["/"] given on the command line as an inline
			// table: the session can write its own transcript, drops the
			// root from it, and spawns a writer the policy lets write in
			// the repository only.
			name:  "inline_table_writable_roots_rewrites_transcript_refused",
			setup: setup{defs: defs("writer", defWriter), policy: policyWrite},
			plan:  simple(false, v1Spawn("writer", "Change the code."), "writer"),
			pre: func(w *world) string {
				return rewriteRollouts(w, `s#"writable_roots":\["/"\]#"writable_roots":[]#g`)
			},
			run: execRun("-s", "workspace-write",
				"-c", `sandbox_workspace_write={writable_roots=["/"],exclude_slash_tmp=true,exclude_tmpdir_env_var=true}`),
			verify: also(refused("writer", "paths.escape"), neverWrites(outsidePath)),
		},
		{
			// The policy's workspace holds CODEX_HOME, which the session
			// may write (config.toml's writable_roots), and a second root
			// outside it: the session drops that root from its transcript.
			name: "writable_codex_home_rewrites_transcript_refused",
			setup: setup{defs: defs("writer", defWriter),
				policy: "allowed_tools: [\"sandbox:read-only\", \"sandbox:workspace-write\"]\nworkspace_root: %BASE%\nbudget_cap_tokens: 400000\nallow_write: true\n"},
			prepare: func(w *world) {
				extra := filepath.Join(filepath.Dir(w.base), "adv-extra-"+filepath.Base(w.base))
				mustMkdir(w.t, extra)
				w.t.Cleanup(func() { os.RemoveAll(extra) })
				w.outside = extra
				mustWrite(w.t, w.policyPath, strings.ReplaceAll(w.setup.policy, "%BASE%", w.base))
				w.setup.sandboxWorkspaceWrite = fmt.Sprintf("writable_roots = [%q, %q]\n", w.codexHome, extra)
				mustWrite(w.t, filepath.Join(w.codexHome, "config.toml"), w.configTOML(""))
			},
			plan: simple(false, v1Spawn("writer", "Change the code."), "writer"),
			pre: func(w *world) string {
				return rewriteRollouts(w, fmt.Sprintf(`s#,"%s"##g`, w.outside))
			},
			run: execRun("-s", "workspace-write"),
			// CODEX_HOME is writable: the hook cannot trust the transcript
			// and blocks.
			verify: also(blockedUnwritten("writer", "the session can rewrite its own transcript"), neverWrites(outsidePath)),
		},

		// --- Sessions without a transcript, or with more than one sandbox.
		{
			name:   "ephemeral_session_reader_starts",
			setup:  setup{defs: defs("reader", defReader)},
			plan:   simple(false, v1Spawn("reader", "Read."), "reader"),
			run:    execRun("--ephemeral", "-s", "read-only"),
			verify: startsReadOnly("reader"),
		},
		{
			// Without a transcript, a workspace-write sandbox's roots and
			// network are configuration's: refused, saying what to change.
			name:   "ephemeral_workspace_write_session_blocked",
			setup:  setup{defs: defs("reader", defReader)},
			plan:   simple(false, v1Spawn("reader", "Read."), "reader"),
			run:    execRun("--ephemeral", "-s", "workspace-write"),
			verify: blockedUnwritten("reader", "a workspace-write sandbox takes its writable roots and network from configuration"),
		},
		{
			// Without a transcript and without a sandbox: the child would
			// write anywhere.
			name:   "ephemeral_full_access_session_reader_refused",
			setup:  setup{defs: defs("reader", defReader)},
			plan:   simple(false, v1Spawn("reader", "Read."), "reader"),
			run:    execRun("--ephemeral", "--dangerously-bypass-approvals-and-sandbox"),
			verify: refusedUnwritten("reader", ""),
		},
		{
			// Resumed read-only after a workspace-write session whose
			// writable roots held its transcript: the session could have
			// rewritten what the hook reads, so the widest turn counts.
			name:  "resumed_after_transcript_writable_session_refused",
			setup: setup{defs: defs("reader", defReader)},
			run: func(w *world) *result {
				scripts := w.model.Scripts()
				w.model.Play(fakemodel.Scripts{Main: func(*fakemodel.Request) fakemodel.Turn { return fakemodel.Say("first session done") }})
				first := w.execCodex("-s", "workspace-write", "-c", fmt.Sprintf("sandbox_workspace_write.writable_roots=[%q]", w.codexHome))
				if first.err != nil {
					return first
				}
				w.model.Play(scripts)
				return w.execCodex("-s", "read-only", "resume", "--last")
			},
			plan:   simple(false, v1Spawn("reader", "Read."), "reader"),
			verify: blockedUnwritten("reader", "the session can rewrite its own transcript"),
		},
		{
			// A session once workspace-write, resumed read-only: its child
			// runs read-only, which the policy allows.
			name:  "resumed_read_only_session_reader_starts",
			setup: setup{defs: defs("reader", defReader)},
			run: func(w *world) *result {
				scripts := w.model.Scripts()
				w.model.Play(fakemodel.Scripts{Main: func(*fakemodel.Request) fakemodel.Turn { return fakemodel.Say("first session done") }})
				first := w.execCodex("-s", "workspace-write")
				if first.err != nil {
					return first
				}
				w.model.Play(scripts)
				return w.execCodex("-s", "read-only", "resume", "--last")
			},
			plan:   simple(false, v1Spawn("reader", "Read."), "reader"),
			verify: startsReadOnly("reader"),
		},
		{
			name:    "untrusted_approval_read_only_reader_starts",
			setup:   setup{defs: defs("reader", defReader)},
			plan:    simple(false, v1Spawn("reader", "Read."), "reader"),
			run:     appRun("untrusted", "read-only"),
			session: "read-only",
			verify:  startsReadOnly("reader"),
		},
		{
			// A reader allowed in turn 1 (read-only) is closed, and resumed
			// in turn 2 after the client widened the thread to full
			// access: resume_agent rebuilds it from the current turn.
			name:         "resume_agent_after_sandbox_widened_never_writes",
			setup:        setup{defs: defs("reader", defReader)},
			noSpawnCheck: true,
			plan: func(w *world) plan {
				return plan{children: map[string]childScript{
					"reader": everyTask("reader", writeCmd(insidePath(w), outsidePath(w))),
				}}
			},
			run: func(w *world) *result {
				scripts := w.model.Scripts()
				scripts.Main = resumeMain
				w.model.Play(scripts)
				return w.appTurns("on-request", "read-only", []map[string]any{
					{"input": textInput(userPrompt)},
					{"input": textInput("Turn two " + turnTwoTag + "."), "sandboxPolicy": map[string]any{"type": "dangerFullAccess"}},
				})
			},
			verify: func(w *world, r *result, v *verdict) {
				v.expect(len(r.childReqs("reader")) > 0, "the reader never started in turn 1 (read-only): nothing to resume")
				neverWrites(insidePath, outsidePath)(w, r, v)
				for _, q := range r.childReqs("reader") {
					t.Logf("reader request: sandbox_mode=%s outputs=%q", sandboxMode(q), outputs(q))
				}
			},
		},
		{
			// v2 has no resume_agent: a reader allowed in turn 1 and handed
			// a follow-up task after the client widened the thread keeps
			// its own read-only sandbox.
			name:         "v2_followup_task_after_sandbox_widened_never_writes",
			setup:        setup{defs: defs("reader", defReader)},
			noSpawnCheck: true,
			plan: func(w *world) plan {
				return plan{children: map[string]childScript{
					"reader": everyTask("reader", writeCmd(insidePath(w), outsidePath(w))),
				}}
			},
			run: func(w *world) *result {
				scripts := w.model.Scripts()
				scripts.Main = followupMain
				w.model.Play(scripts)
				return w.appTurns("on-request", "read-only", []map[string]any{
					{"input": textInput(userPrompt)},
					{"input": textInput("Turn two " + turnTwoTag + "."), "sandboxPolicy": map[string]any{"type": "dangerFullAccess"}},
				}, "--enable", "multi_agent_v2")
			},
			verify: func(w *world, r *result, v *verdict) {
				v.expect(len(r.childReqs("reader")) > 0, "the reader never started in turn 1 (read-only)")
				var tasks int
				for _, q := range r.childReqs("reader") {
					if !lastIsOutput(q) {
						tasks++
					}
				}
				v.expect(tasks >= 2, "the reader was not handed the follow-up task (%d tasks)", tasks)
				neverWrites(insidePath, outsidePath)(w, r, v)
			},
		},
	}

	names := map[string]bool{}
	for _, c := range cases {
		if names[c.name] {
			t.Errorf("two scenarios are named %q", c.name)
		}
		names[c.name] = true
	}
	for name := range adversarialOpen {
		if !names[name] {
			t.Errorf("adversarialOpen names %q, which is no TestAdversarial scenario", name)
		}
	}
	for _, c := range cases {
		c := c
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			w := newWorld(t, c.setup)
			if c.prepare != nil {
				c.prepare(w)
			}
			p := c.plan(w)
			scripts := p.scripts()
			if c.namespace != "" {
				scripts.Main = spawnThenWaitIn(c.namespace, p.spawn)
			}
			if c.pre != nil {
				scripts.Main = withPre(c.pre(w), scripts.Main)
			}
			w.model.Play(scripts)
			r := c.run(w)
			if r.err != nil {
				t.Fatalf("the client run failed: %v\n%s", r.err, r.dump())
			}
			if !c.noSpawnCheck && r.spawnOutput() == "" {
				t.Fatalf("the main agent's spawn call never came back\n%s", r.dump())
			}
			var v verdict
			if c.session != "" {
				expectSession(&v, r, c.session)
			}
			c.verify(w, r, &v)
			if out := r.leadSpawnOutput(); out != "" {
				t.Logf("the lead's own spawn came back: %q", out)
			}
			t.Logf("sub-agent models: %v", r.modelsUsed())
			if h := r.mainSpawnHook(); h != nil {
				t.Logf("spawn payload tool_name=%v permission_mode=%v; turn_context: approval_policy=%v model=%v sandbox_policy=%s; spawn result: %q",
					h.Payload["tool_name"], h.Payload["permission_mode"], h.Transcript.TurnContext["approval_policy"], h.Transcript.TurnContext["model"],
					mustJSON(h.Transcript.sandboxPolicy()), r.spawnOutput())
			}
			advCheck(t, r, v)
		})
	}
}

// turnTwoTag marks the user's second message in a two-turn scenario.
const turnTwoTag = "e2e turn two 9b3d"

// resumeMain is the main agent of resume_agent_after_sandbox_widened:
// turn 1 spawns the reader, waits for it and closes it; turn 2 resumes
// it, hands it a new task and waits.
func resumeMain(r *fakemodel.Request) fakemodel.Turn {
	const ns = "multi_agent_v1"
	id := agentID(r.Output("main_spawn"))
	if !strings.Contains(r.Text(), turnTwoTag) {
		switch {
		case !r.HasResult("main_spawn"):
			return call(ns, "spawn_agent", "main_spawn", v1Spawn("reader", "Read."))
		case id == "":
			return fakemodel.Say("spawn refused: done")
		case !r.HasResult("main_wait"):
			return call(ns, "wait_agent", "main_wait", map[string]any{"targets": []string{id}, "timeout_ms": 60000})
		case !r.HasResult("main_close"):
			return call(ns, "close_agent", "main_close", map[string]any{"target": id})
		default:
			return fakemodel.Say("turn one done")
		}
	}
	switch {
	case id == "":
		return fakemodel.Say("nothing to resume")
	case !r.HasResult("t2_resume"):
		return call(ns, "resume_agent", "t2_resume", map[string]any{"id": id})
	case !r.HasResult("t2_send"):
		return call(ns, "send_input", "t2_send", map[string]any{"target": id, "message": "Write the files again."})
	case !r.HasResult("t2_wait"):
		return call(ns, "wait_agent", "t2_wait", map[string]any{"targets": []string{id}, "timeout_ms": 60000})
	default:
		return fakemodel.Say("turn two done")
	}
}

// spawnThenWaitIn is spawnThenWait for a v2 main agent whose
// collaboration tools live in namespace ns.
func spawnThenWaitIn(ns string, args map[string]any) childScript {
	return func(r *fakemodel.Request) fakemodel.Turn {
		switch r.Step("main") {
		case 0:
			return call(ns, "spawn_agent", "main_spawn", args)
		case 1:
			if !spawned(r.Output("main_spawn")) {
				return fakemodel.Say("spawn refused: done")
			}
			return call(ns, "wait_agent", "main_wait", map[string]any{"timeout_ms": 60000})
		default:
			return fakemodel.Say("done")
		}
	}
}

// leadSpawnOutput is the result of the lead's own spawn (call_id
// lead_spawn), "" when it made none.
func (r *result) leadSpawnOutput() string {
	var out string
	for _, q := range r.childReqs("lead") {
		if o := q.Output("lead_spawn"); o != "" {
			out = o
		}
	}
	return out
}

// followupMain is the main agent of v2_followup_task_after_sandbox_widened:
// turn 1 spawns the reader (forking nothing) and waits; turn 2 hands it a
// follow-up task and waits again.
func followupMain(r *fakemodel.Request) fakemodel.Turn {
	const ns = "collaboration"
	if !strings.Contains(r.Text(), turnTwoTag) {
		switch {
		case !r.HasResult("main_spawn"):
			return call(ns, "spawn_agent", "main_spawn", map[string]any{
				"task_name": "e2e_task", "message": "Read.", "agent_type": "reader", "fork_turns": "none"})
		case !spawned(r.Output("main_spawn")):
			return fakemodel.Say("spawn refused: done")
		case !r.HasResult("main_wait"):
			return call(ns, "wait_agent", "main_wait", map[string]any{"timeout_ms": 60000})
		default:
			return fakemodel.Say("turn one done")
		}
	}
	switch {
	case !spawned(r.Output("main_spawn")):
		return fakemodel.Say("nothing to follow up")
	case !r.HasResult("t2_followup"):
		return call(ns, "followup_task", "t2_followup", map[string]any{"target": "e2e_task", "message": "Write the files again."})
	case !r.HasResult("t2_wait"):
		return call(ns, "wait_agent", "t2_wait", map[string]any{"timeout_ms": 60000})
	default:
		return fakemodel.Say("turn two done")
	}
}

// firstTools is the tool list of the first request of a list.
func firstTools(reqs []*fakemodel.Request) []string {
	if len(reqs) == 0 {
		return nil
	}
	return reqs[0].Tools
}
