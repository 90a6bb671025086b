package spawngate.checks.budget_invalid_test

import data.spawngate.checks.budget_invalid
import data.spawngate.fixtures

test_positive_whole_number_allowed[note] if {
	some note, budget in {"one": 1, "typical": 40000, "above the cap is budget.cap's": 5000000}
	count(budget_invalid.deny) == 0 with input as fixtures.plan([fixtures.child({"budget_tokens": budget})])
}

test_absent_budget_denied if {
	budget_invalid.deny == {{"child": 0, "field": "/budget_tokens", "message": "budget_tokens is missing: give the child a token budget"}} with input as fixtures.plan([fixtures.child_without("budget_tokens")])
}

test_budget_that_is_not_a_number_denied[article] if {
	some article, budget in {"a string": "40000", "a boolean": true, "null": null, "a list": [40000], "an object": {"tokens": 40000}}
	deny := budget_invalid.deny with input as fixtures.plan([fixtures.child({"budget_tokens": budget})])
	deny == {{"child": 0, "field": "/budget_tokens", "message": sprintf("budget_tokens must be a number, not %s", [article])}}
}

test_fraction_or_exponent_denied[literal] if {
	# The loader records how each such number was written; Rego alone
	# cannot tell 4e4 from 40000.
	some literal, value in {"40000.0": 40000.0, "4e4": 4e4, "4E4": 4E4, "400000e-1": 400000e-1}
	deny := budget_invalid.deny with input as object.union(
		fixtures.plan([fixtures.child({"budget_tokens": value})]),
		{"float_literals": {"/0/budget_tokens": literal}},
	)
	deny == {{"child": 0, "field": "/budget_tokens", "message": sprintf("budget_tokens %s must be written as a whole number, without a fraction or exponent", [literal])}}
}

test_float_literal_after_an_equal_whole_number_denied if {
	# Two children equal in value; only the second wrote its budget as 4e4.
	deny := budget_invalid.deny with input as object.union(
		fixtures.plan([fixtures.child({"budget_tokens": 40000}), fixtures.child({"budget_tokens": 4e4})]),
		{"float_literals": {"/1/budget_tokens": "4e4"}},
	)
	{v.child | some v in deny} == {1}
}

test_fraction_value_denied if {
	deny := budget_invalid.deny with input as fixtures.plan([fixtures.child({"budget_tokens": 0.5})])
	deny == {{"child": 0, "field": "/budget_tokens", "message": "budget_tokens must be a whole number, not 0.5"}}
}

test_zero_and_negative_denied[note] if {
	some note, budget in {"zero": 0, "negative": -1, "negative zero": -0}
	deny := budget_invalid.deny with input as fixtures.plan([fixtures.child({"budget_tokens": budget})])
	deny == {{"child": 0, "field": "/budget_tokens", "message": sprintf("budget_tokens must be positive, not %v", [budget])}}
}
