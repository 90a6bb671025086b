# Shared fixtures for the Rego tests: an operator policy like the one in
# examples/, and builders for inputs and children.
package spawngate.fixtures

operator := {
	"allowed_tools": ["fs.read", "fs.write", "http.get", "mcp__github__get_*"],
	"workspace_root": "/repo/workspace",
	"budget_cap_tokens": 200000,
}

# An input judged by the operator policy alone.
plan(children) := {"policies": {"operator": operator}, "children": children}

# An input judged by the operator policy and a plan policy together.
plan_with(policy, children) := {"policies": {"operator": operator, "plan": policy}, "children": children}

# A clean child, with the given fields replaced.
child(fields) := object.union({"role": "doc-reader", "tools": ["fs.read"], "paths": [], "budget_tokens": 40000}, fields)

# A child with a field removed.
child_without(field) := object.remove(child({}), [field])

# An input judged by an operator policy with role profiles (by role), and
# by a plan policy too when one is given.
profiled(profiles, children) := {"policies": {"operator": object.union(operator, {"roles": profiles})}, "children": children}

profiled_with(profiles, policy, children) := {"policies": {"operator": object.union(operator, {"roles": profiles}), "plan": policy}, "children": children}
