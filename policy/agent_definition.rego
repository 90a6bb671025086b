# METADATA
# title: A spawned agent must have a definition the gate can read
# description: >-
#   A child translated from a host's spawn call (a Claude Code or Codex
#   hook, or spawngate agents) is refused when its agent type has no
#   definition file the gate could read: an unknown type, a built-in type
#   (general-purpose, Explore, default, worker ...) that no agents folder
#   defines, a definition that does not parse, or two definitions of one
#   name in one folder. Without a definition its tools, model and
#   permissions are whatever the host gives, which the gate cannot bound.
# custom:
#   id: agent.definition
#   severity: high
package spawngate.checks.agent_definition

import data.spawngate.lib

# Reported at the child itself: nothing about a child without a definition
# can be known, so no other finding about its shape adds anything.
deny contains lib.violation(i, "", explain(agent)) if {
	some i, agent in lib.agents
	not defined(agent)
}

# (A helper: "not is_string(x.definition)" is undefined, not true, when the
# key is missing.)
defined(agent) if is_string(agent.definition)

explain(agent) := agent.problem if {
	is_string(agent.problem)
	agent.problem != ""
} else := sprintf("agent type %s has no definition the gate can read: define it in an agents folder", [lib.show(agent.type)]) if {
	is_string(agent.type)
} else := "the agent has no definition the gate can read: define it in an agents folder"
