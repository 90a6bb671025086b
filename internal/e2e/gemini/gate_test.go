package gemini

import (
	"fmt"
	"strings"
	"testing"

	"github.com/spawngate/spawngate/internal/e2e/suite"
)

// The policies the gate scenarios judge by, in Gemini CLI's own tool names
// (what a child is offered: read_file, grep_search, write_file, ...).
// {{ROOT}} is the scratch repository.
const (
	// gatePolicy lets read and search tools run on the session's model;
	// no writes, no spawns.
	gatePolicy = `allowed_tools: [read_file, grep_search, glob, list_directory]
workspace_root: {{ROOT}}
budget_cap_tokens: 200000
allowed_models: [gemini-2.5-flash]
`
	// investigatorPolicy allows what codebase_investigator holds: its
	// read tools, and no model list (it picks its model itself, which the
	// hook cannot see).
	investigatorPolicy = `allowed_tools: [list_directory, read_file, glob, grep_search]
workspace_root: {{ROOT}}
budget_cap_tokens: 200000
`
	// mcpPolicy is gatePolicy and the probe's MCP server.
	mcpPolicy = `allowed_tools: [read_file, grep_search, glob, list_directory, mcp__probe]
workspace_root: {{ROOT}}
budget_cap_tokens: 200000
allowed_models: [gemini-2.5-flash]
`
)

// The definitions of the gate scenarios name the session's model: a
// policy with allowed_models refuses a child that names none.
var (
	gateReaderDef  = agentDef("reader", "tools: [read_file, grep_search]\nmodel: "+sessionModel)
	gateWriterDef  = agentDef("writer", "tools: [read_file, write_file, replace, run_shell_command]\nmodel: "+sessionModel)
	gateModeledDef = agentDef("modeled", "tools: [read_file]\nmodel: gemini-2.5-pro")
	gateMCPDef     = strings.Replace(mcpDef, "tools: [read_file]\n", "tools: [read_file]\nmodel: "+sessionModel+"\n", 1)
)

// gateDefs is the Files of a HOME holding the gate's definitions by name.
func gateDefs(names ...string) map[string]string {
	texts := map[string]string{"reader": gateReaderDef, "writer": gateWriterDef, "modeled": gateModeledDef, "mcp": gateMCPDef}
	out := map[string]string{}
	for _, n := range names {
		out[userDef(n)] = texts[n]
	}
	return out
}

