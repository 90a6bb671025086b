# Tests of the shared definitions every check stands on: a flaw here would
# be a flaw in every check at once.
package spawngate.lib_test

import data.spawngate.fixtures
import data.spawngate.lib

test_plain_tool_names_allowed[tool] if {
	some tool in ["fs.read", "mcp__github__get_issue", "Bash", "a", "x-1_y:z.w", "_"]
	lib.is_tool_name(tool)
}

test_patterns_and_odd_names_denied[note] if {
	some note, tool in {
		"star": "fs:*", "question": "fs.rea?", "space": "fs read", "leading dot": ".fs",
		"trailing colon": "fs.write:", "trailing dash": "fs-", "empty": "", "number": 1,
		"null": null, "list": ["fs.read"], "non-ASCII": "fs.réad", "newline": "fs.read\n",
	}
	not lib.is_tool_name(tool)
}

test_glob_matches_within_a_segment_allowed if {
	lib.matches(["fs.*"], "fs.read")
	lib.matches(["fs.**"], "fs.read.all")
	lib.matches(["fs.rea?"], "fs.read")
	lib.matches(["mcp__github__get_*"], "mcp__github__get_issue")
}

test_glob_does_not_cross_a_dot_denied if {
	not lib.matches(["fs.*"], "fs.read.all")
	not lib.matches(["fs.rea?"], "fs.re.d")
	not lib.matches([], "fs.read")
}

# A predicate that does not hold is false, not undefined: OPA remembers only
# defined values, and the engine shares them across decisions (pure.go), so
# a tool that matches no pattern is tested once per policy, not per plan.
test_failed_predicates_are_false_denied if {
	lib.matches(["fs.*"], "fs.read.all") == false
	lib.matches([], "fs.read") == false
	lib.is_tool_name("fs:*") == false
	lib.is_tool_name(1) == false
}

test_default_write_tools_allowed if {
	lib.write_tools({}) == ["fs.write", "fs.delete", "shell.run", "wallet.transfer"]
	lib.write_tools({"write_tools": ["deploy"]}) == ["deploy"]
}

test_only_boolean_true_grants_write_denied[note] if {
	some note, value in {"string": "true", "number": 1, "false": false, "null": null}
	not lib.grants_write({"allow_write": value})
}

test_boolean_true_grants_write_allowed if {
	lib.grants_write({"allow_write": true})
	not lib.grants_write({})
}

test_whole_numbers_allowed[n] if {
	some n in [0, 1, -1, 40000, 18446744073709551617]
	lib.whole(n)
}

test_fractions_are_not_whole_denied[n] if {
	some n in [0.5, -1.25, 1e-3]
	not lib.whole(n)
}

test_budgets_keep_only_positive_whole_numbers_written_as_such_allowed if {
	children := [
		fixtures.child({"budget_tokens": 40000}),
		fixtures.child({"budget_tokens": 0}),
		fixtures.child({"budget_tokens": "40000"}),
		fixtures.child({"budget_tokens": 4e4}),
	]
	got := lib.budgets with input as object.union(fixtures.plan(children), {"float_literals": {"/3/budget_tokens": "4e4"}})
	got == {0: 40000}
}

test_show_quotes_and_cuts_strings_allowed if {
	lib.show("a\"b\u001b") == `"a\"b\x1b"`
	lib.show("") == `""`
	count(lib.show(concat("", ["x" | some _ in numbers.range(1, 200)]))) == 85
	lib.show(40000) == "40000"
	lib.show({"a": 1}) == `{"a":1}`
}

test_a_type_names_every_type_allowed if {
	[lib.a_type(x) | some x in [null, {}, [], "s", 1, true]] == ["null", "an object", "a list", "a string", "a number", "a boolean"]
}

test_describe_names_the_policies_allowed if {
	lib.describe({"operator"}) == "the operator policy"
	lib.describe({"plan", "operator"}) == "the operator and plan policies"
}

