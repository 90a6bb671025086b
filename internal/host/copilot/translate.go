package copilot

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/spawngate/spawngate/internal/agent"
)

// call is what a Copilot task call says beside what every host says.
type call struct {
	agent.Call
	// Model is the call's own model (toolArgs.model), which Copilot runs
	// the child on whatever its definition names; "" for none.
	Model string
	// Mode is sync or background.
	Mode string
}

// aliases are the names Copilot's tools: setting accepts, each with the
// tools a child is really offered for it (observed on 1.0.102, by the
// tools of the child's first model request). Names are matched without
// regard to case.
var aliases = map[string][]string{
	"read":         {"view"},
	"view":         {"view"},
	"search":       {"grep", "glob"},
	"grep":         {"grep"},
	"glob":         {"glob"},
	"edit":         {"create", "edit"},
	"write":        {"create", "edit"},
	"create":       {"create"},
	"shell":        shellTools,
	"execute":      shellTools,
	"bash":         shellTools,
	"agent":        agentTools,
	"custom-agent": agentTools,
	"task":         agentTools,
	"todo":         {"update_todo"},
	"web":          {"web_fetch"},
	"web_fetch":    {"web_fetch"},
}

var (
	shellTools = []string{"bash", "read_bash", "stop_bash", "list_bash"}
	agentTools = []string{"task", "read_agent", "list_agents", "write_agent"}
)

// writeTools are the tools of Copilot that change files or run commands;
// spawnTools those that start a sub-agent or hand a running one new work.
// The child's agent block says so (write_tools, spawn_tools), since no
// list of the checks knows Copilot's names.
var (
	writeTools = []string{"bash", "write_bash", "create", "edit", "powershell", "write_powershell", "hooks"}
	spawnTools = []string{"task", "write_agent"}
)

// builtin is a built-in agent type: its tools (nil: every tool of the
// session, "*"), as the client ships them (1.0.102's
// definitions/*.agent.yaml). A definition of the same name does not
// replace it. The models the client ships for some of them are not
// judged: under a provider of the user's own, the child ran on the
// session's model instead (observed), which the hook cannot see, so a
// built-in's model is the call's or none.
type builtin struct {
	tools []string
}

var builtins = map[string]builtin{
	"explore": {tools: []string{"grep", "glob", "view", "bash", "read_bash", "stop_bash", "list_bash", "powershell", "read_powershell", "stop_powershell", "lsp",
		"github-mcp-server/*", "bluebird/*"}},
	"task":            {},
	"general-purpose": {},
	"code-review":     {},
	"research":        {},
	"security-review": {},
	"rubber-duck":     {},
}

// builtinFile names a built-in's definition, which ships inside the
// client.
func builtinFile(name string) string { return "built-in:" + name }

// definition is the built-in as a definition the gate can translate.
func (b builtin) definition(name string) (*agent.Definition, string) {
	fields := map[string]any{"name": name}
	if b.tools != nil {
		tools := make([]any, len(b.tools))
		for i, t := range b.tools {
			tools[i] = t
		}
		fields["tools"] = tools
	}
	return &agent.Definition{File: builtinFile(name), Name: name, Fields: fields, Lines: map[string]int{}}, ""
}

// translate turns a task call and the definition it resolves to (nil,
// with problem saying why, when none applies) into a plan child.
func translate(c call, def *agent.Definition, problem string) agent.Translation {
	t, facts := agent.Start(c.Call, def, problem)
	if def == nil {
		t.Model(c.Model, 0)
		return t
	}
	tools(def, t.Child, facts, t.Lines)
	// The call's model wins, else the definition's, the first of a list
	// (observed: even one the provider does not offer); with
	// model-policy: required a call's model not in the list gives way to
	// the list's first (read).
	var listed []any
	line := def.Lines["model"]
	switch m := def.Fields["model"].(type) {
	case string:
		listed = []any{m}
	case []any:
		listed = m
	}
	model := c.Model
	if model == "" || def.Fields["model-policy"] == "required" && len(listed) > 0 && !slices.Contains(listed, any(model)) {
		model = ""
		if len(listed) > 0 {
			model, _ = listed[0].(string)
		}
	} else {
		line = 0
	}
	t.Model(model, line)
	return t
}

// tools reads what a definition grants: its tools (omitted, or "*", is
// every tool of the session, task included), each alias as the tools it
// brings; its MCP servers (mcp__<server>, started with the child); its
// own hooks (the tool "hooks": shell commands that run in the child).
func tools(def *agent.Definition, child, facts map[string]any, lines map[string]int) {
	set, entries, entryLines := agent.ListTools(def, facts, lines, toolKind)
	if set == nil {
		return
	}
	for i, e := range entries {
		name, ok := e.(string)
		if !ok {
			set.Add(e, entryLines[i]) // not a name: the checks refuse it
			continue
		}
		for _, tool := range expand(name) {
			set.Add(tool, entryLines[i])
		}
	}
	for _, server := range servers(def.Fields["mcp-servers"]) {
		set.Add(server, def.Lines["mcp-servers"])
	}
	if h, ok := def.Fields["hooks"]; ok && h != nil {
		set.Add("hooks", def.Lines["hooks"])
	}
	set.Done(child, facts)
}

// toolKind says whether a Copilot tool writes or spawns; a name the gate
// does not know may be one a later client maps to anything: it counts as
// both.
func toolKind(name string) (writes, spawns bool) {
	switch {
	case slices.Contains(writeTools, name):
		return true, false
	case slices.Contains(spawnTools, name):
		return false, true
	case !known(name):
		return true, true
	}
	return false, false
}

// expand is the tools an entry of tools: brings: an alias's (any case),
// an MCP tool server/tool as mcp__server__tool and server/* as
// mcp__server (every tool of the server), else the name as written.
func expand(name string) []string {
	if tools, ok := aliases[strings.ToLower(name)]; ok {
		return tools
	}
	if server, tool, ok := strings.Cut(name, "/"); ok && server != "" && tool != "" {
		server = strings.ToLower(server)
		if tool == "*" {
			return []string{"mcp__" + server}
		}
		return []string{"mcp__" + server + "__" + strings.ToLower(tool)}
	}
	return []string{name}
}

// known tells whether a tool is one of Copilot's the gate knows, or an
// MCP tool (judged by its server's name).
func known(name string) bool {
	if strings.HasPrefix(name, "mcp__") {
		return true
	}
	for _, tools := range aliases {
		if slices.Contains(tools, name) {
			return true
		}
	}
	switch name {
	case "read_agent", "list_agents", "read_bash", "stop_bash", "list_bash", "read_powershell", "stop_powershell",
		"sql", "skill", "lsp", "update_todo", "tool_search_tool", "fetch_copilot_cli_documentation", "session_store_sql":
		return true
	}
	return false
}

// servers are the MCP servers a definition starts with its child, each as
// the tool mcp__<name>: a mapping by name, or a list of names or of such
// mappings. Anything else is kept, for the checks to refuse.
func servers(raw any) []any {
	var out []any
	names := func(m map[string]any) {
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			out = append(out, "mcp__"+k)
		}
	}
	switch v := raw.(type) {
	case nil:
	case map[string]any:
		names(v)
	case []any:
		for _, s := range v {
			switch s := s.(type) {
			case string:
				out = append(out, "mcp__"+s)
			case map[string]any:
				names(s)
			default:
				out = append(out, s)
			}
		}
	default:
		out = append(out, fmt.Sprint(v))
	}
	return out
}
