package codex

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spawngate/spawngate/internal/agent"
	"github.com/spawngate/spawngate/internal/document"
	"github.com/spawngate/spawngate/internal/host"
)

// Name is Codex's name in commands, URLs and plans.
const Name = "codex"

// Adapter is the Codex CLI.
type Adapter struct{}

var _ host.Adapter = Adapter{}

// Name implements host.Adapter.
func (Adapter) Name() string { return Name }

// SpawnTools are the tools under which a Codex PreToolUse payload can
// start a sub-agent: spawn_agent (multi_agent), and under multi_agent_v2
// the same tool in the collaboration namespace, which the payload names
// collaborationspawn_agent (the namespace and the name run together);
// Agent is a matcher alias that no payload names; resume_agent starts a
// closed agent again, under the current turn's sandbox.
func (Adapter) SpawnTools() []string {
	return []string{"spawn_agent", "collaborationspawn_agent", "collaboration.spawn_agent", "Agent", resumeTool}
}

// resumeTool is the tool that starts a closed agent again, as a payload
// names it (multi_agent's tools run their namespace and name together).
const resumeTool = "multi_agent_v1resume_agent"

// spawnTool tells whether a payload's tool starts a sub-agent: one of
// SpawnTools, or spawn_agent in any other namespace Codex may put it in
// (the payload runs the namespace and the name together, with or
// without a dot), so that no new namespace passes as "not a spawn".
func spawnTool(tool string) bool {
	return slices.Contains(Adapter{}.SpawnTools(), tool) || strings.HasSuffix(tool, "spawn_agent")
}

// DefinitionsFolder implements host.Adapter.
func (Adapter) DefinitionsFolder() string { return Folder }

// Spawn implements host.Adapter.
func (Adapter) Spawn(ctx context.Context, payload map[string]any, env host.Env) (*host.Spawn, error) {
	p := host.Read(payload)
	tool, err := p.Tool()
	if err != nil {
		return nil, err
	}
	if strings.HasSuffix(tool, "resume_agent") {
		return resumeSpawn(ctx, p, env)
	}
	if !spawnTool(tool) {
		return nil, nil
	}
	input, err := p.Input()
	if err != nil {
		return nil, err
	}
	sp := &host.Spawn{Session: p.String("session_id")}
	c := call{Call: agent.Call{Host: Name, ID: p.String("tool_use_id"), Caller: p.String("agent_id"), Budget: env.Budget}}
	c.SessionMode = p.String("permission_mode")
	callerType := p.String("agent_type")
	cwd := p.Cwd()
	c.Paths = []string{cwd}
	c.Model = p.InputString(input, "model")
	c.Type = strings.TrimSpace(p.InputString(input, "agent_type")) // Codex trims it
	unreadable := codexUnreadable(input)
	if unreadable == "" {
		c.Brief = p.InputString(input, "message")
	}
	if unreadable == "" && c.Brief == "" {
		c.Brief, unreadable = itemsText(input["items"])
	}
	if unreadable == "" {
		unreadable = forked(tool, input)
	}
	transcript, turn, sessionModel := p.String("transcript_path"), p.String("turn_id"), p.String("model")
	if err := p.Err(); err != nil {
		return nil, err
	}
	if env.Transcript != "" {
		transcript, turn = env.Transcript, ""
	}
	se, err := readSession(ctx, env, transcript, turn, cwd, sessionModel)
	if err != nil {
		return nil, err
	}
	if args, ok := parentArgs(env); ok && env.AgentsDirs == nil {
		if why := overrides(args); why != "" {
			return nil, &document.Error{Source: "Codex's command line", Msg: why + ": what the child runs with cannot be known; start Codex without it"}
		}
	}
	dirs := env.AgentsDirs
	var roles *declared
	if dirs == nil {
		// The layers Codex loads: a trusted project's definitions, roles
		// and MCP servers, the user's; an untrusted project's none.
		l, err := readLayers(env, cwd)
		if err != nil {
			return nil, err
		}
		dirs, se.servers, roles = l.agents, l.servers, declaredIn(ctx, env, l.roles)
	}
	c.Session = &se
	if c.Type == "" {
		c.Type = DefaultType
	}
	catalog, err := load(ctx, env, dirs)
	if err != nil {
		return nil, err
	}
	def, problem := resolve(catalog, roles, c.Type)
	t := translate(c, def, problem)
	if unreadable != "" {
		t.Child["brief_unreadable"] = unreadable
	}
	sp.Children = []agent.Translation{t}
	sp.Brief = c.Brief
	sp.Folders, sp.ByHand = sessionFolders(env, se, cwd), env.Transcript != ""
	if c.Caller != "" {
		var problem string
		sp.Parent, problem = callerParent(c, callerType, catalog, roles)
		if problem != "" {
			host.RefuseCaller(t, problem)
		}
	}
	return sp, nil
}

