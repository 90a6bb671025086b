# METADATA
# title: Four checks in their simplest form, for .ci/load only
# description: >-
#   The anchor of the serving issue: opa run --server judging a plan with
#   the four checks written as plainly as Rego allows (exact tool names,
#   a prefix test for paths, no schema, no path rules, no explanations).
#   It is what OPA's server costs for the least a gate could check, not
#   what spawngate checks; .ci/load prints it beside the real checks.
package minimal

deny contains sprintf("/plan/%d/tools/%d: not allowed", [i, j]) if {
	some i, j
	tool := input.plan[i].tools[j]
	not tool in {t | some t in data.operator.allowed_tools}
}

deny contains sprintf("/plan/%d/tools/%d: writes", [i, j]) if {
	some i, j
	tool := input.plan[i].tools[j]
	tool in {"fs.write", "fs.delete", "shell.run"}
	not data.operator.allow_write
}

deny contains sprintf("/plan/%d/paths/%d: outside the workspace", [i, j]) if {
	some i, j
	path := input.plan[i].paths[j]
	not startswith(path, concat("", [data.operator.workspace_root, "/"]))
}

deny contains sprintf("/plan/%d/budget_tokens: over the cap", [i]) if {
	some i
	input.plan[i].budget_tokens > data.operator.budget_cap_tokens
}
