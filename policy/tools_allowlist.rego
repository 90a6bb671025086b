# METADATA
# title: Every tool must be allowlisted
# description: >-
#   Deny by default. Every tool a child requests must be an exact, plain tool
#   name that allowed_tools matches in every policy that applies. A requested
#   tool that is itself a pattern (fs:*, mcp__github__*) or not a plain name
#   is refused even when a pattern in the policy would match its text, and
#   a tool that grants everything (the Codex sandbox danger-full-access)
#   only by an exact entry, never by a pattern.
# custom:
#   id: tools.allowlist
#   severity: high
package spawngate.checks.tools_allowlist

import data.spawngate.lib

deny contains lib.violation(i, sprintf("/tools/%d", [j]), explain(tool)) if {
	count(refused) > 0 # most batches refuse no tool: then no child is looked at
	some i, child in lib.children
	is_array(child.tools)
	some j, tool in child.tools
	tool in refused
}

# The requested tools not allowed, each judged once.
refused := {tool |
	some tool in lib.requested_tools
	not allowed(tool)
}

allowed(tool) if {
	lib.is_tool_name(tool)
	count(lib.policies) > 0
	every policy in lib.policies {
		lib.allows(policy, tool)
	}
}

refusing(tool) := {source |
	some source, policy in lib.policies
	not lib.allows(policy, tool)
}

explain(tool) := sprintf("tool %s is not a string", [lib.show(tool)]) if {
	not is_string(tool)
} else := sprintf("tool %s is a permission rule, not a tool name: list the tool itself (%s) and narrow it with the host's permission rules", [lib.show(tool), substring(tool, 0, indexof(tool, "("))]) if {
	indexof(tool, "(") > 0
	endswith(tool, ")")
} else := sprintf("tool %s grants everything and is allowed only by an exact entry in allowed_tools, not by a pattern; %s does not list it", [lib.show(tool), lib.describe(refusing(tool))]) if {
	tool in lib.exact_only_tools
	count(refusing(tool)) > 0
} else := sprintf("tool %s is a pattern or not a plain tool name; only plain names (A-Z a-z 0-9 _ . : -, not starting or ending with . : -) can be allowed", [lib.show(tool)]) if {
	not lib.is_tool_name(tool)
} else := sprintf("tool %s is not allowed by %s", [lib.show(tool), lib.describe(refusing(tool))]) if {
	count(refusing(tool)) > 0
} else := sprintf("tool %s is not allowed: no policy applies", [lib.show(tool)])
