# METADATA
# title: A child must not have more descendants than max_descendants
# description: >-
#   When a policy that applies sets max_descendants, no child may have more
#   descendants than that (its children, their children, and so on), so the
#   lowest limit holds. Refused at the child's children list. The whole
#   plan, every level counted, is bounded by max_children (plan.children).
# custom:
#   id: tree.descendants
#   severity: medium
#   when_nested: true
package spawngate.checks.tree_descendants

import data.spawngate.lib

deny contains lib.refusal(i, "/children", explain(n, sources), sources) if {
	count(limits) > 0
	count(lib.parents) > 0
	some i, child in lib.children
	n := lib.tree(child).descendants
	n > 0
	sources := {source |
		some source, limit in limits
		more(n, limit)
	}
	count(sources) > 0
}

# A limit that is not a number holds no child (Rego would order "3" above
# every number, and let any count through).
more(_, limit) if not is_number(limit)

more(n, limit) if n > limit

# The limit of every policy that sets one, by source.
limits := {source: limit |
	some source, policy in lib.policies
	limit := policy.max_descendants
}

# The message names the policies whose limit is the lowest; the refusal
# names every one the child has too many descendants for.
explain(n, sources) := sprintf("the child has %d descendants, more than the %v that max_descendants of %s allows", [n, lowest, lib.describe(setting)]) if {
	lowest := min({l | some source in sources; l := limits[source]; is_number(l)})
	setting := {source | some source in sources; limits[source] == lowest}
} else := sprintf("the child has %d descendants, and max_descendants of %s is not a number", [n, lib.describe(sources)])
