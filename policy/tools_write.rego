# METADATA
# title: Write tools need allow_write
# description: >-
#   A tool that a policy lists in write_tools (by default fs.write, fs.delete,
#   shell.run and wallet.transfer) may be held only when that policy sets
#   allow_write to the boolean true, even when the tool is allowlisted. With
#   two policies, both must grant write.
# custom:
#   id: tools.write
#   severity: high
package spawngate.checks.tools_write

import data.spawngate.lib

deny contains lib.violation(i, sprintf("/tools/%d", [j]), explain(tool)) if {
	some i, child in lib.children
	is_array(child.tools)
	some j, tool in child.tools
	lib.is_tool_name(tool)
	count(refusing(tool)) > 0
}

# The policies that call the tool a write tool without granting write.
refusing(tool) := {source |
	some source, policy in lib.policies
	lib.matches(lib.write_tools(policy), tool)
	not lib.grants_write(policy)
}

explain(tool) := sprintf("tool %s writes, and %s does not set allow_write: true", [lib.show(tool), lib.describe(refusing(tool))])
