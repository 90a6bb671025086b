package copilot

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/spawngate/spawngate/internal/e2e/fakemodel"
	"github.com/spawngate/spawngate/internal/e2e/suite"
)

// The definitions the scenarios write, in .github/agents. Their tools
// are the client's tool sets (read, search, edit, shell, agent), which it
// turns into tool names of its own (view, grep, create, bash, task, ...).
// Each names the session's model: a policy with allowed_models refuses a
// definition that names none (the gate cannot know the session's).
var (
	readerDef = agentDef("reader", "tools: [read, search]\nmodel: "+sessionModel)
	writerDef = agentDef("writer", "tools: [read, edit, shell]\nmodel: "+sessionModel)
	leadDef   = agentDef("lead", "tools: [read, agent]\nmodel: "+sessionModel)
)

// defs is the Files of a repository holding the named definitions.
func defs(names ...string) map[string]string {
	texts := map[string]string{"reader": readerDef, "writer": writerDef, "lead": leadDef}
	out := map[string]string{}
	for _, n := range names {
		out[defPath(n)] = texts[n]
	}
	return out
}

// with adds files to a Files map.
func with(files map[string]string, kv ...string) map[string]string {
	for i := 0; i+1 < len(kv); i += 2 {
		files[kv[i]] = kv[i+1]
	}
	return files
}

const (
	stubReason = "the e2e stub denies every spawn"
	// disableAll is the repository settings file that turns hooks off.
	disableAll = `{"disableAllHooks": true}`
	// managedOnly is managed settings that let only managed hooks run.
	managedOnly = `{"allowManagedHooksOnly": true}`
)

// stubHook is a user-level hook file whose one hook, labelled stub,
// denies every task call.
func stubHook() string { return hookFile(denyStub("stub", stubReason), 30, "task") }

// managedStub is the same hook as a policy.d file, labelled managed.
func managedStub() string { return hookFile(denyStub("managed", stubReason), 30, "task") }

// TestHostTruth pins down, with stub hooks and no spawngate, what GitHub
// Copilot CLI 1.0.102 does with a preToolUse hook on its task tool: what
// it hands the hook, which answer denies, and each way the gate is gone
// (marked as a known host fact), each beside its opposite.
func TestHostTruth(t *testing.T) {
	clientPath(t)
	t.Logf("network namespace of its own: %v", inNetns)
	runCases(t, hostTruthCases())
}

