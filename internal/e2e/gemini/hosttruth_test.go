package gemini

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/spawngate/spawngate/internal/e2e/fakemodel"
	"github.com/spawngate/spawngate/internal/e2e/suite"
)

// The definitions the scenarios write, in ~/.gemini/agents unless a
// scenario puts them in the repository. Their tools are Gemini CLI's own
// tool names.
var (
	readerDef = agentDef("reader", "tools: [read_file, grep_search]")
	writerDef = agentDef("writer", "tools: [read_file, write_file, replace, run_shell_command]")
)

// userDefs is the Files of a HOME holding the named definitions.
func userDefs(names ...string) map[string]string {
	texts := map[string]string{"reader": readerDef, "writer": writerDef}
	out := map[string]string{}
	for _, n := range names {
		out[userDef(n)] = texts[n]
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

const stubReason = "the e2e stub denies every spawn"

// The settings a repository (or the machine) writes to turn hooks on or off.
var (
	hooksOff = map[string]any{"hooksConfig": map[string]any{"enabled": false}}
)

// disabling is project settings that disable the hook named name (an
// unnamed hook's name is its command).
func disabling(name string) map[string]any {
	return map[string]any{"hooksConfig": map[string]any{"disabled": []any{name}}}
}

// systemStub is the system settings of a deny stub labelled system; with
// enabled, it also says "hooksConfig": {"enabled": true}.
func systemStub(enabled bool) map[string]any {
	s := map[string]any{"hooks": hooksSettings(denyStub("system", stubReason))}
	if enabled {
		s["hooksConfig"] = map[string]any{"enabled": true}
	}
	return s
}

// writerRule is the policy engine's rule of the research (§2.5) that
// refuses the writer by name.
const writerRule = `[[rule]]
toolName = "invoke_agent"
argsPattern = '"agent_name":"writer"'
decision = "deny"
priority = 900
`

// catchAllDeny denies invoke_agent whatever its arguments; readerAllow
// allows the reader by name above it.
const (
	catchAllDeny = `[[rule]]
toolName = "invoke_agent"
decision = "deny"
priority = 100
`
	readerAllow = `
[[rule]]
toolName = "invoke_agent"
argsPattern = '"agent_name":"reader"'
decision = "allow"
priority = 900
`
)

// toolNotFound is the client's answer to a call of invoke_agent when the
// session has no such tool.
const toolNotFound = `Tool "invoke_agent" not found. Did you mean one of: "update_topic", "replace", "write_file"?`

// notOffered: the main session was never offered tool.
func notOffered(tool string) check {
	return func(t *testing.T, o *outcome) error {
		for _, r := range o.Requests {
			if r.Kind == fakemodel.Main && r.HasTool(tool) {
				return fmt.Errorf("request %d offered %s", r.Seq, tool)
			}
		}
		return nil
	}
}

// offered: the main session was offered tool.
func offered(tool string) check {
	return func(t *testing.T, o *outcome) error {
		if err := notOffered(tool)(t, o); err == nil {
			return fmt.Errorf("the main session was never offered %s", tool)
		}
		return nil
	}
}

// policyDenied is the tool result of a call the policy engine refused.
const policyDenied = "Tool execution denied by policy."

// TestHostTruth pins down, with stub hooks and no spawngate, what Gemini
// CLI 0.61.0 does with a BeforeTool hook on its invoke_agent tool: what it
// hands the hook, which answers deny, and each way the gate is gone
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
				sc.Files = userDefs("reader")
			}
			sc.Main = []turn{spawn("main_spawn", "reader")}
			return sc
		}
	}
	// both spawns the writer, then the reader.
	both := func(sc scenario) func(*testing.T) scenario {
		return func(*testing.T) scenario {
			sc.Files = userDefs("reader", "writer")
			sc.Main = []turn{spawn("spawn_writer", "writer"), spawn("spawn_reader", "reader")}
			return sc
		}
	}
	stub := func(command string) []hook { return []hook{{Command: "{{BIN}}/record stub " + command}} }
	policyHolds := all(resultIs("spawn_writer", policyDenied), neverRan("writer"), starts("spawn_reader", "reader"))
	cases := []e2eCase{{
		// The protocol: {"decision":"deny"} on stdout refuses the spawn,
		// and its reason is the tool result, as an error.
		name: "deny-json-denies",
		sc:   reader(scenario{UserHooks: []hook{denyStub("stub", stubReason)}}),
		check: all(refusedBy("main_spawn", "reader", "stub"), payloadFacts, hookEnvFacts,
			payloadIs("stub", "reader")),
	}, {
		// Its opposite, and what each definition grants: with no hook the
		// reader and the writer start with their tools and complete_task;
		// an unknown name is the client's own error, before any hook.
		name: "no-hook-children-start",
		sc: func(*testing.T) scenario {
			return scenario{NoUserHook: true, Files: userDefs("reader", "writer"), Main: []turn{
				spawn("spawn_reader", "reader"), spawn("spawn_writer", "writer"), spawn("spawn_nope", "nope")}}
		},
		check: all(starts("spawn_reader", "reader"), starts("spawn_writer", "writer"),
			childTools("reader", "read_file", "grep_search", "complete_task"),
			childTools("writer", "read_file", "write_file", "replace", "run_shell_command", "complete_task"),
			childModel("reader", sessionModel), resultIs("spawn_nope", "Subagent 'nope' not found.")),
	}, {
		// The writer's payload, and a built-in's (generalist): each reaches
		// the hook alike, named by agent_name.
		name: "writer-and-builtin-payloads",
		sc: func(*testing.T) scenario {
			return scenario{UserHooks: []hook{denyStub("stub", stubReason)}, Files: userDefs("writer"),
				Main: []turn{spawn("spawn_writer", "writer"), spawn("spawn_generalist", "generalist")}}
		},
		check: all(refusedBy("spawn_writer", "writer", "stub"), refusedBy("spawn_generalist", "", "stub"),
			payloadFor("stub", "writer", "writer"), payloadFor("stub", "generalist", "builtin")),
	}, {
		// The model a definition names, and the one settings give a name
		// (agents.overrides.NAME.modelConfig.model, here the project's),
		// are the ones the child runs on.
		name: "models-from-definition-and-settings-honoured",
		sc: func(*testing.T) scenario {
			return scenario{NoUserHook: true, Files: with(userDefs("reader"), userDef("modeled"), modeledDef),
				Project: proModelFor("reader"),
				Main:    []turn{spawn("spawn_modeled", "modeled"), spawn("spawn_reader", "reader")}}
		},
		check: all(starts("spawn_modeled", "modeled"), starts("spawn_reader", "reader"),
			childModel("modeled", "gemini-2.5-pro"), childModel("reader", "gemini-2.5-pro")),
	}, {
		// Two definitions of one name: the project's runs, the user's is
		// ignored.
		name: "project-definition-wins-over-user",
		sc: func(*testing.T) scenario {
			return scenario{NoUserHook: true, Files: dupDefs(), Main: []turn{spawn("main_spawn", "dup")}}
		},
		check: all(starts("main_spawn", "dup-project"), neverRan("dup-user")),
	}, {
		// A definition's MCP server starts when its child starts.
		name: "mcp-server-starts-with-the-child",
		sc: func(*testing.T) scenario {
			return scenario{NoUserHook: true, Files: map[string]string{userDef("mcp"): mcpDef}, Main: []turn{spawn("main_spawn", "mcp")}}
		},
		check: all(starts("main_spawn", "mcp"), mcpRan(true)),
	}, {
		// The built-ins run: generalist on the session's model with every
		// tool of the main session but invoke_agent and update_topic,
		// codebase_investigator on gemini-2.5-pro (its own choice) with its
		// read tools.
		name: "builtins-run",
		sc: func(*testing.T) scenario {
			return scenario{NoUserHook: true, Main: []turn{spawn("spawn_generalist", "generalist"), spawn("spawn_investigator", "codebase_investigator")}}
		},
		check: all(answered("spawn_generalist"), answered("spawn_investigator"), builtinFacts),
	}, {
		name:  "deny-json-exit-1-denies",
		sc:    reader(scenario{UserHooks: stub(`sh -c 'printf "{\"decision\":\"deny\",\"reason\":\"R\"}"; exit 1'`)}),
		check: all(neverRan("reader"), resultIs("main_spawn", blocked("R"))),
	}, {
		name:  "deny-json-exit-2-denies",
		sc:    reader(scenario{UserHooks: stub(`sh -c 'printf "{\"decision\":\"deny\",\"reason\":\"R\"}"; exit 2'`)}),
		check: all(neverRan("reader"), resultIs("main_spawn", blocked("R"))),
	}, {
		// What spawngate does when it cannot judge: exit 2 with a line on
		// stderr, which becomes the reason.
		name:  "exit-2-with-stderr-denies",
		sc:    reader(scenario{UserHooks: stub(`sh -c 'echo cannot judge >&2; exit 2'`)}),
		check: all(neverRan("reader"), resultIs("main_spawn", blocked("cannot judge"))),
	}, {
		name:  "missing-hook-binary-denies",
		sc:    reader(scenario{UserHooks: []hook{{Command: "/nonexistent/spawngate hook gemini"}}}),
		check: all(neverRan("reader"), resultIs("main_spawn", blocked("bash: line 1: /nonexistent/spawngate: No such file or directory"))),
	}, {
		name:     "exit-1-fails-open",
		hostFact: "a BeforeTool hook that exits 1 is an allow, whatever it prints that is not a JSON deny",
		sc:       reader(scenario{UserHooks: stub(`sh -c 'echo cannot judge >&2; exit 1'`)}),
		check:    all(starts("main_spawn", "reader"), calledFor("stub", "invoke_agent", 1)),
	}, {
		name:     "exit-2-with-no-output-fails-open",
		hostFact: "a BeforeTool hook that exits 2 with nothing on stdout or stderr is an allow",
		sc:       reader(scenario{UserHooks: stub(`sh -c 'exit 2'`)}),
		check:    all(starts("main_spawn", "reader"), calledFor("stub", "invoke_agent", 1)),
	}, {
		name:     "killed-by-a-signal-fails-open",
		hostFact: "a BeforeTool hook killed by a signal is an allow (its null exit code counts as 0)",
		// The hook's shell records the call, then kills itself.
		sc:    reader(scenario{UserHooks: []hook{{Command: `{{BIN}}/record stub true; kill -KILL $$`}}}),
		check: all(starts("main_spawn", "reader"), calledFor("stub", "invoke_agent", 1)),
	}, {
		name:     "timeout-fails-open",
		hostFact: "a BeforeTool hook past its timeout is an allow: the child starts",
		sc:       reader(scenario{UserHooks: []hook{{Command: "{{BIN}}/record stub {{BIN}}/slow-deny 4 late", Timeout: 1000}}}),
		check:    all(starts("main_spawn", "reader"), calledFor("stub", "invoke_agent", 1)),
	}, {
		// Its opposite: the same slow hook inside its timeout denies.
		name:  "slow-hook-within-timeout-denies",
		sc:    reader(scenario{UserHooks: []hook{{Command: "{{BIN}}/record stub {{BIN}}/slow-deny 4 late", Timeout: 30000}}}),
		check: refusedBy("main_spawn", "reader", "stub"),
	}, {
		name:     "project-hooksConfig-enabled-false-switches-off-a-user-hook",
		hostFact: `{"hooksConfig":{"enabled":false}} in a trusted project's .gemini/settings.json switches off the user's hooks`,
		sc:       reader(scenario{UserHooks: []hook{denyStub("stub", stubReason)}, Project: hooksOff}),
		check:    all(starts("main_spawn", "reader"), neverCalled("stub")),
	}, {
		name:     "acp-runs-no-hooks",
		hostFact: "--acp (the Agent Client Protocol of IDEs) runs no BeforeTool hook: a user hook that denies every spawn is never called, and the writer starts",
		sc: func(*testing.T) scenario {
			return scenario{ACP: true, UserHooks: []hook{denyStub("stub", stubReason)}, Files: userDefs("writer"),
				Main: []turn{spawn("main_spawn", "writer")}}
		},
		check: all(starts("main_spawn", "writer"), neverCalled("stub")),
	}, {
		// A hook with a matcher of read_file sees read_file, a call that
		// is no spawn (its payload is the fixture a hook must pass).
		name: "hook-on-another-tool",
		sc: func(*testing.T) scenario {
			return scenario{UserHooks: []hook{{Command: "{{BIN}}/record any true", Matcher: "read_file"}}, Main: []turn{
				call("main_read", "read_file", map[string]any{"file_path": "README.md"})}}
		},
		check: all(calledFor("any", "read_file", 1), resultHas("main_read", "A scratch repository."), payloadIs("any", "not-a-spawn")),
	}, {
		// The system layer (/etc/gemini-cli/settings.json) on its own
		// denies, and with hooksConfig.enabled: true it holds against the
		// project's enabled: false.
		name:      "system-hook-with-enabled-true-denies-despite-project-enabled-false",
		needsRoot: true,
		sc:        reader(scenario{NoUserHook: true, System: systemStub(true), Project: hooksOff}),
		check:     refusedBy("main_spawn", "reader", "system"),
	}, {
		name:      "system-hook-without-enabled-is-switched-off-by-the-project",
		hostFact:  `a system hook whose file does not say hooksConfig.enabled: true is switched off by a project's {"hooksConfig":{"enabled":false}}`,
		needsRoot: true,
		sc:        reader(scenario{NoUserHook: true, System: systemStub(false), Project: hooksOff}),
		check:     all(starts("main_spawn", "reader"), neverCalled("system")),
	}, {
		name:      "project-hooksConfig-disabled-switches-off-a-system-hook",
		hostFact:  "hooksConfig.disabled in a trusted project's settings switches off a system hook by its name (an unnamed hook's name is its command), enabled: true or not",
		needsRoot: true,
		sc: reader(scenario{NoUserHook: true, System: systemStub(true),
			Project: disabling(denyStub("system", stubReason).Command)}),
		check: all(starts("main_spawn", "reader"), neverCalled("system")),
	}, {
		name:      "GEMINI_CLI_SYSTEM_SETTINGS_PATH-drops-the-system-hook",
		hostFact:  "GEMINI_CLI_SYSTEM_SETTINGS_PATH in the client's environment replaces /etc/gemini-cli/settings.json, and its hook with it",
		needsRoot: true,
		sc: reader(scenario{NoUserHook: true, System: systemStub(true),
			Env: []string{"GEMINI_CLI_SYSTEM_SETTINGS_PATH=/nonexistent/settings.json"}}),
		check: all(starts("main_spawn", "reader"), neverCalled("system")),
	}, {
		// The policy engine's rule in /etc/gemini-cli/policies holds where
		// the hooks are gone: it refuses the writer by name and lets the
		// reader run.
		name:      "policy-rule-refuses-the-writer-under-project-enabled-false",
		needsRoot: true,
		sc: both(scenario{NoUserHook: true, System: systemStub(false), Project: hooksOff,
			Policies: map[string]string{"spawn.toml": writerRule}}),
		check: all(policyHolds, neverCalled("system")),
	}, {
		name:      "policy-rule-refuses-the-writer-under-project-disabled",
		needsRoot: true,
		sc: both(scenario{NoUserHook: true, System: systemStub(true), Project: disabling(denyStub("system", stubReason).Command),
			Policies: map[string]string{"spawn.toml": writerRule}}),
		check: all(policyHolds, neverCalled("system")),
	}, {
		name:      "policy-rule-refuses-the-writer-under-GEMINI_CLI_SYSTEM_SETTINGS_PATH",
		needsRoot: true,
		sc: both(scenario{NoUserHook: true, System: systemStub(true), Env: []string{"GEMINI_CLI_SYSTEM_SETTINGS_PATH=/nonexistent/settings.json"},
			Policies: map[string]string{"spawn.toml": writerRule}}),
		check: all(policyHolds, neverCalled("system")),
	}, {
		// A deny rule for invoke_agent that names no arguments takes the
		// tool out of the session: the model is never offered it, and a
		// call of it is the client's "not found".
		name:      "policy-deny-without-argsPattern-removes-invoke_agent",
		hostFact:  "a policy rule denying invoke_agent with no argsPattern, and no rule allowing any call of it, removes invoke_agent from the session's tools",
		needsRoot: true,
		sc:        both(scenario{NoUserHook: true, Policies: map[string]string{"spawn.toml": catchAllDeny}}),
		check: all(notOffered("invoke_agent"), neverRan("writer"), neverRan("reader"),
			resultIs("spawn_writer", toolNotFound)),
	}, {
		// Its opposite: with a rule allowing the reader by name above it,
		// the tool stays, the reader runs and the rest is refused.
		name:      "policy-allow-by-name-beside-a-deny-without-argsPattern",
		needsRoot: true,
		sc:        both(scenario{NoUserHook: true, Policies: map[string]string{"spawn.toml": catchAllDeny + readerAllow}}),
		check:     all(offered("invoke_agent"), resultIs("spawn_writer", policyDenied), neverRan("writer"), starts("spawn_reader", "reader")),
	}, {
		name:      "policy-rule-is-not-read-under-acp-yolo",
		hostFact:  "under --acp --approval-mode yolo the policy engine's deny rule for invoke_agent is not consulted: the writer starts",
		needsRoot: true,
		sc: both(scenario{ACP: true, UserHooks: []hook{denyStub("stub", stubReason)},
			Policies: map[string]string{"spawn.toml": writerRule}}),
		check: all(starts("spawn_writer", "writer"), starts("spawn_reader", "reader"), neverCalled("stub")),
	}, {
		// Without yolo, --acp refuses every spawn itself, no rule needed
		// ("Tool confirmation request for unknown tool: reader. Denying."
		// on its stderr): the gap is yolo's.
		name: "acp-default-mode-refuses-every-spawn",
		sc:   both(scenario{ACP: true, Approval: "default", UserHooks: []hook{denyStub("stub", stubReason)}}),
		check: all(resultIs("spawn_writer", `Tool execution for "writer" denied by policy.`), neverRan("writer"),
			resultIs("spawn_reader", `Tool execution for "reader" denied by policy.`), neverRan("reader"), neverCalled("stub")),
	}}
	return cases
}

