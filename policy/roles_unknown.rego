# METADATA
# title: A role must have a profile when the operator policy refuses unknown roles
# description: >-
#   When the operator policy sets unknown_roles to refuse, a child is
#   refused unless its role is one of the roles the policy's roles names (a
#   role profile), written exactly as there. Without unknown_roles, or with
#   allow, a child whose role has no profile is judged by the policies
#   alone. A plan's own policy cannot set unknown_roles.
# custom:
#   id: roles.unknown
#   severity: high
package spawngate.checks.roles_unknown

import data.spawngate.lib

deny contains lib.refusal(i, "/role", explain(child), ["operator"]) if {
	lib.policies.operator.unknown_roles == "refuse"
	some i, child in lib.unprofiled
}

explain(child) := sprintf("the child names no role, and %s", [refuses]) if {
	not "role" in object.keys(child)
} else := sprintf("role %s is not a string, and %s", [lib.show(child.role), refuses]) if {
	not is_string(child.role)
} else := sprintf("role %s has no profile, and %s", [lib.show(child.role), refuses])

refuses := sprintf("the operator policy refuses roles it has no profile for (unknown_roles: refuse); %s", [named])

named := "it names no role" if {
	count(lib.profiles) == 0
} else := sprintf("it names %s", [concat(", ", [lib.show(role) | some role in shown])]) if {
	shown := sort(object.keys(lib.profiles))
	count(shown) <= 5
} else := sprintf("it names %s and %d more", [concat(", ", [lib.show(role) | some role in array.slice(sort(object.keys(lib.profiles)), 0, 5)]), count(lib.profiles) - 5])
