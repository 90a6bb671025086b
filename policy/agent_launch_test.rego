package spawngate.checks.agent_launch_test

import data.spawngate.checks.agent_launch
import data.spawngate.fixtures

# A child that stands for a named workflow, as the Claude Code hook writes
# it: the tool Workflow, the workflow file as its definition.
workflow(name) := fixtures.child({"role": "workflow:nightly", "tools": ["Workflow"], "agent": {"host": "claude-code", "type": "workflow:nightly", "definition": ".claude/workflows/nightly.js", "launch": "workflow", "workflow": name, "permission_mode": "default"}})

allowing(names) := object.union(fixtures.operator, {"allowed_workflows": names})

test_named_workflow_the_policy_lists_allowed if {
	count(agent_launch.deny) == 0 with input as {"policies": {"operator": allowing(["nightly"])}, "children": [workflow("nightly")]}
}

test_named_workflow_the_policy_does_not_list_denied if {
	agent_launch.deny == {{"child": 0, "field": "/agent/workflow", "message": "workflow \"nightly\" starts agents the gate cannot see from the call, and the operator policy does not list it in allowed_workflows", "policies": ["operator"]}} with input as fixtures.plan([workflow("nightly")])
}

test_workflow_another_policy_lists_denied if {
	deny := agent_launch.deny with input as {"policies": {"operator": allowing(["weekly"])}, "children": [workflow("nightly")]}
	count(deny) == 1
}

test_workflow_the_plan_policy_does_not_list_denied if {
	# The plan's own policy can only narrow: it must list the workflow too.
	deny := agent_launch.deny with input as {"policies": {"operator": allowing(["nightly"]), "plan": fixtures.operator}, "children": [workflow("nightly")]}
	{v.policies | some v in deny} == {["plan"]}
}

test_children_that_are_no_workflow_allowed if {
	child := fixtures.child({"agent": {"host": "claude-code", "type": "r", "definition": "r.md", "permission_mode": "default", "launch": "skill", "skill": "fixit"}})
	count(agent_launch.deny) == 0 with input as fixtures.plan([child])
}

test_remote_isolation_denied if {
	child := fixtures.child({"agent": {"host": "claude-code", "type": "r", "definition": "r.md", "permission_mode": "default", "isolation": "remote"}})
	agent_launch.deny == {{"child": 0, "field": "/agent/isolation", "message": "the child would run remotely (isolation: remote), where the gate cannot see what it holds: run it locally or in a worktree"}} with input as fixtures.plan([child])
}

test_worktree_isolation_allowed if {
	child := fixtures.child({"agent": {"host": "claude-code", "type": "r", "definition": "r.md", "permission_mode": "default", "isolation": "worktree"}})
	count(agent_launch.deny) == 0 with input as fixtures.plan([child])
}
