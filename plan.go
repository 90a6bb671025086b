package spawngate

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
)

// Plan is a spawn plan built in Go: the children a parent is about to
// dispatch, and optionally the plan author's own policy, which can only
// narrow the operator's.
type Plan struct {
	Policy   *Policy `json:"policy,omitempty"`
	Children []Spawn `json:"plan"`
}

// Spawn is one child of a plan. A nil Tools or Paths is written as an
// empty list: no tools (refused: a child needs at least one) and no
// filesystem scope.
type Spawn struct {
	Role         string   `json:"role"`
	Tools        []string `json:"tools"`
	Paths        []string `json:"paths"`
	BudgetTokens int64    `json:"budget_tokens"`
	ID           string   `json:"id,omitempty"`
	Brief        string   `json:"brief,omitempty"`
	Model        string   `json:"model,omitempty"`
	Metadata     any      `json:"metadata,omitempty"`
}

// Policy is a policy written in Go (see schemas/policy.schema.json). A
// nil WriteTools or SpawnTools is the default list; AllowedModels nil
// allows any model.
type Policy struct {
	AllowedTools    []string `json:"allowed_tools"`
	WorkspaceRoot   string   `json:"workspace_root"`
	BudgetCapTokens int64    `json:"budget_cap_tokens"`
	AllowWrite      bool     `json:"allow_write,omitempty"`
	WriteTools      []string `json:"write_tools,omitempty"`
	AllowSpawn      bool     `json:"allow_spawn,omitempty"`
	SpawnTools      []string `json:"spawn_tools,omitempty"`
	AllowedModels   []string `json:"allowed_models,omitempty"`
}

// CheckPlan judges a plan built in Go. It is written as the JSON document
// it describes and judged as one, by the same reader, schemas and checks
// as any other, so a plan in Go and the same plan in a file get the same
// answer.
func (g *Gate) CheckPlan(ctx context.Context, p Plan) (Result, error) {
	doc, err := p.Document()
	if err != nil {
		return Result{}, &Error{Kind: ErrDocument, Source: "plan", Msg: err.Error()}
	}
	return g.Check(ctx, "plan.json", doc)
}

// Document is the plan as the JSON document the gate judges.
func (p Plan) Document() ([]byte, error) {
	children := make([]Spawn, len(p.Children))
	for i, c := range p.Children {
		if c.Tools == nil {
			c.Tools = []string{}
		}
		if c.Paths == nil {
			c.Paths = []string{}
		}
		children[i] = c
	}
	if p.Policy != nil && p.Policy.AllowedTools == nil {
		copied := *p.Policy
		copied.AllowedTools = []string{}
		p.Policy = &copied
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(struct {
		Policy   *Policy `json:"policy,omitempty"`
		Children []Spawn `json:"plan"`
	}{p.Policy, children}); err != nil {
		return nil, fmt.Errorf("the plan cannot be written as JSON: %w", err)
	}
	return b.Bytes(), nil
}
