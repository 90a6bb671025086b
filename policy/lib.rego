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

# Facts: what the checks read most, per child or per distinct value, that
# the input alone says (which tools and paths the children request and
# where, which of those tools are plain names, the name each plain path
# stands for, which budgets are whole numbers written as one, which
# children lack a list of tools or of paths). The gate computes them in Go
# and hands them over as input.facts, since OPA spends about a
# microsecond per expression and these take several per child; each is
# defined below from the input too, and that definition holds when the
# input lacks the fact (opa test, opa eval, a bundle of your own).
# internal/engine/facts_test.go holds the gate's facts equal to these
# definitions. A fact says what a value is, never whether it is allowed:
# every decision stays in the checks.

# Every distinct tool and path the children request, so that a check
# judges each once however many children ask for it.
requested_tools := fact if {
	fact := input.facts.requested_tools
} else := {tool |
	some child in children
	is_array(child.tools)
	some tool in child.tools
}

requested_paths := fact if {
	fact := input.facts.requested_paths
} else := {path |
	some child in children
	is_array(child.paths)
	some path in child.paths
	is_string(path)
}

# Where each requested tool and path appears: by value, the [index, j] of
# every child that lists it at tools[j] (paths[j]), in order. A check
# finds the children holding the values it refuses here, rather than look
# through every child. (Sorted and grouped: a comprehension per value
# that looked through every child would take time n squared.)
tool_places := fact if {
	fact := input.facts.tool_places
} else := grouped(sort([[tool, [i, j]] |
	some i, child in children
	is_array(child.tools)
	some j, tool in child.tools
]))

path_places := fact if {
	fact := input.facts.path_places
} else := grouped(sort([[path, [i, j]] |
	some i, child in children
	is_array(child.paths)
	some j, path in child.paths
	is_string(path)
]))

# The children whose tools is not a non-empty list, whose paths is not a
# list, and the [index, j] of each entry of a list of paths that is not a
# string: tools.missing and paths.invalid look at these only, rather than
# at every child.
without_tools := fact if {
	fact := input.facts.without_tools
} else := {i |
	some i, child in children
	not some_tools(child)
}

some_tools(child) if {
	is_array(child.tools)
	count(child.tools) > 0
}

without_path_list := fact if {
	fact := input.facts.without_path_list
} else := {i |
	some i, child in children
	not path_list(child)
}

# (A helper: "not is_array(child.paths)" is undefined, not true, when the
# key is missing.)
path_list(child) if is_array(child.paths)

nonstring_paths := fact if {
	fact := input.facts.nonstring_paths
} else := {[i, j] |
	some i, child in children
	is_array(child.paths)
	some j, path in child.paths
	not is_string(path)
}

# The requested tools that are plain tool names (is_tool_name).
tool_names := fact if {
	fact := input.facts.tool_names
} else := {tool |
	some tool in requested_tools
	is_tool_name(tool)
}

# The requested paths that are plain (plain_path), each mapped to the path
# it names with a slash appended: itself when absolute, else read against
# the plan's own root; a trailing slash counts for nothing. Under the root
# /repo/ws, "docs/" names "/repo/ws/docs/".
path_names := fact if {
	fact := input.facts.path_names
} else := {path: concat("", [path_prefix_of[startswith(path, "/")], trim_suffix(path, "/"), "/"]) |
	some path in requested_paths
	plain_path(path)
}

path_prefix_of := {true: "", false: plan_prefix}

# A plain path is made of segments of A-Z a-z 0-9 . _ - @, none ending in
# a dot or naming a Windows device, separated by single slashes, one
# trailing slash allowed, at most 4096 bytes, and does not start with '-'
# or '@'. (paths.escape says why any other path is ambiguous.)
plain_path(path) if {
	count(path) <= 4096
	regex.match(plain_pattern, path)
	not regex.match(windows_device, path)
	not startswith(path, "-")
	not startswith(path, "@")
}

plain_pattern := `^(/|/?[.]*[A-Za-z0-9_@-]([A-Za-z0-9._@-]*[A-Za-z0-9_@-])?(/[.]*[A-Za-z0-9_@-]([A-Za-z0-9._@-]*[A-Za-z0-9_@-])?)*/?)$`

# A segment Windows reads as a device whatever the directory: CON, NUL,
# COM1, LPT1 and the rest, in any case, with or without an extension.
windows_device := `(?i)(^|/)(con|prn|aux|nul|com[1-9]|lpt[1-9])(\.[^/]*)?(/|$)`