test_children_skip_what_is_not_an_object_denied if {
	got := lib.children with input as {"policies": {}, "children": [fixtures.child({}), "x", null, [1]]}
	object.keys(got) == {0}
}

# Role profiles and the sources that refuse.
profiled_input := fixtures.profiled(
	{"doc-reader": {"allowed_tools": ["fs.read"], "budget_cap_tokens": 1000}, "a/b~c": {"allow_write": false}},
	[fixtures.child({}), fixtures.child({"role": "fixer"}), fixtures.child({"role": "a/b~c", "tools": ["x", "y"]}), "not a child", fixtures.child({"role": 5})],
)

test_profile_is_the_operator_policy_with_its_settings_allowed if {
	got := lib.profiles["doc-reader"] with input as profiled_input
	got == {"allowed_tools": ["fs.read"], "workspace_root": "/repo/workspace", "budget_cap_tokens": 1000}
}

test_profile_sources_are_escaped_pointers_allowed if {
	got := lib.profile_sources with input as profiled_input
	got == {"doc-reader": "operator/roles/doc-reader", "a/b~c": "operator/roles/a~1b~0c"}
}

test_only_children_of_profiled_roles_are_profiled_denied if {
	got := lib.profiled with input as profiled_input
	got == {0: "doc-reader", 2: "a/b~c"}
}

test_each_profiled_pair_once_allowed if {
	got := lib.profile_tools with input as profiled_input
	got == {["doc-reader", "fs.read"], ["a/b~c", "x"], ["a/b~c", "y"]}
}

test_no_profiles_without_an_operator_policy_denied if {
	got := lib.profiled with input as fixtures.plan_with(object.union(fixtures.operator, {"roles": {"doc-reader": {"allow_write": false}}}), [fixtures.child({})])
	got == {}
	lib.profiles == {} with input as {"policies": {"plan": fixtures.operator}, "children": [fixtures.child({})]}
}

test_policies_for_adds_the_profile_allowed if {
	got := lib.policies_for(fixtures.child({})) with input as profiled_input
	object.keys(got) == {"operator", "operator/roles/doc-reader"}
	lib.policies_for(fixtures.child({"role": "fixer"})) == profiled_input.policies with input as profiled_input
}

test_describe_names_profiles_allowed if {
	lib.describe({"operator/roles/doc-reader"}) == "the operator policy's profile for role \"doc-reader\"" with input as profiled_input
	lib.describe({"operator", "operator/roles/doc-reader"}) == "the operator policy and its profile for role \"doc-reader\"" with input as profiled_input
	lib.describe({"plan", "operator/roles/doc-reader"}) == "the plan policy and the operator policy's profile for role \"doc-reader\"" with input as profiled_input
	lib.describe({"operator", "plan", "operator/roles/a~1b~0c"}) == "the operator and plan policies and the operator policy's profile for role \"a/b~c\"" with input as profiled_input
}

test_refusal_names_sorted_sources_allowed if {
	lib.refusal(0, "/tools/0", "m", {"plan", "operator/roles/x", "operator"}) == {"child": 0, "field": "/tools/0", "message": "m", "policies": ["operator", "operator/roles/x", "plan"]}
	lib.finding(0, "/f", "m", {"plan", "operator"}) == lib.refusal(0, "/f", "m", {"operator", "plan"})
	lib.plan_refusal("/plan", "m", {"plan"}) == {"field": "/plan", "message": "m", "policies": ["plan"]}
	lib.plan_violation("/plan", "m") == {"field": "/plan", "message": "m"}
}

test_finding_without_sources_is_a_violation_denied if {
	lib.finding(0, "/f", "m", set()) == lib.violation(0, "/f", "m")
}

test_plan_size_counts_members_allowed if {
	lib.plan_size == 7 with input as {"policies": {}, "children": [{}, "x"], "members": [4, 3]}
	lib.plan_size == 2 with input as {"policies": {}, "children": [{}, "x"]}
}

