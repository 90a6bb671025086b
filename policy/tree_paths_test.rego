package spawngate.checks.tree_paths_test

import data.spawngate.checks.tree_paths
import data.spawngate.fixtures

# A nested plan as the gate hands it to a check: child 0 is the lead at
# /plan/0 with the given paths, child 1 its child with the given paths.
# The operator policy's root, /repo/workspace, is the plan's root.
nested_with(policies, outer, inner) := {
	"policies": policies,
	"children": [
		fixtures.child({"role": "lead", "paths": outer, "tree": {"depth": 1, "spawns": 1, "descendants": 1}}),
		fixtures.child({"role": "worker", "paths": inner, "tree": {"depth": 2, "parent": "/plan/0"}}),
	],
	"parents": {"/plan/0": {"role": "lead", "paths": outer, "depth": 1}},
}

nested(outer, inner) := nested_with({"operator": fixtures.operator}, outer, inner)

# The single message the child gets for its path at index 0, or "inside".
verdict(outer, path) := "inside" if {
	count(tree_paths.deny) == 0 with input as nested(outer, [path])
} else := msg if {
	deny := tree_paths.deny with input as nested(outer, [path])
	count(deny) == 1
	some v in deny
	v.child == 1
	v.field == "/paths/0"
	msg := v.message
}

test_paths_inside_the_parent_allowed[note] if {
	some note, pair in {
		"the same": ["src", "src"],
		"below": ["src", "src/api/handlers.go"],
		"trailing slash on the parent": ["src/", "src/api"],
		"trailing slash on the child": ["src", "src/api/"],
		"relative child of an absolute parent": ["/repo/workspace/src", "src/api"],
		"absolute child of a relative parent": ["src", "/repo/workspace/src/api"],
		"the root itself": ["/repo/workspace", "docs"],
		"the filesystem root": ["/", "/etc/passwd"],
		"dotfile": ["src", "src/.env"],
	}
	verdict([pair[0]], pair[1]) == "inside"
}

test_child_paths_inside_any_parent_path_allowed if {
	count(tree_paths.deny) == 0 with input as nested(["src", "docs"], ["docs/guide.md", "src/api", "/repo/workspace/docs"])
}

test_path_outside_the_parent_denied if {
	deny := tree_paths.deny with input as nested(["src", "docs"], ["src/api", "tests"])
	deny == {{"child": 1, "field": "/paths/1", "message": "path \"tests\" is not inside any path of its parent /plan/0 (role \"lead\"), which may touch only \"src\", \"docs\", and a child may touch only what its parent may"}}
}

test_paths_outside_the_parent_denied[note] if {
	some note, pair in {
		"sibling sharing the prefix": ["src", "src-evil"],
		"sibling sharing the prefix, absolute": ["/repo/workspace/src", "/repo/workspace/src2/x"],
		"the parent's parent": ["src/api", "src"],
		"the plan root": ["src", "/repo/workspace"],
		"elsewhere": ["src", "/etc"],
		"relative read against the root, not the parent": ["/repo/workspace/src", "api"],
		"a dot-dot that would normalize back inside": ["src", "src/../src/api"],
		"a home directory": ["src", "~/src"],
		"a glob": ["src", "src/*"],
		"a trailing space": ["src", "src/api "],
	}
	startswith(verdict([pair[0]], pair[1]), sprintf("path %s is not inside any path of its parent /plan/0 (role \"lead\"), which may touch only %q", [sprintf("%q", [pair[1]]), pair[0]]))
}

test_parent_path_that_is_not_plain_gives_nothing_denied[note] if {
	some note, outer in {"glob": "src/*", "dot-dot": "src/..", "home": "~", "empty": "", "number": 5}
	startswith(verdict([outer], "src/api"), "path \"src/api\" is not inside any path of its parent")
}

test_relative_paths_read_against_the_plan_policy_root_allowed if {
	# The plan's own root is the plan root: "api" names /repo/workspace/sub/api.
	plan := object.union(fixtures.operator, {"workspace_root": "/repo/workspace/sub"})
	doc := nested_with({"operator": fixtures.operator, "plan": plan}, ["/repo/workspace/sub"], ["api", "/repo/workspace/sub/docs"])
	count(tree_paths.deny) == 0 with input as doc
}

test_relative_paths_read_against_the_plan_policy_root_denied if {
	plan := object.union(fixtures.operator, {"workspace_root": "/repo/workspace/sub"})
	doc := nested_with({"operator": fixtures.operator, "plan": plan}, ["/repo/workspace/src"], ["src"])
	deny := tree_paths.deny with input as doc
	{v.field | some v in deny} == {"/paths/0"}
}

