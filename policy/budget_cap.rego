# METADATA
# title: Budgets must not exceed the cap
# description: >-
#   A child's budget_tokens must not be above budget_cap_tokens of any policy
#   that applies, so the lowest cap holds. A budget that is not a positive
#   whole number is reported by budget.invalid instead.
# custom:
#   id: budget.cap
#   severity: medium
package spawngate.checks.budget_cap

import data.spawngate.lib

deny contains lib.violation(i, "/budget_tokens", explain(budget)) if {
	some i, budget in lib.budgets
	not within_every_cap(budget)
}

within_every_cap(budget) if {
	count(lib.policies) > 0
	every policy in lib.policies {
		is_number(policy.budget_cap_tokens)
		budget <= policy.budget_cap_tokens
	}
}

explain(budget) := sprintf("budget_tokens %v exceeds the cap of %v tokens set by %s", [budget, cap, lib.describe(setting)]) if {
	cap := min({c | some policy in lib.policies; c := policy.budget_cap_tokens; is_number(c)})
	setting := {source | some source, policy in lib.policies; policy.budget_cap_tokens == cap}
} else := sprintf("budget_tokens %v is not allowed: no policy with a numeric cap applies", [budget])
