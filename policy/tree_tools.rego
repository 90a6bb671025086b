# METADATA
# title: A child may hold only tools its parent holds
# description: >-
#   In a nested plan, a child's tools must be among its parent's: a parent
#   cannot hand down a power it was not given. The plan's parent block, when
#   it lists tools, bounds the plan's own children the same way. Tools are
#   compared exactly, except Codex sandboxes, where a narrower one is held by
#   a wider one (sandbox:read-only by sandbox:workspace-write, and both by
#   sandbox:danger-full-access). A parent that lists no tools bounds nothing
#   here (a Claude Code definition without tools inherits its own parent's,
#   which the gate cannot see); its other limits still hold.
# custom:
#   id: tree.tools
#   severity: high
#   when_nested: true
package spawngate.checks.tree_tools

import data.spawngate.lib

deny contains lib.violation(i, sprintf("/tools/%d", [j]), explain(i, tool)) if {
	some i, _ in lib.parented
	tools := lib.children[i].tools
	is_array(tools)
	held := holding[lib.children[i].tree.parent]
	some j, tool in tools
	not tool in held
}

# What each parent of the children judged here holds, by pointer, when it
# lists tools: those tools, and every sandbox no wider than the widest it
# holds. Made once per parent, so that each of a child's tools is looked
# up in a set, not compared with every tool of its parent (a thousand
# tools under a parent of a thousand would be a million comparisons).
holding := {ptr: held |
	some ptr in parent_pointers
	tools := lib.parents[ptr].tools
	is_array(tools)
	w := widest(tools)
	held := {t | some t in tools} | {sandbox | some sandbox, rank in sandbox_rank; rank <= w}
}

parent_pointers := {lib.children[i].tree.parent | some i, _ in lib.parented}

widest(tools) := max(ranks) if {
	ranks := {sandbox_rank[t] | some t in tools; sandbox_rank[t]}
	count(ranks) > 0
} else := 0

# The Codex sandboxes, from the narrowest.
sandbox_rank := {
	"sandbox:read-only": 1,
	"sandbox:workspace-write": 2,
	"sandbox:danger-full-access": 3,
}

explain(i, tool) := sprintf("tool %s is not held by %s, and a child may hold only tools its parent holds", [lib.show(tool), lib.parent_name(i)])