// TestGate holds spawngate's answers on the real client, wired as a
// user-level BeforeTool hook on invoke_agent (~/.gemini/settings.json):
// what the policy allows starts, anything else is refused with
// spawngate's reason as the spawn's tool result, and a refused child
// never reaches the model.
func TestGate(t *testing.T) {
	clientPath(t)
	suite.NeedHook(t, spawngateBin, "gemini")
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
	return []e2eCase{{
		name:  "reader-starts",
		sc:    gate(scenario{Files: gateDefs("reader"), Main: []turn{spawn("main_spawn", "reader")}}),
		check: all(starts("main_spawn", "reader"), gateAllowed("reader"), childModel("reader", sessionModel)),
	}, {
		name: "writer-refused",
		sc:   gate(scenario{Files: gateDefs("reader", "writer"), Main: []turn{spawn("main_spawn", "writer")}}),
		check: all(refusedBy("main_spawn", "writer", "gate"), reasonHas("main_spawn", "spawngate refused this sub-agent: writer ("),
			reasonHas("main_spawn", `- tools.write /tools/1 (line 4): tool "write_file" writes, and allow_write: true is not set by the operator policy`)),
	}, {
		// One run spawns each built-in in turn: generalist holds every
		// tool, codebase_investigator picks its own model; both refused.
		name: "builtins-refused",
		sc: gate(scenario{Main: []turn{spawn("spawn_generalist", "generalist"),
			spawn("spawn_investigator", "codebase_investigator")}}),
		check: all(refusedBy("spawn_generalist", "", "gate"), refusedBy("spawn_investigator", "", "gate"),
			reasonHas("spawn_generalist", "spawngate refused this sub-agent: generalist (built-in:generalist)\n"),
			reasonHas("spawn_generalist", `- agent.tools /tools: the definition "built-in:generalist" lists no tools, so the child inherits every tool`),
			reasonHas("spawn_investigator", "spawngate refused this sub-agent: codebase_investigator (built-in:codebase_investigator)\n"),
			reasonHas("spawn_investigator", "- model.allowlist /model: the child names no model")),
	}, {
		// Its opposite: a policy that allows all codebase_investigator
		// holds lets it start.
		name:  "investigator-allowed-by-policy-starts",
		sc:    gate(scenario{Policy: investigatorPolicy, Main: []turn{spawn("main_spawn", "codebase_investigator")}}),
		check: all(gateAllowed("codebase_investigator"), answered("main_spawn"), builtinStarted),
	}, {
		name:  "model-from-definition-refused",
		sc:    gate(scenario{Files: gateDefs("reader", "modeled"), Main: []turn{spawn("main_spawn", "modeled")}}),
		check: all(refusedBy("main_spawn", "modeled", "gate"), reasonHas("main_spawn", `- model.allowlist /model (line 5): model "gemini-2.5-pro" is not allowed by the operator policy`)),
	}, {
		// The project's settings run the reader on another model, its
		// definition unchanged: refused.
		name: "model-from-project-settings-refused",
		sc: gate(scenario{Files: gateDefs("reader"), Project: proModelFor("reader"),
			Main: []turn{spawn("main_spawn", "reader")}}),
		check: all(refusedBy("main_spawn", "reader", "gate"), reasonHas("main_spawn", `- model.allowlist /model: model "gemini-2.5-pro" is not allowed by the operator policy`)),
	}, {
		// The first definition of a name wins: the project's dup (a
		// reader) is the one judged and run, not the user's (a writer).
		name: "project-definition-judged-over-user",
		sc: gate(scenario{Files: map[string]string{
			projectDef("dup"): agentDefMarked("dup", suite.Marker("dup-project"), "tools: [read_file]\nmodel: "+sessionModel),
			userDef("dup"):    agentDefMarked("dup", suite.Marker("dup-user"), "tools: [read_file, write_file]\nmodel: "+sessionModel),
		}, Main: []turn{spawn("main_spawn", "dup")}}),
		check: all(gateAllowed("dup"), starts("main_spawn", "dup-project"), neverRan("dup-user")),
	}, {
		// Its opposite: the project's dup is the writer, refused, though
		// the user's is a reader.
		name: "project-writer-refused-over-user-reader",
		sc: gate(scenario{Files: map[string]string{
			projectDef("dup"): agentDefMarked("dup", suite.Marker("dup-project"), "tools: [read_file, write_file]\nmodel: "+sessionModel),
			userDef("dup"):    agentDefMarked("dup", suite.Marker("dup-user"), "tools: [read_file]\nmodel: "+sessionModel),
		}, Main: []turn{spawn("main_spawn", "dup")}}),
		check: all(refusedBy("main_spawn", "dup-project", "gate"), neverRan("dup-user"), func(t *testing.T, o *outcome) error {
			return reasonHas("main_spawn", "spawngate refused this sub-agent: dup ("+o.Root+"/.gemini/agents/dup.md)\n")(t, o)
		}, reasonHas("main_spawn", `- tools.write /tools/1 (line 4): tool "write_file" writes`)),
	}, {
		// A definition's MCP server is part of what it holds: refused, its
		// command never runs.
		name: "mcp-server-refused",
		sc:   gate(scenario{Files: gateDefs("mcp"), Main: []turn{spawn("main_spawn", "mcp")}}),
		check: all(refusedBy("main_spawn", "mcp", "gate"), mcpRan(false),
			reasonHas("main_spawn", `- tools.allowlist /tools/1 (line 6): tool "mcp__probe" is not allowed by the operator policy`)),
	}, {
		// Its opposite: a policy that allows the server lets the child
		// start, and its server with it.
		name:  "mcp-server-allowed-starts",
		sc:    gate(scenario{Policy: mcpPolicy, Files: gateDefs("mcp"), Main: []turn{spawn("main_spawn", "mcp")}}),
		check: all(gateAllowed("mcp"), starts("main_spawn", "mcp"), mcpRan(true)),
	}}
}

// gateAllowed: spawngate ran for the spawn of agent and let it pass
// (exit 0, nothing on stdout).
func gateAllowed(agent string) check {
	return func(t *testing.T, o *outcome) error {
		for _, h := range o.hooks("gate", "invoke_agent") {
			if toolInput(h.Payload)["agent_name"] == agent {
				if h.Exit != "0" || strings.TrimSpace(h.Stdout) != "" {
					return fmt.Errorf("spawngate answered %s with exit %s, stdout %q, stderr %q", agent, h.Exit, h.Stdout, h.Stderr)
				}
				return nil
			}
		}
		return fmt.Errorf("spawngate never ran for %s", agent)
	}
}

// builtinStarted: a built-in child (no marker of ours) ran.
func builtinStarted(t *testing.T, o *outcome) error {
	if len(o.BuiltinRequests()) == 0 {
		return fmt.Errorf("no built-in child started")
	}
	return nil
}

// reasonHas: the tool result of callID is a block whose reason
// (spawngate's) holds want.
func reasonHas(callID, want string) check {
	return func(t *testing.T, o *outcome) error {
		r := o.Result(callID)
		if !strings.HasPrefix(r, blocked("")) || !strings.Contains(r, want) {
			return fmt.Errorf("%s's result is %q, want spawngate's reason naming %q", callID, r, want)
		}
		return nil
	}
}