// modeledDef names a model other than the session's.
var modeledDef = agentDef("modeled", "tools: [read_file]\nmodel: gemini-2.5-pro")

// proModelFor is project settings that run name on gemini-2.5-pro.
func proModelFor(name string) map[string]any {
	return map[string]any{"agents": map[string]any{"overrides": map[string]any{
		name: map[string]any{"modelConfig": map[string]any{"model": "gemini-2.5-pro"}}}}}
}

// dupDefs are two definitions named dup, the project's marked as
// dup-project and the user's as dup-user; the user's is a writer.
func dupDefs() map[string]string {
	return map[string]string{
		projectDef("dup"): agentDefMarked("dup", suite.Marker("dup-project"), "tools: [read_file]"),
		userDef("dup"):    agentDefMarked("dup", suite.Marker("dup-user"), "tools: [read_file, write_file]"),
	}
}

// mcpDef is a reader with an MCP server whose command records that it ran
// (mcpRan) and exits.
const mcpDef = `---
name: mcp
description: E2E agent mcp
tools: [read_file]
mcp_servers:
  probe:
    command: {{BIN}}/mcp-probe
---
You are an e2e test agent. E2E-MARKER-MCP
`

// mcpRan: mcpDef's server command ran, or (want false) never did.
func mcpRan(want bool) check {
	return func(t *testing.T, o *outcome) error {
		_, err := os.Stat(filepath.Join(filepath.Dir(o.Root), "mcp-ran"))
		if got := err == nil; got != want {
			return fmt.Errorf("the MCP server's command ran: %v, want %v", got, want)
		}
		return nil
	}
}

