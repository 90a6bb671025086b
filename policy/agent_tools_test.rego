package spawngate.checks.agent_tools_test

import data.spawngate.checks.agent_tools
import data.spawngate.fixtures

test_listed_tools_allowed if {
	a := {"host": "claude-code", "type": "r", "definition": "r.md", "inherits_tools": false}
	count(agent_tools.deny) == 0 with input as fixtures.plan([fixtures.child({"agent": a})])
}

test_inherited_tools_denied if {
	a := {"host": "claude-code", "type": "r", "definition": ".claude/agents/r.md", "inherits_tools": true}
	deny := agent_tools.deny with input as fixtures.plan([object.union(fixtures.child_without("tools"), {"agent": a})])
	deny == {{"child": 0, "field": "/tools", "message": "the definition \".claude/agents/r.md\" lists no tools, so the child inherits every tool, MCP tools included: list the tools it needs under tools: (disallowedTools alone does not bound them)"}}
}

test_only_true_means_inherited_denied if {
	a := {"host": "claude-code", "type": "r", "definition": null, "inherits_tools": true}
	deny := agent_tools.deny with input as fixtures.plan([object.union(fixtures.child_without("tools"), {"agent": a})])
	deny == {{"child": 0, "field": "/tools", "message": "the child inherits every tool, MCP tools included: its definition must list the tools it needs"}}
}
