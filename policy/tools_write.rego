# METADATA
# title: Write tools need allow_write
# description: >-
#   A tool is a write tool when any policy that applies lists it in
#   write_tools (by default fs.write, fs.delete, shell.run and
#   wallet.transfer), and always when it is one of Claude Code's editing,
#   shell and worktree tools (Bash, PowerShell, Edit, Write, MultiEdit,
#   NotebookEdit, EnterWorktree, ExitWorktree) or a Codex sandbox that can
#   write. A child may hold one only when every policy that applies sets
#   allow_write to the boolean true, even when the tool is allowlisted.
# custom:
#   id: tools.write
#   severity: high
package spawngate.checks.tools_write

import data.spawngate.lib

deny contains lib.violation(i, sprintf("/tools/%d", [j]), explain(tool)) if {
	count(withholding) > 0
	count(writing) > 0
	some i, child in lib.children
	is_array(child.tools)
	some j, tool in child.tools
	tool in writing
}

# The requested tools that write, each judged once.
writing := {tool |
	some tool in lib.requested_tools
	lib.is_tool_name(tool)
	writes(tool)
}

# The tool writes if any policy says so: a policy's write_tools can only
# add to what counts as writing.
writes(tool) if {
	some policy in lib.policies
	lib.matches(lib.write_tools(policy), tool)
}

writes(tool) if tool in lib.host_write_tools

# The policies that do not grant write.
withholding := {source |
	some source, policy in lib.policies
	not lib.grants_write(policy)
}

explain(tool) := sprintf("tool %s writes, and %s does not set allow_write: true", [lib.show(tool), lib.describe(withholding)])
