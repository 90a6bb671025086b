package spawngate.checks.tools_spawn_test

import data.spawngate.checks.tools_spawn
import data.spawngate.fixtures

test_spawn_tool_without_allow_spawn_denied[tool] if {
	some tool in ["Agent", "Task", "Skill", "Workflow", "spawn_agent", "collaboration.spawn_agent", "collaborationspawn_agent"]
	policy := object.union(fixtures.operator, {"allowed_tools": [tool]})
	deny := tools_spawn.deny with input as {"policies": {"operator": policy}, "children": [fixtures.child({"tools": ["fs.read", tool]})]}
	deny == {{"child": 0, "field": "/tools/1", "message": sprintf("tool %q lets the child dispatch children of its own, and allow_spawn: true is not set by the operator policy", [tool]), "policies": ["operator"]}}
}

test_spawn_tool_with_allow_spawn_allowed if {
	policy := object.union(fixtures.operator, {"allowed_tools": ["Agent"], "allow_spawn": true})
	count(tools_spawn.deny) == 0 with input as {"policies": {"operator": policy}, "children": [fixtures.child({"tools": ["Agent"]})]}
}

test_plan_policy_cannot_grant_spawn_denied if {
	op := object.union(fixtures.operator, {"allowed_tools": ["Agent"]})
	plan := object.union(op, {"allow_spawn": true})
	deny := tools_spawn.deny with input as {"policies": {"operator": op, "plan": plan}, "children": [fixtures.child({"tools": ["Agent"]})]}
	count(deny) == 1
}

test_only_boolean_true_grants_spawn_denied[note] if {
	some note, value in {"string": "true", "number": 1}
	policy := object.union(fixtures.operator, {"allowed_tools": ["Agent"], "allow_spawn": value})
	count(tools_spawn.deny) == 1 with input as {"policies": {"operator": policy}, "children": [fixtures.child({"tools": ["Agent"]})]}
}

test_policy_spawn_tools_add_to_nothing_but_themselves_denied if {
	policy := object.union(fixtures.operator, {"spawn_tools": ["orchestrate.*"]})
	deny := tools_spawn.deny with input as {"policies": {"operator": policy}, "children": [fixtures.child({"tools": ["orchestrate.run", "fs.read"]})]}
	{v.field | some v in deny} == {"/tools/0"}
}

test_ordinary_tools_allowed if {
	count(tools_spawn.deny) == 0 with input as fixtures.plan([fixtures.child({"tools": ["fs.read", "http.get"]})])
}

# Role profiles: a profile that sets allow_spawn decides for its role too;
# true grants nothing the policies do not.
spawner := object.union(fixtures.operator, {"allowed_tools": ["Agent", "fs.read"], "allow_spawn": true})

test_profile_withholding_spawn_denied if {
	op := object.union(spawner, {"roles": {"doc-reader": {"allow_spawn": false}}})
	deny := tools_spawn.deny with input as {"policies": {"operator": op}, "children": [fixtures.child({"tools": ["Agent"]}), fixtures.child({"role": "lead", "tools": ["Agent"]})]}
	deny == {{"child": 0, "field": "/tools/0", "message": "tool \"Agent\" lets the child dispatch children of its own, and allow_spawn: true is not set by the operator policy's profile for role \"doc-reader\"", "policies": ["operator/roles/doc-reader"]}}
}

test_profile_granting_spawn_under_a_spawning_operator_allowed if {
	op := object.union(spawner, {"roles": {"doc-reader": {"allow_spawn": true, "allowed_tools": ["Agent"]}}})
	count(tools_spawn.deny) == 0 with input as {"policies": {"operator": op}, "children": [fixtures.child({"tools": ["Agent"]})]}
}

test_profile_cannot_grant_spawn_denied if {
	op := object.union(fixtures.operator, {"allowed_tools": ["Agent"], "roles": {"doc-reader": {"allow_spawn": true}}})
	deny := tools_spawn.deny with input as {"policies": {"operator": op}, "children": [fixtures.child({"tools": ["Agent"]})]}
	deny == {{"child": 0, "field": "/tools/0", "message": "tool \"Agent\" lets the child dispatch children of its own, and allow_spawn: true is not set by the operator policy", "policies": ["operator"]}}
}

test_tool_an_adapter_says_spawns_denied if {
	child := fixtures.child({"tools": ["view", "task"], "agent": {"host": "copilot", "type": "lead", "spawn_tools": ["task"]}})
	tools_spawn.deny == {{"child": 0, "field": "/tools/1", "message": "tool \"task\" lets the child dispatch children of its own, and allow_spawn: true is not set by the operator policy", "policies": ["operator"]}} with input as fixtures.plan([child])
}
