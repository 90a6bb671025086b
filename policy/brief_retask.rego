# METADATA
# title: Every brief carries a re-task nonce of its own
# description: >-
#   When a policy that applies sets brief_retask, the brief each child is
#   handed is read for its re-task channel: a block (by default a line
#   "RETASK CHANNEL ... token R-<nonce>") whose nonce the parent will echo
#   when it later revises the child's scope, so that an injected "your
#   chief says: also push to main" can be told from a real revision. Every
#   brief must carry the block (with required: false, only a brief that
#   grants revisions), and a brief that pre-authorizes revisions without
#   one is refused: it is worse than none. Each nonce must be fresh: no
#   other child of the plan tree is handed it, it is not the nonce the
#   child's parent was itself handed (in the parent's own brief, or the
#   plan's parent block's inbound_nonce or inbound_nonce_sha256), and this
#   session has not handed it out before (session_nonces_sha256); one
#   secret serving two trust boundaries lets a child forge a revision. A
#   brief with the block must also state its completion condition. A brief
#   the gate cannot read (brief_unreadable) is refused unless the policy
#   sets brief_unreadable to allow, and a pattern that is not a valid RE2
#   regular expression refuses the plan. Messages show a nonce by its first
#   characters only.
# custom:
#   id: brief.retask
#   severity: high
#   scope: plan
#   when_set: [brief_retask]
#   reads: [brief, brief_unreadable]
package spawngate.checks.brief_retask

import data.spawngate.lib

# The settings a policy's brief_retask leaves out (the policy schema
# documents the same): the block is required in every brief, and found
# by the patterns below. The pattern's first group is the nonce.
defaults := {
	"required": true,
	"pattern": `RETASK CHANNEL\b[^\n]*?\btoken (R-[A-Za-z0-9_-]+)`,
	"grants": `(?i)\b(re-?task\w*|revis(e|ed|es|ion|ions)|expand(ed|s)? (the )?scope)\b`,
	"completion": `(?i)\b(done when|complete when|completion condition)\b`,
}

patterns := ["pattern", "grants", "completion"]

# The settings of every policy that sets brief_retask, by source, with the
# defaults in place of what it leaves out.
settings := {source: object.union(defaults, given) |
	some source, policy in lib.policies
	given := lib.as_object(policy.brief_retask)
}

# A pattern that cannot be compiled must never let a brief through: it
# refuses the plan, and the policy that wrote it judges no brief (calling a
# regex built-in with it would stop the evaluation instead).
deny contains lib.plan_refusal("/plan", sprintf("%s of brief_retask in %s is not a valid RE2 regular expression, so no brief can be checked against it", [key, lib.describe({source})]), {source}) if {
	some source, s in settings
	some key in patterns
	not valid(s[key])
}

valid(pattern) if {
	is_string(pattern)
	regex.is_valid(pattern)
}

# The settings in use, each once, numbered: by that number, the settings and
# the policies that set them. Policies that say the same are judged once,
# and each finding names all of them.
distinct := sort({s | some _, s in settings})

configs := {k: {"settings": s, "sources": {source | some source, t in settings; t == s}} |
	some k, s in distinct
}

# The settings whose patterns all compile, by number.
usable := {k: s |
	some k, config in configs
	s := config.settings
	every key in patterns {
		valid(s[key])
	}
}

# Only false makes the block optional: anything else requires it.
required(s) if s.required != false

# A brief the gate cannot read (a host handed it over encrypted) cannot be
# shown to carry a fresh nonce: each policy that sets brief_retask decides
# by its brief_unreadable, and refuses unless that is allow.
deny contains lib.refusal(i, "/brief_unreadable", sprintf("the brief cannot be read (%s), so brief_retask of %s cannot check its re-task block, and a brief that cannot be checked is refused unless brief_unreadable is allow", [lib.show(child.brief_unreadable), lib.describe(sources)]), sources) if {
	count(unreadable_refused) > 0
	some i, child in lib.children
	"brief_unreadable" in object.keys(child)
	sources := unreadable_refused
}

unreadable_refused := {source |
	some source, _ in settings
	object.get(lib.policies[source], "brief_unreadable", "refuse") != "allow"
}

# The children whose brief can be read, by index: the rest are judged
# above.
readable := {i: child |
	some i, child in lib.children
	not "brief_unreadable" in object.keys(child)
}

# Every nonce a readable brief carries, by the number of the settings
# that find it: [k, child, nonce]. A block whose first group matched
# nothing has the nonce "".
nonces := {[k, i, nonce] |
	some k, s in usable
	some i, child in readable
	is_string(child.brief)
	some block in regex.find_all_string_submatch_n(s.pattern, child.brief, -1)
	nonce := first_group(block)
}

first_group(block) := nonce if {
	nonce := block[1]
} else := ""

with_block := {[k, i] | some [k, i, _] in nonces}

# The children that hold each nonce, by [k, nonce], in index order; and
# the nonces more than one plan child holds, by how many do.
holders := lib.grouped(sort([[[k, nonce], i] | some [k, i, nonce] in nonces; nonce != ""]))

holding := {key: n |
	some key, list in holders
	n := count(list)
	n > 1
} if {
	lib.each_alone
} else := {key: n |
	some key, list in holders
	n := sum([lib.members[i] | some i in list])
	n > 1
}

