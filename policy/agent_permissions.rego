# METADATA
# title: A spawned agent must not skip permission prompts
# description: >-
#   A child that runs in a permission mode that approves every action by
#   itself (Claude Code's bypassPermissions and auto, or a session in
#   bypassPermissions, which its children inherit) is refused: the
#   permission rules the user set would not stop anything it does.
#   acceptEdits is left to tools.write, which decides whether the child
#   may hold editing tools at all.
# custom:
#   id: agent.permissions
#   severity: critical
package spawngate.checks.agent_permissions

import data.spawngate.lib

# The modes in which nothing the child does waits for an approval.
approving := {"bypassPermissions", "auto"}

deny contains lib.violation(i, "/agent/permission_mode", explain(agent.permission_mode)) if {
	some i, agent in lib.agents
	agent.permission_mode in approving
}

explain(mode) := sprintf("the child would run in permission mode %s, which approves every action by itself: use default, plan or dontAsk, and allow tools explicitly", [lib.show(mode)])
