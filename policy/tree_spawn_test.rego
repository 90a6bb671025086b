package spawngate.checks.tree_spawn_test

import data.spawngate.checks.tree_spawn
import data.spawngate.fixtures

# A nested plan as the gate hands it to a check: child 0 is the lead at
# /plan/0 with the given tools and n children of its own (children 1..n).
nested_with(policies, tools, n) := {
	"policies": policies,
	"children": array.concat(
		[fixtures.child({"role": "lead", "tools": tools, "tree": {"depth": 1, "spawns": n, "descendants": n}})],
		[fixtures.child({"tree": {"depth": 2, "parent": "/plan/0"}}) | n > 0; some _ in numbers.range(1, n)],
	),
	"parents": {"/plan/0": {"role": "lead", "tools": tools, "depth": 1}},
}

nested(tools, n) := nested_with({"operator": fixtures.operator}, tools, n)

test_parent_holding_a_default_spawn_tool_allowed[tool] if {
	some tool in ["Agent", "Task", "Skill", "Workflow", "spawn_agent", "collaboration.spawn_agent", "collaborationspawn_agent", "task", "run_dynamic_workflow", "invoke_agent"]
	count(tree_spawn.deny) == 0 with input as nested(["fs.read", tool], 2)
}

test_parent_without_a_spawn_tool_denied if {
	deny := tree_spawn.deny with input as nested(["fs.read", "fs.write"], 1)
	deny == {{"child": 0, "field": "/children", "message": "the child lists 1 child of its own but holds no spawn tool (Agent, Skill, Task, Workflow, collaboration.spawn_agent, collaborationspawn_agent, invoke_agent, run_dynamic_workflow, spawn_agent, task), so it could not dispatch them"}}
}

test_parent_of_several_without_a_spawn_tool_denied if {
	deny := tree_spawn.deny with input as nested(["fs.read"], 3)
	deny == {{"child": 0, "field": "/children", "message": "the child lists 3 children of its own but holds no spawn tool (Agent, Skill, Task, Workflow, collaboration.spawn_agent, collaborationspawn_agent, invoke_agent, run_dynamic_workflow, spawn_agent, task), so it could not dispatch them"}}
}

test_spawn_tools_of_the_policy_allowed if {
	policy := object.union(fixtures.operator, {"spawn_tools": ["orchestrate.*"]})
	count(tree_spawn.deny) == 0 with input as nested_with({"operator": policy}, ["orchestrate.run"], 1)
}

test_spawn_tools_of_the_policy_replace_the_defaults_denied if {
	policy := object.union(fixtures.operator, {"spawn_tools": ["orchestrate.*"]})
	deny := tree_spawn.deny with input as nested_with({"operator": policy}, ["Agent"], 1)
	deny == {{"child": 0, "field": "/children", "message": "the child lists 1 child of its own but holds no spawn tool (orchestrate.*), so it could not dispatch them"}}
}

test_spawn_tool_of_any_policy_allowed if {
	# Whether a policy lets the child spawn is tools.spawn's question; here
	# it is enough that some policy calls the tool a spawn tool.
	plan := object.union(fixtures.operator, {"spawn_tools": ["orchestrate.*"]})
	doc := nested_with({"operator": fixtures.operator, "plan": plan}, ["orchestrate.run"], 1)
	count(tree_spawn.deny) == 0 with input as doc
}

test_message_lists_the_spawn_tools_of_every_policy_denied if {
	plan := object.union(fixtures.operator, {"spawn_tools": ["orchestrate.*"]})
	deny := tree_spawn.deny with input as nested_with({"operator": fixtures.operator, "plan": plan}, ["fs.read"], 1)
	{v.message | some v in deny} == {"the child lists 1 child of its own but holds no spawn tool (Agent, Skill, Task, Workflow, collaboration.spawn_agent, collaborationspawn_agent, invoke_agent, orchestrate.*, run_dynamic_workflow, spawn_agent, task), so it could not dispatch them"}
}

test_tool_that_is_not_a_plain_name_does_not_spawn_denied[note] if {
	some note, tool in {"pattern": "Agent*", "permission rule": "Agent(Explore)", "trailing space": "Agent ", "lower case": "agent", "number": 5}
	deny := tree_spawn.deny with input as nested(["fs.read", tool], 1)
	{v.field | some v in deny} == {"/children"}
}

test_tools_that_are_not_a_list_denied if {
	deny := tree_spawn.deny with input as nested("Agent", 1)
	{v.field | some v in deny} == {"/children"}
}

test_child_without_children_needs_no_spawn_tool_allowed if {
	# The lead's child holds fs.read only, and has no children.
	count(tree_spawn.deny) == 0 with input as nested(["Agent"], 1)
}

test_child_with_an_empty_children_list_needs_no_spawn_tool_allowed if {
	count(tree_spawn.deny) == 0 with input as nested(["fs.read"], 0)
}

test_child_of_a_parent_block_allowed if {
	doc := {
		"policies": {"operator": fixtures.operator},
		"children": [fixtures.child({"tree": {"depth": 1, "parent": "/parent"}})],
		"parents": {"/parent": {"role": "worker", "tools": ["fs.read"]}},
	}
	count(tree_spawn.deny) == 0 with input as doc
}

test_flat_plan_never_refused_allowed if {
	kid := fixtures.child({"tools": ["fs.read"], "tree": {"depth": 1, "spawns": 3, "descendants": 3}})
	count(tree_spawn.deny) == 0 with input as fixtures.plan([kid])
}

test_parent_holding_a_spawn_tool_its_adapter_names_allowed if {
	plan := nested(["view", "delegate"], 1)
	lead := object.union(plan.children[0], {"agent": {"host": "copilot", "type": "lead", "spawn_tools": ["delegate"]}})
	count(tree_spawn.deny) == 0 with input as object.union(plan, {"children": array.concat([lead], array.slice(plan.children, 1, 2))})
}

test_spawn_tool_named_by_another_childs_adapter_counts if {
	# delegate spawns for one child by its adapter's word; the lead of the
	# same plan holding delegate may dispatch its children.
	plan := nested(["view", "delegate"], 1)
	other := fixtures.child({"tools": ["delegate"], "agent": {"host": "copilot", "type": "x", "spawn_tools": ["delegate"]}})
	count(tree_spawn.deny) == 0 with input as object.union(plan, {"children": array.concat(plan.children, [other])})
	count(tree_spawn.deny) == 1 with input as plan
}