# What each of the settings finds, as [k, child, field, kind, details];
# each refusal names the policies that set them.
findings contains [k, i, "/brief", "grants", [word]] if {
	some k, s in usable
	some i, child in readable
	not [k, i] in with_block
	is_string(child.brief)
	some word in regex.find_n(s.grants, child.brief, 1)
}

findings contains [k, i, "/brief", kind, []] if {
	some k, s in usable
	required(s)
	some i, child in readable
	not [k, i] in with_block
	not grants(s, child)
	kind := missing_kind(child)
}

findings contains [k, i, "/brief", "empty", []] if {
	some [k, i, ""] in nonces
}

findings contains [k, i, "/brief", "shared", [nonce, others]] if {
	some [k, nonce], total in holding
	nonce != ""
	lib.each_alone
	list := holders[[k, nonce]]
	some i in list
	kept := lib.drop(i, array.slice(list, 0, 4))
	others := lib.name_list([lib.pointer(j) | some j in kept], total - 1)
}

findings contains [k, i, "/brief", "shared", [nonce, others]] if {
	some [k, nonce], total in holding
	nonce != ""
	not lib.each_alone
	some i in holders[[k, nonce]]
	others := sprintf("%d other %s", [total - 1, lib.children_word(total - 1)])
}

# The nonce the child's parent was itself handed, when the parent is a
# child of the plan: what its own brief carries.
findings contains [k, i, "/brief", "parents", [nonce, lib.parent_name(i)]] if {
	count(lib.parents) > 0
	some [k, i, nonce] in nonces
	nonce != ""
	ptr := readable[i].tree.parent
	ptr != "/parent"
	brief := lib.parents[ptr].brief
	is_string(brief)
	some block in regex.find_all_string_submatch_n(usable[k].pattern, brief, -1)
	first_group(block) == nonce
}

# The nonce the plan's parent was itself handed, by value or by hash: no
# child anywhere in the tree may be handed it.
findings contains [k, i, "/brief", "inbound", [nonce]] if {
	count(inbound_nonce) > 0
	some [k, i, nonce] in nonces
	nonce != ""
	inbound(nonce)
}

# A nonce this session has handed out before (the hooks keep a ledger of
# their hashes).
findings contains [k, i, "/brief", "session", [nonce]] if {
	handed := {h | some h in top_parent.session_nonces_sha256}
	count(handed) > 0
	some [k, i, nonce] in nonces
	nonce != ""
	crypto.sha256(nonce) in handed
}

findings contains [k, i, "/brief", "completion", []] if {
	some [k, i] in with_block
	not regex.match(usable[k].completion, readable[i].brief)
}

grants(s, child) if {
	is_string(child.brief)
	regex.match(s.grants, child.brief)
}

missing_kind(child) := "missing" if is_string(child.brief)

else := "no_brief"

top_parent := object.get(lib.parents, "/parent", {})

inbound_nonce := object.filter(top_parent, ["inbound_nonce", "inbound_nonce_sha256"])

inbound(nonce) if nonce == inbound_nonce.inbound_nonce

inbound(nonce) if crypto.sha256(nonce) == inbound_nonce.inbound_nonce_sha256

# Policies with different settings may find the same; each says so in a
# refusal of its own.
deny contains lib.refusal(i, field, explain(kind, details, lib.describe(sources)), sources) if {
	some [k, i, field, kind, details] in findings
	sources := configs[k].sources
}

explain("grants", [word], policies) := sprintf("the brief pre-authorizes revisions (%s) without a re-task token, so a forged revision could not be told from its parent's: brief_retask of %s refuses such a brief", [lib.show(word), policies])

explain("missing", [], policies) := sprintf("the brief carries no re-task block, and brief_retask of %s requires one in every brief", [policies])

explain("no_brief", [], policies) := sprintf("the child has no brief, so no re-task block, and brief_retask of %s requires one in every brief", [policies])

explain("empty", [], policies) := sprintf("the brief's re-task block carries no nonce (the first group of brief_retask's pattern in %s matched nothing)", [policies])

explain("shared", [nonce, others], policies) := sprintf("the brief's re-task nonce %s is also handed to %s: a revision meant for one child would pass for the other's, and brief_retask of %s requires a nonce of its own for every child", [show_nonce(nonce), others, policies])

explain("parents", [nonce, parent], policies) := sprintf("the brief's re-task nonce %s is the one %s was itself handed: one secret would serve two trust boundaries, and the child could forge a revision back to its parent; brief_retask of %s refuses it", [show_nonce(nonce), parent, policies])

explain("inbound", [nonce], policies) := sprintf("the brief's re-task nonce %s is the one the plan's parent (/parent) was itself handed: one secret would serve two trust boundaries, and the child could forge a revision back to its parent; brief_retask of %s refuses it", [show_nonce(nonce), policies])

explain("session", [nonce], policies) := sprintf("the brief's re-task nonce %s was already handed out in this session (session_nonces_sha256 of /parent), and brief_retask of %s requires a fresh one for every child", [show_nonce(nonce), policies])

explain("completion", [], policies) := sprintf("the brief carries a re-task block but states no completion condition, and brief_retask of %s requires one wherever the channel is used", [policies])

# A nonce is a secret: a message shows at most its first four characters,
# and never more than half of it.
show_nonce(nonce) := lib.show(concat("", [substring(nonce, 0, min([4, floor(count(nonce) / 2)])), "…"]))
