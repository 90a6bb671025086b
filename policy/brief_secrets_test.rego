package spawngate.checks.brief_secrets_test

import data.spawngate.checks.brief_secrets
import data.spawngate.fixtures

# The tokens the tests hide: the parent's own, the one published to peers,
# and a short one that no token_pattern would find.
parent_token := "sk_parent_0123456789abcdef"

peer_token := "pk-peer-ZYXWVUTSRQPONMLK"

short_token := "hunter2"

secrets(settings) := object.union(fixtures.operator, {"brief_secrets": settings})

hashes := {"parent_sha256": [crypto.sha256(parent_token), crypto.sha256(short_token)], "published_sha256": [crypto.sha256(peer_token)]}

judged(children) := {"policies": {"operator": secrets(hashes)}, "children": children}

parent_prefix := substring(crypto.sha256(parent_token), 0, 8)

peer_prefix := substring(crypto.sha256(peer_token), 0, 8)

parent_message(what) := sprintf("%s carries the parent's own credential (SHA-256 %s… in parent_sha256 of brief_secrets in the operator policy): the child would hold a capability it was never granted", [what, parent_prefix])

peer_message(what) := sprintf("%s carries the token the session publishes to its peers (SHA-256 %s… in published_sha256 of brief_secrets in the operator policy): the child would hold a peer's capability it was never granted", [what, peer_prefix])

test_clean_child_allowed if {
	child := fixtures.child({
		"brief": "Fix the flaky test in pkg/x; use the token in $CHILD_TOKEN: sk_child_9876543210fedcba.",
		"env": {"CHILD_TOKEN": "sk_child_9876543210fedcba", "HOME": "/home/agent"},
		"metadata": {"ticket": "ENG-42", "labels": ["flaky", "ci"], "nested": {"n": 3, "ok": true}},
	})
	count(brief_secrets.deny) == 0 with input as judged([child, fixtures.child({})])
}

test_no_policy_sets_brief_secrets_allowed if {
	count(brief_secrets.deny) == 0 with input as fixtures.plan([fixtures.child({"brief": parent_token, "env": {"T": peer_token}})])
}

test_parent_credential_in_brief_denied if {
	brief := sprintf("Use %s to call the API. Done when the call succeeds.", [parent_token])
	deny := brief_secrets.deny with input as judged([fixtures.child({"brief": brief})])
	deny == {{"child": 0, "field": "/brief", "message": parent_message("the brief"), "policies": ["operator"]}}
}

test_published_token_in_brief_denied if {
	deny := brief_secrets.deny with input as judged([fixtures.child({}), fixtures.child({"brief": sprintf("peer token: %s", [peer_token])})])
	deny == {{"child": 1, "field": "/brief", "message": peer_message("the brief"), "policies": ["operator"]}}
}

# A token joined to its surroundings by a character that a token may
# contain is found still.
test_token_joined_to_its_surroundings_denied[brief] if {
	some brief in [
		sprintf("export GH_TOKEN=%s", [parent_token]),
		sprintf("The key is %s.", [parent_token]),
		sprintf("curl https://api.example.com/v1/%s/status", [parent_token]),
		sprintf("?token=%s&x=1", [parent_token]),
		sprintf("Bearer %s\n", [parent_token]),
		sprintf("\"%s\"", [parent_token]),
		sprintf("a/b/c/d/e/f/g/h/i/j/%s/k", [parent_token]),
		sprintf("a/b/c/d/e/f/g/h/i/j/k/l/m/n/o/p/q/r/%s/s", [parent_token]),
	]
	deny := brief_secrets.deny with input as judged([fixtures.child({"brief": brief})])
	deny == {{"child": 0, "field": "/brief", "message": parent_message("the brief"), "policies": ["operator"]}}
}

# A base64 token keeps its own slashes, plus signs and padding.
test_base64_token_with_joiners_inside_denied if {
	token := "q1w2/e3r4+t5y6u7i8o9=="
	policy := secrets({"parent_sha256": [crypto.sha256(token)]})
	deny := brief_secrets.deny with input as {"policies": {"operator": policy}, "children": [fixtures.child({"brief": sprintf("KEY=%s.", [token])})]}
	count(deny) == 1
}

test_part_of_a_token_is_not_the_token_allowed if {
	brief := sprintf("%sX and X%s", [parent_token, parent_token])
	count(brief_secrets.deny) == 0 with input as judged([fixtures.child({"brief": brief})])
}