// builtinFacts: the two built-in children ran, in order, on the models
// and with the tools TestHostTruth/builtins-run describes.
func builtinFacts(t *testing.T, o *outcome) error {
	rs := o.BuiltinRequests()
	if len(rs) != 2 {
		return fmt.Errorf("%d built-in requests, want 2 (one turn each)", len(rs))
	}
	var main []string
	for _, x := range o.Requests[0].Tools {
		if x != "invoke_agent" && x != "update_topic" {
			main = append(main, x)
		}
	}
	want := []struct {
		model string
		tools []string
	}{
		{sessionModel, append(main, "complete_task")},
		{"gemini-2.5-pro", []string{"list_directory", "read_file", "glob", "grep_search", "complete_task"}},
	}
	for i, w := range want {
		if rs[i].Model != w.model || !slices.Equal(rs[i].Tools, w.tools) {
			return fmt.Errorf("built-in %d ran on %s with %v, want %s with %v", i+1, rs[i].Model, rs[i].Tools, w.model, w.tools)
		}
	}
	return nil
}

// childModel: every request of the child on name's definition asked
// for model.
func childModel(name, model string) check {
	return func(t *testing.T, o *outcome) error {
		rs := o.ChildRequests(name)
		if len(rs) == 0 {
			return fmt.Errorf("the %s child never started", name)
		}
		for _, r := range rs {
			if r.Model != model {
				return fmt.Errorf("the %s child asked for model %q, want %q", name, r.Model, model)
			}
		}
		return nil
	}
}

