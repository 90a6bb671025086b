package spawngate.checks.brief_retask_test

import data.spawngate.checks.brief_retask
import data.spawngate.fixtures

retask(settings) := object.union(fixtures.operator, {"brief_retask": settings})

# The re-task block as a parent writes it, and a brief that carries it
# and states its completion condition.
block(nonce) := sprintf("RETASK CHANNEL: to revise this task later, your parent will quote token %s.", [nonce])

good(nonce) := sprintf("Fix the flaky test in pkg/x. Done when go test ./pkg/x passes three times.\n%s", [block(nonce)])

briefed(brief) := fixtures.child({"brief": brief})

judged(children) := {"policies": {"operator": retask({})}, "children": children}

test_fresh_nonce_for_every_child_allowed if {
	count(brief_retask.deny) == 0 with input as judged([briefed(good("R-7f3a9c")), briefed(good("R-0b1d2e")), briefed(good("R-c4d5e6"))])
}

test_no_policy_sets_brief_retask_allowed if {
	count(brief_retask.deny) == 0 with input as fixtures.plan([fixtures.child({}), briefed("revise anything"), briefed(good("R-1")), briefed(good("R-1"))])
}

test_brief_without_block_denied if {
	deny := brief_retask.deny with input as judged([briefed(good("R-7f3a9c")), briefed("Fix the flaky test. Done when it passes.")])
	deny == {{"child": 1, "field": "/brief", "message": "the brief carries no re-task block, and brief_retask of the operator policy requires one in every brief", "policies": ["operator"]}}
}

test_child_without_brief_denied if {
	deny := brief_retask.deny with input as judged([fixtures.child({})])
	deny == {{"child": 0, "field": "/brief", "message": "the child has no brief, so no re-task block, and brief_retask of the operator policy requires one in every brief", "policies": ["operator"]}}
}

test_block_must_name_its_token_on_the_same_line_denied if {
	# The words of the block grant revisions themselves.
	deny := brief_retask.deny with input as judged([briefed("RETASK CHANNEL below.\ntoken R-7f3a9c. Done when it passes.")])
	{v.message | some v in deny} == {"the brief pre-authorizes revisions (\"RETASK\") without a re-task token, so a forged revision could not be told from its parent's: brief_retask of the operator policy refuses such a brief"}
}

test_grants_without_token_denied[word] if {
	some word in ["revise", "revisions", "re-task", "retasking", "expand the scope", "Expanded scope"]
	brief := sprintf("You may %s as you see fit. Done when the tests pass.", [word])
	deny := brief_retask.deny with input as judged([briefed(brief)])
	deny == {{"child": 0, "field": "/brief", "message": sprintf("the brief pre-authorizes revisions (%q) without a re-task token, so a forged revision could not be told from its parent's: brief_retask of the operator policy refuses such a brief", [word]), "policies": ["operator"]}}
}

test_grants_without_token_when_not_required_denied if {
	policy := retask({"required": false})
	deny := brief_retask.deny with input as {"policies": {"operator": policy}, "children": [briefed("Revise the plan as needed.")]}
	{v.message | some v in deny} == {"the brief pre-authorizes revisions (\"Revise\") without a re-task token, so a forged revision could not be told from its parent's: brief_retask of the operator policy refuses such a brief"}
}

test_not_required_plain_brief_and_no_brief_allowed if {
	policy := retask({"required": false})
	count(brief_retask.deny) == 0 with input as {"policies": {"operator": policy}, "children": [briefed("Fix the flaky test."), fixtures.child({}), briefed(good("R-7f3a9c"))]}
}

test_not_required_block_still_judged_denied if {
	policy := retask({"required": false})
	deny := brief_retask.deny with input as {"policies": {"operator": policy}, "children": [briefed(good("R-7f3a9c")), briefed(good("R-7f3a9c"))]}
	{v.child | some v in deny} == {0, 1}
}

