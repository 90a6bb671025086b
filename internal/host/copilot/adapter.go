// Package copilot is GitHub Copilot CLI as a host: its preToolUse hook
// payloads (camelCase, and the PascalCase PreToolUse it also sends), the
// task tool that starts sub-agents, the agent definitions it loads and in
// which order, what a child really gets from them, the deny answer it
// reads, and its doctor.
//
// What the adapter relies on was observed on Copilot CLI 1.0.102, run
// headless against a scripted model (internal/e2e/copilot keeps each fact
// as a test); docs/copilot.md says what the gate can and cannot promise
// there.
package copilot

import (
	"context"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spawngate/spawngate/internal/agent"
	"github.com/spawngate/spawngate/internal/host"
)

// Name is Copilot CLI's name in commands, URLs and plans.
const Name = "copilot"

// Adapter is GitHub Copilot CLI.
type Adapter struct{}

var _ host.Adapter = Adapter{}

// Name implements host.Adapter.
func (Adapter) Name() string { return Name }

// Tools under which a payload starts sub-agents: task (named Agent in the
// PascalCase payload), and run_dynamic_workflow, whose workflow starts
// agents from an extension's code with no task call.
const (
	taskTool     = "task"
	agentTool    = "Agent"
	workflowTool = "run_dynamic_workflow"
)

// SpawnTools implements host.Adapter.
func (Adapter) SpawnTools() []string { return []string{taskTool, agentTool, workflowTool} }

// DefinitionsFolder implements host.Adapter: the repository's own folder,
// the one Copilot ranks first among a project's.
func (Adapter) DefinitionsFolder() string { return githubFolder }

// The hook events: camelCase preToolUse (Copilot's own), and the
// PascalCase PreToolUse it sends in Claude Code's shape.
const (
	preToolUse       = "preToolUse"
	pascalPreToolUse = "PreToolUse"
)

// Events implements host.Adapter.
func (Adapter) Events() []string { return []string{preToolUse, pascalPreToolUse} }

// Deny implements host.Adapter: the flat permissionDecision, the one
// answer Copilot reads as a refusal on both events (on camelCase
// preToolUse it ignores hookSpecificOutput, which lets the call through).
func (Adapter) Deny(event, reason string) []byte {
	return host.Document(map[string]any{"permissionDecision": "deny", "permissionDecisionReason": reason})
}

// fields are a payload's field names: camelCase, or PascalCase's
// snake_case.
type fields struct {
	tool, input, session, caller, callerType string
}

var (
	camel  = fields{"toolName", "toolArgs", "sessionId", "agentId", "agentType"}
	pascal = fields{"tool_name", "tool_input", "session_id", "agent_id", "agent_type"}
)

// Spawn implements host.Adapter.
func (Adapter) Spawn(ctx context.Context, payload map[string]any, env host.Env) (*host.Spawn, error) {
	p := host.Read(payload)
	f, event := camel, preToolUse
	if ev, _ := payload["hook_event_name"].(string); ev == pascalPreToolUse {
		f, event = pascal, pascalPreToolUse
	} else if _, ok := payload["toolName"]; !ok {
		if _, snake := payload["tool_name"]; snake {
			// Snake-case fields without the event's name: no shape Copilot
			// sends; read as the PascalCase one, whose fields they are.
			f, event = pascal, pascalPreToolUse
		}
	}
	tool, err := p.ToolAt(f.tool)
	if err != nil {
		return nil, err
	}
	if !slices.Contains(Adapter{}.SpawnTools(), tool) {
		return nil, nil
	}
	input, err := p.InputAt(f.input)
	if err != nil {
		return nil, err
	}
	at := "/" + f.input
	c := call{Call: agent.Call{Host: Name, Caller: p.String(f.caller), Budget: env.Budget}}
	callerType := p.String(f.callerType)
	cwd := p.Cwd()
	if tool != workflowTool {
		c.Type = p.StringIn(input, at, "agent_type")
		c.Model = p.StringIn(input, at, "model")
		c.Brief = p.StringIn(input, at, "prompt")
		c.Mode = p.StringIn(input, at, "mode")
	}
	if err := p.Err(); err != nil {
		return nil, err
	}
	sp := &host.Spawn{Event: event, Session: p.String(f.session), Brief: c.Brief}
	c.Paths = []string{cwd}
	root := agent.RepoRoot(cwd)
	sp.Folders = []string{root}
	if root != cwd {
		sp.Folders = append(sp.Folders, cwd)
	}
	sp.ByHand = env.AgentsDirs != nil
	if tool == workflowTool {
		sp.Children = []agent.Translation{workflow(c, p.StringIn(input, at, "name"))}
		return sp, p.Err()
	}
	if c.Type == "" {
		return nil, host.Bad(at+"/agent_type", "agent_type is missing: Copilot refuses a task call without one")
	}
	catalog, err := load(ctx, env, sources(env, cwd))
	if err != nil {
		return nil, err
	}
	def, problem := resolve(catalog, c.Type)
	t := translate(c, def, problem)
	sp.Children = []agent.Translation{t}
	if c.Caller != "" {
		var problem string
		sp.Parent, problem = callerParent(c, callerType, catalog, f)
		if problem != "" {
			host.RefuseCaller(t, problem)
		}
	}
	return sp, nil
}

