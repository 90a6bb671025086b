package claudecode

import (
	"context"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spawngate/spawngate/internal/agent"
	"github.com/spawngate/spawngate/internal/host"
)

// Name is Claude Code's name in commands, URLs and plans.
const Name = "claude-code"

// Adapter is Claude Code.
type Adapter struct{}

var _ host.Adapter = Adapter{}

// Name implements host.Adapter.
func (Adapter) Name() string { return Name }

// SpawnTools are the tools under which a Claude Code PreToolUse payload
// can start a sub-agent: Agent (the payload says Agent even when the model
// calls it Task, its name before v2.1.63), Skill (a skill with context:
// fork runs in a sub-agent) and Workflow (a script that starts agents).
func (Adapter) SpawnTools() []string { return []string{"Agent", "Task", "Skill", "Workflow"} }

// DefinitionsFolder implements host.Adapter.
func (Adapter) DefinitionsFolder() string { return Folder }

// Spawn implements host.Adapter.
func (Adapter) Spawn(ctx context.Context, payload map[string]any, env host.Env) (*host.Spawn, error) {
	p := host.Read(payload)
	if ev, _ := payload["hook_event_name"].(string); ev == Expansion {
		return expansionSpawn(ctx, p, env)
	}
	tool, err := p.Tool()
	if err != nil {
		return nil, err
	}
	if !slices.Contains(Adapter{}.SpawnTools(), tool) {
		return nil, nil
	}
	input, err := p.Input()
	if err != nil {
		return nil, err
	}
	sp := &host.Spawn{Event: "PreToolUse", Session: p.String("session_id")}
	c := call{Call: agent.Call{Host: Name, ID: p.String("tool_use_id"), Caller: p.String("agent_id"), Budget: env.Budget}}
	c.SessionMode = p.String("permission_mode")
	callerType := p.String("agent_type")
	cwd := p.Cwd()
	var callCwd string
	if tool == "Agent" || tool == "Task" {
		// The call's own fields first, so that a payload that is wrong
		// says so before the session is looked at.
		c.Type = p.InputString(input, "subagent_type")
		c.Model = p.InputString(input, "model")
		c.Brief = p.InputString(input, "prompt")
		c.Mode = p.InputString(input, "mode")
		c.Isolation = p.InputString(input, "isolation")
		callCwd = p.InputString(input, "cwd")
	}
	if err := p.Err(); err != nil {
		return nil, err
	}
	s, err := sessionOf(p, env, cwd)
	if err != nil {
		return nil, err
	}
	c.Paths = sessionPaths(s, cwd)
	sp.Folders, sp.ByHand = s.folders(), !s.read
	if env.Getenv != nil {
		c.EnvModel = env.Getenv("CLAUDE_CODE_SUBAGENT_MODEL")
		c.EnvForce = truthy(env.Getenv("CLAUDE_CODE_SUBAGENT_MODEL_FORCE"))
	}
	catalog, err := load(ctx, env, s)
	if err != nil {
		return nil, err
	}
	switch tool {
	case "Agent", "Task":
		if callCwd != "" {
			// Claude Code drops a call's cwd today; judged all the same, so
			// that a client that honours it never runs a child elsewhere
			// unjudged.
			c.Paths = append(c.Paths, callCwd)
		}
		if c.Type == "" {
			c.Type = DefaultType
		}
		def, problem := resolve(catalog, c.Type)
		sp.Children = append([]agent.Translation{translate(c, def, problem)}, observers(env, catalog, c, def)...)
	case "Skill":
		children, err := skillSpawn(ctx, env, s, catalog, c, p, input)
		if err != nil || children == nil {
			return nil, err
		}
		sp.Children = children
	case "Workflow":
		t, err := workflowSpawn(ctx, env, s, c, p, input)
		if err != nil {
			return nil, err
		}
		sp.Children = []agent.Translation{t}
	}
	for _, t := range sp.Children {
		if b, ok := t.Child["brief"].(string); ok && sp.Brief == "" {
			sp.Brief = b
		}
	}
	refuseStale(catalog, s, sp.Children)
	if c.Caller != "" {
		var problem string
		sp.Parent, problem = callerParent(c, callerType, catalog)
		if problem != "" {
			for _, t := range sp.Children {
				host.RefuseCaller(t, problem)
			}
		}
	}
	return sp, nil
}

// sessionOf is the session a payload comes from: the one a program
// describes in it (ProgramField), else the one the hook's environment
// and Claude Code's command line tell.
func sessionOf(p *host.Payload, env host.Env, cwd string) (session, error) {
	if raw, given := p.Field(ProgramField); given {
		return programSession(raw, cwd)
	}
	return readSession(env, cwd, env.AgentsDirs != nil)
}

