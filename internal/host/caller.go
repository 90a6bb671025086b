package host

import "fmt"

// Caller is the sub-agent that makes a spawn, as its hook payload names
// it: a nested call.
type Caller struct {
	// ID is the caller's id, and IDField and TypeField the payload fields
	// that carry its id and its agent type (agent_id, agent_type), for
	// the reasons.
	ID, IDField, TypeField string
	// Type is the caller's agent type, "" when the payload does not say.
	Type string
	// Paths are the folders the call works in.
	Paths []string
}

// Parent is the plan's parent block for a spawn the caller makes: its own
// definition translated like a child's, at depth 1. translate translates
// the caller's definition (the host's own resolution), or says why it
// cannot be found; keepTools says whether the tools of that translation
// bound what the caller holds (the facts are its agent block). Parent
// says why, when the definition cannot be found; the block then bounds
// nothing but the depth and the paths.
func (c Caller) Parent(translate func() (child map[string]any, problem string), keepTools func(facts map[string]any) bool) (map[string]any, string) {
	paths := make([]any, len(c.Paths))
	for i, p := range c.Paths {
		paths[i] = p
	}
	parent := map[string]any{"depth": 1, "paths": paths}
	if c.Type == "" {
		return parent, fmt.Sprintf("the caller (%s %q) is a sub-agent, and the payload does not name its %s, so its own definition cannot be found: the gate cannot bound what it hands on", c.IDField, c.ID, c.TypeField)
	}
	parent["role"] = c.Type
	child, problem := translate()
	if child == nil {
		return parent, fmt.Sprintf("the caller's own definition cannot be found (%s %q): %s", c.IDField, c.ID, problem)
	}
	parent["role"] = child["role"]
	if b, ok := child["budget_tokens"]; ok {
		parent["budget_tokens"] = b
	}
	facts, _ := child["agent"].(map[string]any)
	if keepTools(facts) {
		parent["tools"] = child["tools"]
	}
	return parent, ""
}
