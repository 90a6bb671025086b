package spawngate.checks.tree_tools_test

import data.spawngate.checks.tree_tools
import data.spawngate.fixtures

# A nested plan as the gate hands it to a check: child 0 is the lead at
# /plan/0, holding the given tools; the given children are its own, each
# placed below it.
lead(tools) := fixtures.child({"role": "lead", "tools": tools, "tree": {"depth": 1, "spawns": 1, "descendants": 1}})

below(fields) := object.union(fixtures.child({"role": "worker"}), object.union({"tree": {"depth": 2, "parent": "/plan/0"}}, fields))

nested(tools, kids) := {
	"policies": {"operator": fixtures.operator},
	"children": array.concat([lead(tools)], kids),
	"parents": {"/plan/0": {"role": "lead", "tools": tools, "depth": 1}},
}

# A plan whose own parent block holds the given tools.
under_block(block, kids) := {
	"policies": {"operator": fixtures.operator},
	"children": kids,
	"parents": {"/parent": block},
}

on_top(fields) := object.union(fixtures.child({}), object.union({"tree": {"depth": 1, "parent": "/parent"}}, fields))

test_tools_the_parent_holds_allowed if {
	count(tree_tools.deny) == 0 with input as nested(["fs.read", "fs.write", "Agent"], [below({"tools": ["fs.read", "fs.write"]}), below({"tools": ["Agent"]})])
}

test_tool_the_parent_lacks_denied if {
	deny := tree_tools.deny with input as nested(["fs.read", "Agent"], [below({"tools": ["fs.read", "http.get"]})])
	deny == {{"child": 1, "field": "/tools/1", "message": "tool \"http.get\" is not held by its parent /plan/0 (role \"lead\"), and a child may hold only tools its parent holds"}}
}

test_every_tool_the_parent_lacks_denied if {
	deny := tree_tools.deny with input as nested(["fs.read"], [below({"tools": ["fs.write", "fs.read", "Agent"]})])
	{v.field | some v in deny} == {"/tools/0", "/tools/2"}
}

test_grandchild_bounded_by_its_own_parent_denied if {
	# The worker at /plan/0/children/0 holds fs.read only; its child may
	# not take back fs.write, which the lead holds.
	doc := {
		"policies": {"operator": fixtures.operator},
		"children": [
			lead(["fs.read", "fs.write", "Agent"]),
			below({"tools": ["fs.read", "Agent"], "tree": {"depth": 2, "parent": "/plan/0", "spawns": 1, "descendants": 1}}),
			below({"tools": ["fs.write"], "tree": {"depth": 3, "parent": "/plan/0/children/0"}}),
		],
		"parents": {
			"/plan/0": {"role": "lead", "tools": ["fs.read", "fs.write", "Agent"], "depth": 1},
			"/plan/0/children/0": {"tools": ["fs.read", "Agent"], "depth": 2},
		},
	}
	deny := tree_tools.deny with input as doc
	deny == {{"child": 2, "field": "/tools/0", "message": "tool \"fs.write\" is not held by its parent /plan/0/children/0, and a child may hold only tools its parent holds"}}
}

test_parent_block_bounds_the_top_level_children_denied if {
	deny := tree_tools.deny with input as under_block({"role": "worker", "tools": ["fs.read"]}, [on_top({}), on_top({"tools": ["fs.read", "fs.write"]})])
	deny == {{"child": 1, "field": "/tools/1", "message": "tool \"fs.write\" is not held by the plan's parent (role \"worker\"), and a child may hold only tools its parent holds"}}
}

test_parent_block_without_a_role_denied if {
	deny := tree_tools.deny with input as under_block({"tools": []}, [on_top({})])
	deny == {{"child": 0, "field": "/tools/0", "message": "tool \"fs.read\" is not held by the plan's parent, and a child may hold only tools its parent holds"}}
}

test_parent_block_within_allowed if {
	count(tree_tools.deny) == 0 with input as under_block({"role": "worker", "tools": ["fs.read", "http.get"]}, [on_top({}), on_top({"tools": ["http.get", "fs.read"]})])
}

test_parent_without_tools_bounds_nothing_allowed if {
	doc := under_block({"role": "worker", "paths": []}, [on_top({"tools": ["fs.write", "Agent", "sandbox:danger-full-access"]})])
	count(tree_tools.deny) == 0 with input as doc
}

