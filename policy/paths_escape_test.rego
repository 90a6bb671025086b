package spawngate.checks.paths_escape_test

import data.spawngate.checks.paths_escape
import data.spawngate.fixtures

# Judges one path under the operator policy (root /repo/workspace) and
# returns the single message it gets, or "inside" when it passes. The check
# runs once per path: with input as, nothing is remembered between calls.
verdict(path) := message(deny) if {
	deny := paths_escape.deny with input as fixtures.plan([fixtures.child({"paths": [path]})])
}

message(deny) := "inside" if {
	count(deny) == 0
} else := msg if {
	count(deny) == 1
	some v in deny
	v.field == "/paths/0"
	msg := v.message
}

test_paths_inside_the_root_allowed[path] if {
	some path in [
		"/repo/workspace",
		"/repo/workspace/",
		"/repo/workspace/docs",
		"/repo/workspace/docs/",
		"/repo/workspace/docs/guide.md",
		"/repo/workspace/node_modules/@types/node",
		"/repo/workspace/.github/workflows",
		"/repo/workspace/..hidden",
		"/repo/workspace/console.log",
		"/repo/workspace/a@b",
		"/repo/workspace/@types",
		"/repo/workspace/com10",
		"/repo/workspace/a-b_c.d",
		"docs",
		"docs/guide.md",
		".github",
	]
	verdict(path) == "inside"
}

