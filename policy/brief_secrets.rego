# METADATA
# title: No brief, env value or metadata string carries a token the policy names
# description: >-
#   When a policy that applies sets brief_secrets, nothing a child is handed
#   as text may carry the parent's own credential (parent_sha256) or the
#   token the session publishes to its peers (published_sha256): either
#   would give the child a capability it was never granted. The policy names
#   each token by its SHA-256, so it never holds the secret. The check reads
#   the brief, every env value and every string in metadata (keys too),
#   finds each token-shaped run in it (token_pattern, by default 16 or more
#   of A-Z a-z 0-9 _ - . ~ + / =), and hashes the run, the run without a
#   NAME= before it or a full stop after it, each token-shaped run left
#   when the string is cut at = / . ~ + (a token in a URL path), and the
#   whole string, so a short secret counts too. A token that has been encoded,
#   split or reworded is not found: the check catches a token pasted as it
#   is. A brief the gate cannot read (brief_unreadable) cannot be shown to
#   be clean and is refused unless the policy sets brief_unreadable to
#   allow; a token_pattern that is not a valid RE2 regular expression
#   refuses the plan. Messages never show a token, only the first digits of
#   its hash.
# custom:
#   id: brief.secrets
#   severity: critical
#   scope: plan
#   when_set: [brief_secrets]
#   reads: [brief, metadata, env, brief_unreadable]
package spawngate.checks.brief_secrets

import data.spawngate.lib

# What a token looks like when a policy does not say (the policy schema
# documents the same).
defaults := {
	"parent_sha256": [],
	"published_sha256": [],
	"token_pattern": `[A-Za-z0-9_.~+/=-]{16,}`,
}

# The settings of every policy that sets brief_secrets, by source, with the
# defaults in place of what it leaves out.
settings := {source: object.union(defaults, given) |
	some source, policy in lib.policies
	given := lib.as_object(policy.brief_secrets)
}

# A token_pattern that cannot be compiled must never let a token through:
# it refuses the plan, and the policy that wrote it judges nothing (calling
# a regex built-in with it would stop the evaluation instead).
deny contains lib.plan_refusal("/plan", sprintf("token_pattern of brief_secrets in %s is not a valid RE2 regular expression, so no brief can be checked against it", [lib.describe({source})]), {source}) if {
	some source, s in settings
	not valid(s.token_pattern)
}

valid(pattern) if {
	is_string(pattern)
	regex.is_valid(pattern)
}

usable := {source: s |
	some source, s in settings
	valid(s.token_pattern)
}

# The hashes each policy names, by source and kind.
named := {source: {"parent": as_set(s.parent_sha256), "published": as_set(s.published_sha256)} |
	some source, s in usable
}

as_set(list) := {h | some h in list; is_string(h)} if is_array(list)

else := set()

# Every hash any policy names: a candidate is looked up here first, so only
# what matches is kept.
listed := {h |
	some kinds in named
	some hashes in kinds
	some h in hashes
}

# A brief the gate cannot read (a host handed it over encrypted) cannot be
# shown to carry no token: each policy that sets brief_secrets decides by
# its brief_unreadable, and refuses unless that is allow. Its env and
# metadata are still read.
deny contains lib.refusal(i, "/brief_unreadable", sprintf("the brief cannot be read (%s), so brief_secrets of %s cannot show that it carries no token it names, and a brief that cannot be checked is refused unless brief_unreadable is allow", [lib.show(child.brief_unreadable), lib.describe(sources)]), sources) if {
	count(unreadable_refused) > 0
	some i, child in lib.children
	"brief_unreadable" in object.keys(child)
	sources := unreadable_refused
}

unreadable_refused := {source |
	some source, _ in settings
	object.get(lib.policies[source], "brief_unreadable", "refuse") != "allow"
}

# Every hash a policy names that a string a child is handed carries, as
# [child, where, hash, token_pattern] (see field and what for where). What
# is hashed of a string: the string itself, trimmed too, so a short secret
# counts; each token-shaped run in it, as it is and bare; and each
# token-shaped run of the string cut at every joiner. Each token_pattern in
# use reads each string once, and only a string that carries a named token
# is named.
hits contains [i, where, h, pattern] if {
	count(listed) > 0
	some pattern in token_patterns
	some i, child in lib.children
	some [where, text] in strings(child)
	some candidate in candidates(pattern, text)
	h := crypto.sha256(candidate)
	h in listed
}

