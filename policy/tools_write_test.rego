package spawngate.checks.tools_write_test

import data.spawngate.checks.tools_write
import data.spawngate.fixtures

writer := object.union(fixtures.operator, {"allow_write": true})

test_read_only_tools_allowed if {
	count(tools_write.deny) == 0 with input as fixtures.plan([fixtures.child({"tools": ["fs.read", "http.get"]})])
}

test_allowlisted_write_tool_without_allow_write_denied if {
	# fs.write is on the operator's allowlist, but allow_write is not set.
	tools_write.deny == {{"child": 0, "field": "/tools/1", "message": "tool \"fs.write\" writes, and allow_write: true is not set by the operator policy", "policies": ["operator"]}} with input as fixtures.plan([fixtures.child({"tools": ["fs.read", "fs.write"]})])
}

test_every_default_write_tool_denied[tool] if {
	some tool in ["fs.write", "fs.delete", "shell.run", "wallet.transfer"]
	count(tools_write.deny) == 1 with input as fixtures.plan([fixtures.child({"tools": [tool]})])
}

test_write_tool_with_allow_write_allowed if {
	count(tools_write.deny) == 0 with input as {"policies": {"operator": writer}, "children": [fixtures.child({"tools": ["fs.write"]})]}
}

test_allow_write_that_is_not_boolean_true_denied[note] if {
	some note, value in {"string": "true", "number": 1, "false": false, "null": null, "list": [true]}
	policy := object.union(fixtures.operator, {"allow_write": value})
	count(tools_write.deny) == 1 with input as {"policies": {"operator": policy}, "children": [fixtures.child({"tools": ["fs.write"]})]}
}

test_plan_policy_cannot_grant_write_denied if {
	policy := object.union(fixtures.operator, {"allow_write": true})
	deny := tools_write.deny with input as fixtures.plan_with(policy, [fixtures.child({"tools": ["fs.write"]})])
	deny == {{"child": 0, "field": "/tools/0", "message": "tool \"fs.write\" writes, and allow_write: true is not set by the operator policy", "policies": ["operator"]}}
}

test_plan_policy_can_withhold_write_denied if {
	policy := object.union(fixtures.operator, {"allow_write": false})
	deny := tools_write.deny with input as {"policies": {"operator": writer, "plan": policy}, "children": [fixtures.child({"tools": ["shell.run"]})]}
	deny == {{"child": 0, "field": "/tools/0", "message": "tool \"shell.run\" writes, and allow_write: true is not set by the plan policy", "policies": ["plan"]}}
}

test_plan_policy_withholding_write_with_no_write_tools_denied if {
	# The plan lists no write tools, but withholds write: the operator's
	# write_tools still make fs.write a write tool, and the plan's
	# allow_write: false still applies to it.
	policy := object.union(fixtures.operator, {"allow_write": false, "write_tools": []})
	deny := tools_write.deny with input as {"policies": {"operator": writer, "plan": policy}, "children": [fixtures.child({"tools": ["fs.write"]})]}
	deny == {{"child": 0, "field": "/tools/0", "message": "tool \"fs.write\" writes, and allow_write: true is not set by the plan policy", "policies": ["plan"]}}
}

test_operator_withholding_write_for_a_plan_listed_write_tool_denied if {
	# Only the plan calls http.post a write tool and grants write; the
	# operator does not grant write, so the tool is refused.
	policy := object.union(fixtures.operator, {"allow_write": true, "write_tools": ["http.post"]})
	deny := tools_write.deny with input as fixtures.plan_with(policy, [fixtures.child({"tools": ["http.post"]})])
	deny == {{"child": 0, "field": "/tools/0", "message": "tool \"http.post\" writes, and allow_write: true is not set by the operator policy", "policies": ["operator"]}}
}

test_write_granted_by_both_allowed if {
	count(tools_write.deny) == 0 with input as {"policies": {"operator": writer, "plan": writer}, "children": [fixtures.child({"tools": ["fs.write", "shell.run"]})]}
}

test_write_tools_patterns_denied if {
	policy := object.union(fixtures.operator, {"write_tools": ["db.*", "mcp__github__create_*"]})
	deny := tools_write.deny with input as {"policies": {"operator": policy}, "children": [fixtures.child({"tools": ["db.drop", "mcp__github__create_issue", "fs.write"]})]}
	{v.field | some v in deny} == {"/tools/0", "/tools/1"}
}

