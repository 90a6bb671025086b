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
#   when_nested: true
package spawngate.checks.tree_paths

import data.spawngate.checks.paths_escape
import data.spawngate.lib

deny contains lib.violation(i, sprintf("/paths/%d", [j]), explain(i, path, parent)) if {
	some i, parent in lib.parented
	paths := lib.children[i].paths
	is_array(paths)
	prefixes := giving[lib.children[i].tree.parent]
	some j, path in paths
	not inside_one(path, prefixes)
}

# What each parent of the children judged here may touch, by pointer, when
# it lists paths: the path each of its plain paths names, with a slash
# appended (paths_escape.named). Made once per parent, so that a child's
# path is not judged again against every path of its parent (a thousand
# paths under a parent of a thousand would be a million regular
# expressions).
giving := {ptr: prefixes |
	some ptr in parent_pointers
	paths := lib.parents[ptr].paths
	is_array(paths)
	prefixes := {paths_escape.named(p) | some p in paths; is_string(p); paths_escape.plain(p)}
}

parent_pointers := {lib.children[i].tree.parent | some i, _ in lib.parented}

# A path is inside when it is plain and the path it names starts with one
# of the prefixes. A parent of few paths is looked through; for one of
# many, each of the places above the path (itself, its directory, and so
# on up to /) is looked up among them instead.
inside_one(path, prefixes) if {
	is_string(path) # paths_escape.plain counts it: a number would stop the evaluation
	paths_escape.plain(path)
	count(prefixes) <= 8
	name := paths_escape.named(path)
	some prefix in prefixes
	startswith(name, prefix)
}

inside_one(path, prefixes) if {
	is_string(path)
	paths_escape.plain(path)
	count(prefixes) > 8
	parts := split(paths_escape.named(path), "/")
	some k in numbers.range(1, count(parts) - 1)
	concat("", [concat("/", array.slice(parts, 0, k)), "/"]) in prefixes
}

explain(i, path, parent) := sprintf("path %s is not inside any path of %s, which may touch none", [lib.show(path), lib.parent_name(i)]) if {
	count(parent.paths) == 0
} else := sprintf("path %s is not inside any path of %s, which may touch only %s, and a child may touch only what its parent may", [
	lib.show(path), lib.parent_name(i),
	concat(", ", [lib.show(p) | some p in parent.paths]),
]) if {
	count(parent.paths) <= 5
} else := sprintf("path %s is not inside any of the %d paths of %s, and a child may touch only what its parent may", [lib.show(path), count(parent.paths), lib.parent_name(i)])
