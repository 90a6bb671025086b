# METADATA
# title: A plan tree must not be deeper than max_depth
# description: >-
#   A child's depth is 1 for the plan's own children, one more for each
#   level below, plus the depth of the plan's parent block when it says how
#   deep the parent is (a hook's caller that is itself a sub-agent is at
#   depth 1). Every policy that applies bounds it with max_depth, 3 when it
#   sets none (Claude Code's default nesting), so the lowest holds. The child
#   too deep is refused, at its own pointer.
# custom:
#   id: tree.depth
#   severity: high
package spawngate.checks.tree_depth

import data.spawngate.lib

deny contains lib.refusal(i, "", explain(depth, sources), sources) if {
	count(lib.parents) > 0
	some i, child in lib.children
	depth := lib.tree(child).depth
	sources := {source |
		some source, policy in lib.policies
		not depth <= limit(policy)
	}
	count(sources) > 0
}

default_max_depth := 3

limit(policy) := object.get(policy, "max_depth", default_max_depth)

explain(depth, sources) := sprintf("the child is at depth %d, deeper than the max_depth of %v that %s allows", [depth, lowest, lib.describe(sources)]) if {
	lowest := min({n | some source in sources; n := limit(lib.policies[source]); is_number(n)})
} else := sprintf("the child is at depth %d, and the max_depth of %s is not a number", [depth, lib.describe(sources)])