# Every path an attacker could use to leave /repo/workspace, with the
# reason the report must give. The seed essay's cases come first.
hostile := {
	"seed: home": {"path": "~/", "reason": "contains '~' (home directory expansion)"},
	"seed: home inside": {"path": "/repo/workspace/~", "reason": "contains '~'"},
	"seed: $HOME": {"path": "$HOME/.ssh", "reason": "contains '$' or '`' (variable or command expansion)"},
	"seed: star": {"path": "/repo/workspace/*", "reason": "contains a glob character"},
	"seed: leading space before /etc": {"path": " /etc", "reason": "contains whitespace or a control character"},
	"seed: leading space before ..": {"path": " ../x", "reason": "contains whitespace or a control character"},
	"trailing space": {"path": "/repo/workspace/docs ", "reason": "contains whitespace or a control character"},
	"tab": {"path": "/repo/workspace/\tdocs", "reason": "contains whitespace or a control character"},
	"newline": {"path": "/repo/workspace/docs\n/etc", "reason": "contains whitespace or a control character"},
	"NUL": {"path": "/repo/workspace/docs\u0000/etc", "reason": "contains whitespace or a control character"},
	"DEL": {"path": "/repo/workspace/\u007f", "reason": "contains whitespace or a control character"},
	"outside": {"path": "/etc/passwd", "reason": "is outside the workspace root \"/repo/workspace\" (operator policy)"},
	"filesystem root": {"path": "/", "reason": "is outside the workspace root"},
	"parent of root": {"path": "/repo", "reason": "is outside the workspace root"},
	"sibling with the root's prefix": {"path": "/repo/workspace-evil", "reason": "only shares a prefix with the workspace root"},
	"sibling with the root's prefix, deeper": {"path": "/repo/workspace2/docs", "reason": "only shares a prefix"},
	"dot-dot out": {"path": "/repo/workspace/../etc", "reason": "has a '..' segment"},
	"dot-dot back in": {"path": "/repo/workspace/docs/../docs", "reason": "has a '..' segment"},
	"relative dot-dot": {"path": "../etc", "reason": "has a '..' segment"},
	"bare dot-dot": {"path": "..", "reason": "has a '..' segment"},
	"trailing dot-dot": {"path": "/repo/workspace/..", "reason": "has a '..' segment"},
	"dot segment": {"path": "/repo/workspace/./docs", "reason": "has a segment made only of dots"},
	"bare dot": {"path": ".", "reason": "has a segment made only of dots"},
	"three dots": {"path": "/repo/workspace/...", "reason": "has a segment made only of dots"},
	"empty": {"path": "", "reason": "is empty"},
	"empty segment": {"path": "/repo//workspace", "reason": "has an empty segment"},
	"leading //": {"path": "//server/share", "reason": "starts with //"},
	"variable in braces": {"path": "${HOME}/x", "reason": "variable or command expansion"},
	"command substitution": {"path": "/repo/workspace/$(id)", "reason": "variable or command expansion"},
	"backticks": {"path": "/repo/workspace/`id`", "reason": "variable or command expansion"},
	"windows variable": {"path": "%USERPROFILE%\\x", "reason": "contains '%'"},
	"percent-encoded dot": {"path": "/repo/workspace/%2e%2e/etc", "reason": "contains '%'"},
	"percent-encoded slash": {"path": "/repo/workspace%2f..%2fetc", "reason": "contains '%'"},
	"double-encoded": {"path": "/repo/workspace/%252e%252e", "reason": "contains '%'"},
	"question mark": {"path": "/repo/workspace/?", "reason": "contains a glob character"},
	"bracket class": {"path": "/repo/workspace/[a-z]", "reason": "contains a glob character"},
	"brace expansion": {"path": "/repo/workspace/{a,..}", "reason": "contains a glob character"},
	"backslash dot-dot": {"path": "/repo/workspace\\..\\etc", "reason": "contains a backslash"},
	"UNC": {"path": "\\\\server\\share", "reason": "contains a backslash"},
	"drive letter": {"path": "C:/Windows", "reason": "starts with a drive letter"},
	"drive-relative": {"path": "c:secrets", "reason": "starts with a drive letter"},
	"file URL": {"path": "file:///etc/passwd", "reason": "starts with a URL scheme"},
	"https URL": {"path": "https://example.com/x", "reason": "starts with a URL scheme"},
	"colon inside": {"path": "/repo/workspace/a:b", "reason": "contains \":\", which is outside A-Z a-z 0-9 . _ - @ and /"},
	"semicolon": {"path": "/repo/workspace/a;rm -rf", "reason": "contains whitespace"},
	"pipe": {"path": "/repo/workspace/a|b", "reason": "contains \"|\""},
	"quote": {"path": "/repo/workspace/'x'", "reason": "contains \"'\""},
	"one dot leader": {"path": "/repo/workspace/\u2024\u2024/etc", "reason": "contains a Unicode look-alike"},
	"fullwidth full stop": {"path": "/repo/workspace/\uff0e\uff0e/etc", "reason": "contains a Unicode look-alike"},
	"division slash": {"path": "/repo/workspace\u2215..\u2215etc", "reason": "contains a Unicode look-alike"},
	"fraction slash": {"path": "/repo/workspace\u2044etc", "reason": "contains a Unicode look-alike"},
	"fullwidth solidus": {"path": "/repo/workspace\uff0fetc", "reason": "contains a Unicode look-alike"},
	"fullwidth reverse solidus": {"path": "/repo/workspace\uff3c..", "reason": "contains a Unicode look-alike"},
	"non-breaking space": {"path": "/repo/workspace/\u00a0", "reason": "contains a non-ASCII character"},
	"right-to-left override": {"path": "/repo/workspace/\u202egnp.exe", "reason": "contains a non-ASCII character"},
	"accented letter": {"path": "/repo/workspace/résumé", "reason": "contains a non-ASCII character"},
	"option-like relative": {"path": "-rf", "reason": "starts with '-'"},
	"response file": {"path": "@etc", "reason": "starts with '@'"},
	"response file with a slash": {"path": "@/etc", "reason": "starts with '@'"},
	"trailing dot": {"path": "/repo/workspace/ab.", "reason": "has a segment ending in '.'"},
	"trailing dots inside": {"path": "/repo/workspace/a.../b", "reason": "has a segment ending in '.'"},
	"device": {"path": "/repo/workspace/con", "reason": "names a Windows device"},
	"device with an extension": {"path": "/repo/workspace/NUL.txt", "reason": "names a Windows device"},
	"device mid-path": {"path": "docs/com1/x", "reason": "names a Windows device"},
	"too long": {"path": concat("", ["/repo/workspace/", concat("", [x | some _ in numbers.range(1, 4100); x := "a"])]), "reason": "is longer than 4096 bytes"},
}

