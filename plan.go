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
	// Policy is the plan author's own policy; nil when the plan carries
	// none. It applies beside the operator's, never instead of it.
	Policy *Policy `json:"policy,omitempty"`
	// Parent is the agent that dispatches the plan, as far as the caller
	// knows it; nil when it is a main session whose powers bound nothing.
	Parent *Parent `json:"parent,omitempty"`
	// Children are the children to dispatch; a plan with none is not
	// judged (an *Error of Kind ErrDocument), never allowed.
	Children []Spawn `json:"plan"`
}

// Parent bounds a plan's own children as a child bounds its children
// (checks tree.*): a nil Tools or Paths bounds nothing, an empty Paths lets
// it give none, a zero BudgetTokens bounds nothing.
type Parent struct {
	// Role is what the parent is, as a result names it.
	Role string
	// Tools are the tools the parent holds: a child may hold only these.
	Tools []string
	// Paths are the paths the parent may touch: a child's paths must lie
	// inside them.
	Paths []string
	// BudgetTokens is the parent's token budget: its children's budgets
	// together must stay within it.
	BudgetTokens int64
	// Depth is how deep the parent itself is: 0 for a main session, 1 for
	// its sub-agent.
	Depth int
	// InboundNonceSHA256 is the SHA-256 (hex) of the re-task nonce the
	// parent was handed: no child may be handed it (check brief.retask).
	InboundNonceSHA256 string
}

// MarshalJSON writes the parent block as the plan schema has it, leaving
// out what bounds nothing.
func (p Parent) MarshalJSON() ([]byte, error) {
	m := map[string]any{}
	if p.Role != "" {
		m["role"] = p.Role
	}
	if p.Tools != nil {
		m["tools"] = p.Tools
	}
	if p.Paths != nil {
		m["paths"] = p.Paths
	}
	if p.BudgetTokens != 0 {
		m["budget_tokens"] = p.BudgetTokens
	}
	if p.Depth != 0 {
		m["depth"] = p.Depth
	}
	if p.InboundNonceSHA256 != "" {
		m["inbound_nonce_sha256"] = p.InboundNonceSHA256
	}
	return json.Marshal(m)
}

// Spawn is one child of a plan. A nil Tools or Paths is written as an
// empty list: no tools (refused: a child needs at least one) and no
// filesystem scope.
type Spawn struct {
	// Role is what the child is for, as a result names it.
	Role string `json:"role"`
	// Tools are the tools the child gets, as exact tool names; each must
	// be allowed by every policy that applies.
	Tools []string `json:"tools"`
	// Paths are the files and folders the child may touch: absolute, or
	// relative to the plan's own workspace root; each must lie inside
	// every workspace root that applies.
	Paths []string `json:"paths"`
	// BudgetTokens is the child's token budget, at most the lowest
	// budget cap that applies.
	BudgetTokens int64 `json:"budget_tokens"`
	// ID names the child, unique within the plan; exceptions may select
	// it (with its role).
	ID string `json:"id,omitempty"`
	// Brief is the task handed to the child: it grants nothing, but the
	// brief checks read it when a policy sets brief_retask or
	// brief_secrets.
	Brief string `json:"brief,omitempty"`
	// Model is the model the child runs on, which the policies'
	// allowed_models must allow when they set it.
	Model string `json:"model,omitempty"`
	// Metadata is free-form data for the orchestrator; it grants nothing.
	Metadata any `json:"metadata,omitempty"`
	// TaskID is the one task the child is spawned for; Bindings the
	// arguments its tools are bound to, by tool and argument name (see
	// task_ownership in the policy schema).
	TaskID   string                       `json:"task_id,omitempty"`
	Bindings map[string]map[string]string `json:"bindings,omitempty"`
	// Env is the environment the child is started with.
	Env map[string]string `json:"env,omitempty"`
	// Children are the children this child may dispatch in turn; each can
	// hold no more than this one.
	Children []Spawn `json:"children,omitempty"`
}

// Policy is a policy written in Go (see schemas/policy.schema.json). A
// nil WriteTools or SpawnTools is the default list; AllowedModels nil
// allows any model.
type Policy struct {
	// AllowedTools are the tools a child may request: exact names or
	// patterns; a tool no entry matches is refused.
	AllowedTools []string `json:"allowed_tools"`
	// WorkspaceRoot is the folder every path of every child must lie
	// inside.
	WorkspaceRoot string `json:"workspace_root"`
	// BudgetCapTokens is the most tokens any one child may be budgeted.
	BudgetCapTokens int64 `json:"budget_cap_tokens"`
	// AllowWrite lets children hold the tools of WriteTools.
	AllowWrite bool `json:"allow_write,omitempty"`
	// WriteTools are the tools that write, delete, execute or spend.
	WriteTools []string `json:"write_tools,omitempty"`
	// AllowSpawn lets children hold the tools of SpawnTools, and so
	// dispatch children of their own.
	AllowSpawn bool `json:"allow_spawn,omitempty"`
	// SpawnTools are the tools that dispatch children.
	SpawnTools []string `json:"spawn_tools,omitempty"`
	// AllowedModels are the models a child may run on (patterns allowed).
	AllowedModels []string `json:"allowed_models,omitempty"`
	// AllowedWorkflows names the Claude Code workflows a session may run
	// (check agent.launch); nil allows none.
	AllowedWorkflows []string `json:"allowed_workflows,omitempty"`
	// MaxDepth bounds how deep the plan tree goes (0: the default, 3);
	// MaxDescendants, when not nil, how many descendants a child may have.
	MaxDepth       int64  `json:"max_depth,omitempty"`
	MaxDescendants *int64 `json:"max_descendants,omitempty"`
}

// CheckPlan judges a plan built in Go. It is written as the JSON document
// it describes and judged as one, by the same reader, schemas and checks
// as any other, so a plan in Go and the same plan in a file get the same
// answer. As with Check, an error comes with a Result whose verdict is
// NotJudged, and a nil ctx is an error of Kind ErrOption.
func (g *Gate) CheckPlan(ctx context.Context, p Plan) (Result, error) {
	if ctx == nil {
		return notJudged("plan.json", nilContext("CheckPlan"))
	}
	doc, err := p.Document()
	if err != nil {
		return notJudged("plan.json", &Error{Kind: ErrDocument, Source: "plan.json", Msg: err.Error()})
	}
	return g.Check(ctx, "plan.json", doc)
}

// Document is the plan as the JSON document the gate judges.
func (p Plan) Document() ([]byte, error) {
	children := written(p.Children)
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
		Parent   *Parent `json:"parent,omitempty"`
		Children []Spawn `json:"plan"`
	}{p.Policy, p.Parent, children}); err != nil {
		return nil, fmt.Errorf("the plan cannot be written as JSON: %w", err)
	}
	return b.Bytes(), nil
}

// written is children as the document has them: nil tools and paths as
// empty lists, at every depth.
func written(children []Spawn) []Spawn {
	out := make([]Spawn, len(children))
	for i, c := range children {
		if c.Tools == nil {
			c.Tools = []string{}
		}
		if c.Paths == nil {
			c.Paths = []string{}
		}
		if c.Children != nil {
			c.Children = written(c.Children)
		}
		out[i] = c
	}
	return out
}