# The policies that apply, by where they come from: "operator" (--policy)
# and "plan" (the plan's own policy block). Every one of them must agree
# before anything is allowed; with none, nothing is.
default policies := {}

policies := input.policies

# Role profiles (the operator policy's roles): a child whose role has a
# profile is judged by every policy and by its profile too. A profile is
# the operator policy with the profile's settings in place of its own, so
# where a profile sets nothing it says what the operator policy says, and
# it can only narrow: a tool must be allowed by the profile as well, the
# lowest cap holds, paths must lie inside the profile's root as well, and
# write and spawn need true in the profile as well as in every policy.
# Only the operator policy has profiles: the plan schema forbids roles in a
# plan's own policy, and they are never read from it.
role_profiles := object.get(policies, ["operator", "roles"], {})

# The operator policy's own settings for a child, without what is not one
# (its profiles, its exceptions, its checks and its plan-wide limits).
operator_settings := object.remove(policies.operator, ["roles", "unknown_roles", "exceptions", "checks", "max_children", "max_total_budget_tokens"])

# Each profile as the policy it is, by role.
profiles := {role: object.union(operator_settings, profile) |
	some role, profile in role_profiles
	is_object(profile)
}

# The name a profile goes by among the sources that refuse: a JSON pointer
# to it inside the operator policy, such as "operator/roles/doc-reader" ("~"
# and "/" in a role escaped as ~0 and ~1), so it can never be taken for
# "plan", and it says whose profile it is.
profile_sources := {role: concat("", ["operator/roles/", replace(replace(role, "~", "~0"), "/", "~1")]) |
	some role, _ in profiles
}

profile_roles := {source: role | some role, source in profile_sources}

# A check adds a profile's source to the policies' with an else chain
# (x_for(role) := base | {source} if { ... } else := base), not with a
# comprehension: OPA v1.22.3's comprehension index answers a function
# whose value is a comprehension that looks its argument up in a rule and
# passes it to a function (f(r) := {src[r] | g(r)}) wrongly, depending on
# the order of calls. policy/indexing_test.go compares every check with
# and without that index.

# Whether a profile writes a setting itself. A setting it leaves out is the
# operator policy's, which judges it already: a check names a profile only
# for what it sets.
profile_sets(role, key) if key in object.keys(role_profiles[role])

# The children whose role has a profile, by index: their role. (When no
# profile exists, no child is looked at.)
profiled := {i: role |
	policies.operator.roles
	some i, child in children
	role := child.role
	profiles[role]
}

# The children whose role has no profile, by index: every child when the
# operator policy has no profiles (then no child is looked at).
unprofiled := children if {
	not policies.operator.roles
} else := {i: child |
	some i, child in children
	not profiled[i]
}

# Every distinct pair of a profiled role and a tool or path its children
# request, so that a check judges each pair once.
profile_tools := {[role, tool] |
	some i, role in profiled
	tools := children[i].tools
	is_array(tools)
	some tool in tools
}

profile_paths := {[role, path] |
	some i, role in profiled
	paths := children[i].paths
	is_array(paths)
	some path in paths
	is_string(path)
}

# The policies that judge a child, by source: every policy, and the
# profile of its role when it has one. (The checks judge each distinct
# tool, path or pair once instead of calling this per child; it is for
# checks of a child as a whole.)
policies_for(child) := object.union(policies, {profile_sources[child.role]: profiles[child.role]}) if {
	profiles[child.role]
} else := policies

# Every policy and every profile, by source.
by_source := object.union(policies, {source: profiles[role] | some role, source in profile_sources})

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
} else := false

# Policy entries are glob patterns: * matches within one dot-separated
# segment, ** across segments, ? one character. An exact name matches itself.
matches(patterns, tool) if {
	some pattern in patterns
	glob.match(pattern, ["."], tool)
} else := false

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

# Tools a host adapter says write, or start sub-agents, in a child's agent
# block (write_tools, spawn_tools): the names of a host that the lists
# here do not know. Such a fact only adds to what counts as writing or
# spawning, in the whole plan, so a plan that states more only narrows.
agent_write_tools := {tool |
	some agent in agents
	is_array(agent.write_tools)
	some tool in agent.write_tools
	is_string(tool)
}

agent_spawn_tools := {tool |
	some agent in agents
	is_array(agent.spawn_tools)
	some tool in agent.spawn_tools
	is_string(tool)
}

# Only a real boolean true grants write: a missing key, "true" or 1 does not.
grants_write(policy) if policy.allow_write == true