test_words_inside_other_words_grant_nothing_allowed if {
	policy := retask({"required": false})
	count(brief_retask.deny) == 0 with input as {"policies": {"operator": policy}, "children": [briefed("Read the revisionist history chapter and the expander docs.")]}
}

test_only_false_makes_the_block_optional_denied if {
	policy := retask({"required": "false"})
	deny := brief_retask.deny with input as {"policies": {"operator": policy}, "children": [briefed("Fix the flaky test.")]}
	count(deny) == 1
}

test_shared_nonce_denied if {
	deny := brief_retask.deny with input as judged([briefed(good("R-7f3a9c")), briefed(good("R-0b1d2e")), briefed(good("R-7f3a9c"))])
	deny == {
		{"child": 0, "field": "/brief", "message": "the brief's re-task nonce \"R-7f…\" is also handed to /plan/2: a revision meant for one child would pass for the other's, and brief_retask of the operator policy requires a nonce of its own for every child", "policies": ["operator"]},
		{"child": 2, "field": "/brief", "message": "the brief's re-task nonce \"R-7f…\" is also handed to /plan/0: a revision meant for one child would pass for the other's, and brief_retask of the operator policy requires a nonce of its own for every child", "policies": ["operator"]},
	}
}

others_named(n, i) := {msg |
	deny := brief_retask.deny with input as judged([briefed(good("R-7f3a9c")) | some _ in numbers.range(1, n)])
	some v in deny
	v.child == i
	msg := v.message
}

test_shared_nonce_names_at_most_three_others_denied if {
	others_named(3, 1) == {"the brief's re-task nonce \"R-7f…\" is also handed to /plan/0 and /plan/2: a revision meant for one child would pass for the other's, and brief_retask of the operator policy requires a nonce of its own for every child"}
	others_named(4, 2) == {"the brief's re-task nonce \"R-7f…\" is also handed to /plan/0, /plan/1 and /plan/3: a revision meant for one child would pass for the other's, and brief_retask of the operator policy requires a nonce of its own for every child"}
	others_named(6, 0) == {"the brief's re-task nonce \"R-7f…\" is also handed to /plan/1, /plan/2, /plan/3 and 2 more children: a revision meant for one child would pass for the other's, and brief_retask of the operator policy requires a nonce of its own for every child"}
	others_named(5, 4) == {"the brief's re-task nonce \"R-7f…\" is also handed to /plan/0, /plan/1, /plan/2 and 1 more child: a revision meant for one child would pass for the other's, and brief_retask of the operator policy requires a nonce of its own for every child"}
}

test_group_standing_for_several_children_shares_its_nonce_denied if {
	deny := brief_retask.deny with input as object.union(judged([briefed(good("R-7f3a9c")), briefed(good("R-0b1d2e"))]), {"members": [3, 1]})
	deny == {{"child": 0, "field": "/brief", "message": "the brief's re-task nonce \"R-7f…\" is also handed to 2 other children: a revision meant for one child would pass for the other's, and brief_retask of the operator policy requires a nonce of its own for every child", "policies": ["operator"]}}
}

test_one_brief_repeating_its_own_block_allowed if {
	brief := sprintf("%s\n%s", [good("R-7f3a9c"), block("R-7f3a9c")])
	count(brief_retask.deny) == 0 with input as judged([briefed(brief), briefed(good("R-0b1d2e"))])
}

test_each_of_several_nonces_in_one_brief_is_judged_denied if {
	brief := sprintf("%s\n%s", [good("R-aaaaaa"), block("R-7f3a9c")])
	deny := brief_retask.deny with input as judged([briefed(brief), briefed(good("R-7f3a9c"))])
	{v.child | some v in deny} == {0, 1}
}

# A nested plan: the gate lists the plan's own children first, then the
# descendants in pre-order, each with its parent's pointer, and gives a
# check of the whole plan each child's pointer in input.pointers.
nested(fields, parent) := object.union(fixtures.child(fields), {"tree": {"depth": 2, "parent": parent}})

