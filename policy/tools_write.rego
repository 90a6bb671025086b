# METADATA
# title: Write tools need allow_write
# description: >-
#   A tool is a write tool when any policy that applies lists it in
#   write_tools (by default fs.write, fs.delete, shell.run and
#   wallet.transfer), and always when it is one of Claude Code's editing,
#   shell and worktree tools (Bash, PowerShell, Edit, Write, MultiEdit,
#   NotebookEdit, EnterWorktree, ExitWorktree) or a Codex sandbox that can
#   write, or when a host adapter says so of a child's tool (the agent
#   block's write_tools). A child may hold one only when every policy that applies sets
#   allow_write to the boolean true, even when the tool is allowlisted, and
#   for a child whose role has a profile that sets allow_write, only when
#   the profile sets it to true as well.
# custom:
#   id: tools.write
#   severity: high
package spawngate.checks.tools_write

import data.spawngate.lib

# A child without a profile: judged by the policies.
deny contains lib.refusal(i, sprintf("/tools/%d", [j]), explain(tool, withholding), withholding) if {
	count(withholding) > 0
	some tool in writing # the children that hold it, not every child
	some [i, j] in lib.tool_places[tool]
	lib.unprofiled[i]
}

# A child with a profile: judged by the policies and the profile.
deny contains lib.refusal(i, sprintf("/tools/%d", [j]), explain(tool, sources), sources) if {
	count(writing) > 0
	some i, role in lib.profiled
	sources := withholding_in_profile[role]
	count(sources) > 0
	tools := lib.children[i].tools
	is_array(tools)
	some j, tool in tools
	tool in writing
}

# The requested plain tool names (lib.tool_names) that write, each judged
# once.
writing := {tool |
	some tool in lib.tool_names
	writes(tool)
}

# The tool writes if any policy says so: a policy's write_tools can only
# add to what counts as writing. (A profile has the operator's write_tools.)
writes(tool) if {
	some policy in lib.policies
	lib.matches(lib.write_tools(policy), tool)
}

writes(tool) if tool in lib.host_write_tools

writes(tool) if tool in lib.agent_write_tools

# The policies that do not grant write.
withholding := {source |
	some source, policy in lib.policies
	not lib.grants_write(policy)
}

# By profiled role: the policies that do not grant write, and the profile
# when it sets allow_write to anything but true.
withholding_in_profile := {role: withholding_for(role) | some role, _ in lib.profiles}

withholding_for(role) := withholding | {lib.profile_sources[role]} if {
	role in profiles_withholding
} else := withholding

profiles_withholding := {role |
	some role, profile in lib.profiles
	lib.profile_sets(role, "allow_write")
	not lib.grants_write(profile)
}

explain(tool, sources) := sprintf("tool %s writes, and allow_write: true is not set by %s", [lib.show(tool), lib.describe(sources)])