test_short_secret_as_a_whole_value_denied if {
	deny := brief_secrets.deny with input as judged([fixtures.child({"env": {"DB_PASSWORD": short_token}, "metadata": {"pw": "  hunter2\n"}})])
	{[v.field, v.message] | some v in deny} == {
		["/env/DB_PASSWORD", sprintf("env variable \"DB_PASSWORD\" carries the parent's own credential (SHA-256 %s… in parent_sha256 of brief_secrets in the operator policy): the child would hold a capability it was never granted", [substring(crypto.sha256(short_token), 0, 8)])],
		["/metadata/pw", sprintf("a metadata string carries the parent's own credential (SHA-256 %s… in parent_sha256 of brief_secrets in the operator policy): the child would hold a capability it was never granted", [substring(crypto.sha256(short_token), 0, 8)])],
	}
}

test_short_secret_inside_text_is_not_found_allowed if {
	count(brief_secrets.deny) == 0 with input as judged([fixtures.child({"brief": "the password is hunter2, do not share it"})])
}

test_env_values_denied if {
	deny := brief_secrets.deny with input as judged([fixtures.child({"env": {"PEER": peer_token, "a/b~c": sprintf("x=%s", [parent_token]), "OK": "fine"}})])
	{[v.field, v.message] | some v in deny} == {
		["/env/PEER", peer_message("env variable \"PEER\"")],
		["/env/a~1b~0c", parent_message("env variable \"a/b~c\"")],
	}
}

test_metadata_strings_anywhere_denied if {
	metadata := {"a": {"b/c": [1, "ok", {"t": peer_token}]}, "tokens": [parent_token]}
	deny := brief_secrets.deny with input as judged([fixtures.child({"metadata": metadata})])
	{[v.field, v.message] | some v in deny} == {
		["/metadata/a/b~1c/2/t", peer_message("a metadata string")],
		["/metadata/tokens/0", parent_message("a metadata string")],
	}
}

test_metadata_key_denied if {
	deny := brief_secrets.deny with input as judged([fixtures.child({"metadata": {"creds": {parent_token: true}}})])
	deny == {{"child": 0, "field": sprintf("/metadata/creds/%s", [parent_token]), "message": parent_message("a metadata key"), "policies": ["operator"]}}
}

test_metadata_that_is_a_string_denied if {
	deny := brief_secrets.deny with input as judged([fixtures.child({"metadata": peer_token})])
	{v.field | some v in deny} == {"/metadata"}
}

test_one_token_listed_as_both_kinds_denied if {
	policy := secrets({"parent_sha256": [crypto.sha256(peer_token)], "published_sha256": [crypto.sha256(peer_token)]})
	deny := brief_secrets.deny with input as {"policies": {"operator": policy}, "children": [fixtures.child({"brief": peer_token})]}
	count(deny) == 2
}

test_repeated_token_is_one_finding_denied if {
	brief := sprintf("%s and again %s, and %s.", [parent_token, parent_token, parent_token])
	deny := brief_secrets.deny with input as judged([fixtures.child({"brief": brief})])
	count(deny) == 1
}

test_no_message_shows_a_token_denied if {
	child := fixtures.child({"brief": parent_token, "env": {"P": peer_token, "S": short_token}, "metadata": [parent_token]})
	deny := brief_secrets.deny with input as judged([child])
	count(deny) == 4
	every v in deny {
		not contains(v.message, parent_token)
		not contains(v.message, peer_token)
		not contains(v.message, short_token)
	}
}

test_own_token_pattern_allowed if {
	# Tokens are sk_ and 24 more characters: the 16-character peer token
	# is no longer token-shaped, and is found only as a whole value.
	policy := secrets(object.union(hashes, {"token_pattern": `sk_[a-z]+_[0-9a-f]{16}`}))
	count(brief_secrets.deny) == 0 with input as {"policies": {"operator": policy}, "children": [fixtures.child({"brief": sprintf("peer: %s", [peer_token])})]}
}

test_own_token_pattern_denied if {
	policy := secrets(object.union(hashes, {"token_pattern": `sk_[a-z]+_[0-9a-f]{16}`}))
	deny := brief_secrets.deny with input as {"policies": {"operator": policy}, "children": [fixtures.child({"brief": sprintf("key:%s!", [parent_token])})]}
	{v.message | some v in deny} == {parent_message("the brief")}
}

