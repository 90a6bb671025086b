package spawngate.checks.plan_budget_test

import data.spawngate.checks.plan_budget
import data.spawngate.fixtures

grouped(policies, children, members) := {"policies": policies, "children": children, "members": members}

limited(n) := object.union(fixtures.operator, {"max_total_budget_tokens": n})

test_total_at_the_limit_allowed if {
	children := [fixtures.child({"budget_tokens": 40000}), fixtures.child({"role": "fixer", "budget_tokens": 20000})]
	count(plan_budget.deny) == 0 with input as grouped({"operator": limited(160000)}, children, [3, 2])
}

test_no_limit_allowed if {
	count(plan_budget.deny) == 0 with input as grouped({"operator": fixtures.operator}, [fixtures.child({})], [100000])
}

test_total_over_the_limit_denied if {
	children := [fixtures.child({"budget_tokens": 40000}), fixtures.child({"role": "fixer", "budget_tokens": 20000})]
	deny := plan_budget.deny with input as grouped({"operator": limited(159999)}, children, [3, 2])
	deny == {{"field": "/plan", "message": "the children's budgets total 160000 tokens, more than the 159999 that max_total_budget_tokens of the operator policy allows", "policies": ["operator"]}}
}

test_equal_budgets_all_count_denied if {
	# Two representatives with the same budget (a set would count it once).
	children := [fixtures.child({"budget_tokens": 40000}), fixtures.child({"role": "fixer", "budget_tokens": 40000})]
	deny := plan_budget.deny with input as grouped({"operator": limited(79999)}, children, [1, 1])
	count(deny) == 1
}

test_invalid_budgets_are_not_counted_denied if {
	children := [fixtures.child({"budget_tokens": 40000}), fixtures.child({"budget_tokens": "9999999"}), fixtures.child({"budget_tokens": -5})]
	deny := plan_budget.deny with input as grouped({"operator": limited(50000)}, children, [2, 1, 3])
	deny == {{"field": "/plan", "message": "the children's budgets total 80000 tokens, more than the 50000 that max_total_budget_tokens of the operator policy allows (not counting 4 children without a positive whole budget_tokens, which are refused on their own)", "policies": ["operator"]}}
}

test_invalid_budgets_alone_stay_under_the_limit_allowed if {
	children := [fixtures.child({"budget_tokens": 4e9}), fixtures.child({"budget_tokens": 10})]
	doc := object.union(grouped({"operator": limited(100)}, children, [1, 1]), {"float_literals": {"/0/budget_tokens": "4e9"}})
	count(plan_budget.deny) == 0 with input as doc
}

test_large_totals_are_exact_denied if {
	children := [fixtures.child({"budget_tokens": 9007199254740991})]
	deny := plan_budget.deny with input as grouped({"operator": limited(9007199254740991)}, children, [3])
	deny == {{"field": "/plan", "message": "the children's budgets total 27021597764222973 tokens, more than the 9007199254740991 that max_total_budget_tokens of the operator policy allows", "policies": ["operator"]}}
}

test_lower_plan_limit_holds_denied if {
	deny := plan_budget.deny with input as grouped({"operator": limited(1000000), "plan": limited(100000)}, [fixtures.child({})], [3])
	deny == {{"field": "/plan", "message": "the children's budgets total 120000 tokens, more than the 100000 that max_total_budget_tokens of the plan policy allows", "policies": ["plan"]}}
}

test_over_both_limits_names_both_denied if {
	deny := plan_budget.deny with input as grouped({"operator": limited(100000), "plan": limited(100000)}, [fixtures.child({})], [3])
	deny == {{"field": "/plan", "message": "the children's budgets total 120000 tokens, more than the 100000 that max_total_budget_tokens of the operator and plan policies allows", "policies": ["operator", "plan"]}}
}

test_one_uncounted_child_is_said_so_denied if {
	children := [fixtures.child({"budget_tokens": 40000}), fixtures.child({"budget_tokens": 0})]
	deny := plan_budget.deny with input as grouped({"operator": limited(1)}, children, [1, 1])
	some v in deny
	endswith(v.message, "(not counting 1 child without a positive whole budget_tokens, which is refused on its own)")
}
