package spawngate.exceptions_test

import data.spawngate.exceptions

write_exception := {"rule": "tools.write", "tool": "shell.run", "reason": "OPS-12: the migration job", "expires": "2027-01-31"}

shell_write := {"rule": "tools.write", "field": "/tools/1", "value": "shell.run", "policies": ["operator"]}

judged(xs, child, violations) := {
	"policies": {"operator": {"workspace_root": "/srv", "exceptions": xs}},
	"today": "2026-12-01",
	"child": child,
	"violations": violations,
}

test_matching_exception_allowed if {
	got := exceptions.excepted with input as judged([write_exception], {"role": "migrator"}, [shell_write])
	got == {0: 0}
}

test_first_matching_exception_wins if {
	second := object.union(write_exception, {"reason": "another"})
	got := exceptions.excepted with input as judged([{"rule": "tools.write", "tool": "fs.*", "reason": "r", "expires": "2027-01-01"}, second, write_exception], {"role": "migrator"}, [shell_write])
	got == {0: 1}
}

test_other_rule_not_excepted if {
	got := exceptions.excepted with input as judged([write_exception], {"role": "migrator"}, [object.union(shell_write, {"rule": "tools.allowlist"})])
	got == {}
}

test_other_tool_denied if {
	got := exceptions.excepted with input as judged([write_exception], {"role": "migrator"}, [object.union(shell_write, {"value": "fs.delete"})])
	got == {}
}

test_tool_selector_needs_a_tool_entry if {
	budget := {"rule": "tools.write", "field": "/budget_tokens", "value": "shell.run", "policies": ["operator"]}
	got := exceptions.excepted with input as judged([write_exception], {"role": "migrator"}, [budget])
	got == {}
}

test_tool_pattern_matches_like_allowed_tools if {
	x := object.union(write_exception, {"tool": "shell.*"})
	exceptions.excepted == {0: 0} with input as judged([x], {"role": "migrator"}, [shell_write])
	deep := object.union(shell_write, {"value": "shell.run.all"})
	exceptions.excepted == {} with input as judged([x], {"role": "migrator"}, [deep])
}

test_plan_policy_refusal_never_excepted if {
	both := object.union(shell_write, {"policies": ["operator", "plan"]})
	exceptions.excepted == {} with input as judged([write_exception], {"role": "migrator"}, [both])
	plan_only := object.union(shell_write, {"policies": ["plan"]})
	exceptions.excepted == {} with input as judged([write_exception], {"role": "migrator"}, [plan_only])
}

test_violation_without_policies_may_be_excepted if {
	x := {"rule": "agent.tools", "role": "helper", "reason": "reviewed", "expires": "2027-01-01"}
	v := {"rule": "agent.tools", "field": "/tools", "value": null}
	exceptions.excepted == {0: 0} with input as judged([x], {"role": "helper"}, [v])
}

test_unattributed_violation_not_excepted_under_a_plan_policy if {
	x := {"rule": "agent.tools", "role": "helper", "reason": "reviewed", "expires": "2027-01-01"}
	v := {"rule": "agent.tools", "field": "/tools", "value": null}
	judged_input := object.union(judged([x], {"role": "helper"}, [v]), {"policies": {"operator": {"exceptions": [x]}, "plan": {}}})
	exceptions.excepted == {} with input as judged_input
}

test_schema_never_excepted if {
	x := {"rule": "schema", "role": "a", "reason": "r", "expires": "2027-01-01"}
	v := {"rule": "schema", "field": "/extra", "value": 1}
	exceptions.excepted == {} with input as judged([x], {"role": "a"}, [v])
}

test_role_selector if {
	x := object.union(write_exception, {"role": "migrator"})
	exceptions.excepted == {0: 0} with input as judged([x], {"role": "migrator"}, [shell_write])
	exceptions.excepted == {} with input as judged([x], {"role": "reader"}, [shell_write])
}

test_id_selector_needs_the_child_alone if {
	x := {"rule": "tools.write", "role": "migrator", "id": "job-7", "reason": "r", "expires": "2027-01-01"}
	exceptions.excepted == {0: 0} with input as judged([x], {"role": "migrator", "id": "job-7"}, [shell_write])
	exceptions.excepted == {} with input as judged([x], {"role": "migrator", "id": "job-8"}, [shell_write])
	exceptions.excepted == {} with input as judged([x], {"role": "migrator"}, [shell_write])
}

test_path_selector if {
	x := {"rule": "paths.escape", "path": "/srv/migrations/**", "reason": "r", "expires": "2027-01-01"}
	inside := {"rule": "paths.escape", "field": "/paths/0", "value": "/srv/migrations/2026/a.sql", "policies": ["operator"]}
	exceptions.excepted == {0: 0} with input as judged([x], {"role": "m"}, [inside])
	outside := object.union(inside, {"value": "/srv/other"})
	exceptions.excepted == {} with input as judged([x], {"role": "m"}, [outside])
	not_a_path := object.union(inside, {"field": "/tools/0"})
	exceptions.excepted == {} with input as judged([x], {"role": "m"}, [not_a_path])
}

