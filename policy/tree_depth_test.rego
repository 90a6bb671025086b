package spawngate.checks.tree_depth_test

import data.spawngate.checks.tree_depth
import data.spawngate.fixtures

# A chain as the gate hands it to a check: child k (from 0) at depth
# base + k + 1, each the only child of the one before; the plan's parent
# block, at depth base, is the first one's parent.
chain(policies, base, n) := {
	"policies": policies,
	"children": [fixtures.child({"tree": {"depth": (base + k) + 1, "parent": pointer(k), "spawns": spawns(k, n), "descendants": (n - k) - 1}}) |
		some k in numbers.range(0, n - 1)
	],
	"parents": object.union(
		{"/parent": {"role": "caller", "depth": base}},
		{pointer(k): {"depth": base + k} | n > 1; some k in numbers.range(1, n - 1)},
	),
}

# The pointer of the parent of child k: the plan's parent block, /plan/0,
# /plan/0/children/0, and so on. (numbers.range counts down when its end
# is below its start: every range here is guarded.)
pointer(0) := "/parent"

pointer(1) := "/plan/0"

pointer(k) := concat("", array.concat(["/plan/0"], ["/children/0" | some _ in numbers.range(1, k - 1)])) if k > 1

spawns(k, n) := 1 if k < n - 1

spawns(k, n) := 0 if k == n - 1

op(fields) := {"operator": object.union(fixtures.operator, fields)}

both(operator, plan) := {"operator": object.union(fixtures.operator, operator), "plan": object.union(fixtures.operator, plan)}

test_chain_fixture_places_children_allowed if {
	doc := chain(op({}), 0, 3)
	[c.tree.parent | some c in doc.children] == ["/parent", "/plan/0", "/plan/0/children/0"]
	object.keys(doc.parents) == {"/parent", "/plan/0", "/plan/0/children/0"}
}

test_three_levels_by_default_allowed if {
	count(tree_depth.deny) == 0 with input as chain(op({}), 0, 3)
}

test_fourth_level_by_default_denied if {
	deny := tree_depth.deny with input as chain(op({}), 0, 4)
	deny == {{"child": 3, "field": "", "message": "the child is at depth 4, deeper than the max_depth of 3 that the operator policy allows", "policies": ["operator"]}}
}

test_every_child_too_deep_denied if {
	deny := tree_depth.deny with input as chain(op({"max_depth": 1}), 0, 3)
	{v.child | some v in deny} == {1, 2}
}

test_raised_max_depth_allowed if {
	count(tree_depth.deny) == 0 with input as chain(op({"max_depth": 5}), 0, 5)
}

test_parent_block_depth_counts_denied if {
	# A caller that is itself at depth 2: its children are at depth 3, theirs at 4.
	deny := tree_depth.deny with input as chain(op({}), 2, 2)
	deny == {{"child": 1, "field": "", "message": "the child is at depth 4, deeper than the max_depth of 3 that the operator policy allows", "policies": ["operator"]}}
}

test_parent_block_depth_within_allowed if {
	count(tree_depth.deny) == 0 with input as chain(op({}), 2, 1)
}

test_lower_plan_limit_holds_denied if {
	deny := tree_depth.deny with input as chain(both({"max_depth": 4}, {"max_depth": 2}), 0, 3)
	deny == {{"child": 2, "field": "", "message": "the child is at depth 3, deeper than the max_depth of 2 that the plan policy allows", "policies": ["plan"]}}
}

test_lowest_of_two_policies_named_denied if {
	# Too deep for both: both refuse, and the message gives the lowest
	# limit and the policy that sets it.
	deny := tree_depth.deny with input as chain(both({"max_depth": 4}, {"max_depth": 2}), 0, 5)
	some v in deny
	v.child == 4
	v == {"child": 4, "field": "", "message": "the child is at depth 5, deeper than the max_depth of 2 that the plan policy allows", "policies": ["operator", "plan"]}
}

test_equal_limits_name_both_denied if {
	deny := tree_depth.deny with input as chain(both({"max_depth": 2}, {"max_depth": 2}), 0, 3)
	deny == {{"child": 2, "field": "", "message": "the child is at depth 3, deeper than the max_depth of 2 that the operator and plan policies allows", "policies": ["operator", "plan"]}}
}

test_higher_plan_limit_cannot_widen_denied if {
	deny := tree_depth.deny with input as chain(both({}, {"max_depth": 10}), 0, 4)
	deny == {{"child": 3, "field": "", "message": "the child is at depth 4, deeper than the max_depth of 3 that the operator policy allows", "policies": ["operator"]}}
}

test_plan_silent_on_depth_keeps_the_operator_limit_allowed if {
	# The default is the operator's: a plan policy that sets none does not
	# hold the plan to 3 where the operator allows more.
	deny := tree_depth.deny with input as chain(both({"max_depth": 5}, {}), 0, 4)
	deny == set()
}

test_operator_limit_above_depth_plan_lower_denied if {
	deny := tree_depth.deny with input as chain(both({"max_depth": 5}, {"max_depth": 2}), 0, 3)
	{v.policies | some v in deny} == {["plan"]}
}

test_limit_that_is_not_a_number_denied[note] if {
	# The schema refuses these; the check holds even if it did not.
	some note, limit in {"string": "3", "null": null, "bool": true}
	deny := tree_depth.deny with input as chain(op({"max_depth": limit}), 0, 1)
	deny == {{"child": 0, "field": "", "message": "the child is at depth 1, and the max_depth of the operator policy is not a number", "policies": ["operator"]}}
}

test_child_without_a_tree_is_at_depth_one_allowed if {
	doc := {"policies": op({"max_depth": 1}), "children": [fixtures.child({})], "parents": {"/plan/0": {}}}
	count(tree_depth.deny) == 0 with input as doc
}

test_flat_plan_never_refused_allowed if {
	# No input.parents: every child is at depth 1, whatever a stale tree key says.
	kid := fixtures.child({"tree": {"depth": 9}})
	count(tree_depth.deny) == 0 with input as fixtures.plan([kid])
	count(tree_depth.deny) == 0 with input as {"policies": op({"max_depth": "x"}), "children": [kid]}
}