test_parent_with_an_empty_tool_list_gives_none_denied if {
	deny := tree_tools.deny with input as under_block({"tools": []}, [on_top({"tools": ["fs.read", "http.get"]})])
	{v.field | some v in deny} == {"/tools/0", "/tools/1"}
}

test_tools_compared_exactly_denied[note] if {
	some note, pair in {
		"pattern in the parent": ["mcp__github__get_*", "mcp__github__get_issue"],
		"case": ["fs.read", "FS.READ"],
		"space": ["fs.read", "fs.read "],
		"spawn tools differ": ["Task", "Agent"],
	}
	deny := tree_tools.deny with input as nested([pair[0]], [below({"tools": [pair[1]]})])
	{v.field | some v in deny} == {"/tools/0"}
}

test_tool_that_is_not_a_string_denied if {
	deny := tree_tools.deny with input as nested(["fs.read"], [below({"tools": ["fs.read", 5]})])
	deny == {{"child": 1, "field": "/tools/1", "message": "tool 5 is not held by its parent /plan/0 (role \"lead\"), and a child may hold only tools its parent holds"}}
}

# Codex sandboxes: a wider one holds a narrower one.
test_narrower_sandbox_held_by_a_wider_one_allowed[note] if {
	some note, pair in {
		"read-only under workspace-write": ["sandbox:workspace-write", "sandbox:read-only"],
		"read-only under danger-full-access": ["sandbox:danger-full-access", "sandbox:read-only"],
		"workspace-write under danger-full-access": ["sandbox:danger-full-access", "sandbox:workspace-write"],
		"the same": ["sandbox:workspace-write", "sandbox:workspace-write"],
	}
	count(tree_tools.deny) == 0 with input as nested(["fs.read", pair[0]], [below({"tools": [pair[1]]})])
}

test_widest_of_the_parent_sandboxes_holds_allowed if {
	doc := nested(["sandbox:read-only", "sandbox:danger-full-access"], [below({"tools": ["sandbox:workspace-write"]})])
	count(tree_tools.deny) == 0 with input as doc
}

test_wider_sandbox_denied[note] if {
	some note, pair in {
		"workspace-write under read-only": ["sandbox:read-only", "sandbox:workspace-write"],
		"danger-full-access under read-only": ["sandbox:read-only", "sandbox:danger-full-access"],
		"danger-full-access under workspace-write": ["sandbox:workspace-write", "sandbox:danger-full-access"],
		"any sandbox under none": ["fs.read", "sandbox:read-only"],
		"an unknown sandbox": ["sandbox:danger-full-access", "sandbox:yolo"],
	}
	deny := tree_tools.deny with input as nested([pair[0]], [below({"tools": [pair[1]]})])
	deny == {{"child": 1, "field": "/tools/0", "message": sprintf("tool %q is not held by its parent /plan/0 (role \"lead\"), and a child may hold only tools its parent holds", [pair[1]])}}
}

test_tools_that_are_not_a_list_are_left_to_the_schema_allowed if {
	count(tree_tools.deny) == 0 with input as nested(["fs.read"], [below({"tools": "fs.write"})])
}

test_top_level_child_without_a_parent_block_allowed if {
	# The lead itself answers to no parent: its tools are the policies' business.
	count(tree_tools.deny) == 0 with input as nested(["fs.read", "Agent", "shell.run"], [below({"tools": ["fs.read"]})])
}

test_flat_plan_never_refused_allowed if {
	# No input.parents: a stale tree key names a parent nobody describes.
	kid := fixtures.child({"tools": ["fs.write", "Agent"], "tree": {"depth": 2, "parent": "/plan/0"}})
	count(tree_tools.deny) == 0 with input as fixtures.plan([fixtures.child({"tools": ["fs.read"]}), kid])
}

test_parent_of_many_tools_allowed if {
	tools := array.concat(["sandbox:workspace-write"], [sprintf("t%d", [k]) | some k in numbers.range(1, 200)])
	kid := below({"tools": ["t7", "t200", "sandbox:read-only", "t1"]})
	count(tree_tools.deny) == 0 with input as nested(tools, [kid])
}

test_parent_of_many_tools_denied if {
	tools := [sprintf("t%d", [k]) | some k in numbers.range(1, 200)]
	deny := tree_tools.deny with input as nested(tools, [below({"tools": ["t7", "t201", "sandbox:read-only"]})])
	{v.field | some v in deny} == {"/tools/1", "/tools/2"}
}