test_expiry_day_still_applies if {
	x := object.union(write_exception, {"expires": "2026-12-01"})
	exceptions.excepted == {0: 0} with input as judged([x], {"role": "m"}, [shell_write])
}

test_expired_not_applied_and_noted if {
	x := object.union(write_exception, {"expires": "2026-11-30"})
	exceptions.excepted == {} with input as judged([x], {"role": "m"}, [shell_write])
	exceptions.notes == {{"index": 0, "status": "expired"}} with input as object.union(judged([x], {}, []), {"matched": []})
}

test_unused_noted if {
	used := write_exception
	unused := object.union(write_exception, {"tool": "fs.delete"})
	notes := exceptions.notes with input as object.union(judged([used, unused], {}, []), {"matched": [0]})
	notes == {{"index": 1, "status": "unused"}}
}

test_no_exceptions_no_notes if {
	exceptions.notes == set() with input as {"policies": {"operator": {}}, "today": "2026-12-01", "matched": []}
	exceptions.excepted == {} with input as {"policies": {}, "today": "2026-12-01", "child": {"role": "a"}, "violations": [shell_write]}
}

# An id is the plan author's to choose: an exception naming one without a
# role (which the schema refuses) excepts nothing, and one with a role
# holds only for a child of that role, whatever id it takes.
test_id_without_role_denied if {
	x := {"rule": "budget.cap", "id": "backfill-1", "reason": "r", "expires": "2027-01-01"}
	v := {"rule": "budget.cap", "field": "/budget_tokens", "value": 9e9, "policies": ["operator"]}
	exceptions.excepted == {} with input as judged([x], {"role": "anything", "id": "backfill-1"}, [v])
}

test_id_with_role_of_another_child_denied if {
	x := {"rule": "budget.cap", "role": "backfill", "id": "backfill-1", "reason": "r", "expires": "2027-01-01"}
	v := {"rule": "budget.cap", "field": "/budget_tokens", "value": 9e9, "policies": ["operator"]}
	exceptions.excepted == {} with input as judged([x], {"role": "deployer", "id": "backfill-1"}, [v])
	exceptions.excepted == {0: 0} with input as judged([x], {"role": "backfill", "id": "backfill-1"}, [v])
}

# A tool only an exact entry allows is excepted only by that exact entry,
# never by a pattern; and no tool pattern excepts a requested tool that is
# itself a pattern or not a plain name.
test_exact_only_tool_by_pattern_denied if {
	v := {"rule": "tools.allowlist", "field": "/tools/0", "value": "sandbox:danger-full-access", "policies": ["operator"]}
	every pattern in ["sandbox:*", "sandbox:danger-*", "*", "**", "sandbox:danger-full-acces?"] {
		exceptions.excepted == {} with input as judged([{"rule": "tools.allowlist", "tool": pattern, "reason": "r", "expires": "2027-01-01"}], {"role": "a"}, [v])
	}
}

test_exact_only_tool_by_exact_entry_allowed if {
	v := {"rule": "tools.allowlist", "field": "/tools/0", "value": "sandbox:danger-full-access", "policies": ["operator"]}
	x := {"rule": "tools.allowlist", "tool": "sandbox:danger-full-access", "reason": "r", "expires": "2027-01-01"}
	exceptions.excepted == {0: 0} with input as judged([x], {"role": "a"}, [v])
	other := object.union(v, {"value": "sandbox:workspace-write"})
	exceptions.excepted == {0: 0} with input as judged([object.union(x, {"tool": "sandbox:*"})], {"role": "a"}, [other])
}

test_requested_pattern_tool_denied if {
	x := {"rule": "tools.allowlist", "tool": "*", "reason": "r", "expires": "2027-01-01"}
	every tool in ["fs:*", "mcp__github__*", "Bash(git diff:*)", "a b", "fs.read:"] {
		exceptions.excepted == {} with input as judged([x], {"role": "a"}, [{"rule": "tools.allowlist", "field": "/tools/0", "value": tool}])
	}
}

# A path selector never excepts a path the path rules call ambiguous, nor
# the filesystem root; it matches the normalised path whole segment by
# whole segment.
data_exception := {"rule": "paths.escape", "path": "/data/**", "reason": "r", "expires": "2027-01-01"}

escape_at(path) := {"rule": "paths.escape", "field": "/paths/0", "value": path}