token_patterns := {s.token_pattern | some s in usable}

# (Lists, not sets: a set would hash every string to hold it.)
candidates(pattern, text) := array.concat(
	array.concat(whole(text), [candidate |
		some run in regex.find_n(pattern, text, -1)
		some candidate in [run, bare(run)]
	]),
	cut(pattern, text),
)

whole(text) := [text] if trim_space(text) == text

else := [text, trim_space(text)]

cut(pattern, text) := regex.find_n(pattern, regex.replace(text, joiners, " "), -1) if {
	regex.match(joiners, text)
} else := []

# A run may hold more than the token when a character a token may contain
# joins it to its surroundings: GH_TOKEN=<token>, "<token>." at the end of
# a sentence, https://host/<token>/status. A run bare has no NAME= before
# it and no full stop after it, so a base64 token keeps its own slashes and
# padding; cut at the joiners = / . ~ +, the string yields a token that has
# none of them wherever it sits. (A few built-in calls a string: a child's
# strings cost what their length does.)
joiners := `[=/.~+]`

bare(run) := trim_right(regex.replace(run, `^-*[A-Za-z_][A-Za-z0-9_-]*=`, ""), ".")

# The strings a child is handed, as [where, text]: its brief (when it can
# be read), its env values, and every string in its metadata, keys too (a
# token can be written as one).
strings(child) := array.concat(array.concat(brief_of(child), env_of(child)), metadata_of(child))

brief_of(child) := [["brief", child.brief]] if {
	is_string(child.brief)
	not "brief_unreadable" in object.keys(child)
} else := []

env_of(child) := [[["env", name], value] | some name, value in child.env; is_string(value)] if {
	is_object(child.env)
} else := []

metadata_of(child) := array.concat(
	[[["value", path], value] | walk(child.metadata, [path, value]); is_string(value)],
	[[["key", path], key] | walk(child.metadata, [path, _]); key := last(path); is_string(key)],
) if {
	"metadata" in object.keys(child)
} else := []

last(path) := path[count(path) - 1]

# Where a string is: its JSON pointer in the child, and how a message names
# it.
field("brief") := "/brief"

field(["env", name]) := concat("", ["/env/", escape(name)])

field([_, path]) := concat("", ["/metadata", pointer(path)]) if is_array(path)

what("brief") := "the brief"

what(["env", name]) := sprintf("env variable %s", [lib.show(name)])

what(["value", path]) := "a metadata string" if is_array(path)

what(["key", path]) := "a metadata key" if is_array(path)

# A JSON pointer's reference tokens escape ~ as ~0 and / as ~1.
escape(name) := replace(replace(name, "~", "~0"), "/", "~1")

pointer(path) := concat("", [sprintf("/%s", [escape(sprintf("%v", [seg]))]) | some seg in path])

# The refusals: each hit, for the policies whose token_pattern found it and
# that name its hash, by kind. (Looked up by [token_pattern, hash, kind],
# each worked out once however many children carry the token.)
deny contains lib.refusal(i, field(where), explain(what(where), kind, h, lib.describe(sources)), sources) if {
	some [i, where, h, pattern] in hits
	some kind in ["parent", "published"]
	sources := refusing[[pattern, h, kind]]
}

refusing := {[pattern, h, kind]: sources |
	some [pattern, h] in {[pattern, h] | some [_, _, h, pattern] in hits}
	some kind in ["parent", "published"]
	sources := {source |
		some source, s in usable
		s.token_pattern == pattern
		h in named[source][kind]
	}
	count(sources) > 0
}

explain(what, "parent", h, policies) := sprintf("%s carries the parent's own credential (SHA-256 %s… in parent_sha256 of brief_secrets in %s): the child would hold a capability it was never granted", [what, substring(h, 0, 8), policies])

explain(what, "published", h, policies) := sprintf("%s carries the token the session publishes to its peers (SHA-256 %s… in published_sha256 of brief_secrets in %s): the child would hold a peer's capability it was never granted", [what, substring(h, 0, 8), policies])
