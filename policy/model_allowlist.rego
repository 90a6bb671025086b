# METADATA
# title: The model must be allowlisted when the policy names models
# description: >-
#   When a policy that applies sets allowed_models, a child must name its
#   model, and every such policy must allow it (entries may be patterns: *
#   matches within a /-separated segment, ** across them). A child whose
#   model the gate cannot know (none given, or one inherited from the
#   parent) is refused. Without allowed_models, any model may be used. A
#   profile that sets allowed_models restricts its role in the same way.
# custom:
#   id: model.allowlist
#   severity: medium
package spawngate.checks.model_allowlist

import data.spawngate.lib

# A child without a profile: judged by the policies that name models.
deny contains finding(i, child, restricting) if {
	count(restricting) > 0
	some i, child in lib.unprofiled
	not allowed(child, restricting)
}

# A child with a profile: judged by those and by the profile when it names
# models.
deny contains finding(i, child, sources) if {
	some i, role in lib.profiled
	sources := restricting_in_profile[role]
	count(sources) > 0
	child := lib.children[i]
	not allowed(child, sources)
}

# The policies that name the models they allow.
restricting := {source |
	some source, policy in lib.policies
	"allowed_models" in object.keys(policy)
}

restricting_in_profile := {role: restricting_for(role) | some role, _ in lib.profiles}

restricting_for(role) := restricting | {lib.profile_sources[role]} if {
	lib.profile_sets(role, "allowed_models")
} else := restricting

allowed(child, sources) if {
	is_string(child.model)
	every source in sources {
		lib.matches_model(lib.by_source[source].allowed_models, child.model)
	}
}

refusing(model, sources) := {source |
	some source in sources
	not lib.matches_model(lib.by_source[source].allowed_models, model)
}

# Every source that names models refuses a child that names none, or one
# that is not a string.
finding(i, child, sources) := lib.refusal(i, "/model", sprintf("the child names no model, so the gate cannot know which it runs on, and only the models listed by %s are allowed: name the model", [lib.describe(sources)]), sources) if {
	not "model" in object.keys(child)
} else := lib.refusal(i, "/model", sprintf("model %s is not a string", [lib.show(child.model)]), sources) if {
	not is_string(child.model)
} else := lib.refusal(i, "/model", sprintf("model %s is not allowed by %s", [lib.show(child.model), lib.describe(refused)]), refused) if {
	refused := refusing(child.model, sources)
}
