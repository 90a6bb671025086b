package codex

import (
	"sort"
	"strconv"

	"github.com/spawngate/spawngate/internal/agent"
)

// call is what a Codex spawn says beside what every host says.
type call struct {
	agent.Call
	// Model is the model the call names, or "".
	Model string
	// SessionMode is the permission mode of the session that spawns, as
	// Codex reports its approval policy.
	SessionMode string
}

// translate turns a spawn and the definition it resolves to (nil, with
// problem saying why, when none applies) into a plan child.
func translate(c call, def *agent.Definition, problem string) agent.Translation {
	t, facts := agent.Start(c.Call, def, problem)
	model, line := c.Model, 0
	if def == nil {
		facts["permission_mode"] = sessionMode(c)
	} else {
		child(c, def, t.Child, facts, t.Lines)
		if model == "" {
			model, _ = def.Fields["model"].(string)
			line = def.Lines["model"]
		}
	}
	t.Model(model, line)
	return t
}

// sessionMode is the permission mode a child runs in: a session that
// bypasses approvals passes that on; otherwise the child asks as the
// session does.
func sessionMode(c call) string {
	if c.SessionMode == "bypassPermissions" {
		return c.SessionMode
	}
	return "default"
}

// child reads a Codex definition's powers as tools the policy judges:
// its sandbox as sandbox:<mode>, each MCP server as mcp__<server>.
func child(c call, def *agent.Definition, child, facts map[string]any, lines map[string]int) {
	facts["permission_mode"] = sessionMode(c)
	tools := []any{}
	mode, set := def.Fields["sandbox_mode"]
	if !set {
		facts["sandbox_mode"] = nil
	} else {
		facts["sandbox_mode"] = mode
		lines["/agent/sandbox_mode"] = def.Lines["sandbox_mode"]
		if s, ok := mode.(string); ok {
			switch s {
			case "read-only", "workspace-write", "danger-full-access":
				lines["/tools/0"] = def.Lines["sandbox_mode"]
				tools = append(tools, "sandbox:"+s)
			}
		}
	}
	if servers, ok := def.Fields["mcp_servers"].(map[string]any); ok {
		names := make([]string, 0, len(servers))
		for name := range servers {
			names = append(names, name)
		}
		sort.Strings(names)
		for _, name := range names {
			lines["/tools/"+strconv.Itoa(len(tools))] = def.Lines["mcp_servers/"+name]
			tools = append(tools, "mcp__"+name)
		}
	} else if v, present := def.Fields["mcp_servers"]; present {
		lines["/tools/"+strconv.Itoa(len(tools))] = def.Lines["mcp_servers"]
		tools = append(tools, v) // not a table: the checks refuse what is not a tool name
	}
	lines["/tools"] = def.Lines["sandbox_mode"]
	child["tools"] = tools
}
