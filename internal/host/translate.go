package host

import "github.com/spawngate/spawngate/internal/agent"

// RefuseCaller makes a child one the gate refuses (agent.definition) when
// its caller is a sub-agent whose own definition cannot be found: without
// it, nothing bounds what the caller hands on. The child's definition is
// then not the one that decides, so the child is written as having none
// the gate can judge it by, and check refuses the printed plan the same
// way.
func RefuseCaller(t agent.Translation, problem string) {
	facts, _ := t.Child["agent"].(map[string]any)
	if own, ok := facts["problem"].(string); ok && own != "" {
		problem += "; and " + own
	}
	facts["definition"] = nil
	facts["problem"] = problem
}
