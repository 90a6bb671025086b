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
