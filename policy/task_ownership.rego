# METADATA
# title: Each task has one owner, and task tools act on the child's own task
# description: >-
#   When a policy that applies sets task_ownership, a worker spawned for one
#   task may complete, block or heartbeat only that task: one that names
#   another corrupts that task's handoff. So no two children of the plan
#   tree may own the same task_id (each is refused at its task_id, and a
#   group of identical children counts each of its members). A tool listed
#   in task_ownership.tools acts on the task named by the argument listed
#   with it: a child holding one must have a task_id, and its bindings must
#   bind that argument of the tool to exactly its own task_id; an unbound
#   tool could act on any task. Tools are named exactly, never by pattern.
# custom:
#   id: task.ownership
#   severity: high
#   scope: plan
#   when_set: [task_ownership]
package spawngate.checks.task_ownership

import data.spawngate.lib

# The task-scoped tools of every policy that sets task_ownership, by
# source: tool name -> the argument that names its task.
scoped := {source: tools |
	some source, policy in lib.policies
	tools := object.get(lib.as_object(policy.task_ownership), "tools", {})
}

# Every policy that sets task_ownership refuses a task owned twice.
owning := {source | some source, _ in scoped}

# The children that own each task, by task, in index order.
owners := lib.grouped(sort([[id, i] | some i, child in lib.children; id := child.task_id; is_string(id)]))

# The tasks more than one plan child owns, by how many do.
owned := {id: n |
	some id, list in owners
	n := count(list)
	n > 1
} if {
	lib.each_alone
} else := {id: n |
	some id, list in owners
	n := sum([lib.members[i] | some i in list])
	n > 1
}

deny contains lib.refusal(i, "/task_id", explain_shared(id, others, owning), owning) if {
	count(owning) > 0
	some id, total in owned
	lib.each_alone
	list := owners[id]
	some i in list
	kept := lib.drop(i, array.slice(list, 0, 4))
	others := lib.name_list([lib.pointer(j) | some j in kept], total - 1)
}

deny contains lib.refusal(i, "/task_id", explain_shared(id, others, owning), owning) if {
	count(owning) > 0
	some id, total in owned
	not lib.each_alone
	some i in owners[id]
	others := sprintf("%d other %s", [total - 1, lib.children_word(total - 1)])
}

explain_shared(id, others, sources) := sprintf("task_id %s is also owned by %s: a worker may act only on its own task, and task_ownership of %s allows each task one owner", [lib.show(id), others, lib.describe(sources)])

# The task-scoped tools, each with the argument that names its task, by
# the policies that scope it so: [tool, argument] -> sources.
scoping := {[tool, arg]: {source | some source, tools in scoped; tools[tool] == arg} |
	some tools in scoped
	some tool, arg in tools
}

# The task-scoped tools each child holds, as [child, j, tool, argument]:
# tool is the child's j-th.
holding contains [i, j, tool, arg] if {
	count(scoping) > 0
	some i, child in lib.children
	is_array(child.tools)
	some j, tool in child.tools
	is_string(tool)
	some arg in arguments[tool]
}

# The arguments each task-scoped tool is scoped by (policies may differ).
arguments := {tool: {arg | some [t, arg], _ in scoping; t == tool} | some [tool, _], _ in scoping}

# A child bound to no task can act on none of its own: any task it names
# is another's.
deny contains lib.refusal(i, sprintf("/tools/%d", [j]), sprintf("tool %s acts on a task, but the child is bound to no task (it has no task_id); %s", [lib.show(tool), scoped_by(tool, arg)]), scoping[[tool, arg]]) if {
	some [i, j, tool, arg] in holding
	not has_task(lib.children[i])
}

deny contains lib.refusal(i, sprintf("/tools/%d", [j]), sprintf("tool %s is not bound to the child's task: bindings gives it no %s, so the tool could act on any task; %s", [lib.show(tool), lib.show(arg), scoped_by(tool, arg)]), scoping[[tool, arg]]) if {
	some [i, j, tool, arg] in holding
	has_task(lib.children[i])
	not bound(lib.children[i], tool, arg)
}

deny contains lib.refusal(i, sprintf("/bindings/%s/%s", [escape(tool), escape(arg)]), sprintf("tool %s is bound to task %s by its %s, not to the child's own task %s; %s", [lib.show(tool), lib.show(other), lib.show(arg), lib.show(id), scoped_by(tool, arg)]), scoping[[tool, arg]]) if {
	some [i, _, tool, arg] in holding
	id := lib.children[i].task_id
	is_string(id)
	other := lib.children[i].bindings[tool][arg]
	other != id
}

scoped_by(tool, arg) := sprintf("task_ownership of %s scopes the tool to the child's own task", [lib.describe(scoping[[tool, arg]])])

# (Helpers: "not is_string(x.task_id)" is undefined, not true, when the key
# is missing.)
has_task(child) if is_string(child.task_id)

bound(child, tool, arg) if _ := child.bindings[tool][arg]

# A JSON pointer's reference tokens escape ~ as ~0 and / as ~1.
escape(name) := replace(replace(name, "~", "~0"), "/", "~1")
