package gemini

import (
	"slices"
	"sort"
	"strings"

	"github.com/spawngate/spawngate/internal/agent"
)

// writeTools are Gemini CLI's tools that change files or run commands;
// the child's agent block says so (write_tools), since no list of the
// checks knows these names.
var writeTools = []string{"write_file", "replace", "run_shell_command", "save_memory"}

// readTools are its tools that change nothing; a tool in neither list is
// one the gate does not know, and counts as writing and spawning.
var readTools = []string{"read_file", "read_many_files", "list_directory", "glob", "grep_search", "web_fetch",
	"google_web_search", "write_todos", "get_internal_docs", "activate_skill", "complete_task", "ask_user"}

// translate turns an invoke_agent call, the definition it resolves to
// (nil, with problem saying why, when none applies) and the settings'
// overrides of that agent into a plan child.
func translate(c agent.Call, def *agent.Definition, problem string, ov override) agent.Translation {
	t, facts := agent.Start(c, def, problem)
	model, line := ov.model, 0
	if def != nil {
		if def.Fields["kind"] == "remote" {
			facts["isolation"] = "remote"
		}
		tools(def, ov, t.Child, facts, t.Lines)
		if own, ok := def.Fields["model"].(string); ok && model == "" {
			model, line = own, def.Lines["model"]
		}
	}
	// With neither, the child runs on a model of the client's choosing
	// (the session's, or a built-in's own), which the hook cannot see.
	t.Model(model, line)
	return t
}

// tools reads what a definition grants: its tools (omitted, or "*", is
// every tool of the session but invoke_agent), and the MCP servers that
// start with the child (its mcp_servers, and the settings' mcpServers for
// it), each as mcp__<server>. complete_task, which every child gets to
// end its work, grants nothing and is left out.
func tools(def *agent.Definition, ov override, child, facts map[string]any, lines map[string]int) {
	set, entries, entryLines := agent.ListTools(def, facts, lines, toolKind)
	if set == nil {
		return
	}
	for i, e := range entries {
		set.Add(e, entryLines[i])
	}
	if servers, ok := def.Fields["mcp_servers"].(map[string]any); ok {
		names := make([]string, 0, len(servers))
		for n := range servers {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			set.Add("mcp__"+n, def.Lines["mcp_servers"])
		}
	} else if s, set2 := def.Fields["mcp_servers"]; set2 && s != nil {
		set.Add(s, def.Lines["mcp_servers"]) // not a table of servers: the checks refuse it
	}
	for _, n := range ov.servers {
		set.Add("mcp__"+n, 0)
	}
	set.Done(child, facts)
}

// toolKind says whether a Gemini CLI tool writes or spawns: an MCP tool
// is judged by its server's name, and a name the gate does not know
// counts as both.
func toolKind(name string) (writes, spawns bool) {
	switch {
	case strings.HasPrefix(name, "mcp__") || slices.Contains(readTools, name):
		return false, false
	case slices.Contains(writeTools, name):
		return true, false
	}
	return true, true
}
