# METADATA
# title: A plan must not dispatch more children than max_children
# description: >-
#   When a policy that applies sets max_children, the plan may list at most
#   that many children, so the lowest limit holds. Every child counts,
#   refused or not, and each of the children the gate judges once as a group
#   counts on its own. Reported for the plan as a whole, at /plan.
# custom:
#   id: plan.children
#   severity: medium
#   scope: plan
#   when_set: [max_children]
package spawngate.checks.plan_children

import data.spawngate.lib

deny contains lib.plan_refusal("/plan", explain, over) if {
	some policy in lib.policies
	_ := policy.max_children # most plans have no limit: then nothing is counted
	count(over) > 0
}

# The limit of every policy that sets one, by source.
limits := {source: limit |
	some source, policy in lib.policies
	limit := policy.max_children
}

# The policies whose limit the plan is over; a limit that is not a number
# holds no plan.
over := {source |
	some source, limit in limits
	exceeds(limit)
}

exceeds(limit) if not is_number(limit)

exceeds(limit) if lib.plan_size > limit

explain := sprintf("the plan has %d children, more than the %d that max_children of %s allows", [lib.plan_size, lowest, lib.describe(setting)]) if {
	lowest := min({n | some n in limits; is_number(n)})
	setting := {source | some source, n in limits; n == lowest}
} else := sprintf("the plan's children cannot be counted against max_children of %s, which is not a number", [lib.describe(over)])