func hostTruthCases() []e2eCase {
	reader := func(sc scenario) func(*testing.T) scenario {
		return func(*testing.T) scenario {
			if sc.Files == nil {
				sc.Files = defs("reader")
			}
			sc.Main = []turn{spawn("main_spawn", "reader")}
			return sc
		}
	}
	return []e2eCase{{
		// The protocol: exit 0 with the flat camelCase deny refuses the
		// spawn, and its reason is the tool result.
		name:  "deny-json-denies",
		sc:    reader(scenario{UserHook: stubHook()}),
		check: all(refusedBy("main_spawn", "reader", "stub"), payloadFacts, hookEnvFacts, payloadIs("stub", "reader")),
	}, {
		// Its opposite, and what each tool set grants: with no hook the
		// reader, the writer and the lead start with the tools the client
		// maps their sets to; an unknown type is the client's own error.
		name: "no-hook-children-start",
		sc: func(*testing.T) scenario {
			return scenario{UserHook: "-", Files: defs("reader", "writer", "lead"), Main: []turn{
				spawn("spawn_reader", "reader"), spawn("spawn_writer", "writer"), spawn("spawn_lead", "lead"), spawn("spawn_nope", "nope")}}
		},
		check: all(starts("spawn_reader", "reader"), starts("spawn_writer", "writer"), starts("spawn_lead", "lead"),
			childTools("reader", "view", "grep", "glob"),
			childTools("writer", "view", "create", "edit", "bash", "read_bash", "stop_bash", "list_bash"),
			childTools("lead", "view", "task", "read_agent", "list_agents", "write_agent"),
			resultHas("spawn_nope", "Unknown agent_type: nope. Valid types are: explore, task, general-purpose, rubber-duck, code-review, research, security-review, ")),
	}, {
		// A background spawn reaches the hook like a sync one, with mode.
		name: "background-spawn-denied",
		sc: func(*testing.T) scenario {
			return scenario{UserHook: stubHook(), Files: defs("reader"), Main: []turn{spawn("main_spawn", "reader", "mode", "background")}}
		},
		check: all(refusedBy("main_spawn", "reader", "stub"), payloadIs("stub", "background")),
	}, {
		// Its opposite: allowed, the background child starts, and the
		// main agent is told so at once.
		name: "background-spawn-starts",
		sc: func(*testing.T) scenario {
			return scenario{UserHook: "-", Files: defs("reader"), Main: []turn{spawn("main_spawn", "reader", "mode", "background")}}
		},
		check: all(starts("main_spawn", "reader"), resultHas("main_spawn", "Agent started in background with agent_id: ")),
	}, {
		// A spawn inside a child reaches the hook in the child's session,
		// the caller named in agentId, agentType and parentAgentId; a deny
		// there stops the grandchild, and the caller gets the reason.
		name: "nested-spawn-denied-in-the-child",
		sc: func(*testing.T) scenario {
			return scenario{UserHook: hookFile("{{BIN}}/record stub {{BIN}}/deny-type writer "+shellQuote(stubReason), 30, "task"),
				Files: defs("lead", "writer"), Main: []turn{spawn("main_spawn", "lead")},
				Sub: map[string][]turn{"lead": {spawnNamed("lead_spawn", "inner", "writer")}}}
		},
		check: all(starts("main_spawn", "lead"), refusedBy("lead_spawn", "writer", "stub"), calledFor("stub", "task", 2), nestedFacts),
	}, {
		// Its opposite: allowed, the grandchild starts, with only what its
		// caller may use (the lead has no edit or shell tools).
		name: "nested-spawn-starts-narrowed",
		sc: func(*testing.T) scenario {
			return scenario{UserHook: "-", Files: defs("lead", "writer"), Main: []turn{spawn("main_spawn", "lead")},
				Sub: map[string][]turn{"lead": {spawnNamed("lead_spawn", "inner", "writer")}}}
		},
		check: all(starts("main_spawn", "lead"), starts("lead_spawn", "writer"), childTools("writer", "view")),
	}, {
		// The model a spawn asks for, and the one a definition names, are
		// the ones the child runs on.
		name: "model-override-honoured",
		sc: func(*testing.T) scenario {
			return scenario{UserHook: hookFile("{{BIN}}/record rec true", 30, "task"),
				Files: with(defs("reader"), defPath("modeled"), agentDef("modeled", "tools: [read]\nmodel: gpt-5-mini")),
				Main: []turn{
					spawn("main_spawn", "reader", "model", "gpt-5-mini", "reasoning_effort", "high", "context_tier", "long_context", "mode", "sync"),
					spawn("spawn_modeled", "modeled")}}
		},
		check: all(starts("main_spawn", "reader"), starts("spawn_modeled", "modeled"), childModel("reader", "gpt-5-mini"),
			childModel("modeled", "gpt-5-mini"), payloadIs("rec", "model-override")),
	}, {
		// A built-in runs on the session's model under a provider of the
		// user's own (COPILOT_PROVIDER_BASE_URL), whatever models its
		// shipped definition lists (explore's, task's and research's name
		// others); explore has its shipped tools, task every tool of the
		// main agent, task itself included.
		name: "builtins-run-on-the-session-model",
		sc: func(*testing.T) scenario {
			return scenario{UserHook: "-", Main: []turn{spawn("spawn_explore", "explore"), spawn("spawn_task", "task"), spawn("spawn_research", "research")}}
		},
		check: func(t *testing.T, o *outcome) error {
			var tools [][]string
			for _, r := range o.Requests {
				if r.Kind == fakemodel.Sub && r.Marker == "" {
					if r.Model != sessionModel {
						return fmt.Errorf("a built-in asked for model %s, not the session's %s", r.Model, sessionModel)
					}
					tools = append(tools, r.Tools)
				}
			}
			main := o.Requests[0].Tools
			want := [][]string{{"grep", "glob", "view", "bash", "read_bash", "stop_bash", "list_bash"}, main, main}
			if !slices.Contains(main, "task") ||
				!slices.EqualFunc(tools, want, func(a, b []string) bool { return slices.Equal(a, b) }) {
				return fmt.Errorf("the built-ins were offered %v, want %v", tools, want)
			}
			return nil
		},
	}, {
		// An unknown type still reaches the hook, before the client looks
		// it up.
		name: "unknown-type-reaches-the-hook",
		sc: func(*testing.T) scenario {
			return scenario{UserHook: stubHook(), Main: []turn{spawn("main_spawn", "nope")}}
		},
		check: all(refusedBy("main_spawn", "", "stub"), payloadIs("stub", "unknown-type")),
	}, {
		name:  "exit-2-denies",
		sc:    reader(scenario{UserHook: hookFile("{{BIN}}/record stub sh -c 'exit 2'", 30, "task")}),
		check: all(neverMentioned("reader"), resultIs("main_spawn", "Denied by preToolUse hook: hook exited with code 2")),
	}, {
		// A hook that fails (exit 1, or a binary that is not there) denies
		// too: what spawngate does when it cannot judge.
		name:  "exit-1-denies-as-an-error",
		sc:    reader(scenario{UserHook: hookFile("{{BIN}}/record stub sh -c 'exit 1'", 30, "task")}),
		check: all(neverMentioned("reader"), hookErrored("main_spawn")),
	}, {
		name:  "missing-hook-binary-denies",
		sc:    reader(scenario{UserHook: hookFile("/nonexistent/spawngate hook copilot", 30, "task")}),
		check: all(neverMentioned("reader"), hookErrored("main_spawn")),
	}, {
		// --agent runs a definition as the main session itself: no task
		// call, so no preToolUse for it. The session gets the definition's
		// tools and the main session's skill and sql.
		name:     "agent-flag-runs-a-definition-with-no-spawn",
		hostFact: "copilot --agent NAME runs the definition as the session's own agent, with no task call for a hook to judge",
		sc: func(*testing.T) scenario {
			return scenario{UserHook: stubHook(), Files: defs("writer"), Args: []string{"--agent", "writer"}}
		},
		check: all(func(t *testing.T, o *outcome) error {
			if len(o.Requests) == 0 || !strings.Contains(o.Requests[0].System, suite.Marker("writer")) {
				return errors.New("the session's first request does not carry the writer's marker")
			}
			return nil
		}, childTools("writer", "view", "create", "edit", "bash", "read_bash", "stop_bash", "list_bash", "skill", "sql"), neverCalled("stub")),
	}, {
		// An explicit allow, and an empty answer, let the child start.
		name:  "allow-json-allows",
		sc:    reader(scenario{UserHook: hookFile(`{{BIN}}/record stub echo '{"permissionDecision":"allow"}'`, 30, "task")}),
		check: all(starts("main_spawn", "reader"), calledFor("stub", "task", 1)),
	}, {
		// The PascalCase shape of the answer is not read for the camelCase
		// event: a hook that answers only that way lets the child start.
		name:     "hookSpecificOutput-deny-allows",
		hostFact: "camelCase preToolUse reads only the flat permissionDecision; hookSpecificOutput is ignored",
		sc:       reader(scenario{UserHook: hookFile(`{{BIN}}/record stub echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"R"}}'`, 30, "task")}),
		check:    all(starts("main_spawn", "reader"), calledFor("stub", "task", 1)),
	}, {
		name:     "timeout-fails-open",
		hostFact: "a hook past its timeoutSec is an allow: the child starts",
		sc:       reader(scenario{UserHook: hookFile("{{BIN}}/record stub {{BIN}}/slow-deny 4 late", 1, "task")}),
		check:    all(starts("main_spawn", "reader"), calledFor("stub", "task", 1)),
	}, {
		// Its opposite: the same slow hook inside its timeout denies.
		name:  "slow-hook-within-timeout-denies",
		sc:    reader(scenario{UserHook: hookFile("{{BIN}}/record stub {{BIN}}/slow-deny 4 late", 30, "task")}),
		check: refusedBy("main_spawn", "reader", "stub"),
	}, {
		name:     "disableAllHooks-in-repo-settings-switches-off-a-user-hook",
		hostFact: "disableAllHooks in a trusted repository's .github/copilot/settings.json switches off the user's hooks",
		sc:       reader(scenario{UserHook: stubHook(), Files: with(defs("reader"), ".github/copilot/settings.json", disableAll)}),
		check:    all(starts("main_spawn", "reader"), neverCalled("stub")),
	}, {
		name:     "disableAllHooks-in-repo-local-settings-switches-off-a-user-hook",
		hostFact: "disableAllHooks in a trusted repository's .github/copilot/settings.local.json switches off the user's hooks",
		sc:       reader(scenario{UserHook: stubHook(), Files: with(defs("reader"), ".github/copilot/settings.local.json", disableAll)}),
		check:    all(starts("main_spawn", "reader"), neverCalled("stub")),
	}, {
		// Its opposite: in a folder not trusted the repository's settings
		// are not read, and the user's hook denies.
		name:  "disableAllHooks-in-an-untrusted-folder-is-not-read",
		sc:    reader(scenario{UserHook: stubHook(), Untrusted: true, Files: with(defs("reader"), ".github/copilot/settings.json", disableAll)}),
		check: refusedBy("main_spawn", "reader", "stub"),
	}, {
		name:     "camelCase-matcher-Agent-never-matches-task",
		hostFact: "for camelCase preToolUse the tool is task: a matcher of Agent never runs the hook",
		sc:       reader(scenario{UserHook: hookFile(denyStub("stub", stubReason), 30, "Agent")}),
		check:    all(starts("main_spawn", "reader"), neverCalled("stub")),
	}, {
		// The PascalCase event names the tool Agent, with Claude Code's
		// keys, and its flat deny denies.
		name: "PascalCase-PreToolUse-denies",
		sc:   reader(scenario{UserHook: pascalHookFile(denyStub("stub", stubReason), "Agent")}),
		check: all(refusedBy("main_spawn", "reader", "stub"), payloadIs("stub", "pascal-case"), func(t *testing.T, o *outcome) error {
			hs := o.hooks("stub", "Agent")
			if len(hs) != 1 || hs[0].Payload["hook_event_name"] != "PreToolUse" || toolInput(hs[0].Payload)["agent_type"] != "reader" {
				return fmt.Errorf("want one PreToolUse payload for tool Agent, agent_type reader; got %d", len(hs))
			}
			return nil
		}),
	}, {
		// The PascalCase event also reads hookSpecificOutput's deny,
		// which the camelCase one ignores.
		name:  "PascalCase-hookSpecificOutput-denies",
		sc:    reader(scenario{UserHook: pascalHookFile(`{{BIN}}/record stub echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"R"}}'`, "Agent")}),
		check: all(refusedBy("main_spawn", "reader", "stub"), resultIs("main_spawn", "Denied by preToolUse hook: R")),
	}, {
		// A hook with no matcher sees every tool: here view, a call that
		// is no spawn (its payload is the fixture a hook must pass).
		name: "hook-without-matcher-sees-every-tool",
		sc: func(*testing.T) scenario {
			return scenario{UserHook: hookFile("{{BIN}}/record any true", 30, ""), Main: []turn{
				call("main_view", "view", map[string]any{"path": "README.md"})}}
		},
		check: all(calledFor("any", "view", 1), resultHas("main_view", "A scratch repository."), payloadIs("any", "not-a-spawn")),
	}, {
		// /etc/github-copilot/policy.d holds, whatever the repository says.
		name:      "policy-d-hook-denies-despite-disableAllHooks",
		needsRoot: true,
		sc: reader(scenario{UserHook: "-", PolicyD: managedStub(),
			Files: with(defs("reader"), ".github/copilot/settings.json", disableAll, ".github/copilot/settings.local.json", disableAll)}),
		check: refusedBy("main_spawn", "reader", "managed"),
	}, {
		name:      "policy-d-hook-denies-under-allowManagedHooksOnly",
		needsRoot: true,
		sc:        reader(scenario{UserHook: "-", PolicyD: managedStub(), Managed: managedOnly}),
		check:     refusedBy("main_spawn", "reader", "managed"),
	}, {
		name:      "allowManagedHooksOnly-switches-off-a-user-hook",
		hostFact:  "allowManagedHooksOnly in managed settings switches off user (and repository) hooks: a user-level gate is gone",
		needsRoot: true,
		sc:        reader(scenario{UserHook: stubHook(), Managed: managedOnly}),
		check:     all(starts("main_spawn", "reader"), neverCalled("stub")),
	}, {
		name:      "policy-d-hook-timeout-fails-open",
		hostFact:  "a policy.d hook past its timeoutSec is an allow too",
		needsRoot: true,
		sc:        reader(scenario{UserHook: "-", Managed: managedOnly, PolicyD: hookFile("{{BIN}}/record managed {{BIN}}/slow-deny 4 late", 1, "task")}),
		check:     all(starts("main_spawn", "reader"), calledFor("managed", "task", 1)),
	}}
}