top(fields) := object.union(fixtures.child(fields), {"tree": {"depth": 1}})

test_shared_nonce_in_a_tree_names_the_descendant_denied if {
	children := [
		top({"brief": good("R-aaaaaa")}),
		top({"brief": good("R-bbbbbb")}),
		nested({"brief": good("R-cccccc")}, "/plan/1"),
		nested({"brief": good("R-aaaaaa")}, "/plan/1"),
	]
	deny := brief_retask.deny with input as {"policies": {"operator": retask({})}, "children": children, "pointers": ["/plan/0", "/plan/1", "/plan/1/children/0", "/plan/1/children/1"], "parents": {"/plan/1": {"brief": good("R-bbbbbb")}}}
	{[v.child, v.message] | some v in deny} == {
		[0, "the brief's re-task nonce \"R-aa…\" is also handed to /plan/1/children/1: a revision meant for one child would pass for the other's, and brief_retask of the operator policy requires a nonce of its own for every child"],
		[3, "the brief's re-task nonce \"R-aa…\" is also handed to /plan/0: a revision meant for one child would pass for the other's, and brief_retask of the operator policy requires a nonce of its own for every child"],
	}
}

test_parents_own_nonce_handed_down_denied if {
	children := [
		top({"brief": good("R-bbbbbb")}),
		nested({"brief": good("R-bbbbbb")}, "/plan/0"),
	]
	deny := brief_retask.deny with input as {"policies": {"operator": retask({})}, "children": children, "pointers": ["/plan/0", "/plan/0/children/0"], "parents": {"/plan/0": {"role": "doc-reader", "brief": good("R-bbbbbb")}}}
	{[v.child, v.message] | some v in deny} == {
		[0, "the brief's re-task nonce \"R-bb…\" is also handed to /plan/0/children/0: a revision meant for one child would pass for the other's, and brief_retask of the operator policy requires a nonce of its own for every child"],
		[1, "the brief's re-task nonce \"R-bb…\" is also handed to /plan/0: a revision meant for one child would pass for the other's, and brief_retask of the operator policy requires a nonce of its own for every child"],
		[1, "the brief's re-task nonce \"R-bb…\" is the one its parent /plan/0 (role \"doc-reader\") was itself handed: one secret would serve two trust boundaries, and the child could forge a revision back to its parent; brief_retask of the operator policy refuses it"],
	}
}

test_parent_and_child_with_nonces_of_their_own_allowed if {
	children := [
		top({"brief": good("R-bbbbbb")}),
		nested({"brief": good("R-cccccc")}, "/plan/0"),
	]
	count(brief_retask.deny) == 0 with input as {"policies": {"operator": retask({})}, "children": children, "parents": {"/plan/0": {"brief": good("R-bbbbbb")}}}
}

with_parent(children, parent) := {"policies": {"operator": retask({})}, "children": children, "parents": {"/parent": parent}}

inbound_message := "the brief's re-task nonce \"R-in…\" is the one the plan's parent (/parent) was itself handed: one secret would serve two trust boundaries, and the child could forge a revision back to its parent; brief_retask of the operator policy refuses it"

test_inbound_nonce_by_value_denied if {
	deny := brief_retask.deny with input as with_parent([nested({"brief": good("R-inbound1")}, "/parent")], {"inbound_nonce": "R-inbound1"})
	deny == {{"child": 0, "field": "/brief", "message": inbound_message, "policies": ["operator"]}}
}

test_inbound_nonce_by_hash_denied if {
	deny := brief_retask.deny with input as with_parent([nested({"brief": good("R-inbound1")}, "/parent")], {"inbound_nonce_sha256": crypto.sha256("R-inbound1")})
	deny == {{"child": 0, "field": "/brief", "message": inbound_message, "policies": ["operator"]}}
}

