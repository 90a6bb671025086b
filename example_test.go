package spawngate_test

import (
	"context"
	"fmt"
	"os"

	"github.com/spawngate/spawngate"
)

// Judge a plan file under the operator's policy, and dispatch only what
// Allowed lets through.
func Example_file() {
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
func Example_plan() {
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
func Example_hook() {
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