// callerParent is the plan's parent block for a spawn whose caller is
// itself a sub-agent: its own definition translated like a child's, at
// depth 1. It says why, when that definition cannot be found (or the
// payload does not say the caller's type); the block then bounds nothing
// but the depth and the paths.
func callerParent(c call, typ string, catalog *agent.Catalog, roles *declared) (map[string]any, string) {
	caller := host.Caller{ID: c.Caller, IDField: "agent_id", TypeField: "agent_type", Type: typ, Paths: c.Paths}
	return caller.Parent(func() (map[string]any, string) {
		def, problem := resolve(catalog, roles, typ)
		if def == nil {
			return nil, problem
		}
		return translate(call{Call: agent.Call{Host: Name, Type: typ, Paths: c.Paths}, SessionMode: c.SessionMode, Session: c.Session}, def, "").Child, ""
	}, func(facts map[string]any) bool {
		// The session's sandbox (the caller runs in it too), or without a
		// session the definition's: tree.tools knows that a sandbox holds
		// every narrower one. A caller known by neither bounds nothing.
		return facts["sandbox_mode"] != nil
	})
}

// Audit implements host.Adapter: each definition in the folder judged as
// a spawn of its own name would be, working in env.Cwd.
func (Adapter) Audit(ctx context.Context, folder string, env host.Env) ([]host.Audited, error) {
	catalog, err := load(ctx, env, []string{folder})
	if err != nil {
		return nil, err
	}
	return host.AuditCatalog(catalog, fileType, func(name string) (*agent.Definition, string) {
		return resolve(catalog, nil, name)
	}, func(typ string, def *agent.Definition, problem string) agent.Translation {
		return translate(call{Call: agent.Call{Host: Name, Type: typ, Paths: []string{env.Cwd}, Budget: env.Budget}}, def, problem)
	}), nil
}

// fileType is the type a definition without a readable name is reported
// under: its file's name.
func fileType(file string) string {
	base := file[strings.LastIndexByte(file, '/')+1:]
	return strings.TrimSuffix(base, ".toml")
}

// codexUnreadable says why a Codex spawn's brief cannot be read when any
// part of its arguments is ciphertext (encrypted_content, which Codex
// uses for content only the model can read); "" otherwise. The readable
// rest is not taken for the brief: the part that cannot be read may be
// the one that matters.
func codexUnreadable(input map[string]any) string {
	if carries(input, "encrypted_content") {
		return "the Codex message is encrypted"
	}
	return ""
}

// carries tells whether v holds key at any depth (bounded by the limits
// the payload was read under).
func carries(v any, key string) bool {
	switch v := v.(type) {
	case map[string]any:
		if _, ok := v[key]; ok {
			return true
		}
		for _, e := range v {
			if carries(e, key) {
				return true
			}
		}
	case []any:
		for _, e := range v {
			if carries(e, key) {
				return true
			}
		}
	}
	return false
}

// itemsText is the text of a Codex v1 items list, the parts joined, or,
// when the list holds items and none of them plain text (images, or what
// the gate cannot read), why the brief cannot be read.
func itemsText(items any) (string, string) {
	if items == nil {
		return "", ""
	}
	list, ok := items.([]any)
	if !ok {
		return "", "the Codex message's items are not a list"
	}
	var parts []string
	for _, it := range list {
		obj, _ := it.(map[string]any)
		if text, ok := obj["text"].(string); ok && text != "" {
			parts = append(parts, text)
		}
	}
	if len(parts) == 0 && len(list) > 0 {
		return "", "the Codex message's items carry no plain text"
	}
	return strings.Join(parts, "\n\n"), ""
}

