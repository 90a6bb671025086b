package spawngate.checks.tree_budget_test

import data.spawngate.checks.tree_budget
import data.spawngate.fixtures

# A nested plan as the gate hands it to a check: child 0 is the lead at
# /plan/0 with the given budget, children 1.. its children with the given
# budgets, and children_budget_tokens their sum when the gate could make
# it (sum is null when it could not).
nested(budget, budgets, total) := {
	"policies": {"operator": fixtures.operator},
	"children": array.concat(
		[fixtures.child({"role": "lead", "budget_tokens": budget, "tree": {"depth": 1, "spawns": count(budgets), "descendants": count(budgets)}})],
		[fixtures.child({"role": "worker", "budget_tokens": b, "tree": {"depth": 2, "parent": "/plan/0"}}) | some b in budgets],
	),
	"parents": {"/plan/0": object.union({"role": "lead", "budget_tokens": budget, "depth": 1}, summed(total))},
}

summed(null) := {}

summed(total) := {"children_budget_tokens": total} if total != null

test_budgets_within_the_parent_allowed if {
	count(tree_budget.deny) == 0 with input as nested(100000, [40000, 50000], 90000)
}

test_budgets_that_fill_the_parent_exactly_allowed if {
	count(tree_budget.deny) == 0 with input as nested(100000, [40000, 60000], 100000)
}

test_budgets_together_over_the_parent_denied if {
	deny := tree_budget.deny with input as nested(100000, [60000, 50000], 110000)
	msg := "the children of its parent /plan/0 (role \"lead\") ask for 110000 tokens together, more than its budget of 100000"
	deny == {
		{"child": 1, "field": "/budget_tokens", "message": msg},
		{"child": 2, "field": "/budget_tokens", "message": msg},
	}
}

test_budget_alone_over_the_parent_denied if {
	deny := tree_budget.deny with input as nested(100000, [150000, 1000], 151000)
	together := "the children of its parent /plan/0 (role \"lead\") ask for 151000 tokens together, more than its budget of 100000"
	deny == {
		{"child": 1, "field": "/budget_tokens", "message": "budget_tokens 150000 is more than the whole budget of its parent /plan/0 (role \"lead\"), 100000"},
		{"child": 1, "field": "/budget_tokens", "message": together},
		{"child": 2, "field": "/budget_tokens", "message": together},
	}
}

test_sum_that_cannot_be_made_denied if {
	# One sibling's budget is not a positive whole number: the gate gives
	# no children_budget_tokens, and every child of the parent is refused.
	deny := tree_budget.deny with input as nested(100000, [1000, "1000"], null)
	msg := "the budgets of the children of its parent /plan/0 (role \"lead\") cannot be added up (one is not a positive whole number written as one), so they cannot be shown to fit in its budget of 100000"
	deny == {
		{"child": 1, "field": "/budget_tokens", "message": msg},
		{"child": 2, "field": "/budget_tokens", "message": msg},
	}
}

test_budget_written_as_a_float_is_not_compared_alone_denied if {
	# 1e6 is over the parent's budget by value, but a budget written with an
	# exponent is budget.invalid's: only the sum that cannot be made refuses.
	doc := object.union(nested(100000, [1e6], null), {"float_literals": {"/1/budget_tokens": "1e6"}})
	deny := tree_budget.deny with input as doc
	{v.message | some v in deny} == {"the budgets of the children of its parent /plan/0 (role \"lead\") cannot be added up (one is not a positive whole number written as one), so they cannot be shown to fit in its budget of 100000"}
}

test_parent_budget_that_is_not_a_number_denied[note] if {
	some note, budget in {"string": "100000", "fraction": 1000.5, "zero": 0, "negative": -1, "null": null, "bool": true, "list": [100000]}
	deny := tree_budget.deny with input as nested(budget, [1000], 1000)
	msg := "the budget of its parent /plan/0 (role \"lead\") cannot be read as a positive whole number, so no budget of its children fits in it"
	deny == {{"child": 1, "field": "/budget_tokens", "message": msg}}
}

test_parent_without_a_budget_bounds_nothing_allowed if {
	doc := json.patch(nested(1, [5000000, 5000000], 10000000), [{"op": "remove", "path": "/parents/~1plan~10/budget_tokens"}])
	count(tree_budget.deny) == 0 with input as doc
}

test_budgets_beyond_two_to_the_64_denied if {
	deny := tree_budget.deny with input as nested(18446744073709551617, [18446744073709551617, 1], 18446744073709551618)
	{v.message | some v in deny} == {"the children of its parent /plan/0 (role \"lead\") ask for 18446744073709551618 tokens together, more than its budget of 18446744073709551617"}
}

test_budgets_beyond_two_to_the_64_that_fit_allowed if {
	count(tree_budget.deny) == 0 with input as nested(18446744073709551618, [18446744073709551617, 1], 18446744073709551618)
}

test_parent_block_bounds_the_top_level_children_denied if {
	doc := {
		"policies": {"operator": fixtures.operator},
		"children": [
			fixtures.child({"budget_tokens": 900, "tree": {"depth": 1, "parent": "/parent"}}),
			fixtures.child({"budget_tokens": 200, "tree": {"depth": 1, "parent": "/parent"}}),
		],
		"parents": {"/parent": {"role": "worker", "budget_tokens": 1000, "children_budget_tokens": 1100}},
	}
	deny := tree_budget.deny with input as doc
	msg := "the children of the plan's parent (role \"worker\") ask for 1100 tokens together, more than its budget of 1000"
	deny == {
		{"child": 0, "field": "/budget_tokens", "message": msg},
		{"child": 1, "field": "/budget_tokens", "message": msg},
	}
}

test_parent_block_within_allowed if {
	doc := {
		"policies": {"operator": fixtures.operator},
		"children": [fixtures.child({"budget_tokens": 1000, "tree": {"depth": 1, "parent": "/parent"}})],
		"parents": {"/parent": {"budget_tokens": 1000, "children_budget_tokens": 1000}},
	}
	count(tree_budget.deny) == 0 with input as doc
}

test_flat_plan_never_refused_allowed if {
	kid := fixtures.child({"budget_tokens": 150000, "tree": {"depth": 2, "parent": "/plan/0"}})
	count(tree_budget.deny) == 0 with input as fixtures.plan([fixtures.child({"budget_tokens": 1}), kid])
}
