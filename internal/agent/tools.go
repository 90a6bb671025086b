package agent

import (
	"slices"
	"strconv"
)

// ToolSet is the tool list a host's translation builds for a child: each
// tool once, with the line of the definition it came from, and the ones
// the host says write or start sub-agents (the agent block's write_tools
// and spawn_tools, for names no list of the checks knows).
type ToolSet struct {
	lines                map[string]int
	kind                 func(name string) (writes, spawns bool)
	list, writes, spawns []any
}

// ListTools starts a child's tools from its definition's tools setting
// (a list, or a comma-separated string). Left out, or holding "*", it
// gives every tool of the session: facts say the child inherits them and
// ListTools returns nil. Else it returns the set to Add the child's tools
// to, and the entries as written with their lines. kind says whether a
// tool's name writes or spawns, as the host names its tools.
func ListTools(def *Definition, facts map[string]any, lines map[string]int, kind func(name string) (writes, spawns bool)) (*ToolSet, []any, []int) {
	raw, listed := def.Fields["tools"]
	entries, entryLines := ToolList(raw, def.Lines, "tools")
	lines["/tools"] = def.Lines["tools"]
	if !listed || slices.Contains(entries, any("*")) {
		facts["inherits_tools"] = true
		return nil, nil, nil
	}
	facts["inherits_tools"] = false
	return &ToolSet{lines: lines, kind: kind, list: []any{}}, entries, entryLines
}

// Add adds a tool (once) from a line of the definition. A value that is
// not a name is kept, for the checks to refuse.
func (s *ToolSet) Add(tool any, line int) {
	if slices.Contains(s.list, tool) {
		return
	}
	s.lines["/tools/"+strconv.Itoa(len(s.list))] = line
	s.list = append(s.list, tool)
	name, ok := tool.(string)
	if !ok {
		return
	}
	writes, spawns := s.kind(name)
	if writes {
		s.writes = append(s.writes, name)
	}
	if spawns {
		s.spawns = append(s.spawns, name)
	}
}

// Done writes the tools into the child, and which write and spawn into
// its facts.
func (s *ToolSet) Done(child, facts map[string]any) {
	child["tools"] = s.list
	if len(s.writes) > 0 {
		facts["write_tools"] = s.writes
	}
	if len(s.spawns) > 0 {
		facts["spawn_tools"] = s.spawns
	}
}
