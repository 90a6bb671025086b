# METADATA
# title: A Codex child's sandbox must be known
# description: >-
#   A Codex child runs in the sandbox of the session that spawns it, which
#   Codex applies over its definition's sandbox_mode. spawngate hook codex
#   reads that sandbox from the session and gives it to the child; spawngate
#   agents, which has no session, judges the definition's sandbox_mode, and
#   a definition without one (or with another value than read-only,
#   workspace-write or danger-full-access) is refused: it could run in any
#   sandbox. The sandbox is the tool sandbox:<mode>, which the tool checks
#   judge: workspace-write and danger-full-access write, and
#   danger-full-access must be allowed by an exact entry. A child with no
#   definition at all is agent.definition's. The check names no host: it
#   judges every agent block that carries a sandbox_mode, which the Codex
#   adapter always gives (null when the definition sets none).
# custom:
#   id: agent.sandbox
#   severity: high
package spawngate.checks.agent_sandbox

import data.spawngate.lib

modes := {"read-only", "workspace-write", "danger-full-access"}

deny contains lib.violation(i, field(agent), explain(agent)) if {
	some i, agent in lib.agents
	runs_in_a_sandbox(agent)
	is_string(agent.definition) # without one, agent.definition refuses the child
	not sandboxed(agent)
}

# A host whose children run in a sandbox mode says so by giving the
# agent block a sandbox_mode, null when the definition sets none (the
# Codex adapter does); no check names a host.
runs_in_a_sandbox(agent) if "sandbox_mode" in object.keys(agent)

# (A helper: "not x.sandbox_mode in modes" is undefined, not true, when the
# key is missing.)
sandboxed(agent) if agent.sandbox_mode in modes

# Without a sandbox nothing about the child's powers is known, so the
# refusal is of the child itself; a sandbox that is set but unknown is
# refused where it is written.
field(agent) := "/agent/sandbox_mode" if {
	is_string(agent.sandbox_mode)
} else := ""

explain(agent) := sprintf("sandbox_mode %s is not read-only, workspace-write or danger-full-access", [lib.show(agent.sandbox_mode)]) if {
	is_string(agent.sandbox_mode)
} else := "sandbox_mode is not set, so the child inherits the parent session's sandbox, which the hook cannot see: set sandbox_mode in its definition"