test_inbound_nonce_pasted_two_levels_down_denied if {
	children := [
		nested({"brief": good("R-aaaaaa")}, "/parent"),
		object.union(nested({"brief": good("R-inbound1")}, "/plan/0"), {"tree": {"depth": 3}}),
	]
	deny := brief_retask.deny with input as with_parent(children, {"inbound_nonce_sha256": crypto.sha256("R-inbound1")})
	{[v.child, v.message] | some v in deny} == {[1, inbound_message]}
}

test_nonce_other_than_the_inbound_one_allowed if {
	count(brief_retask.deny) == 0 with input as with_parent([nested({"brief": good("R-fresh01")}, "/parent")], {"inbound_nonce": "R-inbound1", "inbound_nonce_sha256": crypto.sha256("R-inbound1"), "session_nonces_sha256": [crypto.sha256("R-older01")]})
}

test_nonce_handed_out_earlier_in_the_session_denied if {
	deny := brief_retask.deny with input as with_parent([nested({"brief": good("R-older01")}, "/parent")], {"session_nonces_sha256": [crypto.sha256("R-other1"), crypto.sha256("R-older01")]})
	deny == {{"child": 0, "field": "/brief", "message": "the brief's re-task nonce \"R-ol…\" was already handed out in this session (session_nonces_sha256 of /parent), and brief_retask of the operator policy requires a fresh one for every child", "policies": ["operator"]}}
}

test_block_without_completion_condition_denied if {
	deny := brief_retask.deny with input as judged([briefed(block("R-7f3a9c"))])
	deny == {{"child": 0, "field": "/brief", "message": "the brief carries a re-task block but states no completion condition, and brief_retask of the operator policy requires one wherever the channel is used", "policies": ["operator"]}}
}

test_completion_markers_allowed[marker] if {
	some marker in ["Done when", "complete when", "COMPLETION CONDITION:"]
	brief := sprintf("%s\n%s the report is written.", [block("R-7f3a9c"), marker])
	count(brief_retask.deny) == 0 with input as judged([briefed(brief)])
}

test_own_patterns_allowed if {
	policy := retask({"pattern": `nonce=\[([0-9a-f]{8,})\]`, "completion": `(?m)^Exit criteria:`})
	brief := "Revise freely once you see nonce=[0a1b2c3d4e].\nExit criteria: CI green."
	count(brief_retask.deny) == 0 with input as {"policies": {"operator": policy}, "children": [briefed(brief)]}
}

test_own_patterns_denied if {
	policy := retask({"pattern": `nonce=\[([0-9a-f]{8,})\]`, "completion": `(?m)^Exit criteria:`})
	deny := brief_retask.deny with input as {"policies": {"operator": policy}, "children": [briefed(good("R-7f3a9c"))]}
	{v.message | some v in deny} == {"the brief pre-authorizes revisions (\"RETASK\") without a re-task token, so a forged revision could not be told from its parent's: brief_retask of the operator policy refuses such a brief"}
}

test_pattern_without_a_nonce_group_denied if {
	policy := retask({"pattern": `RETASK CHANNEL`})
	deny := brief_retask.deny with input as {"policies": {"operator": policy}, "children": [briefed(good("R-7f3a9c"))]}
	deny == {{"child": 0, "field": "/brief", "message": "the brief's re-task block carries no nonce (the first group of brief_retask's pattern in the operator policy matched nothing)", "policies": ["operator"]}}
}

test_invalid_pattern_refuses_the_plan_denied[key] if {
	some key in ["pattern", "grants", "completion"]
	policy := retask({key: `token (R-[`})
	deny := brief_retask.deny with input as {"policies": {"operator": policy}, "children": [briefed(good("R-7f3a9c")), fixtures.child({})]}
	deny == {{"field": "/plan", "message": sprintf("%s of brief_retask in the operator policy is not a valid RE2 regular expression, so no brief can be checked against it", [key]), "policies": ["operator"]}}
}