// payloadFacts: the payload of the main agent's spawn is the shape the
// adapter reads, with the model's arguments verbatim.
func payloadFacts(t *testing.T, o *outcome) error {
	hs := o.hooks("stub", "invoke_agent")
	if len(hs) != 1 {
		return fmt.Errorf("the stub ran %d times for invoke_agent, want 1", len(hs))
	}
	h := hs[0]
	keys := suite.JSONKeys(h.Stdin)
	if want := []string{"session_id", "transcript_path", "cwd", "hook_event_name", "timestamp", "tool_name", "tool_input"}; !slices.Equal(keys, want) {
		return fmt.Errorf("payload keys %v, want %v", keys, want)
	}
	if h.Payload["cwd"] != o.Root || h.Payload["hook_event_name"] != "BeforeTool" {
		return fmt.Errorf("cwd %v, event %v: want the folder the session started in, %s, and BeforeTool", h.Payload["cwd"], h.Payload["hook_event_name"], o.Root)
	}
	if tp, _ := h.Payload["transcript_path"].(string); !strings.HasPrefix(tp, o.Home+"/.gemini/tmp/repo/chats/session-") {
		return fmt.Errorf("transcript_path %q is not under %s/.gemini/tmp/repo/chats", tp, o.Home)
	}
	want := `"tool_name":"invoke_agent","tool_input":{"agent_name":"reader","prompt":"E2E-CHILD do the task"}}`
	if !strings.HasSuffix(strings.TrimSpace(h.Stdin), want) {
		return fmt.Errorf("payload %s does not end with the model's arguments verbatim, %s", h.Stdin, want)
	}
	return nil
}

