package spawngate.checks.agent_sandbox_test

import data.spawngate.checks.agent_sandbox
import data.spawngate.fixtures

judge(agent) := deny if {
	deny := agent_sandbox.deny with input as fixtures.plan([fixtures.child({"agent": agent})])
}

codex(mode) := {"host": "codex", "type": "worker", "definition": ".codex/agents/worker.toml", "sandbox_mode": mode}

test_sandbox_modes_allowed[mode] if {
	some mode in ["read-only", "workspace-write", "danger-full-access"]
	count(judge(codex(mode))) == 0
}

test_unset_sandbox_denied if {
	judge(codex(null)) == {{"child": 0, "field": "", "message": "sandbox_mode is not set, so the child inherits the parent session's sandbox, which the hook cannot see: set sandbox_mode in its definition"}}
}

# A block without sandbox_mode claims no sandbox, whatever its host: no
# check names a host, and the child is judged by its tools.
test_no_sandbox_key_claims_no_sandbox_allowed if {
	count(judge(object.remove(codex(null), ["sandbox_mode"]))) == 0
}

test_any_host_with_a_sandbox_key_denied if {
	count(judge({"host": "claude-code", "type": "r", "definition": "r.md", "sandbox_mode": null})) == 1
}

test_unknown_sandbox_denied if {
	judge(codex("yolo")) == {{"child": 0, "field": "/agent/sandbox_mode", "message": "sandbox_mode \"yolo\" is not read-only, workspace-write or danger-full-access"}}
}

test_claude_code_has_no_sandbox_allowed if {
	count(judge({"host": "claude-code", "type": "r", "definition": "r.md"})) == 0
}

test_no_definition_is_left_to_agent_definition_allowed if {
	count(judge({"host": "codex", "type": "default", "definition": null})) == 0
}
