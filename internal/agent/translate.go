package agent

import (
	"bytes"
	"encoding/json"
	"strings"
)

// Call is what a host's spawn call says about the child it asks for, as
// every host says it; each host's adapter reads its own payload into it.
type Call struct {
	// Host is the host's name (claude-code, codex).
	Host string
	// Type is the agent type the spawn resolves to.
	Type string
	// Paths are where the child works: the session's project, and its
	// current directory when that differs.
	Paths []string
	Brief string
	// ID is the host's id of the spawn call (tool_use_id), or "".
	ID string
	// Caller is the agent that spawns, when it is itself a sub-agent.
	Caller string
	// Budget is the budget a spawn is granted when its definition states
	// none.
	Budget json.Number
}

// Translation is a spawn turned into the plan child the gate judges.
type Translation struct {
	Child map[string]any
	// Lines maps a pointer into the child ("/tools/2") to the line of the
	// definition file it came from; a pointer not listed takes the line
	// of the closest pointer above it that is.
	Lines map[string]int
	// File is the definition file, or "" when none applies.
	File string
}

// Start begins the translation of a call: the child's role (the type, until
// a definition names it), paths, budget, brief and id, and its agent block
// with the host, the type, the caller and, with def nil, why no definition
// applies. The host's adapter adds what its definitions grant.
func Start(call Call, def *Definition, problem string) (Translation, map[string]any) {
	t := Translation{Lines: map[string]int{}}
	facts := map[string]any{"host": call.Host, "type": call.Type, "definition": nil}
	paths := make([]any, len(call.Paths))
	for i, p := range call.Paths {
		paths[i] = p
	}
	child := map[string]any{
		"role":  call.Type,
		"paths": paths,
		"agent": facts,
	}
	if call.Budget != "" {
		child["budget_tokens"] = call.Budget
	}
	if call.Brief != "" {
		child["brief"] = call.Brief
	}
	if call.ID != "" {
		child["id"] = call.ID
	}
	if call.Caller != "" {
		facts["caller"] = call.Caller
	}
	if def == nil {
		if problem == "" {
			problem = "no definition applies"
		}
		facts["problem"] = problem
	} else {
		t.File = def.File
		facts["definition"] = def.File
		child["role"] = def.Name
		if b, ok := def.Fields["budget_tokens"]; ok {
			// A spawngate key the hosts ignore: the budget the definition's
			// author grants.
			child["budget_tokens"] = b
			t.Lines["/budget_tokens"] = def.Lines["budget_tokens"]
		}
	}
	t.Child = child
	return t, facts
}

// Model sets the child's model, and where it came from: line 0 for a
// model the definition did not give. An inheriting model ("", inherit) is
// left out, for model.allowlist to refuse while allowed_models is set.
func (t Translation) Model(model string, line int) {
	delete(t.Child, "model")
	delete(t.Lines, "/model")
	if line > 0 {
		t.Lines["/model"] = line
	}
	if model == "" || model == "inherit" {
		return
	}
	t.Child["model"] = model
}

// LineOf is the definition line a pointer into the child came from: its
// own, or the closest one above it; 0 when none is known.
func (t Translation) LineOf(pointer string) int {
	for p := pointer; ; {
		if line := t.Lines[p]; line > 0 {
			return line
		}
		i := strings.LastIndexByte(p, '/')
		if i < 0 {
			return 0
		}
		p = p[:i]
	}
}

// Plan is the plan document the gate judges for a translation: JSON, with
// keys in order, so that the same spawn always gives the same bytes.
func (t Translation) Plan() []byte { return Plan([]Translation{t}, nil) }

// Plan is the plan document of translated children and, when the caller
// is itself a sub-agent, its parent block.
func Plan(children []Translation, parent map[string]any) []byte {
	list := make([]any, len(children))
	for i, t := range children {
		list[i] = t.Child
	}
	doc := map[string]any{"plan": list}
	if parent != nil {
		doc["parent"] = parent
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(doc); err != nil {
		// Only JSON-shaped values are ever put in a plan.
		panic("agent: a translated plan is not JSON: " + err.Error())
	}
	return b.Bytes()
}
