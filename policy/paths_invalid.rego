# METADATA
# title: A child must list its paths as strings
# description: >-
#   paths is required and must be a list of strings; [] means the child has
#   no filesystem scope. A path that is not a string can never be proved to
#   lie inside the workspace.
# custom:
#   id: paths.invalid
#   severity: high
package spawngate.checks.paths_invalid

import data.spawngate.lib

deny contains lib.violation(i, "/paths", problem(lib.children[i])) if {
	some i in lib.without_path_list
}

deny contains lib.violation(i, sprintf("/paths/%d", [j]), sprintf("path %s is not a string", [lib.show(path)])) if {
	some [i, j] in lib.nonstring_paths
	path := lib.children[i].paths[j]
}

problem(child) := "paths is missing: list the paths the child may touch, or [] for none" if {
	not "paths" in object.keys(child)
} else := sprintf("paths must be a list of path strings, not %s", [lib.a_type(child.paths)])