test_profile_leaves_out_what_is_not_a_setting_of_a_child_allowed if {
	op := object.union(fixtures.operator, {"max_children": 3, "max_total_budget_tokens": 10, "unknown_roles": "refuse", "roles": {"r": {"allow_write": false}}})
	got := lib.profiles.r with input as {"policies": {"operator": op}, "children": []}
	got == object.union(fixtures.operator, {"allow_write": false})
}

# The facts, as lib.rego defines them when the input lacks input.facts
# (the gate's own, computed in Go, are held equal to these by
# internal/engine/facts_test.go).
facts_children := [
	fixtures.child({"tools": ["fs.read", "fs:*", 1], "paths": ["docs/", "/repo/workspace/a", "../x", "//x", 7], "budget_tokens": 40000}),
	fixtures.child({"tools": ["fs.read", "Bash(git:*)"], "paths": ["docs/", "con/x", "-rf", "/"], "budget_tokens": 4e4}),
	fixtures.child({"tools": "fs.read", "paths": "docs", "budget_tokens": -3}),
	"not a child",
]

test_requested_tools_and_paths_are_each_distinct_value_allowed if {
	lib.requested_tools == {"fs.read", "fs:*", 1, "Bash(git:*)"} with input as fixtures.plan(facts_children)
	lib.requested_paths == {"docs/", "/repo/workspace/a", "../x", "//x", "con/x", "-rf", "/"} with input as fixtures.plan(facts_children)
}

test_places_say_where_each_value_is_listed_allowed if {
	lib.tool_places == {"fs.read": [[0, 0], [1, 0]], "fs:*": [[0, 1]], 1: [[0, 2]], "Bash(git:*)": [[1, 1]]} with input as fixtures.plan(facts_children)
	lib.path_places == {
		"docs/": [[0, 0], [1, 0]], "/repo/workspace/a": [[0, 1]], "../x": [[0, 2]], "//x": [[0, 3]],
		"con/x": [[1, 1]], "-rf": [[1, 2]], "/": [[1, 3]],
	} with input as fixtures.plan(facts_children)
}

test_tool_names_are_the_plain_requested_tools_allowed if {
	lib.tool_names == {"fs.read"} with input as fixtures.plan(facts_children)
}

test_path_names_name_the_plain_paths_allowed if {
	lib.path_names == {"docs/": "/repo/workspace/docs/", "/repo/workspace/a": "/repo/workspace/a/", "/": "/"} with input as fixtures.plan(facts_children)
	lib.path_names == {"docs/": "/repo/workspace/sub/docs/", "/repo/workspace/a": "/repo/workspace/a/", "/": "/"} with input as fixtures.plan_with({"workspace_root": "/repo/workspace/sub/"}, facts_children)
}

test_whole_budgets_keep_whole_numbers_written_as_such_allowed if {
	got := lib.whole_budgets with input as object.union(fixtures.plan(facts_children), {"float_literals": {"/1/budget_tokens": "4e4"}})
	got == {0: 40000, 2: -3}
}

# The gate's facts, when the input has them, are what the checks read.
test_facts_in_the_input_are_read_allowed if {
	doc := object.union(fixtures.plan(facts_children), {"facts": {
		"requested_tools": {"t"}, "requested_paths": {"p"}, "tool_names": set(),
		"path_names": {"p": "/n/"}, "whole_budgets": {0: 5},
		"tool_places": {"t": [[0, 0]]}, "path_places": {"p": [[0, 0]]},
	}})
	lib.requested_tools == {"t"} with input as doc
	lib.requested_paths == {"p"} with input as doc
	lib.tool_names == set() with input as doc
	lib.path_names == {"p": "/n/"} with input as doc
	lib.budgets == {0: 5} with input as doc
	lib.tool_places == {"t": [[0, 0]]} with input as doc
	lib.path_places == {"p": [[0, 0]]} with input as doc
}