test_ambiguous_path_denied if {
	every path in [
		"/data/../etc/shadow", "/data/~root/.ssh", "/data/$(id)", "/data/`id`", "/data/${HOME}",
		"/data/%2e%2e/etc", "/data/./x", "/data//x", "/data/x.", "/data/con", "/data/a b",
		"/data/*", "/data/\\x", "/data/\u2025/x", "//data/x",
	] {
		exceptions.excepted == {} with input as judged([data_exception], {"role": "a"}, [escape_at(path)])
	}
}

test_normalised_path_allowed if {
	every path in ["/data/x", "/data/x/", "/data/a/b.sql", "/data/.hidden"] {
		exceptions.excepted == {0: 0} with input as judged([data_exception], {"role": "a"}, [escape_at(path)])
	}
}

test_path_glob_matches_whole_segments if {
	every path in ["/data", "/data-evil/x", "/database/x", "/other/data/x"] {
		exceptions.excepted == {} with input as judged([data_exception], {"role": "a"}, [escape_at(path)])
	}
	one := object.union(data_exception, {"path": "/data/*"})
	exceptions.excepted == {0: 0} with input as judged([one], {"role": "a"}, [escape_at("/data/x")])
	exceptions.excepted == {} with input as judged([one], {"role": "a"}, [escape_at("/data/x/y")])
}

test_filesystem_root_denied if {
	every pattern in ["/**", "/"] {
		x := object.union(data_exception, {"path": pattern})
		exceptions.excepted == {} with input as judged([x], {"role": "a"}, [escape_at("/")])
	}
}

# A relative path is matched as the absolute path it names.
test_relative_path_read_against_the_plan_root if {
	x := object.union(data_exception, {"path": "/srv/data/**"})
	exceptions.excepted == {0: 0} with input as judged([x], {"role": "a"}, [escape_at("data/x")])
	exceptions.excepted == {} with input as judged([x], {"role": "a"}, [escape_at("../srv/data/x")])
	exceptions.excepted == {} with input as judged([object.union(x, {"path": "data/**"})], {"role": "a"}, [escape_at("data/x")])
}

# The gate passes the name of each plain path it asks about as a fact
# (input.facts.path_names, as lib.path_names gives it to the checks): a
# path selector reads the name there, a path the fact does not name is not
# plain, and one naming the root is refused. (Without the fact the names
# are computed, as the tests above do.)
named_by_facts(path, names) := object.union(judged([data_exception], {"role": "a"}, [escape_at(path)]), {"facts": {"path_names": names}})

test_path_names_read_from_the_facts if {
	exceptions.excepted == {0: 0} with input as named_by_facts("x", {"x": "/data/x/"})
	exceptions.excepted == {} with input as named_by_facts("/data/x", {})
	exceptions.excepted == {} with input as named_by_facts("/data/x", {"/data/x": "/"})
}

# With --resolve-paths, the resolved path must match too: a symlink under
# an excepted folder excepts nothing outside it.
resolved(to) := object.union(judged([data_exception], {"role": "a"}, [escape_at("/data/link")]), {"resolution": {"paths": {"/data/link": to}}})

test_resolved_path_outside_denied if {
	exceptions.excepted == {} with input as resolved({"path": "/etc"})
	exceptions.excepted == {} with input as resolved({"error": "a symlink loop"})
	exceptions.excepted == {0: 0} with input as resolved({"path": "/data/real"})
}

# A batch answers each item in its place, as the item alone would be
# answered: the role, the id and the resolution are each item's own.
batch_of(xs, items) := {
	"policies": {"operator": {"workspace_root": "/srv", "exceptions": xs}},
	"today": "2026-12-01",
	"items": items,
}

test_batch_answers_each_item_in_place if {
	x := object.union(write_exception, {"role": "migrator", "id": "job-7"})
	items := [
		{"child": {"role": "migrator", "id": "job-7"}, "violations": [shell_write, object.union(shell_write, {"rule": "tools.allowlist"})]},
		{"child": {"role": "migrator", "id": "job-8"}, "violations": [shell_write]},
		{"child": {"role": "reader"}, "violations": []},
		{"child": {"role": "migrator", "id": "job-7"}, "violations": [object.union(shell_write, {"value": "fs.delete"}), shell_write]},
	]
	exceptions.batch == [{0: 0}, {}, {}, {1: 0}] with input as batch_of([x], items)
}

test_batch_resolution_is_each_items_own if {
	link := {"child": {"role": "a"}, "violations": [escape_at("/data/link")]}
	items := [
		object.union(link, {"resolution": {"paths": {"/data/link": {"path": "/etc"}}}}),
		object.union(link, {"resolution": {"paths": {"/data/link": {"path": "/data/real"}}}}),
		link,
	]
	exceptions.batch == [{}, {0: 0}, {0: 0}] with input as batch_of([data_exception], items)
}

test_empty_batch_answers_nothing if {
	exceptions.batch == [] with input as batch_of([write_exception], [])
}
