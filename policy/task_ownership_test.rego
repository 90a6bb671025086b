package spawngate.checks.task_ownership_test

import data.spawngate.checks.task_ownership
import data.spawngate.fixtures

owning(tools) := object.union(fixtures.operator, {
	"allowed_tools": ["fs.read", "tasks.complete", "tasks.heartbeat", "tasks.list"],
	"task_ownership": {"tools": tools},
})

task_tools := {"tasks.complete": "task_id", "tasks.heartbeat": "task"}

judged(children) := {"policies": {"operator": owning(task_tools)}, "children": children}

# A worker for one task, with its task tools bound to it.
worker(id) := fixtures.child({
	"task_id": id,
	"tools": ["fs.read", "tasks.complete", "tasks.heartbeat"],
	"bindings": {"tasks.complete": {"task_id": id}, "tasks.heartbeat": {"task": id}},
})

test_one_owner_per_task_allowed if {
	count(task_ownership.deny) == 0 with input as judged([worker("t_A"), worker("t_B"), fixtures.child({}), fixtures.child({"task_id": "t_C"})])
}

test_no_policy_sets_task_ownership_allowed if {
	count(task_ownership.deny) == 0 with input as fixtures.plan([worker("t_A"), worker("t_A"), fixtures.child({"tools": ["tasks.complete"]})])
}

shared_message(id, others) := sprintf("task_id %q is also owned by %s: a worker may act only on its own task, and task_ownership of the operator policy allows each task one owner", [id, others])

test_task_owned_twice_denied if {
	deny := task_ownership.deny with input as judged([worker("t_A"), worker("t_B"), worker("t_A")])
	deny == {
		{"child": 0, "field": "/task_id", "message": shared_message("t_A", "/plan/2"), "policies": ["operator"]},
		{"child": 2, "field": "/task_id", "message": shared_message("t_A", "/plan/0"), "policies": ["operator"]},
	}
}

test_task_owned_twice_without_tools_denied if {
	policy := object.union(fixtures.operator, {"task_ownership": {}})
	deny := task_ownership.deny with input as {"policies": {"operator": policy}, "children": [fixtures.child({"task_id": "t_A"}), fixtures.child({"task_id": "t_A"})]}
	{v.child | some v in deny} == {0, 1}
}

test_task_ids_differing_in_case_are_different_tasks_allowed if {
	count(task_ownership.deny) == 0 with input as judged([worker("t_A"), worker("t_a")])
}

owners_named(n, i) := {v.message |
	deny := task_ownership.deny with input as judged([worker("t_A") | some _ in numbers.range(1, n)])
	some v in deny
	v.child == i
}

test_many_owners_name_at_most_three_denied if {
	owners_named(3, 2) == {shared_message("t_A", "/plan/0 and /plan/1")}
	owners_named(4, 0) == {shared_message("t_A", "/plan/1, /plan/2 and /plan/3")}
	owners_named(7, 5) == {shared_message("t_A", "/plan/0, /plan/1, /plan/2 and 3 more children")}
}

test_group_of_identical_children_owns_a_task_many_times_denied if {
	deny := task_ownership.deny with input as object.union(judged([worker("t_A"), worker("t_B")]), {"members": [1, 2]})
	deny == {{"child": 1, "field": "/task_id", "message": shared_message("t_B", "1 other child"), "policies": ["operator"]}}
}

test_grouped_owners_are_counted_denied if {
	deny := task_ownership.deny with input as object.union(judged([worker("t_A"), worker("t_A")]), {"members": [3, 1]})
	{[v.child, v.message] | some v in deny} == {
		[0, shared_message("t_A", "3 other children")],
		[1, shared_message("t_A", "3 other children")],
	}
}

nested(fields, parent) := object.union(fixtures.child(fields), {"tree": {"depth": 2, "parent": parent}})

test_task_owned_by_a_descendant_too_denied if {
	children := [
		object.union(worker("t_A"), {"tree": {"depth": 1}}),
		object.union(fixtures.child({}), {"tree": {"depth": 1}}),
		nested({"task_id": "t_B"}, "/plan/1"),
		nested({"task_id": "t_A"}, "/plan/1"),
	]
	pointers := ["/plan/0", "/plan/1", "/plan/1/children/0", "/plan/1/children/1"]
	deny := task_ownership.deny with input as {"policies": {"operator": owning(task_tools)}, "children": children, "pointers": pointers}
	{[v.child, v.message] | some v in deny} == {
		[0, shared_message("t_A", "/plan/1/children/1")],
		[3, shared_message("t_A", "/plan/0")],
	}
}

test_task_tool_without_task_id_denied if {
	child := fixtures.child({"tools": ["fs.read", "tasks.complete"], "bindings": {"tasks.complete": {"task_id": "t_A"}}})
	deny := task_ownership.deny with input as judged([child])
	deny == {{"child": 0, "field": "/tools/1", "message": "tool \"tasks.complete\" acts on a task, but the child is bound to no task (it has no task_id); task_ownership of the operator policy scopes the tool to the child's own task", "policies": ["operator"]}}
}

