package spawngate.checks.tools_allowlist_test

import data.spawngate.checks.tools_allowlist
import data.spawngate.fixtures

test_exact_and_pattern_matched_names_allowed if {
	count(tools_allowlist.deny) == 0 with input as fixtures.plan([fixtures.child({"tools": ["fs.read", "http.get", "mcp__github__get_issue"]})])
}

test_unlisted_tool_denied if {
	tools_allowlist.deny == {{"child": 0, "field": "/tools/1", "message": "tool \"shell.run\" is not allowed by the operator policy", "policies": ["operator"]}} with input as fixtures.plan([fixtures.child({"tools": ["fs.read", "shell.run"]})])
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
	deny == {{"child": 0, "field": "/tools/0", "message": "tool \"shell.run\" is not allowed by the operator policy", "policies": ["operator"]}}
}

test_plan_policy_narrows_denied if {
	policy := object.union(fixtures.operator, {"allowed_tools": ["fs.read"]})
	deny := tools_allowlist.deny with input as fixtures.plan_with(policy, [fixtures.child({"tools": ["http.get"]})])
	deny == {{"child": 0, "field": "/tools/0", "message": "tool \"http.get\" is not allowed by the plan policy", "policies": ["plan"]}}
}

test_refused_by_both_policies_denied if {
	policy := object.union(fixtures.operator, {"allowed_tools": []})
	deny := tools_allowlist.deny with input as fixtures.plan_with(policy, [fixtures.child({"tools": ["wallet.transfer"]})])
	deny == {{"child": 0, "field": "/tools/0", "message": "tool \"wallet.transfer\" is not allowed by the operator and plan policies", "policies": ["operator", "plan"]}}
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
	deny == {{"child": 0, "field": "/tools/1", "message": "tool \"sandbox:danger-full-access\" grants everything and is allowed only by an exact entry in allowed_tools, not by a pattern; it is not listed by the operator policy", "policies": ["operator"]}}
}

test_full_access_by_an_exact_entry_allowed if {
	policy := object.union(fixtures.operator, {"allowed_tools": ["sandbox:danger-full-access"]})
	count(tools_allowlist.deny) == 0 with input as {"policies": {"operator": policy}, "children": [fixtures.child({"tools": ["sandbox:danger-full-access"]})]}
}

# Role profiles: a child whose role has a profile needs the profile's
# allowed_tools too; other roles are judged by the policies alone.
reader_profile := {"doc-reader": {"allowed_tools": ["fs.read"]}}

test_tool_allowed_by_the_profile_allowed if {
	count(tools_allowlist.deny) == 0 with input as fixtures.profiled(reader_profile, [fixtures.child({"tools": ["fs.read"]})])
}

test_profile_narrows_its_role_denied if {
	# http.get is on the operator's allowlist, not on the profile's.
	deny := tools_allowlist.deny with input as fixtures.profiled(reader_profile, [fixtures.child({"tools": ["fs.read", "http.get"]})])
	deny == {{"child": 0, "field": "/tools/1", "message": "tool \"http.get\" is not allowed by the operator policy's profile for role \"doc-reader\"", "policies": ["operator/roles/doc-reader"]}}
}

test_profile_leaves_other_roles_to_the_policies_allowed if {
	count(tools_allowlist.deny) == 0 with input as fixtures.profiled(reader_profile, [fixtures.child({"role": "fetcher", "tools": ["http.get"]})])
}

test_profile_cannot_widen_denied if {
	# The profile allows everything; the operator does not allow shell.run.
	deny := tools_allowlist.deny with input as fixtures.profiled({"doc-reader": {"allowed_tools": ["**"]}}, [fixtures.child({"tools": ["shell.run"]})])
	deny == {{"child": 0, "field": "/tools/0", "message": "tool \"shell.run\" is not allowed by the operator policy", "policies": ["operator"]}}
}