// callerParent is the plan's parent block for a spawn whose caller is
// itself a sub-agent: its own definition translated like a child's, at
// depth 1. It says why, when that definition cannot be found (or the
// payload does not say the caller's type); the block then bounds nothing
// but the depth and the paths.
func callerParent(c call, typ string, catalog *agent.Catalog) (map[string]any, string) {
	caller := host.Caller{ID: c.Caller, IDField: "agent_id", TypeField: "agent_type", Type: typ, Paths: c.Paths}
	return caller.Parent(func() (map[string]any, string) {
		def, problem := resolve(catalog, typ)
		if def == nil {
			return nil, problem
		}
		return translate(call{Call: agent.Call{Host: Name, Type: typ, Paths: c.Paths}, SessionMode: c.SessionMode}, def, "").Child, ""
	}, func(facts map[string]any) bool {
		// As the definition gives them. A caller without tools holds
		// whatever its own parent gave it, which the hook cannot see; the
		// operator policy still bounds the child.
		return facts["inherits_tools"] != true
	})
}

// Audit implements host.Adapter: each definition in the folder judged as
// a spawn of its own name would be, working in env.Cwd.
func (Adapter) Audit(ctx context.Context, folder string, env host.Env) ([]host.Audited, error) {
	env.AgentsDirs = []string{folder}
	catalog, err := load(ctx, env, session{})
	if err != nil {
		return nil, err
	}
	return host.AuditCatalog(catalog, func(file string) string {
		return strings.TrimSuffix(filepath.Base(file), filepath.Ext(file))
	}, func(name string) (*agent.Definition, string) {
		return resolve(catalog, name)
	}, func(typ string, def *agent.Definition, problem string) agent.Translation {
		return translate(call{Call: agent.Call{Host: Name, Type: typ, Paths: []string{env.Cwd}, Budget: env.Budget}}, def, problem)
	}), nil
}

// Expansion is the hook event on which a prompt's /command is expanded: a
// skill with context: fork starts its sub-agent there, with no tool call.
const Expansion = "UserPromptExpansion"

// Events implements host.Adapter.
func (Adapter) Events() []string { return []string{"PreToolUse", Expansion} }

// Deny implements host.Adapter. PreToolUse is refused with its own
// permissionDecision; every other event, and a payload whose event is not
// known, with the top-level decision "block", which Claude Code reads as
// a refusal on every event (as a deny on PreToolUse). An answer naming
// another event than the hook's is an error the host does not block on,
// so the PreToolUse form is never sent for another event.
func (Adapter) Deny(event, reason string) []byte {
	if event == "PreToolUse" {
		return host.DenyPreToolUse(reason)
	}
	return host.DenyAnyEvent(reason)
}

// sessionPaths are the folders a child of the session may work in: the
// one the session started in and, when the shell has moved since, the
// shell's.
func sessionPaths(s session, cwd string) []string {
	paths := []string{s.project}
	if cwd != "" && cwd != s.project {
		paths = append(paths, cwd)
	}
	return paths
}

// folders are the folders the session writes as a matter of course:
// where it started, and those --add-dir gives it. (Its shell's current
// folder follows cd, to / as readily as anywhere: not one of them.)
func (s session) folders() []string {
	dirs := []string{s.project}
	for _, d := range s.addDirs {
		if !filepath.IsAbs(d) {
			d = filepath.Join(s.project, d)
		}
		dirs = append(dirs, d)
	}
	return dirs
}

// refuseStale refuses every child when a folder the session's definitions
// come from (or one of its subfolders, or the --agents file), or a
// child's own definition, changed after the session started: Claude Code
// runs the definition it loaded then, which the gate can no longer read.
// A definition removed since, or one added above the one that ran,
// changes its folder.
func refuseStale(catalog *agent.Catalog, s session, children []agent.Translation) {
	var paths []string
	for _, f := range catalog.Folders {
		paths = append(paths, f.Walked...)
		if f.Dir == agentsLevel {
			for _, d := range f.Defs {
				if d.File != agentsLevel && !slices.Contains(paths, d.File) {
					paths = append(paths, d.File)
				}
			}
		}
	}
	for _, t := range children {
		if t.File != "" {
			paths = append(paths, t.File)
		}
	}
	if why := changedSince(s.started, paths...); why != "" {
		for _, t := range children {
			host.RefuseCaller(t, why+": Claude Code keeps the agent definitions it loaded when the session started, so the one it would run cannot be read now; start a new session")
		}
	}
}

var _ host.Help = Adapter{}

// Title implements host.Help.
func (Adapter) Title() string { return "Claude Code" }

// Refusal implements host.Help.
func (Adapter) Refusal() string {
	return `{"hookSpecificOutput": {... "permissionDecision": "deny", ...}}; on UserPromptExpansion {"decision": "block", ...}`
}

// Example implements host.Help.
func (Adapter) Example() string {
	return "--policy examples/claude-code/policy.yaml --agents-dir examples/claude-code/.claude/agents < examples/claude-code/payloads/fixer.json"
}

// Page implements host.Help.
func (Adapter) Page() string { return "docs/claude-code.md" }
