# METADATA
# title: Only a child holding a spawn tool may have children
# description: >-
#   A child that lists children of its own must hold a spawn tool (one
#   that a policy that applies lists in spawn_tools, by default Agent,
#   Task, Skill, Workflow, spawn_agent, collaborationspawn_agent,
#   collaboration.spawn_agent, task, run_dynamic_workflow and
#   invoke_agent, or one its host adapter names): without one it could
#   not dispatch them, so a plan that says it will is not what the host
#   would run. Holding the spawn tool is judged by tools.spawn
#   (allow_spawn).
# custom:
#   id: tree.spawn
#   severity: high
#   when_nested: true
package spawngate.checks.tree_spawn

import data.spawngate.lib

deny contains lib.violation(i, "/children", sprintf("the child lists %d %s of its own but holds no spawn tool (%s), so it could not dispatch them", [n, noun(n), concat(", ", sort(spawn_tools))])) if {
	count(lib.parents) > 0
	some i, child in lib.children
	n := lib.tree(child).spawns
	n > 0
	not spawns(child)
}

# The spawn tools of every policy.
spawn_tools := {tool |
	some policy in lib.policies
	some tool in lib.spawn_tools(policy)
}

spawns(child) if {
	some tool in child.tools
	lib.is_tool_name(tool)
	some policy in lib.policies
	lib.matches(lib.spawn_tools(policy), tool)
}

spawns(child) if {
	some tool in child.tools
	tool in lib.agent_spawn_tools
}

noun(1) := "child"

noun(n) := "children" if n != 1
