// Package gemini is Gemini CLI as a host: its BeforeTool hook payload,
// the invoke_agent tool that starts sub-agents, the agent definitions it
// loads and in which order (built-ins first, then the project's
// acknowledged ones, the user's, the extensions'), the settings that
// change a child without touching its definition (agents.overrides), what
// a child really gets, the deny answer it reads, and its doctor.
//
// What the adapter relies on was observed on Gemini CLI 0.61.0, run
// headless against a scripted model (internal/e2e/gemini keeps each fact
// as a test); docs/gemini.md says what the gate can and cannot promise
// there.
package gemini

import (
	"context"
	"path/filepath"

	"github.com/spawngate/spawngate/internal/agent"
	"github.com/spawngate/spawngate/internal/host"
)

// Name is Gemini CLI's name in commands, URLs and plans.
const Name = "gemini"

// Adapter is Gemini CLI.
type Adapter struct{}

var _ host.Adapter = Adapter{}

// Name implements host.Adapter.
func (Adapter) Name() string { return Name }

// spawnTool is the one tool that starts a sub-agent; sub-agents never get
// it (observed), so every spawn is the main session's.
const spawnTool = "invoke_agent"

// SpawnTools implements host.Adapter.
func (Adapter) SpawnTools() []string { return []string{spawnTool} }

// DefinitionsFolder implements host.Adapter.
func (Adapter) DefinitionsFolder() string { return projectFolder }

// event is the hook event a spawn reaches.
const event = "BeforeTool"

// Events implements host.Adapter.
func (Adapter) Events() []string { return []string{event} }

// Deny implements host.Adapter: the decision Gemini CLI reads as a refusal
// whatever the exit code (the Copilot and Claude Code shapes it ignores).
func (Adapter) Deny(_, reason string) []byte {
	return host.Document(map[string]any{"decision": "deny", "reason": reason})
}

// Spawn implements host.Adapter.
func (Adapter) Spawn(ctx context.Context, payload map[string]any, env host.Env) (*host.Spawn, error) {
	p := host.Read(payload)
	tool, err := p.Tool()
	if err != nil {
		return nil, err
	}
	if tool != spawnTool {
		return nil, nil
	}
	input, err := p.Input()
	if err != nil {
		return nil, err
	}
	c := agent.Call{Host: Name, Budget: env.Budget}
	c.Type = p.InputString(input, "agent_name")
	c.Brief = p.InputString(input, "prompt")
	cwd := p.Cwd()
	if err := p.Err(); err != nil {
		return nil, err
	}
	if c.Type == "" {
		return nil, host.Bad("/tool_input/agent_name", "agent_name is missing: Gemini CLI refuses an invoke_agent call without one")
	}
	project := projectRoot(env, cwd)
	c.Paths = []string{project}
	if cwd != project {
		c.Paths = append(c.Paths, cwd)
	}
	sp := &host.Spawn{Event: event, Session: p.String("session_id"), Brief: c.Brief, Folders: []string{project}, ByHand: env.AgentsDirs != nil}
	s, err := readSettings(ctx, env, project)
	if err != nil {
		return nil, err
	}
	catalog, err := load(ctx, env, project)
	if err != nil {
		return nil, err
	}
	def, problem := resolve(catalog, c.Type)
	sp.Children = []agent.Translation{translate(c, def, problem, s.override(c.Type))}
	return sp, nil
}

// projectRoot is the folder Gemini CLI takes as the project: the one its
// hook environment names, else the payload's cwd.
func projectRoot(env host.Env, cwd string) string {
	if env.Getenv != nil {
		if d := env.Getenv("GEMINI_PROJECT_DIR"); d != "" && filepath.IsAbs(d) {
			return filepath.Clean(d)
		}
	}
	return cwd
}

// Audit implements host.Adapter: each definition in the folder judged as
// an invoke_agent call of its name would be, working in env.Cwd, with the
// settings of that folder's project.
func (Adapter) Audit(ctx context.Context, folder string, env host.Env) ([]host.Audited, error) {
	catalog, err := loadFolders(ctx, env, []level{{dir: folder}})
	if err != nil {
		return nil, err
	}
	s, err := readSettings(ctx, env, env.Cwd)
	if err != nil {
		return nil, err
	}
	return host.AuditCatalog(catalog, stem, func(name string) (*agent.Definition, string) {
		return resolve(catalog, name)
	}, func(typ string, def *agent.Definition, problem string) agent.Translation {
		return translate(agent.Call{Host: Name, Type: typ, Paths: []string{env.Cwd}, Budget: env.Budget}, def, problem, s.override(typ))
	}), nil
}

var _ host.Help = Adapter{}

// Title implements host.Help.
func (Adapter) Title() string { return "Gemini CLI" }

// Refusal implements host.Help.
func (Adapter) Refusal() string { return `{"decision": "deny", "reason": ...}` }

// Example implements host.Help.
func (Adapter) Example() string {
	return "--policy examples/gemini/policy.yaml --agents-dir examples/gemini/.gemini/agents < examples/gemini/payloads/writer.json"
}

// Page implements host.Help.
func (Adapter) Page() string { return "docs/gemini.md" }