test_unbound_task_tool_denied if {
	child := object.union(object.remove(worker("t_A"), ["bindings"]), {"bindings": {"tasks.complete": {"task_id": "t_A"}, "tasks.heartbeat": {"other": "t_A"}}})
	deny := task_ownership.deny with input as judged([child])
	deny == {{"child": 0, "field": "/tools/2", "message": "tool \"tasks.heartbeat\" is not bound to the child's task: bindings gives it no \"task\", so the tool could act on any task; task_ownership of the operator policy scopes the tool to the child's own task", "policies": ["operator"]}}
}

test_task_tool_without_bindings_denied if {
	child := fixtures.child({"task_id": "t_A", "tools": ["tasks.complete", "tasks.heartbeat"]})
	deny := task_ownership.deny with input as judged([child])
	{v.field | some v in deny} == {"/tools/0", "/tools/1"}
}

test_task_tool_bound_to_another_task_denied if {
	child := object.union(worker("t_A"), {"bindings": {"tasks.complete": {"task_id": "t_B"}, "tasks.heartbeat": {"task": "t_A"}}})
	deny := task_ownership.deny with input as judged([child])
	deny == {{"child": 0, "field": "/bindings/tasks.complete/task_id", "message": "tool \"tasks.complete\" is bound to task \"t_B\" by its \"task_id\", not to the child's own task \"t_A\"; task_ownership of the operator policy scopes the tool to the child's own task", "policies": ["operator"]}}
}

test_binding_pointer_escapes_tool_and_argument_denied if {
	policy := owning({"mcp/tasks~done": "task/id"})
	child := fixtures.child({"task_id": "t_A", "tools": ["mcp/tasks~done"], "bindings": {"mcp/tasks~done": {"task/id": "t_B"}}})
	deny := task_ownership.deny with input as {"policies": {"operator": policy}, "children": [child]}
	{v.field | some v in deny} == {"/bindings/mcp~1tasks~0done/task~1id"}
}

test_tools_that_are_not_task_scoped_need_no_binding_allowed if {
	child := fixtures.child({"task_id": "t_A", "tools": ["fs.read", "tasks.list"]})
	count(task_ownership.deny) == 0 with input as judged([child, fixtures.child({"tools": ["tasks.list"]})])
}

test_bindings_of_tools_the_child_does_not_hold_allowed if {
	child := fixtures.child({"task_id": "t_A", "tools": ["fs.read"], "bindings": {"tasks.complete": {"task_id": "t_B"}}})
	count(task_ownership.deny) == 0 with input as judged([child])
}

test_tools_are_named_exactly_allowed if {
	policy := owning({"tasks.*": "task_id"})
	count(task_ownership.deny) == 0 with input as {"policies": {"operator": policy}, "children": [fixtures.child({"tools": ["tasks.complete"]})]}
}

test_each_policy_scopes_its_own_tools_denied if {
	policies := {"operator": owning({"tasks.complete": "task_id"}), "plan": {"task_ownership": {"tools": {"tasks.complete": "task_id", "tasks.heartbeat": "task"}}}}
	child := fixtures.child({"task_id": "t_A", "tools": ["tasks.complete", "tasks.heartbeat"]})
	deny := task_ownership.deny with input as {"policies": policies, "children": [child]}
	{[v.field, v.policies] | some v in deny} == {["/tools/0", ["operator", "plan"]], ["/tools/1", ["plan"]]}
	some v in deny
	v.field == "/tools/0"
	v.message == "tool \"tasks.complete\" is not bound to the child's task: bindings gives it no \"task_id\", so the tool could act on any task; task_ownership of the operator and plan policies scopes the tool to the child's own task"
}

test_policies_naming_different_arguments_refuse_apart_denied if {
	policies := {"operator": owning({"tasks.complete": "task_id"}), "plan": {"task_ownership": {"tools": {"tasks.complete": "id"}}}}
	child := fixtures.child({"task_id": "t_A", "tools": ["tasks.complete"], "bindings": {"tasks.complete": {"task_id": "t_A"}}})
	deny := task_ownership.deny with input as {"policies": policies, "children": [child]}
	{[v.field, v.policies] | some v in deny} == {["/tools/0", ["plan"]]}
}

test_both_policies_refuse_a_shared_task_denied if {
	policies := {"operator": owning({}), "plan": {"task_ownership": {}}}
	deny := task_ownership.deny with input as {"policies": policies, "children": [fixtures.child({"task_id": "t_A"}), fixtures.child({"task_id": "t_A"})]}
	{v.policies | some v in deny} == {["operator", "plan"]}
}

test_children_that_are_not_objects_are_skipped_allowed if {
	count(task_ownership.deny) == 0 with input as judged(["x", null, worker("t_A")])
}
