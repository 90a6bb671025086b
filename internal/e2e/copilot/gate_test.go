package copilot

import (
	"fmt"
	"strings"
	"testing"

	"github.com/spawngate/spawngate/internal/e2e/suite"
)

// The policies the gate scenarios judge by, in Copilot's own tool names
// (what a child is offered: view, grep, glob, create, edit, bash, task,
// ...). {{ROOT}} is the scratch repository.
const (
	// gatePolicy lets read and search tools run on the session's model;
	// no writes, no spawns.
	gatePolicy = `allowed_tools: [view, grep, glob]
workspace_root: {{ROOT}}
budget_cap_tokens: 200000
allowed_models: [gpt-4.1]
`
	// spawnPolicy also lets an agent spawn (the lead's task and its
	// companions), for the nested scenarios; still no writes.
	spawnPolicy = `allowed_tools: [view, grep, glob, task, read_agent, list_agents, write_agent]
allow_spawn: true
workspace_root: {{ROOT}}
budget_cap_tokens: 200000
allowed_models: [gpt-4.1]
`
)

// explorePolicy allows what the built-in explore holds, as the adapter
// reads it from the client's definitions/explore.agent.yaml: its tools,
// writing (its bash), and its models (and the session's, on which it
// runs here).
const explorePolicy = `allowed_tools: [view, grep, glob, bash, read_bash, stop_bash, list_bash, powershell, read_powershell,
  stop_powershell, lsp, mcp__github-mcp-server, mcp__bluebird]
allow_write: true
workspace_root: {{ROOT}}
budget_cap_tokens: 200000
allowed_models: [gpt-5.6-luna, gpt-5.4-mini, gpt-4.1]
`

// builtinTypes are the built-in agent types 1.0.102's task tool offers.
var builtinTypes = []string{"explore", "task", "general-purpose", "rubber-duck", "code-review", "research", "security-review"}

// TestGate holds spawngate's answers on the real client, wired as the
// user-level hook of the docs (~/.copilot/hooks/spawngate.json, matcher
// task): what the policy allows starts, anything else is refused with
// spawngate's reason as the spawn's tool result, and a refused child
// never reaches the model.
func TestGate(t *testing.T) {
	clientPath(t)
	suite.NeedHook(t, spawngateBin, "copilot")
	runCases(t, gateCases())
}

