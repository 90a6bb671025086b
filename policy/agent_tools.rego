# METADATA
# title: A spawned agent must list its tools
# description: >-
#   A Claude Code agent definition that does not list tools (or lists only
#   disallowedTools) gives the child every tool the parent has, MCP tools
#   included, whatever they are at the time: the gate cannot bound that.
#   The definition must list the tools the agent needs.
# custom:
#   id: agent.tools
#   severity: high
package spawngate.checks.agent_tools

import data.spawngate.lib

deny contains lib.violation(i, "/tools", explain(agent)) if {
	some i, agent in lib.agents
	agent.inherits_tools == true
}

explain(agent) := sprintf("the definition %s lists no tools, so the child inherits every tool, MCP tools included: list the tools it needs under tools: (disallowedTools alone does not bound them)", [lib.show(agent.definition)]) if {
	is_string(agent.definition)
} else := "the child inherits every tool, MCP tools included: its definition must list the tools it needs"