# The tools that let a child dispatch children of its own, when a policy
# does not list its own: Claude Code's Agent (Task before v2.1.63), Skill
# (a skill with context: fork runs in a sub-agent) and Workflow, Codex's
# spawn_agent (collaborationspawn_agent under multi_agent_v2), Copilot
# CLI's task and run_dynamic_workflow, and Gemini CLI's invoke_agent.
# (policy_test.go holds this list to the hosts' spawn tools.)
default_spawn_tools := [
	"Agent", "Task", "Skill", "Workflow",
	"spawn_agent", "collaboration.spawn_agent", "collaborationspawn_agent",
	"task", "run_dynamic_workflow",
	"invoke_agent",
]

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

float_literal(i, field) := float_literals[sprintf("/%d%s", [i, field])] if {
	count(float_literals) > 0 # most batches write none: then no pointer is built
}

# The budget of each child whose budget is a positive whole number written
# as one, by index: computed once for both budget checks. (By index, so that
# two budgets equal in value but written differently never share an answer.)
budgets := {i: b |
	some i, b in whole_budgets
	b > 0
}

# The budget of each child whose budget is a whole number written as one,
# by index. It spells out whole(b) rather than call it, and looks float
# literals up in a set: it runs once per child, and in OPA a call costs
# more than the work in it.
whole_budgets := fact if {
	fact := input.facts.whole_budgets
} else := {i: b |
	some i, child in children
	b := child.budget_tokens
	is_number(b)
	regex.match(whole_pattern, sprintf("%v", [b]))
	not floated_budgets[i]
}

# The children whose budget_tokens was written with a fraction or an
# exponent, by index (none looked for when the batch wrote no float).
floated_budgets := {i |
	count(float_literals) > 0
	some i, _ in children
	float_literal(i, "/budget_tokens")
}

# A whole number by value, exactly, however large (round() would go
# through a float and call 2^64+1 a fraction).
whole(n) if regex.match(whole_pattern, sprintf("%v", [n]))

whole_pattern := `^-?[0-9]+$`

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

# How a message names the sources that refuse: "the operator policy", "the
# operator and plan policies", "the operator policy's profile for role
# "doc-reader"", "the operator policy and its profile for role
# "doc-reader"", "the plan policy and the operator policy's profile for
# role "doc-reader"".
describe(sources) := describe_policies(sources) if {
	not policies.operator.roles
} else := describe_policies(sources) if {
	every source in sources {
		not profile_roles[source]
	}
} else := concat(" and ", [sprintf("the %s", [label(source)]) | some source in sort(sources)]) if {
	every source in sources {
		profile_roles[source]
	}
} else := sprintf("the operator policy and its %s", [concat(" and its ", profile_labels(sources))]) if {
	{source | some source in sources; not profile_roles[source]} == {"operator"}
} else := sprintf("%s and the %s", [
	describe_policies({source | some source in sources; not profile_roles[source]}),
	concat(" and the ", [label(source) | some source in sort(sources); profile_roles[source]]),
])

describe_policies(sources) := sprintf("the %s policy", [only]) if {
	count(sources) == 1
	some only in sources
} else := sprintf("the %s policies", [concat(" and ", sort(sources))])

profile_labels(sources) := [sprintf("profile for role %s", [show(profile_roles[source])]) |
	some source in sort(sources)
	profile_roles[source]
]

# One source as a message names it without its article: "operator policy",
# "operator policy's profile for role "doc-reader"".
label(source) := sprintf("operator policy's profile for role %s", [show(profile_roles[source])]) if {
	profile_roles[source]
} else := sprintf("%s policy", [source])

# The shape of every violation: which child, which field inside it (a JSON
# pointer relative to the child) and why. The rule ID and severity come from
# the METADATA of the package that reports it.
violation(child, field, message) := {"child": child, "field": field, "message": message}

# A violation whose verdict depends on what policies say: it also names,
# as a sorted list, every source that refuses it ("operator", "plan", or a
# profile such as "operator/roles/doc-reader"). An operator's exception can
# then never let through what the plan's own policy refuses. A check that
# refuses whatever any policy says (a tool that is not a plain name, a path
# that cannot be judged) uses violation.
refusal(child, field, message, refusing) := {"child": child, "field": field, "message": message, "policies": sort(refusing)}

# A refusal when some source refuses, else a violation: for a check whose
# verdict depends on what policies say for some values and not for others
# (a path may be outside a root, or ambiguous whatever the roots are).
finding(child, field, message, refusing) := {"child": child, "field": field, "message": message, "policies": sort(refusing)} if {
	count(refusing) > 0
} else := {"child": child, "field": field, "message": message}

