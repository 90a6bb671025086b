# METADATA
# title: Shared definitions for the spawngate checks
# description: >-
#   What every check reads: the children to judge, the policies that apply,
#   how a tool name is told from a pattern, how policy patterns match, and
#   how a violation is shaped. Defaults of the policy format live here too.
package spawngate.lib

# The children to judge, by their index in input.children. A child that is
# not an object is refused by the schema step; the checks only read objects.
# (A comprehension, not a partial rule: OPA builds a partial object rule of
# n keys in time n squared.)
#
# input.children holds one child for each group of plan children that
# differ only in what grants nothing (id, brief, metadata). A check
# judges each child on its own, and sees the children a batch at a time. A
# check of the whole plan (a count, a sum) declares custom.scope: plan in
# its METADATA: it sees every child at once, and input.members[i] says how
# many plan children input.children[i] stands for.
children := {i: child |
	some i, child in input.children
	is_object(child)
}

# The agent block of each child that has one (what a host adapter learned
# of it), by index: the agent checks look at these children only.
agents := {i: child.agent |
	some i, child in children
	is_object(child.agent)
}

# Every distinct tool and path the children request, so that a check
# judges each once however many children ask for it.
requested_tools := {tool |
	some child in children
	is_array(child.tools)
	some tool in child.tools
}

requested_paths := {path |
	some child in children
	is_array(child.paths)
	some path in child.paths
	is_string(path)
}

# The policies that apply, by where they come from: "operator" (--policy)
# and "plan" (the plan's own policy block). Every one of them must agree
# before anything is allowed; with none, nothing is.
policies := object.get(input, "policies", {})

# The workspace root that relative paths are read against: the plan's own
# policy when it has one, else the operator's.
plan_root := policies.plan.workspace_root if {
	policies.plan
} else := policies.operator.workspace_root

# What an absolute path, with a slash appended, starts with when it lies
# inside a root ("/repo/ws/" for /repo/ws, "/" for /), by policy; and what
# a relative path is read against.
root_prefixes := {source: concat("", [trim_suffix(policy.workspace_root, "/"), "/"]) |
	some source, policy in policies
}

plan_prefix := concat("", [trim_suffix(plan_root, "/"), "/"])

# A tool name is exact and plain: letters, digits and _ . : - only,
# starting and ending with a letter, digit or underscore. A pattern (fs:*,
# mcp__github__*), a name with spaces, a name ending in ':' (which YAML
# parsers read as a mapping) or a non-string is never one.
tool_name_pattern := `^[A-Za-z0-9_]([A-Za-z0-9_.:-]*[A-Za-z0-9_])?$`

is_tool_name(tool) if {
	is_string(tool)
	regex.match(tool_name_pattern, tool)
}

# Policy entries are glob patterns: * matches within one dot-separated
# segment, ** across segments, ? one character. An exact name matches itself.
matches(patterns, tool) if {
	some pattern in patterns
	glob.match(pattern, ["."], tool)
}

# The tools that write when a policy does not list its own.
default_write_tools := ["fs.write", "fs.delete", "shell.run", "wallet.transfer"]

write_tools(policy) := object.get(policy, "write_tools", default_write_tools)

# Tools that write whatever a policy's write_tools says: Claude Code's
# editing, shell and worktree tools, and the Codex sandboxes that can
# write. A policy can add write tools, never remove these.
host_write_tools := {
	"Bash", "PowerShell", "Edit", "Write", "MultiEdit", "NotebookEdit",
	"EnterWorktree", "ExitWorktree",
	"sandbox:workspace-write", "sandbox:danger-full-access",
}

# Only a real boolean true grants write: a missing key, "true" or 1 does not.
grants_write(policy) if policy.allow_write == true

# The tools that let a child dispatch children of its own, when a policy
# does not list its own: Claude Code's Agent (Task before v2.1.63) and
# Codex's spawn_agent.
default_spawn_tools := ["Agent", "Task", "spawn_agent", "collaboration.spawn_agent"]

spawn_tools(policy) := object.get(policy, "spawn_tools", default_spawn_tools)

# Only a real boolean true grants spawning.
grants_spawn(policy) if policy.allow_spawn == true

# Tools that only an exact entry of allowed_tools allows, never a pattern:
# they grant everything, so allowing one must be written out.
exact_only_tools := {"sandbox:danger-full-access"}

# Whether a policy's allowed_tools allow a plain tool name.
allows(policy, tool) if {
	not tool in exact_only_tools
	matches(policy.allowed_tools, tool)
}

allows(policy, tool) if {
	tool in exact_only_tools
	tool in policy.allowed_tools
}

# Model patterns: * matches within one /-separated segment, ** across
# them, ? one character.
matches_model(patterns, model) if {
	some pattern in patterns
	glob.match(pattern, ["/"], model)
}

# A number's value does not say how it was written, and Rego treats 4e4 and
# 40000 as the same value everywhere (comparisons, sets, cached results). So
# the loader records, as JSON pointers into input.children, every number the
# plan wrote with a fraction or an exponent, mapped to how it was written.
float_literals := object.get(input, "float_literals", {})

float_literal(i, field) := float_literals[sprintf("/%d%s", [i, field])]

# The budget of each child whose budget is a positive whole number written
# as one, by index: computed once for both budget checks. (By index, so that
# two budgets equal in value but written differently never share an answer.)
budgets := {i: b |
	some i, child in children
	b := child.budget_tokens
	is_number(b)
	whole(b)
	b > 0
	not float_literal(i, "/budget_tokens")
}

# A whole number by value, exactly, however large (round() would go
# through a float and call 2^64+1 a fraction).
whole(n) if regex.match(`^-?[0-9]+$`, sprintf("%v", [n]))

# How a value appears in a message: strings quoted with escapes (so control
# characters cannot reach a terminal), long strings cut short, numbers by
# value, anything else as JSON.
show(x) := sprintf("%q", [x]) if {
	is_string(x)
	count(x) <= 80
} else := sprintf("%q...", [substring(x, 0, 80)]) if {
	is_string(x)
} else := sprintf("%v", [x]) if {
	is_number(x)
} else := json.marshal(x)

# The type of a value, with its article: "a string", "an object", "null".
a_type(x) := "null" if {
	x == null
} else := "an object" if {
	is_object(x)
} else := "a list" if {
	is_array(x)
} else := sprintf("a %s", [type_name(x)])

# "the operator policy", "the operator and plan policies".
describe(sources) := sprintf("the %s policy", [only]) if {
	count(sources) == 1
	some only in sources
} else := sprintf("the %s policies", [concat(" and ", sort(sources))])

# The shape of every violation: which child, which field inside it (a JSON
# pointer relative to the child) and why. The rule ID and severity come from
# the METADATA of the package that reports it.
violation(child, field, message) := {"child": child, "field": field, "message": message}