test_hostile_paths_denied[note] if {
	some note, case in hostile
	msg := verdict(case.path)
	startswith(msg, "path ")
	contains(msg, case.reason)
}

test_relative_path_read_against_the_operator_root_allowed if {
	verdict("docs/guide.md") == "inside"
}

test_relative_path_read_against_the_plan_root_allowed if {
	policy := object.union(fixtures.operator, {"workspace_root": "/repo/workspace/docs"})
	count(paths_escape.deny) == 0 with input as fixtures.plan_with(policy, [fixtures.child({"paths": ["guide.md", "/repo/workspace/docs/api"]})])
}

test_plan_root_narrows_denied if {
	policy := object.union(fixtures.operator, {"workspace_root": "/repo/workspace/docs"})
	deny := paths_escape.deny with input as fixtures.plan_with(policy, [fixtures.child({"paths": ["/repo/workspace/src"]})])
	deny == {{"child": 0, "field": "/paths/0", "message": "path \"/repo/workspace/src\" is outside the workspace root \"/repo/workspace/docs\" (plan policy)", "policies": ["plan"]}}
}

test_plan_root_cannot_widen_denied if {
	# The plan claims / as its root; relative paths land under /, outside
	# the operator's root.
	policy := object.union(fixtures.operator, {"workspace_root": "/"})
	deny := paths_escape.deny with input as fixtures.plan_with(policy, [fixtures.child({"paths": ["etc/passwd", "/etc/passwd"]})])
	{v.message | some v in deny} == {
		"path \"etc/passwd\" (read as \"/etc/passwd\") is outside the workspace root \"/repo/workspace\" (operator policy)",
		"path \"/etc/passwd\" is outside the workspace root \"/repo/workspace\" (operator policy)",
	}
}

test_outside_both_roots_names_both_denied if {
	policy := object.union(fixtures.operator, {"workspace_root": "/srv/plan"})
	deny := paths_escape.deny with input as fixtures.plan_with(policy, [fixtures.child({"paths": ["/etc"]})])
	deny == {{"child": 0, "field": "/paths/0", "message": "path \"/etc\" is outside the workspace roots \"/repo/workspace\" (operator policy) and \"/srv/plan\" (plan policy)", "policies": ["operator", "plan"]}}
}

test_filesystem_root_as_workspace_allowed if {
	policy := object.union(fixtures.operator, {"workspace_root": "/"})
	count(paths_escape.deny) == 0 with input as {"policies": {"operator": policy}, "children": [fixtures.child({"paths": ["/etc", "etc", "/etc/"]})]}
}

test_filesystem_root_itself_denied if {
	root := "/"
	policy := object.union(fixtures.operator, {"workspace_root": root})
	deny := paths_escape.deny with input as {"policies": {"operator": policy}, "children": [fixtures.child({"paths": ["/etc", "/"]})]}
	some v in deny
	v == {"child": 0, "field": "/paths/1", "message": "path \"/\" names the filesystem root, which no child is given, whatever the workspace root"}
}

test_root_that_breaks_the_path_rules_denied[root] if {
	# Read against such a root, "x" would name a path the rules refuse.
	some root in ["/repo/workspace/nul", "/repo/workspace/a.", "/repo/workspace/con.txt", "/repo/work space"]
	policy := object.union(fixtures.operator, {"workspace_root": root})
	deny := paths_escape.deny with input as fixtures.plan_with(policy, [fixtures.child({"paths": ["x", "/repo/workspace/x"]})])
	{v.field | some v in deny} == {"/paths/0", "/paths/1"}
	every v in deny {
		v.message == sprintf("path %q cannot be judged: the workspace root %q (plan policy) is not a plain path", [["x", "/repo/workspace/x"][to_number(substring(v.field, 7, -1))], root])
	}
}

