package spawngate.checks.agent_definition_test

import data.spawngate.checks.agent_definition
import data.spawngate.fixtures

agent(fields) := object.union({"host": "claude-code", "type": "reviewer", "definition": ".claude/agents/reviewer.md"}, fields)

test_defined_agent_allowed if {
	count(agent_definition.deny) == 0 with input as fixtures.plan([fixtures.child({"agent": agent({})})])
}

test_plain_child_allowed if {
	count(agent_definition.deny) == 0 with input as fixtures.plan([fixtures.child({})])
}

test_no_definition_denied if {
	a := agent({"definition": null, "problem": "agent type \"general-purpose\" is built in and no agents folder defines it: it would inherit every tool"})
	deny := agent_definition.deny with input as fixtures.plan([fixtures.child({"agent": a})])
	deny == {{"child": 0, "field": "", "message": a.problem}}
}

test_missing_definition_without_a_problem_denied if {
	a := object.remove(agent({}), ["definition"])
	deny := agent_definition.deny with input as fixtures.plan([fixtures.child({"agent": a})])
	deny == {{"child": 0, "field": "", "message": "agent type \"reviewer\" has no definition the gate can read: define it in an agents folder"}}
}
