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
	judge(restricted, fixtures.child({"model": "opus"})) == {{"child": 0, "field": "/model", "message": "model \"opus\" is not allowed by the operator policy"}}
}

test_star_stays_within_a_segment_denied if {
	count(judge(restricted, fixtures.child({"model": "gpt-5/other"}))) == 1
}

test_unknown_model_denied if {
	deny := judge(restricted, fixtures.child({}))
	deny == {{"child": 0, "field": "/model", "message": "the child names no model, so the gate cannot know which it runs on, and the operator policy allows only the models it lists: name the model"}}
}

test_empty_list_allows_no_model_denied if {
	count(judge(object.union(fixtures.operator, {"allowed_models": []}), fixtures.child({"model": "sonnet"}))) == 1
}

test_both_policies_must_allow_denied if {
	plan := object.union(fixtures.operator, {"allowed_models": ["opus"]})
	deny := model_allowlist.deny with input as {"policies": {"operator": restricted, "plan": plan}, "children": [fixtures.child({"model": "sonnet"})]}
	deny == {{"child": 0, "field": "/model", "message": "model \"sonnet\" is not allowed by the plan policy"}}
}