test_no_policy_denied if {
	deny := paths_escape.deny with input as {"policies": {}, "children": [fixtures.child({"paths": ["docs"]})]}
	deny == {{"child": 0, "field": "/paths/0", "message": "path \"docs\" cannot be judged: no policy applies"}}
}

test_every_hostile_path_in_one_child_denied if {
	paths := [case.path | some case in hostile]
	deny := paths_escape.deny with input as fixtures.plan([fixtures.child({"paths": paths})])
	count(deny) == count(paths)
}

# With --resolve-paths the gate adds input.resolution: the roots resolved
# and each path resolved on the real filesystem, or why it could not be.
resolved(paths) := object.union(fixtures.plan([fixtures.child({"paths": [p | some p, _ in paths]})]), {"resolution": {
	"roots": {"operator": "/data/workspace"},
	"paths": paths,
}})

test_path_resolving_inside_the_resolved_root_allowed if {
	count(paths_escape.deny) == 0 with input as resolved({"/repo/workspace/docs": {"path": "/data/workspace/docs"}, "src": {"path": "/data/workspace/src"}})
}

test_symlink_leading_out_denied if {
	deny := paths_escape.deny with input as resolved({"/repo/workspace/link": {"path": "/etc"}})
	deny == {{"child": 0, "field": "/paths/0", "message": "path \"/repo/workspace/link\" resolves to \"/etc\", outside the workspace root \"/data/workspace\" (operator policy, resolved)", "policies": ["operator"]}}
}

test_unresolvable_path_denied if {
	deny := paths_escape.deny with input as resolved({"/repo/workspace/dangling": {"error": "symlink /repo/workspace/dangling leads nowhere"}})
	deny == {{"child": 0, "field": "/paths/0", "message": "path \"/repo/workspace/dangling\" cannot be resolved on this machine: symlink /repo/workspace/dangling leads nowhere"}}
}

test_path_missing_from_the_resolution_denied if {
	deny := paths_escape.deny with input as object.union(
		fixtures.plan([fixtures.child({"paths": ["/repo/workspace/docs"]})]),
		{"resolution": {"roots": {"operator": "/data/workspace"}, "paths": {}}},
	)
	deny == {{"child": 0, "field": "/paths/0", "message": "path \"/repo/workspace/docs\" was not resolved"}}
}

test_resolution_without_every_root_denied if {
	deny := paths_escape.deny with input as object.union(
		fixtures.plan([fixtures.child({"paths": ["/repo/workspace/docs"]})]),
		{"resolution": {"roots": {}, "paths": {"/repo/workspace/docs": {"path": "/data/workspace/docs"}}}},
	)
	count(deny) == 1
}

test_resolution_never_excuses_a_lexical_escape_denied if {
	deny := paths_escape.deny with input as resolved({"/repo/workspace/../etc": {"path": "/data/workspace/etc"}})
	some v in deny
	contains(v.message, "has a '..' segment")
}

# plain() and ambiguity() are two readings of one rule: a path is plain
# exactly when no ambiguity explains a refusal.
test_plain_and_ambiguity_agree_allowed[path] if {
	some path in array.concat([case.path | some case in hostile], [
		"/repo/workspace", "/repo/workspace/", "docs", "docs/", ".env", "a/.b/..c/d.", "/", "@types/x",
		"-", "a/-b", "/-x", "...x", "x...", "//", "/a//", "a/", "/a/./b", ".", "", "@", "a/@b", "x.", "con", "Con.d/x", "lpt9", "lpt0",
	])
	plain(path) == not_ambiguous(path)
}