test_pattern_that_is_not_a_string_refuses_the_plan_denied if {
	deny := brief_retask.deny with input as {"policies": {"operator": retask({"pattern": 5})}, "children": []}
	{v.field | some v in deny} == {"/plan"}
}

test_invalid_plan_pattern_leaves_the_operator_judging_denied if {
	policies := {"operator": retask({}), "plan": {"brief_retask": {"grants": "("}}}
	deny := brief_retask.deny with input as {"policies": policies, "children": [fixtures.child({})]}
	{[object.get(v, "child", "plan"), v.policies] | some v in deny} == {["plan", ["plan"]], [0, ["operator"]]}
}

unreadable := fixtures.child({"brief": "gAAAAABlZ2V0LXJpZ2h0LWJhY2stdG8td29yaw==", "brief_unreadable": "the host encrypted the message"})

test_unreadable_brief_denied if {
	deny := brief_retask.deny with input as judged([unreadable])
	deny == {{"child": 0, "field": "/brief_unreadable", "message": "the brief cannot be read (\"the host encrypted the message\"), so brief_retask of the operator policy cannot check its re-task block, and a brief that cannot be checked is refused unless brief_unreadable is allow", "policies": ["operator"]}}
}

test_unreadable_brief_when_policy_allows_allowed if {
	policy := object.union(retask({}), {"brief_unreadable": "allow"})
	count(brief_retask.deny) == 0 with input as {"policies": {"operator": policy}, "children": [unreadable]}
}

test_unreadable_brief_refused_by_the_plan_policy_denied if {
	policies := {"operator": object.union(retask({}), {"brief_unreadable": "allow"}), "plan": {"brief_retask": {}}}
	deny := brief_retask.deny with input as {"policies": policies, "children": [unreadable]}
	{v.policies | some v in deny} == {["plan"]}
}

test_policy_without_brief_retask_does_not_refuse_unreadable_allowed if {
	policies := {"operator": object.union(retask({}), {"brief_unreadable": "allow"}), "plan": {"allowed_tools": ["fs.read"]}}
	count(brief_retask.deny) == 0 with input as {"policies": policies, "children": [unreadable]}
}

test_both_policies_name_what_both_refuse_denied if {
	policies := {"operator": retask({}), "plan": {"brief_retask": {"required": true}}}
	deny := brief_retask.deny with input as {"policies": policies, "children": [fixtures.child({})]}
	deny == {{"child": 0, "field": "/brief", "message": "the child has no brief, so no re-task block, and brief_retask of the operator and plan policies requires one in every brief", "policies": ["operator", "plan"]}}
}

test_stricter_plan_policy_refuses_alone_denied if {
	policies := {"operator": retask({"required": false}), "plan": {"brief_retask": {}}}
	deny := brief_retask.deny with input as {"policies": policies, "children": [briefed("Fix the flaky test.")]}
	{v.policies | some v in deny} == {["plan"]}
}

test_children_that_are_not_objects_are_skipped_allowed if {
	count(brief_retask.deny) == 0 with input as judged(["x", null, briefed(good("R-7f3a9c"))])
}

test_no_message_holds_a_whole_nonce_denied if {
	nonce := "R-5ecret-nonce-value"
	children := [
		nested({"brief": good(nonce)}, "/parent"),
		nested({"brief": good(nonce)}, "/parent"),
	]
	deny := brief_retask.deny with input as with_parent(children, {"inbound_nonce": nonce, "session_nonces_sha256": [crypto.sha256(nonce)]})
	count(deny) == 6
	every v in deny {
		not contains(v.message, nonce)
		not contains(v.message, "5ecret")
	}
}

test_short_nonces_show_at_most_half_allowed if {
	brief_retask.show_nonce("R-") == "\"R…\""
	brief_retask.show_nonce("R-ab") == "\"R-…\""
	brief_retask.show_nonce("R-abcdef") == "\"R-ab…\""
	brief_retask.show_nonce("x") == "\"…\""
}
