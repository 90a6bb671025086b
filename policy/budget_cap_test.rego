package spawngate.checks.budget_cap_test

import data.spawngate.checks.budget_cap
import data.spawngate.fixtures

test_budget_at_the_cap_allowed if {
	count(budget_cap.deny) == 0 with input as fixtures.plan([fixtures.child({"budget_tokens": 200000})])
}

test_budget_over_the_cap_denied if {
	budget_cap.deny == {{"child": 0, "field": "/budget_tokens", "message": "budget_tokens 5000000 exceeds the cap of 200000 tokens set by the operator policy", "policies": ["operator"]}} with input as fixtures.plan([fixtures.child({"budget_tokens": 5000000})])
}

test_budget_beyond_two_to_the_53_denied if {
	count(budget_cap.deny) == 1 with input as fixtures.plan([fixtures.child({"budget_tokens": 9007199254740993})])
}

test_budget_beyond_two_to_the_64_is_over_the_cap_denied if {
	deny := budget_cap.deny with input as fixtures.plan([fixtures.child({"budget_tokens": 18446744073709551617})])
	deny == {{"child": 0, "field": "/budget_tokens", "message": "budget_tokens 18446744073709551617 exceeds the cap of 200000 tokens set by the operator policy", "policies": ["operator"]}}
}

test_lower_plan_cap_holds_denied if {
	policy := object.union(fixtures.operator, {"budget_cap_tokens": 10000})
	deny := budget_cap.deny with input as fixtures.plan_with(policy, [fixtures.child({"budget_tokens": 40000})])
	deny == {{"child": 0, "field": "/budget_tokens", "message": "budget_tokens 40000 exceeds the cap of 10000 tokens set by the plan policy", "policies": ["plan"]}}
}

test_higher_plan_cap_cannot_widen_denied if {
	policy := object.union(fixtures.operator, {"budget_cap_tokens": 10000000})
	deny := budget_cap.deny with input as fixtures.plan_with(policy, [fixtures.child({"budget_tokens": 5000000})])
	deny == {{"child": 0, "field": "/budget_tokens", "message": "budget_tokens 5000000 exceeds the cap of 200000 tokens set by the operator policy", "policies": ["operator"]}}
}

test_invalid_budgets_are_left_to_budget_invalid_allowed[note] if {
	some note, budget in {"string": "9999999", "fraction": 9999999.5, "negative": -1, "bool": true}
	count(budget_cap.deny) == 0 with input as fixtures.plan([fixtures.child({"budget_tokens": budget})])
}

test_float_literal_is_left_to_budget_invalid_allowed if {
	count(budget_cap.deny) == 0 with input as object.union(
		fixtures.plan([fixtures.child({"budget_tokens": 1e7})]),
		{"float_literals": {"/0/budget_tokens": "1e7"}},
	)
}

test_no_policy_denied if {
	deny := budget_cap.deny with input as {"policies": {}, "children": [fixtures.child({})]}
	deny == {{"child": 0, "field": "/budget_tokens", "message": "budget_tokens 40000 is not allowed: no policy with a numeric cap applies"}}
}

test_over_both_caps_names_both_denied if {
	policy := object.union(fixtures.operator, {"budget_cap_tokens": 10000})
	deny := budget_cap.deny with input as fixtures.plan_with(policy, [fixtures.child({"budget_tokens": 300000})])
	deny == {{"child": 0, "field": "/budget_tokens", "message": "budget_tokens 300000 exceeds the cap of 10000 tokens set by the plan policy", "policies": ["operator", "plan"]}}
}

test_missing_cap_refuses_every_budget_denied if {
	policy := object.remove(fixtures.operator, ["budget_cap_tokens"])
	deny := budget_cap.deny with input as {"policies": {"operator": policy}, "children": [fixtures.child({})]}
	deny == {{"child": 0, "field": "/budget_tokens", "message": "budget_tokens 40000 is not allowed: no numeric cap is set by the operator policy", "policies": ["operator"]}}
}

# Role profiles: the profile's cap holds for its role too.
test_profile_cap_holds_for_its_role_denied if {
	deny := budget_cap.deny with input as fixtures.profiled({"doc-reader": {"budget_cap_tokens": 20000}}, [fixtures.child({"budget_tokens": 40000}), fixtures.child({"role": "fixer", "budget_tokens": 40000})])
	deny == {{"child": 0, "field": "/budget_tokens", "message": "budget_tokens 40000 exceeds the cap of 20000 tokens set by the operator policy's profile for role \"doc-reader\"", "policies": ["operator/roles/doc-reader"]}}
}

test_budget_within_the_profile_cap_allowed if {
	count(budget_cap.deny) == 0 with input as fixtures.profiled({"doc-reader": {"budget_cap_tokens": 40000}}, [fixtures.child({"budget_tokens": 40000})])
}

test_profile_cap_cannot_widen_denied if {
	deny := budget_cap.deny with input as fixtures.profiled({"doc-reader": {"budget_cap_tokens": 9000000}}, [fixtures.child({"budget_tokens": 5000000})])
	deny == {{"child": 0, "field": "/budget_tokens", "message": "budget_tokens 5000000 exceeds the cap of 200000 tokens set by the operator policy", "policies": ["operator"]}}
}

test_profile_cap_equal_to_the_operators_names_both_denied if {
	deny := budget_cap.deny with input as fixtures.profiled({"doc-reader": {"budget_cap_tokens": 200000}}, [fixtures.child({"budget_tokens": 200001})])
	deny == {{"child": 0, "field": "/budget_tokens", "message": "budget_tokens 200001 exceeds the cap of 200000 tokens set by the operator policy and its profile for role \"doc-reader\"", "policies": ["operator", "operator/roles/doc-reader"]}}
}

test_profile_without_a_cap_is_not_named_denied if {
	deny := budget_cap.deny with input as fixtures.profiled({"doc-reader": {"allow_write": false}}, [fixtures.child({"budget_tokens": 200001})])
	deny == {{"child": 0, "field": "/budget_tokens", "message": "budget_tokens 200001 exceeds the cap of 200000 tokens set by the operator policy", "policies": ["operator"]}}
}

test_plan_and_profile_caps_denied if {
	plan := object.union(fixtures.operator, {"budget_cap_tokens": 30000})
	deny := budget_cap.deny with input as fixtures.profiled_with({"doc-reader": {"budget_cap_tokens": 35000}}, plan, [fixtures.child({"budget_tokens": 40000})])
	deny == {{"child": 0, "field": "/budget_tokens", "message": "budget_tokens 40000 exceeds the cap of 30000 tokens set by the plan policy", "policies": ["operator/roles/doc-reader", "plan"]}}
}
