# METADATA
# title: Spawn tools need allow_spawn
# description: >-
#   A tool is a spawn tool when any policy that applies lists it in
#   spawn_tools (by default Agent, Task, spawn_agent and
#   collaboration.spawn_agent): a child holding one can dispatch children
#   of its own, with powers this plan does not show. A child may hold one
#   only when every policy that applies sets allow_spawn to the boolean
#   true, even when the tool is allowlisted.
# custom:
#   id: tools.spawn
#   severity: high
package spawngate.checks.tools_spawn

import data.spawngate.lib

deny contains lib.violation(i, sprintf("/tools/%d", [j]), explain(tool)) if {
	count(withholding) > 0
	count(spawning) > 0
	some i, child in lib.children
	is_array(child.tools)
	some j, tool in child.tools
	tool in spawning
}

# The requested tools that spawn, each judged once.
spawning := {tool |
	some tool in lib.requested_tools
	lib.is_tool_name(tool)
	some policy in lib.policies
	lib.matches(lib.spawn_tools(policy), tool)
}

# The policies that do not grant spawning.
withholding := {source |
	some source, policy in lib.policies
	not lib.grants_spawn(policy)
}

explain(tool) := sprintf("tool %s lets the child dispatch children of its own, and %s does not set allow_spawn: true", [lib.show(tool), lib.describe(withholding)])
