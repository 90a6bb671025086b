package spawngate.checks.tree_descendants_test

import data.spawngate.checks.tree_descendants
import data.spawngate.fixtures

# A nested plan as the gate hands it to a check: child 0 is the lead at
# /plan/0 with n descendants, child 1 its child with n - 1 of its own.
nested(policies, n) := {
	"policies": policies,
	"children": [
		fixtures.child({"role": "lead", "tree": {"depth": 1, "spawns": 1, "descendants": n}}),
		fixtures.child({"tree": {"depth": 2, "parent": "/plan/0", "spawns": n - 1, "descendants": n - 1}}),
	],
	"parents": {"/plan/0": {"role": "lead", "depth": 1}},
}

op(fields) := {"operator": object.union(fixtures.operator, fields)}

both(operator, plan) := {"operator": object.union(fixtures.operator, operator), "plan": object.union(fixtures.operator, plan)}

test_no_limit_allowed if {
	count(tree_descendants.deny) == 0 with input as nested(op({}), 100000)
}

test_at_the_limit_allowed if {
	count(tree_descendants.deny) == 0 with input as nested(op({"max_descendants": 3}), 3)
}

test_over_the_limit_denied if {
	deny := tree_descendants.deny with input as nested(op({"max_descendants": 2}), 3)
	deny == {{"child": 0, "field": "/children", "message": "the child has 3 descendants, more than the 2 that max_descendants of the operator policy allows", "policies": ["operator"]}}
}

test_every_child_over_the_limit_denied if {
	deny := tree_descendants.deny with input as nested(op({"max_descendants": 1}), 3)
	deny == {
		{"child": 0, "field": "/children", "message": "the child has 3 descendants, more than the 1 that max_descendants of the operator policy allows", "policies": ["operator"]},
		{"child": 1, "field": "/children", "message": "the child has 2 descendants, more than the 1 that max_descendants of the operator policy allows", "policies": ["operator"]},
	}
}

test_zero_lets_no_child_have_children_denied if {
	deny := tree_descendants.deny with input as nested(op({"max_descendants": 0}), 1)
	deny == {{"child": 0, "field": "/children", "message": "the child has 1 descendants, more than the 0 that max_descendants of the operator policy allows", "policies": ["operator"]}}
}

test_zero_with_no_descendants_allowed if {
	doc := {
		"policies": op({"max_descendants": 0}),
		"children": [fixtures.child({"tree": {"depth": 1, "parent": "/parent", "spawns": 0, "descendants": 0}})],
		"parents": {"/parent": {"role": "caller"}},
	}
	count(tree_descendants.deny) == 0 with input as doc
}

test_lower_plan_limit_holds_denied if {
	deny := tree_descendants.deny with input as nested(both({"max_descendants": 10}, {"max_descendants": 2}), 3)
	deny == {{"child": 0, "field": "/children", "message": "the child has 3 descendants, more than the 2 that max_descendants of the plan policy allows", "policies": ["plan"]}}
}

test_lowest_of_two_policies_named_denied if {
	deny := tree_descendants.deny with input as nested(both({"max_descendants": 2}, {"max_descendants": 1}), 3)
	some v in deny
	v.child == 0
	v == {"child": 0, "field": "/children", "message": "the child has 3 descendants, more than the 1 that max_descendants of the plan policy allows", "policies": ["operator", "plan"]}
}

test_higher_plan_limit_cannot_widen_denied if {
	deny := tree_descendants.deny with input as nested(both({"max_descendants": 2}, {"max_descendants": 100}), 3)
	{[v.child, v.policies] | some v in deny} == {[0, ["operator"]]}
}

test_plan_policy_without_a_limit_sets_none_allowed if {
	count(tree_descendants.deny) == 0 with input as nested(both({"max_descendants": 5}, {}), 5)
}

test_limit_that_is_not_a_number_denied[note] if {
	# The schema refuses these; the check holds even if it did not.
	some note, limit in {"string": "3", "null": null, "bool": true}
	deny := tree_descendants.deny with input as nested(op({"max_descendants": limit}), 1)
	deny == {{"child": 0, "field": "/children", "message": "the child has 1 descendants, and max_descendants of the operator policy is not a number", "policies": ["operator"]}}
}

test_flat_plan_never_refused_allowed if {
	kid := fixtures.child({"tree": {"depth": 1, "spawns": 5, "descendants": 5}})
	count(tree_descendants.deny) == 0 with input as {"policies": op({"max_descendants": 0}), "children": [kid]}
}
