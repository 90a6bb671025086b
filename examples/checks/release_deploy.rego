# METADATA
# title: Deployers run only in the release workspace
# description: >-
#   A child whose role deploys (deploy, or a role ending in -deployer) may
#   be dispatched only where every policy that applies has the release
#   workspace as its root, with a budget of at most 50,000 tokens. A plan's
#   own policy cannot move a deployer into the release workspace: the
#   operator's root must be it too.
# custom:
#   id: org.release.deploy
#   severity: high
package spawngate.checks.release_deploy

import data.spawngate.custom.roles
import data.spawngate.lib

release_workspace := "/srv/release"

deploy_budget := 50000

deny contains lib.violation(i, "/role", msg) if {
	some i, child in lib.children
	roles.deploys(child.role)
	some source, policy in lib.policies
	policy.workspace_root != release_workspace
	msg := sprintf("role %s deploys, and only the release workspace %s may dispatch it; the %s policy's workspace is %s", [lib.show(child.role), release_workspace, source, lib.show(policy.workspace_root)])
}

deny contains lib.violation(i, "/budget_tokens", msg) if {
	some i, budget in lib.budgets
	roles.deploys(lib.children[i].role)
	budget > deploy_budget
	msg := sprintf("role %s deploys, and a deployer's budget is at most %d tokens, not %d", [lib.show(lib.children[i].role), deploy_budget, budget])
}
