# METADATA
# title: A child must list its tools
# description: >-
#   tools is required and must be a non-empty list. A child without tools
#   has nothing to be judged on, and nothing to check is never "allowed".
# custom:
#   id: tools.missing
#   severity: high
package spawngate.checks.tools_missing

import data.spawngate.lib

deny contains lib.violation(i, "/tools", problem(child)) if {
	some i in lib.without_tools
	child := lib.children[i]
	not explained(child)
}

# A child translated from a host's spawn lists no tools when its agent
# inherits every tool, has no definition, or (Codex) sets no sandbox;
# agent.tools, agent.definition and agent.sandbox refuse it for that,
# saying why, and this check does not repeat it.
explained(child) if child.agent.inherits_tools == true

explained(child) if {
	is_object(child.agent)
	not defined(child.agent)
	not "tools" in object.keys(child)
}

# (A helper: "not is_string(x.definition)" is undefined, not true, when the
# key is missing.)
defined(agent) if is_string(agent.definition)

# A sandboxed agent's tools are its sandbox and its MCP servers (a host
# whose children run in a sandbox mode gives the agent block a
# sandbox_mode, null when none is set); without a sandbox, agent.sandbox
# says what to set.
explained(child) if {
	is_object(child.agent)
	"sandbox_mode" in object.keys(child.agent)
	not sandboxed(child.agent)
}

sandboxed(agent) if agent.sandbox_mode in {"read-only", "workspace-write", "danger-full-access"}

problem(child) := "tools is missing: list the tools the child gets" if {
	not "tools" in object.keys(child)
} else := sprintf("tools must be a list of tool names, not %s", [lib.a_type(child.tools)]) if {
	not is_array(child.tools)
} else := "tools is empty: a child needs at least one tool"