test_plan_write_tools_add_to_the_operators_denied if {
	# The plan calls http.get a write tool; the operator grants write, the
	# plan does not, so the plan's stricter reading holds.
	policy := object.union(fixtures.operator, {"write_tools": ["http.get"]})
	deny := tools_write.deny with input as {"policies": {"operator": writer, "plan": policy}, "children": [fixtures.child({"tools": ["http.get"]})]}
	count(deny) == 1
}

test_requested_pattern_is_left_to_the_allowlist_allowed if {
	count(tools_write.deny) == 0 with input as fixtures.plan([fixtures.child({"tools": ["fs.*", 7]})])
}

test_host_write_tools_write_whatever_write_tools_says_denied[tool] if {
	some tool in ["Bash", "Edit", "Write", "MultiEdit", "NotebookEdit", "PowerShell", "sandbox:workspace-write"]
	policy := object.union(fixtures.operator, {"allowed_tools": [tool], "write_tools": []})
	deny := tools_write.deny with input as {"policies": {"operator": policy}, "children": [fixtures.child({"tools": [tool]})]}
	count(deny) == 1
}

test_host_write_tools_with_allow_write_allowed if {
	policy := object.union(fixtures.operator, {"allowed_tools": ["Bash", "Read"], "write_tools": [], "allow_write": true})
	count(tools_write.deny) == 0 with input as {"policies": {"operator": policy}, "children": [fixtures.child({"tools": ["Bash", "Read"]})]}
}

# Role profiles: a profile that sets allow_write decides for its role too;
# true grants nothing the policies do not.
test_profile_withholding_write_denied if {
	op := object.union(writer, {"roles": {"doc-reader": {"allow_write": false}}})
	deny := tools_write.deny with input as {"policies": {"operator": op}, "children": [fixtures.child({"tools": ["fs.write"]}), fixtures.child({"role": "writer", "tools": ["fs.write"]})]}
	deny == {{"child": 0, "field": "/tools/0", "message": "tool \"fs.write\" writes, and allow_write: true is not set by the operator policy's profile for role \"doc-reader\"", "policies": ["operator/roles/doc-reader"]}}
}

test_profile_granting_write_under_a_writing_operator_allowed if {
	op := object.union(writer, {"roles": {"doc-reader": {"allow_write": true}}})
	count(tools_write.deny) == 0 with input as {"policies": {"operator": op}, "children": [fixtures.child({"tools": ["fs.write"]})]}
}

test_profile_cannot_grant_write_denied if {
	deny := tools_write.deny with input as fixtures.profiled({"doc-reader": {"allow_write": true}}, [fixtures.child({"tools": ["fs.write"]})])
	deny == {{"child": 0, "field": "/tools/0", "message": "tool \"fs.write\" writes, and allow_write: true is not set by the operator policy", "policies": ["operator"]}}
}

test_profile_and_operator_both_withholding_denied if {
	deny := tools_write.deny with input as fixtures.profiled({"doc-reader": {"allow_write": false}}, [fixtures.child({"tools": ["shell.run"]})])
	deny == {{"child": 0, "field": "/tools/0", "message": "tool \"shell.run\" writes, and allow_write: true is not set by the operator policy and its profile for role \"doc-reader\"", "policies": ["operator", "operator/roles/doc-reader"]}}
}

test_profile_without_allow_write_has_the_operators_allowed if {
	op := object.union(writer, {"roles": {"doc-reader": {"allowed_tools": ["fs.write"]}}})
	count(tools_write.deny) == 0 with input as {"policies": {"operator": op}, "children": [fixtures.child({"tools": ["fs.write"]})]}
}

test_tool_an_adapter_says_writes_denied if {
	# Copilot's edit is no tool the lists here know: its adapter says it
	# writes, and every child holding it is judged so.
	child := fixtures.child({"tools": ["view", "edit"], "agent": {"host": "copilot", "type": "w", "write_tools": ["edit"]}})
	other := fixtures.child({"tools": ["edit"]})
	tools_write.deny == {
		{"child": 0, "field": "/tools/1", "message": "tool \"edit\" writes, and allow_write: true is not set by the operator policy", "policies": ["operator"]},
		{"child": 1, "field": "/tools/0", "message": "tool \"edit\" writes, and allow_write: true is not set by the operator policy", "policies": ["operator"]},
	} with input as fixtures.plan([child, other])
}

test_write_tools_fact_not_a_list_adds_nothing if {
	child := fixtures.child({"tools": ["edit"], "agent": {"host": "copilot", "type": "w", "write_tools": "edit"}})
	count(tools_write.deny) == 0 with input as fixtures.plan([child])
}
