# METADATA
# title: Children's budgets must fit in their parent's
# description: >-
#   In a nested plan, a parent's budget is all its children may spend: each
#   child's budget_tokens, and the budgets of all its parent's children
#   together, must stay within the parent's budget_tokens. Every child of an
#   overspent parent is refused, since any of them could be the one that does
#   not fit. A sum that cannot be made (a sibling's budget is not a positive
#   whole number written as one) or a parent budget that is not one refuses
#   too. The plan's parent block, when it sets budget_tokens, bounds the
#   plan's own children the same way.
# custom:
#   id: tree.budget
#   severity: medium
#   when_nested: true
package spawngate.checks.tree_budget

import data.spawngate.lib

deny contains lib.violation(i, "/budget_tokens", message) if {
	some i, parent in lib.parented
	_ := parent.budget_tokens
	some message in problems(i, parent)
}

problems(i, parent) := {sprintf("the budget of %s cannot be read as a positive whole number, so no budget of its children fits in it", [lib.parent_name(i)])} if {
	not positive(parent.budget_tokens)
} else := {msg |
	some msg in [alone(i, parent), together(i, parent)]
	msg != ""
}

positive(n) if {
	is_number(n)
	lib.whole(n)
	n > 0
}

alone(i, parent) := sprintf("budget_tokens %v is more than the whole budget of %s, %v", [b, lib.parent_name(i), parent.budget_tokens]) if {
	b := lib.budgets[i]
	b > parent.budget_tokens
} else := ""

together(i, parent) := sprintf("the budgets of the children of %s cannot be added up (one is not a positive whole number written as one), so they cannot be shown to fit in its budget of %v", [lib.parent_name(i), parent.budget_tokens]) if {
	not parent.children_budget_tokens
} else := sprintf("the children of %s ask for %v tokens together, more than its budget of %v", [lib.parent_name(i), parent.children_budget_tokens, parent.budget_tokens]) if {
	parent.children_budget_tokens > parent.budget_tokens
} else := ""
