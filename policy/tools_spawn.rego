# METADATA
# title: Spawn tools need allow_spawn
# description: >-
#   A tool is a spawn tool when any policy that applies lists it in
#   spawn_tools (by default Claude Code's Agent, Task, Skill and
#   Workflow, Codex's spawn_agent, collaborationspawn_agent and
#   collaboration.spawn_agent, Copilot CLI's task and
#   run_dynamic_workflow, and Gemini CLI's invoke_agent), or when a host
#   adapter says so of a child's tool (the agent block's spawn_tools): a
#   child holding one can dispatch children of its own, with powers this
#   plan does not show. A child may hold one only when every policy that
#   applies sets allow_spawn to the boolean true, even when the tool is
#   allowlisted, and for a child whose role has a profile that sets
#   allow_spawn, only when the profile sets it to true as well.
# custom:
#   id: tools.spawn
#   severity: high
package spawngate.checks.tools_spawn

import data.spawngate.lib

# A child without a profile: judged by the policies.
deny contains lib.refusal(i, sprintf("/tools/%d", [j]), explain(tool, withholding), withholding) if {
	count(withholding) > 0
	some tool in spawning # the children that hold it, not every child
	some [i, j] in lib.tool_places[tool]
	lib.unprofiled[i]
}

# A child with a profile: judged by the policies and the profile.
deny contains lib.refusal(i, sprintf("/tools/%d", [j]), explain(tool, sources), sources) if {
	count(spawning) > 0
	some i, role in lib.profiled
	sources := withholding_in_profile[role]
	count(sources) > 0
	tools := lib.children[i].tools
	is_array(tools)
	some j, tool in tools
	tool in spawning
}

# The requested plain tool names (lib.tool_names) that spawn, each judged
# once. (A profile has the operator's spawn_tools.)
spawning := {tool |
	some tool in lib.tool_names
	spawns(tool)
}

spawns(tool) if {
	some policy in lib.policies
	lib.matches(lib.spawn_tools(policy), tool)
}

spawns(tool) if tool in lib.agent_spawn_tools

# The policies that do not grant spawning.
withholding := {source |
	some source, policy in lib.policies
	not lib.grants_spawn(policy)
}

# By profiled role: the policies that do not grant spawning, and the
# profile when it sets allow_spawn to anything but true.
withholding_in_profile := {role: withholding_for(role) | some role, _ in lib.profiles}

withholding_for(role) := withholding | {lib.profile_sources[role]} if {
	role in profiles_withholding
} else := withholding

profiles_withholding := {role |
	some role, profile in lib.profiles
	lib.profile_sets(role, "allow_spawn")
	not lib.grants_spawn(profile)
}

explain(tool, sources) := sprintf("tool %s lets the child dispatch children of its own, and allow_spawn: true is not set by %s", [lib.show(tool), lib.describe(sources)])
