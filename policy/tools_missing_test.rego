package spawngate.checks.tools_missing_test

import data.spawngate.checks.tools_missing
import data.spawngate.fixtures

test_listed_tools_allowed if {
	count(tools_missing.deny) == 0 with input as fixtures.plan([fixtures.child({"tools": ["fs.read", "http.get"]})])
}

test_absent_tools_denied if {
	tools_missing.deny == {{"child": 0, "field": "/tools", "message": "tools is missing: list the tools the child gets"}} with input as fixtures.plan([fixtures.child_without("tools")])
}

test_empty_tools_denied if {
	tools_missing.deny == {{"child": 0, "field": "/tools", "message": "tools is empty: a child needs at least one tool"}} with input as fixtures.plan([fixtures.child({"tools": []})])
}

test_tools_of_wrong_type_denied[article] if {
	some article, value in {"a string": "fs.read", "null": null, "an object": {"fs.read": true}, "a number": 1, "a boolean": true}
	deny := tools_missing.deny with input as fixtures.plan([fixtures.child({"tools": value})])
	deny == {{"child": 0, "field": "/tools", "message": sprintf("tools must be a list of tool names, not %s", [article])}}
}

test_child_that_is_not_an_object_allowed if {
	# The schema step refuses it; the checks do not report it a second time.
	count(tools_missing.deny) == 0 with input as fixtures.plan(["not a child"])
}

test_second_child_denied_by_index if {
	deny := tools_missing.deny with input as fixtures.plan([fixtures.child({}), fixtures.child({"tools": []})])
	{v.child | some v in deny} == {1}
}

test_missing_tools_an_agent_check_explains_allowed if {
	inherits := {"host": "claude-code", "type": "r", "definition": "r.md", "inherits_tools": true}
	undefined := {"host": "codex", "type": "r", "definition": null}
	unsandboxed := {"host": "codex", "type": "r", "definition": "r.toml", "sandbox_mode": null}
	count(tools_missing.deny) == 0 with input as fixtures.plan([
		object.union(fixtures.child_without("tools"), {"agent": inherits}),
		object.union(fixtures.child_without("tools"), {"agent": undefined}),
		object.union(fixtures.child_without("tools"), {"agent": object.remove(undefined, ["definition"])}),
		object.union(fixtures.child({"tools": []}), {"agent": unsandboxed}),
	])
}

test_missing_tools_of_a_block_claiming_no_sandbox_denied if {
	unsandboxed := {"host": "codex", "type": "r", "definition": "r.toml"}
	count(tools_missing.deny) == 1 with input as fixtures.plan([object.union(fixtures.child({"tools": []}), {"agent": unsandboxed})])
}

test_missing_tools_of_a_defined_agent_denied if {
	a := {"host": "claude-code", "type": "r", "definition": "r.md", "inherits_tools": false}
	count(tools_missing.deny) == 1 with input as fixtures.plan([object.union(fixtures.child_without("tools"), {"agent": a})])
}
