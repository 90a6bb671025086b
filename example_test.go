package spawngate_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/spawngate/spawngate"
)

// Judge a plan file under the operator's policy, and dispatch only what
// Allowed lets through.
func ExampleGate_Check() {
	ctx := context.Background()
	g, err := spawngate.New(ctx, spawngate.WithPolicyFile("examples/policy.yaml"))
	if err != nil {
		fmt.Println("no gate, no spawn:", err)
		return
	}
	doc, err := os.ReadFile("examples/refused-plan.yaml")
	if err != nil {
		fmt.Println(err)
		return
	}
	res, err := g.Check(ctx, "examples/refused-plan.yaml", doc)
	fmt.Println("dispatch:", spawngate.Allowed(res, err))
	for _, c := range res.Children {
		fmt.Printf("%s: %s\n", c.Role, c.Verdict)
		for _, v := range c.Violations {
			fmt.Printf("  %s %s\n", v.Rule, v.Path)
		}
	}
	// Output:
	// dispatch: false
	// home-cleaner: block
	//   budget.cap /plan/0/budget_tokens
	//   paths.escape /plan/0/paths/0
	//   tools.write /plan/0/tools/0
	//   tools.allowlist /plan/0/tools/1
	//   tools.allowlist /plan/0/tools/2
	//   tools.write /plan/0/tools/2
	// doc-reader: pass
}

// Judge a plan built in code, the way an orchestrator written in Go would
// just before it dispatches.
func ExampleGate_CheckPlan() {
	ctx := context.Background()
	policy := []byte(`{"allowed_tools": ["fs.read", "http.get"], "workspace_root": "/repo/workspace", "budget_cap_tokens": 100000}`)
	g, err := spawngate.New(ctx, spawngate.WithPolicy("operator.json", policy))
	if err != nil {
		fmt.Println("no gate, no spawn:", err)
		return
	}
	plan := spawngate.Plan{Children: []spawngate.Spawn{
		{Role: "doc-reader", Tools: []string{"fs.read"}, Paths: []string{"/repo/workspace/docs"}, BudgetTokens: 40000},
		{Role: "deployer", Tools: []string{"fs.read", "shell.run"}, Paths: []string{"/etc"}, BudgetTokens: 40000},
	}}
	res, err := g.CheckPlan(ctx, plan)
	if err != nil {
		fmt.Println("not judged, so not dispatched:", err)
		return
	}
	for _, c := range res.Children {
		fmt.Printf("%s: %s, %d reasons\n", c.Role, c.Verdict, len(c.Violations))
	}
	fmt.Println("dispatch all:", spawngate.Allowed(res, err))
	// Output:
	// doc-reader: pass, 0 reasons
	// deployer: block, 3 reasons
	// dispatch all: false
}

// Judge a Claude Code hook payload, as a PreToolUse hook written in Go
// would, and answer in Claude Code's protocol.
func ExampleGate_Hook() {
	ctx := context.Background()
	g, err := spawngate.New(ctx, spawngate.WithPolicyFile("examples/claude-code/policy.yaml"))
	if err != nil {
		fmt.Println("exit 2:", err)
		return
	}
	payload, err := os.ReadFile("examples/claude-code/payloads/fixer.json")
	if err != nil {
		fmt.Println(err)
		return
	}
	answer, err := g.Hook(ctx, spawngate.ClaudeCode, payload, spawngate.WithAgentsDirs("examples/claude-code/.claude/agents"))
	switch {
	case err != nil:
		fmt.Println("exit 2, on stderr:", err) // Claude Code blocks on exit 2
	case answer.Decision == spawngate.HookDeny:
		fmt.Println("exit 0, on stdout the deny answer; the reason:")
		fmt.Println(answer.Reason)
	default:
		fmt.Println("exit 0, nothing on stdout: the child may be spawned")
	}
	// Output:
	// exit 0, on stdout the deny answer; the reason:
	// spawngate refused this sub-agent: fixer (examples/claude-code/.claude/agents/fixer.md)
	// - tools.allowlist /tools/1 (line 4): tool "Edit" is not allowed by the operator policy
	// - tools.write /tools/1 (line 4): tool "Edit" writes, and allow_write: true is not set by the operator policy
	// - tools.allowlist /tools/2 (line 4): tool "Bash" is not allowed by the operator policy
	// - tools.write /tools/2 (line 4): tool "Bash" writes, and allow_write: true is not set by the operator policy
}

