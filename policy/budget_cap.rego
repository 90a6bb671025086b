# METADATA
# title: Budgets must not exceed the cap
# description: >-
#   A child's budget_tokens must not be above budget_cap_tokens of any policy
#   that applies, nor above the budget_cap_tokens of the profile of the
#   child's role, so the lowest cap holds. A budget that is not a positive
#   whole number is reported by budget.invalid instead.
# custom:
#   id: budget.cap
#   severity: medium
package spawngate.checks.budget_cap

import data.spawngate.lib

# A child without a profile: the lowest cap of the policies holds.
deny contains finding(i, budget, caps) if {
	some i, budget in lib.budgets
	budget > lowest
	lib.unprofiled[i]
}

# A child with a profile: the lowest cap of the policies and the profile.
deny contains finding(i, budget, caps_in_profile[role]) if {
	some i, role in lib.profiled
	budget := lib.budgets[i]
	budget > lowest_in_profile[role]
}

# The cap of every policy, by source.
caps := {source: object.get(policy, "budget_cap_tokens", null) | some source, policy in lib.policies}

lowest := lowest_of(caps)

# By profiled role: the caps of the policies, and the profile's when it
# sets one (else its cap is the operator's, which is among them already).
caps_in_profile := {role: caps_for(role) | some role, _ in lib.profiles}

caps_for(role) := object.union(caps, {lib.profile_sources[role]: lib.profiles[role].budget_cap_tokens}) if {
	lib.profile_sets(role, "budget_cap_tokens")
} else := caps

lowest_in_profile := {role: lowest_of(c) | some role, c in caps_in_profile}

# The lowest of the caps when every one of them is a number; else 0, so
# that no budget is within it.
lowest_of(c) := min({cap | some cap in c}) if {
	count(c) > 0
	every cap in c {
		is_number(cap)
	}
} else := 0

# The refusal names every source whose cap the budget is over; the message
# names the lowest cap and whoever sets it.
finding(i, budget, c) := lib.refusal(i, "/budget_tokens", explain(budget, c), over) if {
	over := {source | some source, cap in c; is_number(cap); budget > cap}
	count(over) > 0
} else := lib.violation(i, "/budget_tokens", sprintf("budget_tokens %v is not allowed: no policy with a numeric cap applies", [budget])) if {
	count(c) == 0
} else := lib.refusal(i, "/budget_tokens", sprintf("budget_tokens %v is not allowed: no numeric cap is set by %s", [budget, lib.describe(capless)]), capless) if {
	capless := {source | some source, cap in c; not is_number(cap)}
}

explain(budget, c) := sprintf("budget_tokens %v exceeds the cap of %v tokens set by %s", [budget, cap, lib.describe(setting)]) if {
	cap := min({n | some n in c; is_number(n)})
	setting := {source | some source, n in c; n == cap}
}