test_invalid_token_pattern_refuses_the_plan_denied if {
	policy := secrets(object.union(hashes, {"token_pattern": `[A-Z`}))
	deny := brief_secrets.deny with input as {"policies": {"operator": policy}, "children": [fixtures.child({"brief": parent_token})]}
	deny == {{"field": "/plan", "message": "token_pattern of brief_secrets in the operator policy is not a valid RE2 regular expression, so no brief can be checked against it", "policies": ["operator"]}}
}

test_invalid_plan_pattern_leaves_the_operator_judging_denied if {
	policies := {"operator": secrets(hashes), "plan": {"brief_secrets": {"token_pattern": "("}}}
	deny := brief_secrets.deny with input as {"policies": policies, "children": [fixtures.child({"brief": parent_token})]}
	{[object.get(v, "child", "plan"), v.policies] | some v in deny} == {["plan", ["plan"]], [0, ["operator"]]}
}

test_both_policies_naming_a_token_are_both_named_denied if {
	policies := {"operator": secrets(hashes), "plan": {"brief_secrets": {"published_sha256": [crypto.sha256(peer_token)]}}}
	deny := brief_secrets.deny with input as {"policies": policies, "children": [fixtures.child({"brief": peer_token})]}
	deny == {{"child": 0, "field": "/brief", "message": sprintf("the brief carries the token the session publishes to its peers (SHA-256 %s… in published_sha256 of brief_secrets in the operator and plan policies): the child would hold a peer's capability it was never granted", [peer_prefix]), "policies": ["operator", "plan"]}}
}

test_plan_policy_names_its_own_token_denied if {
	policies := {"operator": secrets({"published_sha256": []}), "plan": {"brief_secrets": {"parent_sha256": [crypto.sha256(parent_token)]}}}
	deny := brief_secrets.deny with input as {"policies": policies, "children": [fixtures.child({"brief": parent_token})]}
	{v.policies | some v in deny} == {["plan"]}
}

unreadable(fields) := fixtures.child(object.union({"brief": sprintf("gAAAAB%s", [parent_token]), "brief_unreadable": "the host encrypted the message"}, fields))

test_unreadable_brief_denied if {
	deny := brief_secrets.deny with input as judged([unreadable({})])
	deny == {{"child": 0, "field": "/brief_unreadable", "message": "the brief cannot be read (\"the host encrypted the message\"), so brief_secrets of the operator policy cannot show that it carries no token it names, and a brief that cannot be checked is refused unless brief_unreadable is allow", "policies": ["operator"]}}
}

test_unreadable_brief_when_policy_allows_allowed if {
	policy := object.union(secrets(hashes), {"brief_unreadable": "allow"})
	count(brief_secrets.deny) == 0 with input as {"policies": {"operator": policy}, "children": [unreadable({})]}
}

test_unreadable_brief_still_has_its_env_read_denied if {
	policy := object.union(secrets(hashes), {"brief_unreadable": "allow"})
	deny := brief_secrets.deny with input as {"policies": {"operator": policy}, "children": [unreadable({"env": {"T": peer_token}})]}
	{v.field | some v in deny} == {"/env/T"}
}

test_policy_without_brief_secrets_does_not_refuse_unreadable_allowed if {
	policies := {"operator": object.union(secrets(hashes), {"brief_unreadable": "allow"}), "plan": {"brief_unreadable": "refuse"}}
	count(brief_secrets.deny) == 0 with input as {"policies": policies, "children": [unreadable({})]}
}

test_children_that_are_not_objects_are_skipped_allowed if {
	count(brief_secrets.deny) == 0 with input as judged(["x", null, fixtures.child({"env": {"A": "b"}})])
}

test_candidates_of_a_string_allowed if {
	found(" KEY=abcdefghijklmnopq/rs==. ")
	found("KEY=abcdefghijklmnopq/rs==.")
	found("abcdefghijklmnopq/rs==")
	found("abcdefghijklmnopq")
	not found("abcdefghijklmnopq/rs")
	not found("KEY")
	not found("rs")
}

# Whether a token is found in a string that carries it joined to its
# surroundings.
found(token) if {
	policy := secrets({"parent_sha256": [crypto.sha256(token)]})
	deny := brief_secrets.deny with input as {"policies": {"operator": policy}, "children": [fixtures.child({"brief": " KEY=abcdefghijklmnopq/rs==. "})]}
	count(deny) == 1
}