// callerParent is the parent block of a spawn a sub-agent makes: its own
// definition translated like a child's. Copilot narrows a nested child to
// its caller's tools, so the caller's tools bound it whenever its
// definition lists them.
func callerParent(c call, typ string, catalog *agent.Catalog, f fields) (map[string]any, string) {
	caller := host.Caller{ID: c.Caller, IDField: f.caller, TypeField: f.callerType, Type: typ, Paths: c.Paths}
	return caller.Parent(func() (map[string]any, string) {
		def, problem := resolve(catalog, typ)
		if def == nil {
			return nil, problem
		}
		return translate(call{Call: agent.Call{Host: Name, Type: typ, Paths: c.Paths}}, def, "").Child, ""
	}, func(facts map[string]any) bool { return facts["inherits_tools"] != true })
}

// workflow is the child that stands for a dynamic workflow: the agents it
// starts reach no hook, so none can be judged, and agent.definition
// refuses it.
func workflow(c call, name string) agent.Translation {
	c.Type = "workflow"
	if name != "" {
		c.Type = "workflow:" + name
	}
	t, _ := agent.Start(c.Call, nil, "a dynamic workflow starts its agents from an extension's code, with no task call: none of them reaches the hook, so what they hold cannot be judged")
	t.Child["tools"] = []any{workflowTool}
	return t
}

// Audit implements host.Adapter: each definition in the folder judged as
// a task call naming it would be, working in env.Cwd.
func (Adapter) Audit(ctx context.Context, folder string, env host.Env) ([]host.Audited, error) {
	catalog, err := load(ctx, env, []string{folder})
	if err != nil {
		return nil, err
	}
	return host.AuditCatalog(catalog, stem, func(name string) (*agent.Definition, string) {
		return resolve(catalog, name)
	}, func(typ string, def *agent.Definition, problem string) agent.Translation {
		return translate(call{Call: agent.Call{Host: Name, Type: typ, Paths: []string{env.Cwd}, Budget: env.Budget}}, def, problem)
	}), nil
}

// stem is the name Copilot gives a definition without a name: its file
// name without .agent.md or .md.
func stem(file string) string {
	base := filepath.Base(file)
	if s, ok := strings.CutSuffix(base, ".agent.md"); ok {
		return s
	}
	return strings.TrimSuffix(base, ".md")
}

var _ host.Help = Adapter{}

// Title implements host.Help.
func (Adapter) Title() string { return "Copilot CLI" }

// Refusal implements host.Help.
func (Adapter) Refusal() string {
	return `{"permissionDecision": "deny", "permissionDecisionReason": ...}`
}

// Example implements host.Help.
func (Adapter) Example() string {
	return "--policy examples/copilot/policy.yaml --agents-dir examples/copilot/.github/agents < examples/copilot/payloads/writer.json"
}

// Page implements host.Help.
func (Adapter) Page() string { return "docs/copilot.md" }

// DoctorHelp implements doctor.Doctor.
func (Adapter) DoctorHelp() string {
	return `/etc/github-copilot/policy.d/*.json (files root owns and
alone can write), /etc/github-copilot/managed-settings.json, $COPILOT_HOME
(else ~/.copilot) settings.json and hooks/**/*.json, and the
.github/hooks/**, .github/copilot/settings*.json and .claude/settings*.json
of the folder sessions start in. It reports: no such hook; a hook outside
policy.d, which a repository's disableAllHooks turns off; a policy file
Copilot skips (a link, not root's, writable by others, not in its format);
no allowManagedHooksOnly; a matcher that misses task; "env" on the hook,
or BASH_ENV in the environment; a hook on another event. It cannot see
--agent NAME, dynamic workflows, --trust-folder or server-managed
settings.`
}