// hookErrored: callID came back as the client's denial for a user hook
// that failed, which names the hook's file.
func hookErrored(callID string) check {
	return func(t *testing.T, o *outcome) error {
		return resultIs(callID, `Denied by preToolUse hook from "`+o.Home+`/.copilot/hooks/spawngate.json" (hook errored)`)(t, o)
	}
}

// childModel: every request of the child on name's definition asked
// for model.
func childModel(name, model string) check {
	return func(t *testing.T, o *outcome) error {
		for _, r := range o.ChildRequests(name) {
			if r.Model != model {
				return fmt.Errorf("the %s child asked for model %q, want %q", name, r.Model, model)
			}
		}
		return nil
	}
}

// nestedFacts: the spawn made inside the lead names its caller, and its
// sessionId is the lead's own id.
func nestedFacts(t *testing.T, o *outcome) error {
	hs := o.hooks("stub", "task")
	if len(hs) != 2 {
		return fmt.Errorf("the stub ran %d times, want 2", len(hs))
	}
	outer, inner := hs[0].Payload, hs[1].Payload
	if _, ok := outer["agentId"]; ok {
		return fmt.Errorf("the main agent's spawn names a caller: %s", hs[0].Stdin)
	}
	if inner["agentType"] != "lead" || inner["agentId"] != inner["sessionId"] || inner["parentAgentId"] != outer["sessionId"] {
		return fmt.Errorf("the lead's spawn does not name the lead as its caller: %s", hs[1].Stdin)
	}
	return matchPayload(t, o, hs[1], "nested")
}

