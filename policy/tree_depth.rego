# METADATA
# title: A plan tree must not be deeper than max_depth
# description: >-
#   A child's depth is 1 for the plan's own children, one more for each
#   level below, plus the depth of the plan's parent block when it says how
#   deep the parent is (a hook's caller that is itself a sub-agent is at
#   depth 1). Every policy that applies and sets max_depth bounds it, so
#   the lowest holds, and the operator's policy bounds it at 3 (Claude
#   Code's default nesting) when it sets none: a plan's own policy can
#   lower the limit, never raise it, and saying nothing of depth leaves the
#   operator's limit as it is. The child too deep is refused, at its own
#   pointer.
# custom:
#   id: tree.depth
#   severity: high
#   when_nested: true
package spawngate.checks.tree_depth

import data.spawngate.lib

deny contains lib.refusal(i, "", explain(depth, sources), sources) if {
	count(lib.parents) > 0
	some i, child in lib.children
	depth := lib.tree(child).depth
	sources := {source |
		some source, limit in limits
		deeper(depth, limit)
	}
	count(sources) > 0
}

default_max_depth := 3

# The limit of every policy that sets one, by source, and the default for
# the operator's policy when it sets none (for the plan's own when there is
# no operator policy). A plan's own policy can only narrow: its higher
# max_depth does not lift the operator's default, and its silence does not
# hold the operator's higher max_depth to 3.
set_limits := {source: policy.max_depth |
	some source, policy in lib.policies
	_ := policy.max_depth
}

default_source := "operator" if lib.policies.operator

else := "plan"

limits := object.union({default_source: default_max_depth}, set_limits)

# A limit that is not a number holds no child (Rego would order "3" above
# every number, and let any depth through).
deeper(_, limit) if not is_number(limit)

deeper(depth, limit) if depth > limit

# The message names the policies whose limit is the lowest; the refusal
# names every one the child is too deep for.
explain(depth, sources) := sprintf("the child is at depth %d, deeper than the max_depth of %v that %s allows", [depth, lowest, lib.describe(setting)]) if {
	lowest := min({n | some source in sources; n := limits[source]; is_number(n)})
	setting := {source | some source in sources; limits[source] == lowest}
} else := sprintf("the child is at depth %d, and the max_depth of %s is not a number", [depth, lib.describe(sources)])
