# METADATA
# title: Every tool must be allowlisted
# description: >-
#   Deny by default. Every tool a child requests must be an exact, plain tool
#   name that allowed_tools matches in every policy that applies. A requested
#   tool that is itself a pattern (fs:*, mcp__github__*) or not a plain name
#   is refused even when a pattern in the policy would match its text, and
#   a tool that grants everything (the Codex sandbox danger-full-access)
#   only by an exact entry, never by a pattern. A child whose role has a
#   profile needs the profile's allowed_tools to allow the tool too.
# custom:
#   id: tools.allowlist
#   severity: high
package spawngate.checks.tools_allowlist

import data.spawngate.lib

# A child without a profile: each tool the policies refuse. A plain tool
# name names the policies that refuse it; anything else is refused whatever
# any policy says, and names none.
deny contains lib.finding(i, sprintf("/tools/%d", [j]), explain(tool, sources), sources) if {
	some tool, sources in refused # the children that hold it, not every child
	some [i, j] in lib.tool_places[tool]
	lib.unprofiled[i]
}

# A child with a profile: each tool the policies or the profile refuse.
deny contains lib.finding(i, sprintf("/tools/%d", [j]), explain(tool, sources), sources) if {
	some i, role in lib.profiled
	tools := lib.children[i].tools
	is_array(tools)
	some j, tool in tools
	sources := refused_in_profile[[role, tool]]
}

# The requested tools not allowed, each judged once, with the policies that
# refuse it.
refused := {tool: refusing(tool) |
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

# The policies that refuse a plain tool name (none for anything else).
refusing(tool) := {source |
	lib.is_tool_name(tool)
	some source, policy in lib.policies
	not lib.allows(policy, tool)
}

# The tools of profiled roles that the policies or the profile refuse, each
# pair of role and tool judged once, with the sources that refuse.
refused_in_profile := {[role, tool]: refusing_in_profile(role, tool) |
	some [role, tool] in lib.profile_tools
	refused_for(role, tool)
}

refused_for(_, tool) if refused[tool]

refused_for(role, tool) if profile_refuses(role, tool)

# A profile judges the tools of its role when it sets allowed_tools; when
# it does not, its list is the operator policy's, which judged them already.
profile_refuses(role, tool) if {
	lib.is_tool_name(tool)
	lib.profile_sets(role, "allowed_tools")
	not lib.allows(lib.profiles[role], tool)
}

refusing_in_profile(role, tool) := refusing(tool) | {lib.profile_sources[role]} if {
	profile_refuses(role, tool)
} else := refusing(tool)

explain(tool, sources) := sprintf("tool %s is not a string", [lib.show(tool)]) if {
	not is_string(tool)
} else := sprintf("tool %s is a permission rule, not a tool name: list the tool itself (%s) and narrow it with the host's permission rules", [lib.show(tool), substring(tool, 0, indexof(tool, "("))]) if {
	indexof(tool, "(") > 0
	endswith(tool, ")")
} else := sprintf("tool %s grants everything and is allowed only by an exact entry in allowed_tools, not by a pattern; it is not listed by %s", [lib.show(tool), lib.describe(sources)]) if {
	tool in lib.exact_only_tools
	count(sources) > 0
} else := sprintf("tool %s is a pattern or not a plain tool name; only plain names (A-Z a-z 0-9 _ . : -, not starting or ending with . : -) can be allowed", [lib.show(tool)]) if {
	not lib.is_tool_name(tool)
} else := sprintf("tool %s is not allowed by %s", [lib.show(tool), lib.describe(sources)]) if {
	count(sources) > 0
} else := sprintf("tool %s is not allowed: no policy applies", [lib.show(tool)])
