package claudecode

import (
	"sort"
	"strconv"
	"strings"

	"github.com/spawngate/spawngate/internal/agent"
)

// call is what a Claude Code spawn says beside what every host says.
type call struct {
	agent.Call
	// Model is the model the call names, or "".
	Model string
	// EnvForce says CLAUDE_CODE_SUBAGENT_MODEL_FORCE is set: EnvModel
	// then wins over the call's and the definition's.
	EnvForce bool
	// EnvModel is the model CLAUDE_CODE_SUBAGENT_MODEL gives every
	// sub-agent, or "".
	EnvModel string
	// SessionMode is the permission mode of the session that spawns.
	SessionMode string
	// Mode is the call's own mode (tool_input.mode), or "".
	Mode string
	// Isolation is the call's isolation (worktree, remote), or "".
	Isolation string
	// Launch says how the child starts when not by the Agent tool: skill,
	// workflow.
	Launch string
}

// translate turns a spawn and the definition it resolves to (nil, with
// problem saying why, when none applies) into a plan child.
func translate(c call, def *agent.Definition, problem string) agent.Translation {
	t, facts := agent.Start(c.Call, def, problem)
	if c.Isolation != "" {
		facts["isolation"] = c.Isolation
	} else if def != nil {
		// A definition's own isolation, when the call sets none.
		if iso, ok := def.Fields["isolation"].(string); ok {
			facts["isolation"] = iso
			t.Lines["/agent/isolation"] = def.Lines["isolation"]
		}
	}
	if c.Launch != "" {
		facts["launch"] = c.Launch
	}
	// The model in Claude Code's order: the call's, else the definition's
	// (but inherit), else CLAUDE_CODE_SUBAGENT_MODEL, which wins over both
	// only with CLAUDE_CODE_SUBAGENT_MODEL_FORCE.
	model, line := c.Model, 0
	if def == nil {
		facts["permission_mode"] = sessionMode(c, "default")
	} else {
		child(c, def, t.Child, facts, t.Lines)
		if own, _ := def.Fields["model"].(string); model == "" && (own != "inherit" || c.EnvModel == "") {
			model, line = own, def.Lines["model"]
		}
	}
	if c.EnvModel != "" && (model == "" || c.EnvForce) {
		model, line = c.EnvModel, 0 // the environment's, not the definition's
	}
	t.Model(model, line)
	return t
}

// sessionMode is the permission mode a child runs in: the session's when
// it bypasses, auto-approves or accepts edits (Claude Code passes those
// on), the call's own when it asks to bypass, else the child's.
func sessionMode(c call, own string) string {
	switch c.SessionMode {
	case "bypassPermissions", "acceptEdits", "auto":
		return c.SessionMode
	}
	if c.Mode == "bypassPermissions" || c.Mode == "auto" {
		// Claude Code ignores a call's mode today; a mode that approves
		// everything is still refused, so that a client that honours it
		// again never runs one unjudged.
		return c.Mode
	}
	if own == "manual" {
		return "default"
	}
	return own
}

// child reads a Claude Code definition's powers: its tools (omitted, or
// "*", means every tool of the parent; disallowedTools is applied first,
// then tools is resolved against what is left), the tools its memory
// adds, its MCP servers (mcp__<server>, started for it whatever tools
// says), its own hooks (the tool "hooks": shell commands that run
// without Bash), and its permission mode.
func child(c call, def *agent.Definition, child, facts map[string]any, lines map[string]int) {
	lines["/agent/permission_mode"] = def.Lines["permissionMode"]
	raw, set := def.Fields["permissionMode"]
	own, isString := raw.(string)
	switch {
	case set && !isString:
		// Kept as written, for the schema to refuse: a mode the gate cannot
		// read is not the default.
		facts["permission_mode"] = raw
		if mode := sessionMode(c, ""); mode != "" {
			facts["permission_mode"] = mode
		}
	default:
		if own == "" {
			own = "default"
		}
		facts["permission_mode"] = sessionMode(c, own)
	}
	rawTools, listed := def.Fields["tools"]
	if all, _ := rawTools.(string); !listed || rawTools == nil || strings.TrimSpace(all) == "*" {
		facts["inherits_tools"] = true
		lines["/tools"] = def.Lines["disallowedTools"]
		return
	}
	facts["inherits_tools"] = false
	entries, entryLines := agent.ToolList(rawTools, def.Lines, "tools")
	denied, _ := agent.ToolList(def.Fields["disallowedTools"], def.Lines, "disallowedTools")
	tools := []any{}
	lines["/tools"] = def.Lines["tools"]
	add := func(tool any, line int) {
		for _, t := range tools {
			if t == tool {
				return
			}
		}
		lines["/tools/"+strconv.Itoa(len(tools))] = line
		tools = append(tools, tool)
	}
	for i, e := range entries {
		if s, ok := e.(string); ok && removed(s, denied) {
			continue
		}
		add(e, entryLines[i])
	}
	if m, ok := def.Fields["memory"]; ok && m != nil && m != false {
		// An agent with a memory writes it: Claude Code gives it Write and
		// Edit, whatever tools says.
		add("Write", def.Lines["memory"])
		add("Edit", def.Lines["memory"])
	}
	switch servers := def.Fields["mcpServers"].(type) {
	case map[string]any:
		names := make([]string, 0, len(servers))
		for name := range servers {
			names = append(names, name)
		}
		sort.Strings(names)
		for _, name := range names {
			add("mcp__"+name, def.Lines["mcpServers"])
		}
	case []any:
		for _, s := range servers {
			if name, ok := s.(string); ok {
				add("mcp__"+name, def.Lines["mcpServers"])
				continue
			}
			if obj, ok := s.(map[string]any); ok {
				names := make([]string, 0, len(obj))
				for name := range obj {
					names = append(names, name)
				}
				sort.Strings(names)
				for _, name := range names {
					add("mcp__"+name, def.Lines["mcpServers"])
				}
				continue
			}
			add(s, def.Lines["mcpServers"]) // not a server: the checks refuse it
		}
	case nil:
	default:
		add(servers, def.Lines["mcpServers"])
	}
	if h, ok := def.Fields["hooks"]; ok && h != nil {
		add("hooks", def.Lines["hooks"])
	}
	child["tools"] = tools
}

// removed tells whether disallowedTools removes a tool: by its name (Bash
// removes Bash and Bash(...)), an MCP server (mcp__github removes
// mcp__github__*), or every MCP tool (mcp__*).
func removed(tool string, denied []any) bool {
	base := tool
	if i := strings.IndexByte(tool, '('); i > 0 {
		base = tool[:i]
	}
	for _, d := range denied {
		s, ok := d.(string)
		if !ok {
			continue
		}
		switch {
		case s == tool || s == base:
			return true
		case s == "mcp__*" && strings.HasPrefix(tool, "mcp__"):
			return true
		case strings.HasPrefix(s, "mcp__") && strings.HasSuffix(s, "__*") && strings.HasPrefix(tool, strings.TrimSuffix(s, "*")):
			return true
		case strings.HasPrefix(s, "mcp__") && strings.HasPrefix(tool, s+"__"):
			return true
		}
	}
	return false
}