plain(path) if paths_escape.plain(path)

else := false

not_ambiguous(path) := false if paths_escape.ambiguity(path)

else := true

# Role profiles: a profile's workspace_root holds for its role too; its
# relative paths are still read against the plan's own root.
docs_profile := {"doc-reader": {"workspace_root": "/repo/workspace/docs"}}

test_paths_inside_the_profile_root_allowed if {
	count(paths_escape.deny) == 0 with input as fixtures.profiled(docs_profile, [fixtures.child({"paths": ["/repo/workspace/docs", "/repo/workspace/docs/guide.md", "docs/api/"]})])
}

test_profile_root_narrows_its_role_denied if {
	children := [fixtures.child({"paths": ["/repo/workspace/src", "guide.md"]}), fixtures.child({"role": "fixer", "paths": ["/repo/workspace/src"]})]
	deny := paths_escape.deny with input as fixtures.profiled(docs_profile, children)
	deny == {
		{"child": 0, "field": "/paths/0", "message": "path \"/repo/workspace/src\" is outside the workspace root \"/repo/workspace/docs\" (operator policy's profile for role \"doc-reader\")", "policies": ["operator/roles/doc-reader"]},
		{"child": 0, "field": "/paths/1", "message": "path \"guide.md\" (read as \"/repo/workspace/guide.md\") is outside the workspace root \"/repo/workspace/docs\" (operator policy's profile for role \"doc-reader\")", "policies": ["operator/roles/doc-reader"]},
	}
}

test_profile_root_sibling_prefix_denied if {
	deny := paths_escape.deny with input as fixtures.profiled(docs_profile, [fixtures.child({"paths": ["/repo/workspace/docs-old"]})])
	deny == {{"child": 0, "field": "/paths/0", "message": "path \"/repo/workspace/docs-old\" only shares a prefix with the workspace root \"/repo/workspace/docs\" (operator policy's profile for role \"doc-reader\"); it is outside", "policies": ["operator/roles/doc-reader"]}}
}

test_outside_every_root_names_policy_and_profile_denied if {
	deny := paths_escape.deny with input as fixtures.profiled(docs_profile, [fixtures.child({"paths": ["/etc"]})])
	deny == {{"child": 0, "field": "/paths/0", "message": "path \"/etc\" is outside the workspace roots \"/repo/workspace\" (operator policy) and \"/repo/workspace/docs\" (operator policy's profile for role \"doc-reader\")", "policies": ["operator", "operator/roles/doc-reader"]}}
}

test_plan_root_and_profile_root_both_hold_denied if {
	plan := object.union(fixtures.operator, {"workspace_root": "/repo/workspace/docs/api"})
	children := [fixtures.child({"paths": ["ref.md", "/repo/workspace/docs/guide.md"]})]
	deny := paths_escape.deny with input as fixtures.profiled_with(docs_profile, plan, children)
	deny == {{"child": 0, "field": "/paths/1", "message": "path \"/repo/workspace/docs/guide.md\" is outside the workspace root \"/repo/workspace/docs/api\" (plan policy)", "policies": ["plan"]}}
}

test_ambiguous_path_of_a_profiled_child_names_no_policy_denied if {
	deny := paths_escape.deny with input as fixtures.profiled(docs_profile, [fixtures.child({"paths": ["~"]})])
	deny == {{"child": 0, "field": "/paths/0", "message": "path \"~\" contains '~' (home directory expansion)"}}
}

test_profile_without_a_root_has_the_operators_allowed if {
	count(paths_escape.deny) == 0 with input as fixtures.profiled({"doc-reader": {"allow_write": false}}, [fixtures.child({"paths": ["/repo/workspace/src"]})])
}

