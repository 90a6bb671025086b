package spawngate.checks.plan_children_test

import data.spawngate.checks.plan_children
import data.spawngate.fixtures

# A plan of the given representatives, each standing for members[i]
# children, as the gate hands a check of the whole plan.
grouped(policies, children, members) := {"policies": policies, "children": children, "members": members}

limited(n) := object.union(fixtures.operator, {"max_children": n})

test_plan_at_the_limit_allowed if {
	count(plan_children.deny) == 0 with input as grouped({"operator": limited(5)}, [fixtures.child({}), fixtures.child({"role": "fixer"})], [3, 2])
}

test_no_limit_allowed if {
	count(plan_children.deny) == 0 with input as grouped({"operator": fixtures.operator}, [fixtures.child({})], [100000])
}

test_plan_over_the_limit_denied if {
	deny := plan_children.deny with input as grouped({"operator": limited(2)}, [fixtures.child({}), fixtures.child({"role": "fixer"})], [1, 2])
	deny == {{"field": "/plan", "message": "the plan has 3 children, more than the 2 that max_children of the operator policy allows", "policies": ["operator"]}}
}

test_members_of_a_group_each_count_denied if {
	# One representative standing for 11 identical children.
	deny := plan_children.deny with input as grouped({"operator": limited(10)}, [fixtures.child({})], [11])
	count(deny) == 1
}

test_children_that_are_not_objects_count_denied if {
	deny := plan_children.deny with input as grouped({"operator": limited(2)}, [fixtures.child({}), "x", null], [1, 1, 1])
	some v in deny
	startswith(v.message, "the plan has 3 children")
}

test_lower_plan_limit_holds_denied if {
	deny := plan_children.deny with input as grouped({"operator": limited(10), "plan": limited(4)}, [fixtures.child({})], [5])
	deny == {{"field": "/plan", "message": "the plan has 5 children, more than the 4 that max_children of the plan policy allows", "policies": ["plan"]}}
}

test_over_both_limits_names_both_denied if {
	deny := plan_children.deny with input as grouped({"operator": limited(10), "plan": limited(4)}, [fixtures.child({})], [12])
	deny == {{"field": "/plan", "message": "the plan has 12 children, more than the 4 that max_children of the plan policy allows", "policies": ["operator", "plan"]}}
}

test_higher_plan_limit_cannot_widen_denied if {
	deny := plan_children.deny with input as grouped({"operator": limited(3), "plan": limited(100)}, [fixtures.child({})], [4])
	{v.policies | some v in deny} == {["operator"]}
}

test_without_members_each_child_counts_once_denied if {
	deny := plan_children.deny with input as {"policies": {"operator": limited(1)}, "children": [fixtures.child({}), fixtures.child({})]}
	count(deny) == 1
}

test_non_numeric_limit_refuses_denied if {
	deny := plan_children.deny with input as grouped({"operator": limited("3")}, [fixtures.child({})], [1])
	deny == {{"field": "/plan", "message": "the plan's children cannot be counted against max_children of the operator policy, which is not a number", "policies": ["operator"]}}
}