test_parent_with_no_paths_gives_none_denied if {
	deny := tree_paths.deny with input as nested([], ["docs", "/repo/workspace"])
	deny == {
		{"child": 1, "field": "/paths/0", "message": "path \"docs\" is not inside any path of its parent /plan/0 (role \"lead\"), which may touch none"},
		{"child": 1, "field": "/paths/1", "message": "path \"/repo/workspace\" is not inside any path of its parent /plan/0 (role \"lead\"), which may touch none"},
	}
}

test_parent_with_no_paths_and_a_child_with_none_allowed if {
	count(tree_paths.deny) == 0 with input as nested([], [])
}

test_parent_with_many_paths_counts_them_denied if {
	deny := tree_paths.deny with input as nested(["a", "b", "c", "d", "e", "f"], ["g"])
	deny == {{"child": 1, "field": "/paths/0", "message": "path \"g\" is not inside any of the 6 paths of its parent /plan/0 (role \"lead\"), and a child may touch only what its parent may"}}
}

test_path_that_is_not_a_string_denied[note] if {
	# paths.invalid refuses it too; it is never provably inside, and must
	# not stop the evaluation.
	some note, path in {"number": 5, "null": null, "list": ["src"]}
	verdict(["/"], path) == sprintf("path %s is not inside any path of its parent /plan/0 (role \"lead\"), which may touch only \"/\", and a child may touch only what its parent may", [json.marshal(path)])
}

test_paths_that_are_not_a_list_are_left_to_the_schema_allowed if {
	count(tree_paths.deny) == 0 with input as nested(["src"], "/etc")
}

test_parent_without_paths_bounds_nothing_allowed if {
	doc := {
		"policies": {"operator": fixtures.operator},
		"children": [fixtures.child({"paths": ["/etc", "src"], "tree": {"depth": 1, "parent": "/parent"}})],
		"parents": {"/parent": {"role": "worker", "tools": ["fs.read"]}},
	}
	count(tree_paths.deny) == 0 with input as doc
}

test_parent_block_bounds_the_top_level_children_denied if {
	doc := {
		"policies": {"operator": fixtures.operator},
		"children": [
			fixtures.child({"paths": ["docs/a"], "tree": {"depth": 2, "parent": "/parent"}}),
			fixtures.child({"paths": ["docs", "src"], "tree": {"depth": 2, "parent": "/parent"}}),
		],
		"parents": {"/parent": {"role": "worker", "paths": ["docs"], "depth": 1}},
	}
	deny := tree_paths.deny with input as doc
	deny == {{"child": 1, "field": "/paths/1", "message": "path \"src\" is not inside any path of the plan's parent (role \"worker\"), which may touch only \"docs\", and a child may touch only what its parent may"}}
}

test_flat_plan_never_refused_allowed if {
	kid := fixtures.child({"paths": ["/etc", "../x", 5], "tree": {"depth": 2, "parent": "/plan/0"}})
	count(tree_paths.deny) == 0 with input as fixtures.plan([fixtures.child({"paths": []}), kid])
}

# A parent of more than a few paths: each place above a child's path is
# looked up among them, by the same rule.
many := ["a", "b", "c", "d", "e", "f", "g", "/repo/workspace/src/", "docs/guide", "/srv/x"]

test_paths_inside_a_parent_of_many_paths_allowed[note] if {
	some note, path in {
		"the path itself": "a",
		"below a relative parent path": "b/c/d.go",
		"relative below an absolute parent path": "src/api",
		"absolute below a relative parent path": "/repo/workspace/docs/guide/x",
		"with a trailing slash": "docs/guide/",
		"outside the workspace, inside the parent": "/srv/x/y",
	}
	verdict(many, path) == "inside"
}

test_paths_outside_a_parent_of_many_paths_denied[note] if {
	some note, path in {
		"sibling sharing the prefix": "a-evil",
		"sibling sharing the prefix, deeper": "docs/guide2/x",
		"the directory above a parent path": "docs",
		"the plan root": "/repo/workspace",
		"a dot-dot": "a/../etc",
		"the filesystem root": "/",
	}
	verdict(many, path) == sprintf("path %q is not inside any of the 10 paths of its parent /plan/0 (role \"lead\"), and a child may touch only what its parent may", [path])
}

test_filesystem_root_in_a_parent_of_many_paths_holds_everything_allowed if {
	count(tree_paths.deny) == 0 with input as nested(array.concat(many, ["/"]), ["/etc/passwd", "x", "/repo/workspace"])
}
