package codex

import (
	"slices"
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
	// Session is what the child gets from the session that spawns it,
	// when known (a hook); without it (spawngate agents) the definition's
	// own settings are judged.
	Session *session
}

// translate turns a spawn and the definition it resolves to (nil, with
// problem saying why, when none applies) into a plan child.
func translate(c call, def *agent.Definition, problem string) agent.Translation {
	t, facts := agent.Start(c.Call, def, problem)
	// The model, in Codex's order: the definition's, else the call's, else
	// the session's.
	model, line := "", 0
	if def != nil {
		model, _ = def.Fields["model"].(string)
		line = def.Lines["model"]
	}
	if model == "" {
		model = c.Model
	}
	if model == "" && c.Session != nil {
		model = c.Session.model
	}
	if def == nil {
		facts["permission_mode"] = sessionMode(c)
	} else {
		child(c, def, t.Child, facts, t.Lines)
	}
	t.Model(model, line)
	return t
}

// sessionMode is the permission mode a child runs in. With the session
// known, the child bypasses only when the session runs without a sandbox
// and without approval: approval never (which codex exec always sets, and
// which Codex reports as bypassPermissions) in a sandbox only makes what
// the sandbox forbids fail instead of asking. Without it, the payload's
// permission_mode is taken as it stands.
func sessionMode(c call) string {
	if c.Session != nil {
		if c.Session.bypasses() {
			return "bypassPermissions"
		}
		return "default"
	}
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
	if c.Session != nil {
		// The session's sandbox, whatever the definition says: Codex
		// applies the definition, then the session's settings over it.
		se := c.Session
		facts["sandbox_mode"] = se.sandbox
		tools = append(tools, "sandbox:"+se.sandbox)
		if se.network && se.sandbox != "danger-full-access" {
			tools = append(tools, "sandbox:network")
		}
		paths, _ := child["paths"].([]any)
		for _, r := range se.roots {
			if se.sandbox != "workspace-write" {
				// Read-only writes nowhere; full access everywhere, which
				// its own tool says.
				break
			}
			if r == "/tmp" || r == "$TMPDIR" {
				// The host's scratch folders, writable in workspace-write
				// by default: not the workspace the policy bounds.
				continue
			}
			if !slices.Contains(paths, any(r)) {
				paths = append(paths, r)
			}
		}
		child["paths"] = paths
		for _, name := range se.servers {
			tools = append(tools, "mcp__"+name)
		}
	}
	mode, set := def.Fields["sandbox_mode"]
	if c.Session != nil {
		// judged above
	} else if !set {
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
	if c.Session == nil {
		// With the session's sandbox, no line of the definition gave it.
		lines["/tools"] = def.Lines["sandbox_mode"]
	}
	child["tools"] = tools
}
