# METADATA
# title: A plan's children must not be budgeted more than max_total_budget_tokens
# description: >-
#   When a policy that applies sets max_total_budget_tokens, the budgets of
#   all the children of the plan together must not exceed it, so the lowest
#   limit holds. Every child counts, refused or not, and each of the
#   children the gate judges once as a group counts on its own. A budget
#   that is not a positive whole number is not counted (the message says how
#   many were not): budget.invalid refuses its child, and so the plan,
#   already. In a nested plan only the plan's own children count: a
#   descendant spends from its parent's budget (tree.budget holds it there).
#   Reported for the plan as a whole, at /plan.
# custom:
#   id: plan.budget
#   severity: medium
#   scope: plan
#   when_set: [max_total_budget_tokens]
package spawngate.checks.plan_budget

import data.spawngate.lib

deny contains lib.plan_refusal("/plan", explain, over) if {
	some policy in lib.policies
	_ := policy.max_total_budget_tokens # most plans have no limit: then nothing is counted
	count(over) > 0
}

# The limit of every policy that sets one, by source.
limits := {source: limit |
	some source, policy in lib.policies
	limit := policy.max_total_budget_tokens
}

# The budgets of the plan's own children together: each child the checks
# see stands for input.members[i] plan children with the same budget. (An
# array, not a set: equal budgets all count.)
total := sum([tokens |
	some i, budget in lib.budgets
	lib.plans_own(lib.children[i])
	tokens := budget * lib.members[i]
])

# The policies whose limit the total is over; a limit that is not a number
# holds no plan.
over := {source |
	some source, limit in limits
	exceeds(limit)
}

exceeds(limit) if not is_number(limit)

exceeds(limit) if total > limit

# The plan children whose budget is not counted.
uncounted := sum([n | some i, n in lib.members; lib.plans_own(lib.children[i]); not lib.budgets[i]])

explain := sprintf("the children's budgets total %v tokens, more than the %v that max_total_budget_tokens of %s allows%s", [total, lowest, lib.describe(setting), note]) if {
	lowest := min({n | some n in limits; is_number(n)})
	setting := {source | some source, n in limits; n == lowest}
} else := sprintf("the children's budgets cannot be totalled against max_total_budget_tokens of %s, which is not a number%s", [lib.describe(over), note])

note := "" if {
	uncounted == 0
} else := " (not counting 1 child without a positive whole budget_tokens, which is refused on its own)" if {
	uncounted == 1
} else := sprintf(" (not counting %d children without a positive whole budget_tokens, which are refused on their own)", [uncounted])
