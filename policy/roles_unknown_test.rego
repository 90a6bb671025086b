package spawngate.checks.roles_unknown_test

import data.spawngate.checks.roles_unknown
import data.spawngate.fixtures

profiles := {"doc-reader": {"allowed_tools": ["fs.read"]}, "fixer": {"allow_write": true}}

refusing(children) := deny if {
	op := object.union(fixtures.operator, {"roles": profiles, "unknown_roles": "refuse"})
	deny := roles_unknown.deny with input as {"policies": {"operator": op}, "children": children}
}

test_roles_with_a_profile_allowed if {
	count(refusing([fixtures.child({}), fixtures.child({"role": "fixer"})])) == 0
}

test_role_without_a_profile_denied if {
	refusing([fixtures.child({}), fixtures.child({"role": "deployer"})]) == {{
		"child": 1, "field": "/role", "policies": ["operator"],
		"message": "role \"deployer\" has no profile, and the operator policy refuses roles it has no profile for (unknown_roles: refuse); it names \"doc-reader\", \"fixer\"",
	}}
}

test_role_is_matched_exactly_denied[role] if {
	some role in ["Doc-Reader", "doc-reader ", "doc_reader", "doc"]
	{v.child | some v in refusing([fixtures.child({"role": role})])} == {0}
}

test_missing_and_non_string_roles_denied if {
	deny := refusing([fixtures.child_without("role"), fixtures.child({"role": 5})])
	{v.message | some v in deny} == {
		"the child names no role, and the operator policy refuses roles it has no profile for (unknown_roles: refuse); it names \"doc-reader\", \"fixer\"",
		"role 5 is not a string, and the operator policy refuses roles it has no profile for (unknown_roles: refuse); it names \"doc-reader\", \"fixer\"",
	}
}

test_unknown_roles_allowed_by_default_allowed if {
	count(roles_unknown.deny) == 0 with input as fixtures.profiled(profiles, [fixtures.child({"role": "deployer"})])
	op := object.union(fixtures.operator, {"roles": profiles, "unknown_roles": "allow"})
	count(roles_unknown.deny) == 0 with input as {"policies": {"operator": op}, "children": [fixtures.child({"role": "deployer"})]}
}

test_refuse_without_any_profile_denied if {
	op := object.union(fixtures.operator, {"unknown_roles": "refuse"})
	deny := roles_unknown.deny with input as {"policies": {"operator": op}, "children": [fixtures.child({})]}
	deny == {{
		"child": 0, "field": "/role", "policies": ["operator"],
		"message": "role \"doc-reader\" has no profile, and the operator policy refuses roles it has no profile for (unknown_roles: refuse); it names no role",
	}}
}

test_many_profiles_are_counted_denied if {
	many := {sprintf("r%d", [n]): {"allow_write": false} | some n in numbers.range(1, 7)}
	op := object.union(fixtures.operator, {"roles": many, "unknown_roles": "refuse"})
	deny := roles_unknown.deny with input as {"policies": {"operator": op}, "children": [fixtures.child({})]}
	some v in deny
	endswith(v.message, "it names \"r1\", \"r2\", \"r3\", \"r4\", \"r5\" and 2 more")
}

test_plan_policy_unknown_roles_is_never_read_allowed if {
	# The plan schema forbids the key; were it there, it is not read.
	plan := object.union(fixtures.operator, {"unknown_roles": "refuse"})
	count(roles_unknown.deny) == 0 with input as fixtures.plan_with(plan, [fixtures.child({"role": "deployer"})])
}
