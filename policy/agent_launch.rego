# METADATA
# title: A sub-agent must start in a way the gate can judge
# description: >-
#   Some spawns start agents the gate cannot see from the call. A Claude
#   Code workflow (the Workflow tool) is a script that starts agents of any
#   type as it runs, and none of them reaches the hook: the child that
#   stands for it holds the tool Workflow, and is refused unless every
#   policy that applies names the workflow in allowed_workflows (a script
#   written into the call has no name and no definition, and
#   agent.definition refuses it). A child that runs remotely (isolation:
#   remote) runs where its powers cannot be seen, and is refused.
# custom:
#   id: agent.launch
#   severity: high
package spawngate.checks.agent_launch

import data.spawngate.lib

deny contains lib.refusal(i, "/agent/workflow", explain(agent.workflow, refusing), refusing) if {
	some i, agent in lib.agents
	agent.launch == "workflow"
	is_string(agent.workflow)
	refusing := {source |
		some source, policy in lib.policies
		not agent.workflow in object.get(policy, "allowed_workflows", [])
	}
	count(refusing) > 0
}

deny contains lib.violation(i, "/agent/isolation", explain_remote) if {
	some i, agent in lib.agents
	agent.isolation == "remote"
}

explain(name, refusing) := sprintf("workflow %s starts agents the gate cannot see from the call, and %s does not list it in allowed_workflows", [lib.show(name), lib.describe(refusing)])

explain_remote := "the child would run remotely (isolation: remote), where the gate cannot see what it holds: run it locally or in a worktree"
