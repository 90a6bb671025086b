// Package agent reads the agent definitions of the orchestrators spawngate
// meets where they are (Claude Code's .claude/agents/*.md, Codex's
// .codex/agents/*.toml), finds the one a spawn call names, and translates
// the call and the definition into the plan child the gate judges.
//
// Translation is pure: a definition and a call in, a JSON-shaped child
// out, with no decision in it. Whatever the gate cannot bound (no
// definition, inherited tools, a mode that skips approvals, no sandbox) is
// written into the child's agent block as a fact, and the Rego checks
// refuse it (agent.*), so that a hook and spawngate check on the same
// plan can never disagree.
package agent
