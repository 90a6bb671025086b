# METADATA
# title: Which violations the operator's exceptions let through
# description: >-
#   Not a check: the gate asks it, after the checks have judged a child,
#   which of the child's violations an exception of the operator policy
#   lets through, and at the end of a plan, which exceptions expired or
#   matched nothing. An excepted violation is still reported, with the
#   exception's reason, and blocks nothing.
package spawngate.exceptions

import data.spawngate.checks.paths_escape
import data.spawngate.lib

# The operator's exceptions, in the order the policy lists them. A plan's
# own policy cannot list any (the plan schema forbids the key), and they
# are never read from it.
exceptions := object.get(input, ["policies", "operator", "exceptions"], [])

# The day the plan is judged (YYYY-MM-DD, UTC), which the gate passes in:
# checks never read the clock. Dates written YYYY-MM-DD compare as text.
today := input.today

expired(x) if x.expires < today

# The gate asks about a child as an item: the child (its role, and its id
# when it is judged alone), its violations, and with --resolve-paths where
# its paths resolve ({"child": ..., "violations": [...], "resolution":
# ...}). excepted_in(item) maps each violation v of the item
# (item.violations[v]) to the first exception, by its index in the policy,
# that lets it through. (The gate asks one violation per item, and once for
# violations alike in all an exception can tell them by: it leaves out a
# role or id that no exception names, which no selector could hold for.)
excepted_in(item) := {v: min(matching) |
	some v, violation in item.violations
	violation.rule != "schema"
	not refused_by_plan(violation)
	matching := {e | some [e, x, keys] in live[violation.rule]; selectors_hold(x, keys, violation, item)}
	count(matching) > 0
}

# One child, the input itself the item.
excepted := excepted_in(input)

# A batch of children (input.items), each item answered in its place: the
# gate asks once for many children, on the cores that judged them.
batch := [excepted_in(item) | some item in input.items]

# An exception applies to a violation when it names the violation's rule,
# has not expired, and every selector it writes holds. It never applies to
# a violation the plan's own policy refuses (so a plan's narrowing always
# holds), nor to the schema step's (a child the schema refuses cannot be
# judged by the other checks at all). excepted_in asks the same, in an
# order that does each part once: per violation what depends on the
# violation alone, per exception (live) what depends on the exception
# alone, and per pair only the selectors.
applies(x, violation, item) if {
	x.rule == violation.rule
	violation.rule != "schema"
	not refused_by_plan(violation)
	not expired(x)
	selectors_hold(x, object.keys(x), violation, item)
}

# The exceptions that have not expired, by the rule they name: each as
# [its index in the policy, the exception, the keys it writes].
live[rule] := [[e, x, object.keys(x)] |
	some e, x in exceptions
	x.rule == rule
	not expired(x)
] if {
	some y in exceptions
	rule := y.rule
}

# Every selector an exception writes (keys: the keys it writes) holds.
selectors_hold(x, keys, violation, item) if {
	role_holds(x, keys, item)
	id_holds(x, keys, item)
	tool_holds(x, keys, violation)
	path_holds(x, keys, violation, item)
}

# A violation is the plan policy's when the plan policy is among those
# that refuse it; and, when the plan brings a policy, whenever the check
# does not say which policies refuse (it may be the plan's narrowing: an
# unknown is a refusal).
refused_by_plan(violation) if "plan" in violation.policies

refused_by_plan(violation) if {
	not "policies" in object.keys(violation)
	"plan" in object.keys(input.policies)
}

role_holds(_, keys, _) if not "role" in keys

role_holds(x, _, item) if x.role == item.child.role

id_holds(_, keys, _) if not "id" in keys

# An id is the plan author's to choose, so an exception naming one holds
# only beside a role, which role_holds binds (the schema refuses an id
# without a role): a child that takes an excepted id must still be of the
# role the operator named, and is judged by what that role may do. The
# gate passes the child's id only when the child is judged alone.
id_holds(x, keys, item) if {
	"role" in keys
	x.id == item.child.id
}

tool_holds(_, keys, _) if not "tool" in keys

# A tool selector names the tool entry the violation is about, with a
# pattern as in allowed_tools, and like allowed_tools it names only a plain
# tool name (never a requested pattern such as fs:*), and a tool that only
# an exact entry allows (lib.exact_only_tools) only when it is that entry.
tool_holds(x, _, violation) if {
	regex.match(`^/tools/[0-9]+$`, violation.field)
	lib.is_tool_name(violation.value)
	names_tool(x.tool, violation.value)
}

names_tool(pattern, tool) if {
	not tool in lib.exact_only_tools
	lib.matches([pattern], tool)
}

names_tool(pattern, tool) if {
	tool in lib.exact_only_tools
	pattern == tool
}

path_holds(_, keys, _, _) if not "path" in keys

# A path selector names the path entry the violation is about: * matches
# within one /-separated segment, ** whole segments, ? one character. It
# never names a path that paths.escape calls ambiguous (its own
# definition, paths_escape.plain: no .., ~, $, %, glob character, empty or
# dot segment...), nor the filesystem root; it is matched against the
# absolute path the entry names (a relative path read against the plan's
# own root, a trailing slash dropped), and with --resolve-paths against the
# path it resolves to as well, so a symlink under an excepted folder
# excepts nothing outside it.
path_holds(x, _, violation, item) if {
	regex.match(`^/paths/[0-9]+$`, violation.field)
	named := path_name(violation.value)
	named != "/"
	glob.match(x.path, ["/"], trim_suffix(named, "/"))
	resolved_holds(x, violation.value, item)
}

# The name a plain path stands for, with a slash appended, as
# lib.path_names gives it to the checks (paths_escape.named); undefined for
# a path that is not plain. The gate passes the names of the paths it asks
# about (input.facts.path_names); without them they are computed here.
path_name(path) := input.facts.path_names[path]

path_name(path) := paths_escape.named(path) if {
	not input.facts.path_names
	is_string(path)
	paths_escape.plain(path)
}

resolved_holds(_, _, item) if not item.resolution

resolved_holds(x, path, item) if glob.match(x.path, ["/"], item.resolution.paths[path].path)

# After the plan: the exceptions that expired, and those that, unexpired,
# matched no violation of the plan (input.matched lists the ones that did).
notes contains {"index": e, "status": "expired"} if {
	some e, x in exceptions
	expired(x)
}

notes contains {"index": e, "status": "unused"} if {
	some e, x in exceptions
	not expired(x)
	not e in {m | some m in input.matched}
}
