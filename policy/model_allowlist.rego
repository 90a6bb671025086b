# METADATA
# title: The model must be allowlisted when the policy names models
# description: >-
#   When a policy that applies sets allowed_models, a child must name its
#   model, and every such policy must allow it (entries may be patterns: *
#   matches within a /-separated segment, ** across them). A child whose
#   model the gate cannot know (none given, or one inherited from the
#   parent) is refused. Without allowed_models, any model may be used.
# custom:
#   id: model.allowlist
#   severity: medium
package spawngate.checks.model_allowlist

import data.spawngate.lib

deny contains lib.violation(i, "/model", explain(child)) if {
	count(restricting) > 0
	some i, child in lib.children
	not allowed(child)
}

# The policies that name the models they allow.
restricting := {source |
	some source, policy in lib.policies
	"allowed_models" in object.keys(policy)
}

allowed(child) if {
	is_string(child.model)
	every source in restricting {
		lib.matches_model(lib.policies[source].allowed_models, child.model)
	}
}

refusing(model) := {source |
	some source in restricting
	not lib.matches_model(lib.policies[source].allowed_models, model)
}

explain(child) := sprintf("the child names no model, so the gate cannot know which it runs on, and %s allows only the models it lists: name the model", [lib.describe(restricting)]) if {
	not "model" in object.keys(child)
} else := sprintf("model %s is not a string", [lib.show(child.model)]) if {
	not is_string(child.model)
} else := sprintf("model %s is not allowed by %s", [lib.show(child.model), lib.describe(refusing(child.model))])
