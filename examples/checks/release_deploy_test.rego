package spawngate.checks.release_deploy_test

import data.spawngate.checks.release_deploy

release := {"allowed_tools": ["fs.read", "shell.run"], "workspace_root": "/srv/release", "budget_cap_tokens": 200000}

elsewhere := object.union(release, {"workspace_root": "/repo/workspace"})

child(fields) := object.union({"role": "web-deployer", "tools": ["fs.read"], "paths": [], "budget_tokens": 40000}, fields)

test_deployer_in_release_workspace_allowed if {
	count(release_deploy.deny) == 0 with input as {"policies": {"operator": release}, "children": [child({})]}
}

test_other_roles_elsewhere_allowed if {
	count(release_deploy.deny) == 0 with input as {"policies": {"operator": elsewhere}, "children": [child({"role": "doc-reader", "budget_tokens": 90000})]}
}

test_deployer_elsewhere_denied if {
	release_deploy.deny == {{
		"child": 0, "field": "/role",
		"message": `role "web-deployer" deploys, and only the release workspace /srv/release may dispatch it; the operator policy's workspace is "/repo/workspace"`,
	}} with input as {"policies": {"operator": elsewhere}, "children": [child({})]}
}

test_deploy_role_elsewhere_denied if {
	count(release_deploy.deny) == 1 with input as {"policies": {"operator": elsewhere}, "children": [child({"role": "deploy"})]}
}

test_plan_policy_cannot_move_a_deployer_into_release_denied if {
	deny := release_deploy.deny with input as {"policies": {"operator": elsewhere, "plan": release}, "children": [child({})]}
	count(deny) == 1
}

test_deployer_budget_over_50k_denied if {
	release_deploy.deny == {{
		"child": 0, "field": "/budget_tokens",
		"message": `role "web-deployer" deploys, and a deployer's budget is at most 50000 tokens, not 60000`,
	}} with input as {"policies": {"operator": release}, "children": [child({"budget_tokens": 60000})]}
}