test_crooked_profile_root_denied if {
	deny := paths_escape.deny with input as fixtures.profiled({"doc-reader": {"workspace_root": "/repo/workspace/nul"}}, [fixtures.child({"paths": ["/repo/workspace/docs"]})])
	some v in deny
	v.policies == ["operator/roles/doc-reader"]
	contains(v.message, "the workspace root \"/repo/workspace/nul\" (operator policy's profile for role \"doc-reader\") is not a plain path")
}

# With --resolve-paths, the resolved path must lie inside the profile's
# root: resolved when the gate resolved it, else as written.
test_resolved_path_inside_the_profile_root_allowed if {
	doc := object.union(fixtures.profiled({"doc-reader": {"workspace_root": "/repo/workspace/docs"}}, [fixtures.child({"paths": ["/repo/workspace/docs/a"]})]), {"resolution": {
		"roots": {"operator": "/repo/workspace"},
		"paths": {"/repo/workspace/docs/a": {"path": "/repo/workspace/docs/a"}},
	}})
	count(paths_escape.deny) == 0 with input as doc
}

test_symlink_out_of_the_profile_root_denied if {
	doc := object.union(fixtures.profiled(docs_profile, [fixtures.child({"paths": ["/repo/workspace/docs/link"]})]), {"resolution": {
		"roots": {"operator": "/repo/workspace"},
		"paths": {"/repo/workspace/docs/link": {"path": "/repo/workspace/src"}},
	}})
	deny := paths_escape.deny with input as doc
	deny == {{"child": 0, "field": "/paths/0", "message": "path \"/repo/workspace/docs/link\" resolves to \"/repo/workspace/src\", outside the workspace root \"/repo/workspace/docs\" (operator policy's profile for role \"doc-reader\", as written)", "policies": ["operator/roles/doc-reader"]}}
}

test_resolved_profile_root_is_used_when_given_allowed if {
	doc := object.union(fixtures.profiled(docs_profile, [fixtures.child({"paths": ["/repo/workspace/docs/a"]})]), {"resolution": {
		"roots": {"operator": "/data/workspace", "operator/roles/doc-reader": "/data/workspace/docs"},
		"paths": {"/repo/workspace/docs/a": {"path": "/data/workspace/docs/a"}},
	}})
	count(paths_escape.deny) == 0 with input as doc
}

# The paths judged inside in one comprehension (as_written, for speed) are
# exactly those contained() admits, the rule written plainly: under one
# root, two roots that nest either way, roots that do not nest, and /,
# for every path of the tables above and a few more.
test_as_written_is_contained[name] if {
	roots := {
		"one root": {"operator": "/repo/workspace"},
		"plan root inside": {"operator": "/repo/workspace", "plan": "/repo/workspace/docs"},
		"plan root outside": {"operator": "/repo/workspace/docs", "plan": "/repo/workspace"},
		"roots apart": {"operator": "/repo/workspace", "plan": "/repo/other"},
		"sibling prefix": {"operator": "/repo/workspace", "plan": "/repo/workspace-evil"},
		"filesystem root": {"operator": "/"},
		"trailing slash": {"operator": "/repo/workspace/", "plan": "/repo/workspace/docs/"},
	}
	some name, by_source in roots
	policies := {source: object.union(fixtures.operator, {"workspace_root": root}) | some source, root in by_source}
	paths := {case.path | some case in hostile} | {
		"/repo/workspace", "/repo/workspace/", "/repo/workspace/docs", "/repo/workspace/docs/guide.md",
		"docs", "docs/", "guide.md", "/repo/other/x", "/repo/workspace-evil/x", "/", "a", "/a",
		"/repo/workspace/docs/../x", ".github", "/repo/workspace/..hidden", "-x", "@x",
	}
	inputs := {"policies": policies, "children": [fixtures.child({"paths": [p | some p in paths]})]}
	fast := paths_escape.as_written with input as inputs
	plain := {p | some p in paths; paths_escape.contained(p)} with input as inputs
	fast == plain
}
