# METADATA
# title: A child's paths must lie inside its parent's
# description: >-
#   In a nested plan, every path of a child must lie inside one of its
#   parent's paths, by the rule paths.escape applies to a root: the path
#   itself or below it with a slash between, relative paths read against the
#   plan's own workspace root, and a path that is not plain (one paths.escape
#   refuses as ambiguous) never provably inside. A parent with paths: [] can
#   give none. The plan's parent block, when it lists paths, bounds the
#   plan's own children the same way.
# custom:
#   id: tree.paths
#   severity: critical
package spawngate.checks.tree_paths

import data.spawngate.checks.paths_escape
import data.spawngate.lib

deny contains lib.violation(i, sprintf("/paths/%d", [j]), explain(i, path, parent)) if {
	some i, parent in lib.parented
	is_array(parent.paths)
	paths := lib.children[i].paths
	is_array(paths)
	some j, path in paths
	not inside_one(path, parent.paths)
}

inside_one(path, outer) if {
	paths_escape.plain(path)
	name := paths_escape.named(path)
	some p in outer
	is_string(p)
	paths_escape.plain(p)
	startswith(name, paths_escape.named(p))
}

explain(i, path, parent) := sprintf("path %s is not inside any path of %s, which may touch none", [lib.show(path), lib.parent_name(i)]) if {
	count(parent.paths) == 0
} else := sprintf("path %s is not inside any path of %s, which may touch only %s, and a child may touch only what its parent may", [
	lib.show(path), lib.parent_name(i),
	concat(", ", [lib.show(p) | some p in parent.paths]),
]) if {
	count(parent.paths) <= 5
} else := sprintf("path %s is not inside any of the %d paths of %s, and a child may touch only what its parent may", [lib.show(path), count(parent.paths), lib.parent_name(i)])
