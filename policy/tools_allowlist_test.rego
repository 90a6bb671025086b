package spawngate.checks.tools_allowlist_test

import data.spawngate.checks.tools_allowlist
import data.spawngate.fixtures

test_exact_and_pattern_matched_names_allowed if {
	count(tools_allowlist.deny) == 0 with input as fixtures.plan([fixtures.child({"tools": ["fs.read", "http.get", "mcp__github__get_issue"]})])
}

test_unlisted_tool_denied if {
	tools_allowlist.deny == {{"child": 0, "field": "/tools/1", "message": "tool \"shell.run\" is not allowed by the operator policy"}} with input as fixtures.plan([fixtures.child({"tools": ["fs.read", "shell.run"]})])
}

test_requested_pattern_denied[tool] if {
	# Each of these would be matched as text by the policy pattern
	# mcp__github__get_*, or is not a plain name at all.
	some tool in ["mcp__github__get_*", "fs:*", "*", "fs.rea?", "mcp__github__get_[a-z]", "fs.read ", " fs.read", "fs read", "", "fs/read", "fs.read\n", "ＦＳ.read", "fs.write:", "fs.", "-fs", ":fs"]
	deny := tools_allowlist.deny with input as fixtures.plan([fixtures.child({"tools": [tool]})])
	some v in deny
	v.field == "/tools/0"
	contains(v.message, "is a pattern or not a plain tool name")
}

test_non_string_tool_denied[note] if {
	some note, tool in {"number": 1, "null": null, "bool": true, "list": ["fs.read"], "object": {"name": "fs.read"}}
	deny := tools_allowlist.deny with input as fixtures.plan([fixtures.child({"tools": [tool]})])
	deny == {{"child": 0, "field": "/tools/0", "message": sprintf("tool %s is not a string", [json.marshal(tool)])}}
}

test_star_stays_within_a_segment_denied if {
	deny := tools_allowlist.deny with input as fixtures.plan([fixtures.child({"tools": ["mcp__github__get_issue.delete"]})])
	count(deny) == 1
}

test_tool_allowed_by_both_policies_allowed if {
	policy := object.union(fixtures.operator, {"allowed_tools": ["fs.*"]})
	count(tools_allowlist.deny) == 0 with input as fixtures.plan_with(policy, [fixtures.child({"tools": ["fs.read"]})])
}

test_plan_policy_cannot_widen_denied if {
	# The plan allows everything; the operator does not allow shell.run.
	policy := object.union(fixtures.operator, {"allowed_tools": ["**"]})
	deny := tools_allowlist.deny with input as fixtures.plan_with(policy, [fixtures.child({"tools": ["shell.run"]})])
	deny == {{"child": 0, "field": "/tools/0", "message": "tool \"shell.run\" is not allowed by the operator policy"}}
}

test_plan_policy_narrows_denied if {
	policy := object.union(fixtures.operator, {"allowed_tools": ["fs.read"]})
	deny := tools_allowlist.deny with input as fixtures.plan_with(policy, [fixtures.child({"tools": ["http.get"]})])
	deny == {{"child": 0, "field": "/tools/0", "message": "tool \"http.get\" is not allowed by the plan policy"}}
}

test_refused_by_both_policies_denied if {
	policy := object.union(fixtures.operator, {"allowed_tools": []})
	deny := tools_allowlist.deny with input as fixtures.plan_with(policy, [fixtures.child({"tools": ["wallet.transfer"]})])
	deny == {{"child": 0, "field": "/tools/0", "message": "tool \"wallet.transfer\" is not allowed by the operator and plan policies"}}
}

test_no_policy_denied if {
	deny := tools_allowlist.deny with input as {"policies": {}, "children": [fixtures.child({})]}
	deny == {{"child": 0, "field": "/tools/0", "message": "tool \"fs.read\" is not allowed: no policy applies"}}
}

test_missing_policies_key_denied if {
	count(tools_allowlist.deny) == 1 with input as {"children": [fixtures.child({})]}
}

test_control_characters_are_escaped_in_messages_denied if {
	deny := tools_allowlist.deny with input as fixtures.plan([fixtures.child({"tools": ["\u001b[32mPASS"]})])
	some v in deny
	not contains(v.message, "\u001b")
	contains(v.message, `\x1b`)
}

test_permission_rule_is_not_a_tool_denied if {
	policy := object.union(fixtures.operator, {"allowed_tools": ["Bash", "Bash*"]})
	deny := tools_allowlist.deny with input as {"policies": {"operator": policy}, "children": [fixtures.child({"tools": ["Bash(git diff:*)"]})]}
	deny == {{"child": 0, "field": "/tools/0", "message": "tool \"Bash(git diff:*)\" is a permission rule, not a tool name: list the tool itself (Bash) and narrow it with the host's permission rules"}}
}

test_full_access_needs_an_exact_entry_denied if {
	policy := object.union(fixtures.operator, {"allowed_tools": ["sandbox:*"]})
	deny := tools_allowlist.deny with input as {"policies": {"operator": policy}, "children": [fixtures.child({"tools": ["sandbox:read-only", "sandbox:danger-full-access"]})]}
	deny == {{"child": 0, "field": "/tools/1", "message": "tool \"sandbox:danger-full-access\" grants everything and is allowed only by an exact entry in allowed_tools, not by a pattern; the operator policy does not list it"}}
}

test_full_access_by_an_exact_entry_allowed if {
	policy := object.union(fixtures.operator, {"allowed_tools": ["sandbox:danger-full-access"]})
	count(tools_allowlist.deny) == 0 with input as {"policies": {"operator": policy}, "children": [fixtures.child({"tools": ["sandbox:danger-full-access"]})]}
}
