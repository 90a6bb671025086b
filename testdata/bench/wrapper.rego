# METADATA
# title: The spawngate checks, for opa eval and conftest
# description: >-
#   .ci/bench runs opa eval and conftest on the same plan with the same
#   checks: this wrapper hands them the plan file as spawngate's input, with
#   the operator policy from data.operator, and turns every violation into
#   a message. It is not part of spawngate.
package main

import data.spawngate.checks

deny contains msg if {
	some name
	some v in checks[name].deny with input as {"policies": {"operator": data.operator}, "children": input.plan}
	msg := sprintf("/plan/%d%s: %s", [v.child, v.field, v.message])
}