// Events implements host.Adapter: Codex's hook judges PreToolUse only.
func (Adapter) Events() []string { return []string{"PreToolUse"} }

// Deny implements host.Adapter: Codex reads PreToolUse's deny on exit 0.
func (Adapter) Deny(_, reason string) []byte { return host.DenyPreToolUse(reason) }

// forked says why a spawn's brief is more than its message when the child
// is handed the parent's conversation: fork_context (multi_agent) or
// fork_turns (multi_agent_v2, where a call without it forks every turn).
// The brief checks cannot read that history; "" when nothing is forked.
func forked(tool string, input map[string]any) string {
	const why = "the child is handed the parent's conversation (%s), which the brief checks cannot read"
	if v, ok := input["fork_context"]; ok && v != false {
		return fmt.Sprintf(why, "fork_context")
	}
	v, ok := input["fork_turns"]
	if s, isStr := v.(string); isStr {
		v = strings.ToLower(strings.TrimSpace(s)) // as Codex reads it
	}
	switch {
	case ok && v != nil && v != "none" && fmt.Sprint(v) != "0":
		return fmt.Sprintf(why, "fork_turns")
	case (!ok || v == nil) && tool != "spawn_agent":
		// Absent or null: every turn, under multi_agent_v2 (a payload's
		// v2 tool is spawn_agent in a namespace).
		return fmt.Sprintf(why, "fork_turns, every turn when the call does not say")
	}
	return ""
}

// resumeSpawn refuses resume_agent: it starts a closed agent again under
// the current turn's sandbox and approval, which may be wider than when
// it was judged, and the payload names only the agent's id, not the
// definition it was spawned from.
func resumeSpawn(_ context.Context, p *host.Payload, env host.Env) (*host.Spawn, error) {
	input, err := p.Input()
	if err != nil {
		return nil, err
	}
	c := call{Call: agent.Call{Host: Name, Type: "resume", ID: p.String("tool_use_id"), Caller: p.String("agent_id"), Budget: env.Budget, Paths: []string{p.Cwd()}}}
	id := p.InputString(input, "id")
	if err := p.Err(); err != nil {
		return nil, err
	}
	t := translate(c, nil, fmt.Sprintf("resume_agent starts the closed agent %q again under this turn's sandbox, and the payload does not say which definition it was spawned from, so what it gets cannot be judged: spawn a new agent instead", id))
	return &host.Spawn{Event: "PreToolUse", Session: p.String("session_id"), Children: []agent.Translation{t}}, nil
}

// sessionFolders are the folders a Codex session writes as a matter of
// course: its working folder, the roots its sandbox lets it write, and
// CODEX_HOME, its own configuration.
func sessionFolders(env host.Env, se session, cwd string) []string {
	dirs := []string{cwd}
	for _, r := range se.roots {
		if filepath.IsAbs(r) {
			dirs = append(dirs, r)
		}
	}
	if env.Getenv != nil {
		if h := env.Getenv("CODEX_HOME"); filepath.IsAbs(h) {
			dirs = append(dirs, h)
		}
	}
	return dirs
}

var _ host.Help = Adapter{}

// Title implements host.Help.
func (Adapter) Title() string { return "Codex" }

// Refusal implements host.Help.
func (Adapter) Refusal() string {
	return `{"hookSpecificOutput": {... "permissionDecision": "deny", ...}}`
}

// Example implements host.Help.
func (Adapter) Example() string {
	return "--policy examples/codex/policy.yaml --agents-dir examples/codex/.codex/agents --transcript examples/codex/sessions/workspace-write.jsonl < examples/codex/payloads/writer-v2.json"
}

// Page implements host.Help.
func (Adapter) Page() string { return "docs/codex.md" }