// Read why a plan is refused: for each child its name and role, and for
// each reason the rule, the JSON pointer and line of the value refused,
// and the message; then what refuses the plan as a whole.
func ExampleResult() {
	ctx := context.Background()
	policy := []byte(`{"allowed_tools": ["fs.read", "http.get"], "workspace_root": "/repo/workspace",
		"budget_cap_tokens": 100000, "max_total_budget_tokens": 60000}`)
	g, err := spawngate.New(ctx, spawngate.WithPolicy("operator.json", policy))
	if err != nil {
		fmt.Println("no gate, no spawn:", err)
		return
	}
	plan := []byte(`plan:
  - role: doc-reader
    tools: [fs.read]
    paths: [/repo/workspace/docs]
    budget_tokens: 40000
  - role: deployer
    tools: [fs.read, shell.run]
    paths: [/repo/workspace]
    budget_tokens: 40000
`)
	res, err := g.Check(ctx, "plan.yaml", plan)
	if err != nil {
		fmt.Println("not judged, so not dispatched:", err)
		return
	}
	fmt.Println("plan:", res.Verdict)
	for _, c := range res.Children {
		fmt.Printf("child %s (%s): %s\n", c.Name(), c.Role, c.Verdict)
		for _, v := range c.Violations {
			fmt.Printf("  %s at %s, line %d: %s\n", v.Rule, v.Path, v.Line, v.Message)
		}
		if c.Unlisted > 0 {
			fmt.Printf("  and %d more\n", c.Unlisted)
		}
	}
	for _, v := range res.Violations {
		fmt.Printf("the plan: %s at %s: %s\n", v.Rule, v.Path, v.Message)
	}
	fmt.Println("dispatch:", spawngate.Allowed(res, err))
	// Output:
	// plan: block
	// child 0 (doc-reader): pass
	// child 1 (deployer): block
	//   tools.allowlist at /plan/1/tools/1, line 7: tool "shell.run" is not allowed by the operator policy
	//   tools.write at /plan/1/tools/1, line 7: tool "shell.run" writes, and allow_write: true is not set by the operator policy
	// the plan: plan.budget at /plan: the children's budgets total 80000 tokens, more than the 60000 that max_total_budget_tokens of the operator policy allows
	// dispatch: false
}

// Tell why a plan was not judged, or a gate not built: errors.Is tests the
// kind, errors.As gives the parts. Whatever the kind, nothing is
// dispatched.
func ExampleError() {
	ctx := context.Background()
	_, err := spawngate.New(ctx)
	fmt.Println("no policy:", errors.Is(err, spawngate.ErrNoPolicy))

	g, err := spawngate.New(ctx, spawngate.WithPolicyFile("examples/policy.yaml"))
	if err != nil {
		fmt.Println(err)
		return
	}
	_, err = g.Check(ctx, "plan.json", []byte("{\n  \"plan\": [1,]\n}"))
	fmt.Println("document:", errors.Is(err, spawngate.ErrDocument))
	var e *spawngate.Error
	if errors.As(err, &e) {
		fmt.Printf("  %s, line %d, column %d, at %s: %s\n", e.Source, e.Line, e.Column, e.Pointer, e.Msg)
	}

	late, cancel := context.WithDeadline(ctx, time.Now().Add(-time.Second))
	defer cancel()
	_, err = g.Check(late, "plan.json", []byte(`{"plan": [{"role": "r", "tools": ["fs.read"], "paths": [], "budget_tokens": 1}]}`))
	fmt.Println("timeout:", errors.Is(err, spawngate.ErrTimeout))
	// Output:
	// no policy: true
	// document: true
	//   plan.json, line 2, column 14, at /plan: trailing comma before ]
	// timeout: true
}
