package spawngate.checks.agent_permissions_test

import data.spawngate.checks.agent_permissions
import data.spawngate.fixtures

judge(mode) := deny if {
	deny := agent_permissions.deny with input as fixtures.plan([fixtures.child({"agent": {"host": "claude-code", "type": "r", "definition": "r.md", "permission_mode": mode}})])
}

test_modes_that_wait_for_approval_allowed[mode] if {
	some mode in ["default", "plan", "dontAsk", "acceptEdits"]
	count(judge(mode)) == 0
}

test_modes_that_approve_by_themselves_denied[mode] if {
	some mode in ["bypassPermissions", "auto"]
	judge(mode) == {{"child": 0, "field": "/agent/permission_mode", "message": sprintf("the child would run in permission mode %q, which approves every action by itself: use default, plan or dontAsk, and allow tools explicitly", [mode])}}
}