# A violation of the plan as a whole, not of any one child: field is a JSON
# pointer into the document, such as "/plan". Only a check with
# custom.scope: plan may report one.
plan_violation(field, message) := {"field": field, "message": message}

plan_refusal(field, message, refusing) := {"field": field, "message": message, "policies": sort(refusing)}

# How many plan children each of input.children stands for, by index. A
# check of the whole plan (custom.scope: plan) sees one child per group and
# input.members; without members, each child stands for itself.
members := input.members if {
	input.members
} else := [1 | some _ in input.children]

# How many children the plan has, counting every member of every group.
plan_size := sum(members)

# The plan tree. A child may carry children of its own; the gate judges
# every child of the tree, each in input.children, and gives each of a
# nested plan a tree object: its depth (1 for the plan's own children, more
# when the plan's parent block says how deep the parent is), the pointer of
# its parent ("/plan/0", "/plan/0/children/2", or "/parent" for the plan's
# parent block), and how many children (spawns) and descendants it has.
# input.parents holds what each parent was given (role, tools, paths,
# budget_tokens, brief, depth) by that pointer, and the sum of its
# children's budgets as children_budget_tokens when every one is a positive
# whole number. A flat plan has neither, and every child is at depth 1.
parents := object.get(input, "parents", {})

default_tree := {"depth": 1, "spawns": 0, "descendants": 0}

tree(child) := object.union(default_tree, child.tree) if {
	is_object(child.tree)
} else := default_tree

# The children that answer to a parent, by index: that parent. (Nothing is
# looked at in a plan without parents.)
parented := {i: parent |
	count(parents) > 0
	some i, child in children
	parent := parents[child.tree.parent]
}

# The pointer of a child's parent, as messages name it ("its parent
# /plan/0 (role "lead")", "the plan's parent (role "lead")").
parent_name(i) := sprintf("the plan's parent%s", [role_suffix(parents["/parent"])]) if {
	children[i].tree.parent == "/parent"
} else := sprintf("its parent %s%s", [ptr, role_suffix(parents[ptr])]) if {
	ptr := children[i].tree.parent
}

role_suffix(parent) := sprintf(" (role %s)", [show(parent.role)]) if {
	is_string(parent.role)
} else := ""

# Where each of input.children is in the document, by index: a check of
# the whole plan (custom.scope: plan) is given input.pointers, the pointer
# of each child it sees (for a group of identical children, its first
# member's). Without them, child i is /plan/i.
pointer(i) := input.pointers[i] if {
	input.pointers
} else := sprintf("/plan/%d", [i])

# Whether each of input.children is one plan child: always so while a
# check that reads what grants nothing applies (the gate then judges every
# child on its own), and in a plan whose children all differ.
each_alone if {
	every m in members {
		m == 1
	}
}

# A setting that must be an object, or {} when it is not (the schema
# refuses it; a check reads it as setting nothing more).
as_object(x) := x if is_object(x)

else := {}

# How a message names other children: by pointer, at most three, and a
# count of the rest (never all of them: 100,000 children sharing one value
# cost 100,000 short messages). drop takes child i out of a few of them.
drop(i, list) := array.concat(array.slice(list, 0, k), array.slice(list, k + 1, count(list))) if {
	some k
	list[k] == i
} else := list

name_list(names, n) := names[0] if {
	n == 1
} else := sprintf("%s and %s", names) if {
	n == 2
} else := sprintf("%s, %s and %s", names) if {
	n == 3
} else := sprintf("%s, %s, %s and %d more %s", array.concat(array.slice(names, 0, 3), [n - 3, children_word(n - 3)]))

children_word(1) := "child"

children_word(n) := "children" if n != 1

# Pairs of [key, index], sorted, grouped: by key, its indexes in order.
# (The gate compiles the checks without OPA's comprehension index, so a
# comprehension per key that looks through every pair would take time
# n squared; a sort and one pass take n log n.)
grouped(pairs) := result if {
	starts := [p | some p, pair in pairs; starts_run(pairs, p, pair)]
	ends := array.concat(array.slice(starts, 1, count(starts)), [count(pairs)])
	result := {pairs[s][0]: [pair[1] | some pair in array.slice(pairs, s, ends[r])] | some r, s in starts}
}

starts_run(_, 0, _)

starts_run(pairs, p, pair) if pairs[p - 1][0] != pair[0]

# Whether a child is one of the plan's own (not a descendant of another).
plans_own(child) if not child.tree.parent

plans_own(child) if child.tree.parent == "/parent"
