# Helpers the operator's checks share. A helper library lives under
# spawngate.custom: it holds no check, needs no METADATA, and cannot touch
# spawngate.lib or a built-in check.
package spawngate.custom.roles

# The roles that ship code: deploy itself, and every role whose name ends
# in -deployer (web-deployer, db-deployer).
deploys(role) if role == "deploy"

deploys(role) if {
	is_string(role)
	endswith(role, "-deployer")
}
