package agent

import (
	"bytes"
	"encoding/json"
	"sort"
	"strconv"
	"strings"
)

// Call is what a host's spawn call says about the child it asks for.
type Call struct {
	Host Host
	// Type is the agent type asked for; "" asks for the host's default.
	Type string
	// Model is the model the call names, or "" for the definition's.
	Model string
	// EnvModel is a model the host's environment forces on every sub-agent
	// (Claude Code's CLAUDE_CODE_SUBAGENT_MODEL), or "".
	EnvModel string
	// Cwd is where the child works: the session's working directory.
	Cwd string
	// SessionMode is the permission mode of the session that spawns.
	SessionMode string
	Brief       string
	// ID is the host's id of the spawn call (tool_use_id), or "".
	ID string
	// Caller is the agent that spawns, when it is itself a sub-agent.
	Caller string
	// Budget is the budget a spawn is granted when its definition states
	// none.
	Budget json.Number
}

// Translation is a spawn turned into the plan child the gate judges.
type Translation struct {
	Child map[string]any
	// Lines maps a pointer into the child ("/tools/2") to the line of the
	// definition file it came from; a pointer not listed takes the line
	// of the closest pointer above it that is.
	Lines map[string]int
	// File is the definition file, or "" when none applies.
	File string
}

// Translate turns a spawn call and the definition it resolves to (nil,
// with problem saying why, when none applies) into a plan child. Nothing
// is decided here: what the gate cannot bound becomes a fact in the
// child's agent block, which the checks refuse.
func Translate(call Call, def *Definition, problem string) Translation {
	t := Translation{Lines: map[string]int{}}
	typ := call.Type
	if typ == "" {
		typ = DefaultType(call.Host)
	}
	facts := map[string]any{"host": string(call.Host), "type": typ, "definition": nil}
	child := map[string]any{
		"role":  typ,
		"paths": []any{call.Cwd},
		"agent": facts,
	}
	if call.Budget != "" {
		child["budget_tokens"] = call.Budget
	}
	if call.Brief != "" {
		child["brief"] = call.Brief
	}
	if call.ID != "" {
		child["id"] = call.ID
	}
	if call.Caller != "" {
		facts["caller"] = call.Caller
	}
	model := call.Model
	switch {
	case def == nil:
		if problem == "" {
			problem = "no definition applies"
		}
		facts["problem"] = problem
		facts["permission_mode"] = sessionMode(call, "default")
	case call.Host == Codex:
		t.File = def.File
		facts["definition"] = def.File
		child["role"] = def.Name
		codexChild(call, def, child, facts, t.Lines)
		if model == "" {
			model, _ = def.Fields["model"].(string)
			t.Lines["/model"] = def.Lines["model"]
		}
	default:
		t.File = def.File
		facts["definition"] = def.File
		child["role"] = def.Name
		claudeChild(call, def, child, facts, t.Lines)
		if model == "" {
			model, _ = def.Fields["model"].(string)
			t.Lines["/model"] = def.Lines["model"]
		}
	}
	if def != nil {
		if b, ok := def.Fields["budget_tokens"]; ok {
			child["budget_tokens"] = b
			t.Lines["/budget_tokens"] = def.Lines["budget_tokens"]
		}
	}
	if call.EnvModel != "" {
		model = call.EnvModel
		delete(t.Lines, "/model") // the environment's, not the definition's
	}
	if model != "" && model != "inherit" {
		child["model"] = model
	}
	t.Child = child
	return t
}

// sessionMode is the permission mode a child runs in: the session's, when
// the host lets it override the child's own (a session that bypasses or
// auto-approves permissions passes that on), else the child's.
func sessionMode(call Call, own string) string {
	switch call.SessionMode {
	case "bypassPermissions", "acceptEdits", "auto":
		if call.Host == ClaudeCode || call.SessionMode == "bypassPermissions" {
			return call.SessionMode
		}
	}
	if own == "manual" {
		return "default"
	}
	return own
}

// claudeChild reads a Claude Code definition's tools and permission mode:
// tools omitted means every tool of the parent; disallowedTools is applied
// first, then tools is resolved against what is left.
func claudeChild(call Call, def *Definition, child, facts map[string]any, lines map[string]int) {
	lines["/agent/permission_mode"] = def.Lines["permissionMode"]
	raw, set := def.Fields["permissionMode"]
	own, isString := raw.(string)
	switch {
	case set && !isString:
		// Kept as written, for the schema to refuse: a mode the gate cannot
		// read is not the default.
		facts["permission_mode"] = raw
		if mode := sessionMode(call, ""); mode != "" {
			facts["permission_mode"] = mode
		}
	default:
		if own == "" {
			own = "default"
		}
		facts["permission_mode"] = sessionMode(call, own)
	}
	rawTools, listed := def.Fields["tools"]
	if !listed || rawTools == nil {
		facts["inherits_tools"] = true
		lines["/tools"] = def.Lines["disallowedTools"]
		return
	}
	facts["inherits_tools"] = false
	entries, entryLines := toolList(rawTools, def.Lines, "tools")
	denied, _ := toolList(def.Fields["disallowedTools"], def.Lines, "disallowedTools")
	tools := []any{}
	lines["/tools"] = def.Lines["tools"]
	for i, e := range entries {
		if s, ok := e.(string); ok && removed(s, denied) {
			continue
		}
		lines["/tools/"+strconv.Itoa(len(tools))] = entryLines[i]
		tools = append(tools, e)
	}
	child["tools"] = tools
}

// toolList reads a tools setting written as a comma-separated string or a
// list, with each entry's line. An entry that is not a string is kept as
// it is, for the checks to refuse.
func toolList(raw any, defLines map[string]int, key string) ([]any, []int) {
	var entries []any
	var lines []int
	switch v := raw.(type) {
	case string:
		for _, part := range strings.Split(v, ",") {
			if part = strings.TrimSpace(part); part != "" {
				entries = append(entries, part)
				lines = append(lines, defLines[key])
			}
		}
	case []any:
		for i, e := range v {
			if s, ok := e.(string); ok {
				e = strings.TrimSpace(s)
			}
			entries = append(entries, e)
			line, ok := defLines[key+"/"+strconv.Itoa(i)]
			if !ok {
				line = defLines[key]
			}
			lines = append(lines, line)
		}
	case nil:
	default:
		entries = append(entries, v)
		lines = append(lines, defLines[key])
	}
	return entries, lines
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

// codexChild reads a Codex definition's powers as tools the policy judges:
// its sandbox as sandbox:<mode>, each MCP server as mcp__<server>.
func codexChild(call Call, def *Definition, child, facts map[string]any, lines map[string]int) {
	facts["permission_mode"] = sessionMode(call, "default")
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

// LineOf is the definition line a pointer into the child came from: its
// own, or the closest one above it; 0 when none is known.
func (t Translation) LineOf(pointer string) int {
	for p := pointer; ; {
		if line := t.Lines[p]; line > 0 {
			return line
		}
		i := strings.LastIndexByte(p, '/')
		if i < 0 {
			return 0
		}
		p = p[:i]
	}
}

// Plan is the plan document the gate judges for a translation: JSON, with
// keys in order, so that the same spawn always gives the same bytes.
func (t Translation) Plan() []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(map[string]any{"plan": []any{t.Child}}); err != nil {
		// Only JSON-shaped values are ever put in a child.
		panic("agent: a translated child is not JSON: " + err.Error())
	}
	return b.Bytes()
}