// neverMentioned: no model request carries name's marker.
func neverMentioned(name string) check {
	return func(t *testing.T, o *outcome) error {
		if o.Mentions(name) {
			return fmt.Errorf("the %s child reached the model", name)
		}
		return nil
	}
}

// calledFor: the hook labelled label ran n times for tool.
func calledFor(label, tool string, n int) check {
	return func(t *testing.T, o *outcome) error {
		if got := len(o.hooks(label, tool)); got != n {
			return fmt.Errorf("the %s hook ran %d times for %s, want %d", label, got, tool, n)
		}
		return nil
	}
}

// payloadFacts: the camelCase payload of the main agent's sync spawn is
// the shape the adapter reads, with the model's arguments verbatim.
func payloadFacts(t *testing.T, o *outcome) error {
	hs := o.hooks("stub", "task")
	if len(hs) != 1 {
		return fmt.Errorf("the stub ran %d times for task, want 1", len(hs))
	}
	h := hs[0]
	keys := suite.JSONKeys(h.Stdin)
	if want := []string{"sessionId", "timestamp", "cwd", "toolName", "toolArgs"}; !slices.Equal(keys, want) {
		return fmt.Errorf("payload keys %v, want %v", keys, want)
	}
	if _, ok := h.Payload["timestamp"].(float64); !ok {
		return fmt.Errorf("timestamp is %T, want a number (ms)", h.Payload["timestamp"])
	}
	if h.Payload["cwd"] != o.Root {
		return fmt.Errorf("cwd %v, want the folder the session started in, %s", h.Payload["cwd"], o.Root)
	}
	want := `"toolArgs":{"name":"e2e","description":"e2e task","prompt":"E2E-CHILD do the task","agent_type":"reader"}}`
	if !strings.HasSuffix(strings.TrimSpace(h.Stdin), want) {
		return fmt.Errorf("payload %s does not end with the model's arguments verbatim, %s", h.Stdin, want)
	}
	return nil
}

// hookEnvFacts: what the hook's environment tells it, and what the client
// keeps from it (its provider's key).
func hookEnvFacts(t *testing.T, o *outcome) error {
	hs := o.hooks("stub", "task")
	if len(hs) == 0 {
		return errors.New("no stub call")
	}
	env := hs[0].Env
	for k, v := range map[string]string{
		"COPILOT_PROJECT_DIR": o.Root, "CLAUDE_PROJECT_DIR": o.Root, "COPILOT_HOOK_DIR": o.Home + "/.copilot/hooks",
		"COPILOT_CLI": "1", "COPILOT_CLI_BINARY_VERSION": "1.0.102", "HOME": o.Home,
	} {
		if env[k] != v {
			return fmt.Errorf("the hook's %s is %q, want %q", k, env[k], v)
		}
	}
	for _, k := range []string{"COPILOT_PROVIDER_API_KEY", "COPILOT_PROVIDER_BASE_URL"} {
		if _, ok := env[k]; ok {
			return fmt.Errorf("the hook's environment holds %s", k)
		}
	}
	if hs[0].Cwd != o.Root {
		return fmt.Errorf("the hook ran in %s, want the project root %s", hs[0].Cwd, o.Root)
	}
	return nil
}