// hookEnvFacts: what the hook's environment tells it, and where it runs.
func hookEnvFacts(t *testing.T, o *outcome) error {
	hs := o.hooks("stub", "invoke_agent")
	if len(hs) == 0 {
		return errors.New("no stub call")
	}
	h := hs[0]
	sid, _ := h.Payload["session_id"].(string)
	for k, v := range map[string]string{
		"GEMINI_PROJECT_DIR": o.Root, "GEMINI_CWD": o.Root, "CLAUDE_PROJECT_DIR": o.Root,
		"GEMINI_SESSION_ID": sid, "HOME": o.Home,
		// The client's own environment reaches the hook, its key included.
		"GEMINI_API_KEY": "x", "GEMINI_CLI_TRUST_WORKSPACE": "true",
	} {
		if h.Env[k] != v {
			return fmt.Errorf("the hook's %s is %q, want %q", k, h.Env[k], v)
		}
	}
	if !strings.HasPrefix(h.Env["GEMINI_PLANS_DIR"], o.Home+"/.gemini/tmp/repo/"+sid) {
		return fmt.Errorf("the hook's GEMINI_PLANS_DIR is %q", h.Env["GEMINI_PLANS_DIR"])
	}
	if h.Cwd != o.Root {
		return fmt.Errorf("the hook ran in %s, want the project root %s", h.Cwd, o.Root)
	}
	return nil
}
