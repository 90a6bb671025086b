package spawngate.checks.model_allowlist_test

import data.spawngate.checks.model_allowlist
import data.spawngate.fixtures

restricted := object.union(fixtures.operator, {"allowed_models": ["sonnet", "claude-sonnet-*", "gpt-5*"]})

judge(policy, child) := deny if {
	deny := model_allowlist.deny with input as {"policies": {"operator": policy}, "children": [child]}
}

test_any_model_without_allowed_models_allowed if {
	count(judge(fixtures.operator, fixtures.child({"model": "opus"}))) == 0
	count(judge(fixtures.operator, fixtures.child({}))) == 0
}

test_listed_and_matching_models_allowed[model] if {
	some model in ["sonnet", "claude-sonnet-4-5", "gpt-5.1-codex"]
	count(judge(restricted, fixtures.child({"model": model}))) == 0
}

test_unlisted_model_denied if {
	judge(restricted, fixtures.child({"model": "opus"})) == {{"child": 0, "field": "/model", "message": "model \"opus\" is not allowed by the operator policy", "policies": ["operator"]}}
}

test_star_stays_within_a_segment_denied if {
	count(judge(restricted, fixtures.child({"model": "gpt-5/other"}))) == 1
}

test_unknown_model_denied if {
	deny := judge(restricted, fixtures.child({}))
	deny == {{"child": 0, "field": "/model", "message": "the child names no model, so the gate cannot know which it runs on, and only the models listed by the operator policy are allowed: name the model", "policies": ["operator"]}}
}

test_empty_list_allows_no_model_denied if {
	count(judge(object.union(fixtures.operator, {"allowed_models": []}), fixtures.child({"model": "sonnet"}))) == 1
}

test_both_policies_must_allow_denied if {
	plan := object.union(fixtures.operator, {"allowed_models": ["opus"]})
	deny := model_allowlist.deny with input as {"policies": {"operator": restricted, "plan": plan}, "children": [fixtures.child({"model": "sonnet"})]}
	deny == {{"child": 0, "field": "/model", "message": "model \"sonnet\" is not allowed by the plan policy", "policies": ["plan"]}}
}

# Role profiles: a profile that sets allowed_models restricts its role.
test_profile_models_restrict_their_role_denied if {
	children := [fixtures.child({"model": "opus"}), fixtures.child({"role": "fixer", "model": "opus"}), fixtures.child({})]
	deny := model_allowlist.deny with input as fixtures.profiled({"doc-reader": {"allowed_models": ["sonnet"]}}, children)
	deny == {
		{"child": 0, "field": "/model", "message": "model \"opus\" is not allowed by the operator policy's profile for role \"doc-reader\"", "policies": ["operator/roles/doc-reader"]},
		{"child": 2, "field": "/model", "message": "the child names no model, so the gate cannot know which it runs on, and only the models listed by the operator policy's profile for role \"doc-reader\" are allowed: name the model", "policies": ["operator/roles/doc-reader"]},
	}
}

test_model_allowed_by_policy_and_profile_allowed if {
	op := object.union(restricted, {"roles": {"doc-reader": {"allowed_models": ["claude-sonnet-4-5"]}}})
	count(model_allowlist.deny) == 0 with input as {"policies": {"operator": op}, "children": [fixtures.child({"model": "claude-sonnet-4-5"})]}
}

test_profile_cannot_widen_models_denied if {
	op := object.union(restricted, {"roles": {"doc-reader": {"allowed_models": ["**"]}}})
	deny := model_allowlist.deny with input as {"policies": {"operator": op}, "children": [fixtures.child({"model": "opus"})]}
	deny == {{"child": 0, "field": "/model", "message": "model \"opus\" is not allowed by the operator policy", "policies": ["operator"]}}
}

test_refused_by_policy_and_profile_names_both_denied if {
	op := object.union(restricted, {"roles": {"doc-reader": {"allowed_models": ["gpt-5"]}}})
	deny := model_allowlist.deny with input as {"policies": {"operator": op}, "children": [fixtures.child({"model": "opus"}), fixtures.child({"model": "sonnet"})]}
	deny == {
		{"child": 0, "field": "/model", "message": "model \"opus\" is not allowed by the operator policy and its profile for role \"doc-reader\"", "policies": ["operator", "operator/roles/doc-reader"]},
		{"child": 1, "field": "/model", "message": "model \"sonnet\" is not allowed by the operator policy's profile for role \"doc-reader\"", "policies": ["operator/roles/doc-reader"]},
	}
}