test_refused_by_policy_and_profile_names_both_denied if {
	deny := tools_allowlist.deny with input as fixtures.profiled(reader_profile, [fixtures.child({"tools": ["shell.run"]})])
	deny == {{"child": 0, "field": "/tools/0", "message": "tool \"shell.run\" is not allowed by the operator policy and its profile for role \"doc-reader\"", "policies": ["operator", "operator/roles/doc-reader"]}}
}

test_refused_by_plan_and_profile_names_both_denied if {
	plan := object.union(fixtures.operator, {"allowed_tools": ["fs.read"]})
	deny := tools_allowlist.deny with input as fixtures.profiled_with({"doc-reader": {"allowed_tools": ["fs.*"]}}, plan, [fixtures.child({"tools": ["fs.write", "http.get"]})])
	deny == {
		{"child": 0, "field": "/tools/0", "message": "tool \"fs.write\" is not allowed by the plan policy", "policies": ["plan"]},
		{"child": 0, "field": "/tools/1", "message": "tool \"http.get\" is not allowed by the plan policy and the operator policy's profile for role \"doc-reader\"", "policies": ["operator/roles/doc-reader", "plan"]},
	}
}

test_profile_without_allowed_tools_is_not_named_denied if {
	# A profile that sets no allowed_tools has the operator's: only the
	# operator policy refuses by them.
	deny := tools_allowlist.deny with input as fixtures.profiled({"doc-reader": {"allow_write": false}}, [fixtures.child({"tools": ["shell.run"]})])
	deny == {{"child": 0, "field": "/tools/0", "message": "tool \"shell.run\" is not allowed by the operator policy", "policies": ["operator"]}}
}

test_profile_full_access_needs_an_exact_entry_denied if {
	op := object.union(fixtures.operator, {"allowed_tools": ["sandbox:danger-full-access"]})
	input_doc := {"policies": {"operator": object.union(op, {"roles": {"doc-reader": {"allowed_tools": ["sandbox:*"]}}})}, "children": [fixtures.child({"tools": ["sandbox:danger-full-access"]})]}
	deny := tools_allowlist.deny with input as input_doc
	deny == {{"child": 0, "field": "/tools/0", "message": "tool \"sandbox:danger-full-access\" grants everything and is allowed only by an exact entry in allowed_tools, not by a pattern; it is not listed by the operator policy's profile for role \"doc-reader\"", "policies": ["operator/roles/doc-reader"]}}
}

test_pattern_tool_of_a_profiled_child_names_no_policy_denied if {
	deny := tools_allowlist.deny with input as fixtures.profiled({"doc-reader": {"allowed_tools": ["fs:*"]}}, [fixtures.child({"tools": ["fs:*", 5]})])
	deny == {
		{"child": 0, "field": "/tools/0", "message": "tool \"fs:*\" is a pattern or not a plain tool name; only plain names (A-Z a-z 0-9 _ . : -, not starting or ending with . : -) can be allowed"},
		{"child": 0, "field": "/tools/1", "message": "tool 5 is not a string"},
	}
}

test_role_with_a_slash_is_named_by_an_escaped_pointer_denied if {
	deny := tools_allowlist.deny with input as fixtures.profiled({"team/a~b": {"allowed_tools": ["fs.read"]}}, [fixtures.child({"role": "team/a~b", "tools": ["http.get"]})])
	deny == {{"child": 0, "field": "/tools/0", "message": "tool \"http.get\" is not allowed by the operator policy's profile for role \"team/a~b\"", "policies": ["operator/roles/team~1a~0b"]}}
}

test_mixed_children_judged_each_by_their_own_denied if {
	children := [
		fixtures.child({"tools": ["http.get"]}),
		fixtures.child({"role": "fetcher", "tools": ["http.get", "shell.run"]}),
		fixtures.child({"tools": ["fs.read", "shell.run"]}),
	]
	deny := tools_allowlist.deny with input as fixtures.profiled(reader_profile, children)
	{[v.child, v.field, v.policies] | some v in deny} == {
		[0, "/tools/0", ["operator/roles/doc-reader"]],
		[1, "/tools/1", ["operator"]],
		[2, "/tools/1", ["operator", "operator/roles/doc-reader"]],
	}
}
