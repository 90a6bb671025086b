package spawngate.checks.paths_invalid_test

import data.spawngate.checks.paths_invalid
import data.spawngate.fixtures

test_list_of_strings_allowed if {
	count(paths_invalid.deny) == 0 with input as fixtures.plan([fixtures.child({"paths": ["/repo/workspace/docs", "docs"]})])
}

test_empty_list_allowed if {
	count(paths_invalid.deny) == 0 with input as fixtures.plan([fixtures.child({"paths": []})])
}

test_absent_paths_denied if {
	paths_invalid.deny == {{"child": 0, "field": "/paths", "message": "paths is missing: list the paths the child may touch, or [] for none"}} with input as fixtures.plan([fixtures.child_without("paths")])
}

test_paths_of_wrong_type_denied[article] if {
	some article, value in {"a string": "/repo/workspace", "null": null, "an object": {}, "a number": 0}
	deny := paths_invalid.deny with input as fixtures.plan([fixtures.child({"paths": value})])
	deny == {{"child": 0, "field": "/paths", "message": sprintf("paths must be a list of path strings, not %s", [article])}}
}

test_non_string_entries_denied if {
	deny := paths_invalid.deny with input as fixtures.plan([fixtures.child({"paths": ["/repo/workspace", 1, null, ["/etc"]]})])
	deny == {
		{"child": 0, "field": "/paths/1", "message": "path 1 is not a string"},
		{"child": 0, "field": "/paths/2", "message": "path null is not a string"},
		{"child": 0, "field": "/paths/3", "message": "path [\"/etc\"] is not a string"},
	}
}
