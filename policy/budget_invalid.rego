# METADATA
# title: A child must have a positive whole-number budget
# description: >-
#   budget_tokens is required and must be a positive whole number, written
#   as one: not a boolean, not a string, and not a number with a fraction or
#   an exponent such as 40000.0 or 4e4.
# custom:
#   id: budget.invalid
#   severity: high
package spawngate.checks.budget_invalid

import data.spawngate.lib

# Every child but those with a budget lib.budgets takes (a set difference:
# no child is looked at one by one when every budget is valid).
deny contains lib.violation(i, "/budget_tokens", problem(i, lib.children[i])) if {
	some i in (object.keys(lib.children) - object.keys(lib.budgets))
}

problem(i, child) := "budget_tokens is missing: give the child a token budget" if {
	not "budget_tokens" in object.keys(child)
} else := sprintf("budget_tokens must be a number, not %s", [lib.a_type(child.budget_tokens)]) if {
	not is_number(child.budget_tokens)
} else := sprintf("budget_tokens %s must be written as a whole number, without a fraction or exponent", [literal]) if {
	literal := lib.float_literal(i, "/budget_tokens")
} else := sprintf("budget_tokens must be a whole number, not %v", [child.budget_tokens]) if {
	not lib.whole(child.budget_tokens)
} else := sprintf("budget_tokens must be positive, not %v", [child.budget_tokens])