func gateCases() []e2eCase {
	gate := func(sc scenario) func(*testing.T) scenario {
		return func(*testing.T) scenario {
			if sc.Policy == "" {
				sc.Policy = gatePolicy
			}
			return sc
		}
	}
	var builtinTurns []turn
	var builtinChecks []check
	for _, b := range builtinTypes {
		builtinTurns = append(builtinTurns, spawn("spawn_"+b, b))
		builtinChecks = append(builtinChecks, refusedBy("spawn_"+b, "", "gate"),
			reasonHas("spawn_"+b, "spawngate refused this sub-agent: "+b+" (built-in:"+b+")"))
	}
	return []e2eCase{{
		name:  "reader-starts",
		sc:    gate(scenario{Files: defs("reader"), Main: []turn{spawn("main_spawn", "reader")}}),
		check: all(starts("main_spawn", "reader"), gateAllowed("reader")),
	}, {
		name: "writer-refused",
		sc:   gate(scenario{Files: defs("reader", "writer"), Main: []turn{spawn("main_spawn", "writer")}}),
		check: all(refusedBy("main_spawn", "writer", "gate"), payloadIs("gate", "writer"), reasonHas("main_spawn", "spawngate refused this sub-agent: writer ("),
			reasonHas("main_spawn", `- tools.write /tools/1 (line 4): tool "create" writes, and allow_write: true is not set by the operator policy`)),
	}, {
		name:  "unknown-type-refused",
		sc:    gate(scenario{Files: defs("reader"), Main: []turn{spawn("main_spawn", "nope")}}),
		check: all(refusedBy("main_spawn", "", "gate"), reasonHas("main_spawn", `- agent.definition /: agent type "nope" is not defined in any agents folder`)),
	}, {
		// One run spawns every built-in in turn: each is refused.
		name:  "builtins-refused",
		sc:    gate(scenario{Files: defs("reader"), Main: builtinTurns}),
		check: all(builtinChecks...),
	}, {
		name: "model-from-definition-refused",
		sc: gate(scenario{Files: with(defs("reader"), defPath("modeled"), agentDef("modeled", "tools: [read]\nmodel: gpt-5-mini")),
			Main: []turn{spawn("main_spawn", "modeled")}}),
		check: all(refusedBy("main_spawn", "modeled", "gate"), reasonHas("main_spawn", `- model.allowlist /model (line 5): model "gpt-5-mini" is not allowed by the operator policy`)),
	}, {
		name:  "model-from-call-refused",
		sc:    gate(scenario{Files: defs("reader"), Main: []turn{spawn("main_spawn", "reader", "model", "gpt-5-mini")}}),
		check: all(refusedBy("main_spawn", "reader", "gate"), reasonHas("main_spawn", `- model.allowlist /model: model "gpt-5-mini" is not allowed by the operator policy`)),
	}, {
		// Its opposite: a model the policy allows, named by the definition
		// and by the call, starts on it.
		name: "allowed-model-starts",
		sc: gate(scenario{Files: with(defs("reader"), defPath("modeled"), agentDef("modeled", "tools: [read]\nmodel: gpt-4.1")),
			Main: []turn{spawn("main_spawn", "modeled"), spawn("spawn_reader", "reader", "model", "gpt-4.1")}}),
		check: all(starts("main_spawn", "modeled"), starts("spawn_reader", "reader"), childModel("modeled", "gpt-4.1"), childModel("reader", "gpt-4.1")),
	}, {
		name: "background-reader-starts-writer-refused",
		sc: gate(scenario{Files: defs("reader", "writer"), Main: []turn{
			spawn("spawn_writer", "writer", "mode", "background"), spawn("spawn_reader", "reader", "mode", "background")}}),
		check: all(refusedBy("spawn_writer", "writer", "gate"), starts("spawn_reader", "reader"),
			resultHas("spawn_reader", "Agent started in background")),
	}, {
		// The lead may spawn; the writer it spawns may not write: the hook
		// that runs inside the lead refuses it.
		name: "nested-writer-refused-in-lead",
		sc: gate(scenario{Policy: spawnPolicy, Files: defs("lead", "writer"), Main: []turn{spawn("main_spawn", "lead")},
			Sub: map[string][]turn{"lead": {spawnNamed("lead_spawn", "inner", "writer")}}}),
		check: all(starts("main_spawn", "lead"), refusedBy("lead_spawn", "writer", "gate"), calledFor("gate", "task", 2),
			reasonHas("lead_spawn", `- tools.write /tools/1 (line 4): tool "create" writes`), reasonHas("lead_spawn", "- tree.tools ")),
	}, {
		// Its opposite: under the read-only policy the lead itself, which
		// holds task, is refused.
		name: "lead-refused-without-allow-spawn",
		sc:   gate(scenario{Files: defs("lead", "writer"), Main: []turn{spawn("main_spawn", "lead")}}),
		check: all(refusedBy("main_spawn", "lead", "gate"), neverMentioned("writer"),
			reasonHas("main_spawn", `- tools.spawn /tools/1 (line 4): tool "task" lets the child dispatch children of its own, and allow_spawn: true is not set`)),
	}, {
		// The PascalCase event (the tool named Agent) is judged alike.
		name: "PascalCase-writer-refused-reader-starts",
		sc: gate(scenario{Files: defs("reader", "writer"),
			UserHook: pascalHookFile("{{BIN}}/record gate {{SPAWNGATE}} hook copilot --policy {{POLICY}}", "Agent"),
			Main:     []turn{spawn("spawn_writer", "writer"), spawn("spawn_reader", "reader")}}),
		check: all(refusedBy("spawn_writer", "writer", "gate"), starts("spawn_reader", "reader"), calledFor("gate", "Agent", 2)),
	}, {
		// A built-in starts when the policy allows all it holds: explore's
		// tools (its shell writes), and the model its call names, which
		// the client runs it on.
		name:  "explore-allowed-by-policy-starts",
		sc:    gate(scenario{Policy: explorePolicy, Main: []turn{spawn("main_spawn", "explore", "model", "gpt-4.1")}}),
		check: all(gateAllowed("explore"), builtinStarts("main_spawn")),
	}, {
		// Without a model in its call a built-in runs on the session's
		// model, not on the models its shipped definition lists
		// (TestHostTruth/builtins-run-on-the-session-model), which the
		// hook cannot see: a policy that names models refuses it, even
		// one that allows the session's.
		name:  "explore-without-a-model-refused",
		sc:    gate(scenario{Policy: explorePolicy, Main: []turn{spawn("main_spawn", "explore")}}),
		check: all(refusedBy("main_spawn", "", "gate"), reasonHas("main_spawn", "- model.allowlist /model: the child names no model")),
	}, {
		// Its opposite, the host's fact: the built-in without a model in
		// its call runs on the session's model.
		name:  "explore-on-a-session-model-the-policy-refuses",
		sc:    gate(scenario{Policy: strings.Replace(explorePolicy, ", gpt-4.1]", "]", 1), Main: []turn{spawn("main_spawn", "explore")}}),
		check: refusedBy("main_spawn", "", "gate"),
	}}
}

// gateAllowed: spawngate ran for the spawn of agentType and let it pass
// (exit 0, nothing on stdout).
func gateAllowed(agentType string) check {
	return func(t *testing.T, o *outcome) error {
		for _, h := range o.hooks("gate", "task") {
			if toolInput(h.Payload)["agent_type"] == agentType {
				if h.Exit != "0" || strings.TrimSpace(h.Stdout) != "" {
					return fmt.Errorf("spawngate answered %s with exit %s, stdout %q, stderr %q", agentType, h.Exit, h.Stdout, h.Stderr)
				}
				return nil
			}
		}
		return fmt.Errorf("spawngate never ran for %s", agentType)
	}
}

// builtinStarts: a built-in child (no marker of ours) ran, and the spawn
// came back with its answer.
func builtinStarts(callID string) check {
	return func(t *testing.T, o *outcome) error {
		if len(o.BuiltinRequests()) == 0 {
			return fmt.Errorf("no built-in child started; %s's result: %q", callID, o.Result(callID))
		}
		if r := o.Result(callID); r == "" || strings.HasPrefix(r, "Denied") {
			return fmt.Errorf("a built-in child started, yet %s's result is %q", callID, r)
		}
		return nil
	}
}

// reasonHas: the tool result of callID (spawngate's reason) holds want.
func reasonHas(callID, want string) check {
	return func(t *testing.T, o *outcome) error {
		r := o.Result(callID)
		if !strings.HasPrefix(r, "Denied by preToolUse hook: ") || !strings.Contains(r, want) {
			return fmt.Errorf("%s's result is %q, want spawngate's reason naming %q", callID, r, want)
		}
		return nil
	}
}
