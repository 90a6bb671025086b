package claudecode

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// knownOpen lists the scenarios that today's spawngate gets wrong, each
// with the open issue that tracks it. Their expectation stays the right
// one; while listed, a failure skips with the reason, and a pass fails so
// that the entry is removed when the fix lands.
var knownOpen = map[string]string{}

// Markers written into the definitions' bodies: a request carrying one
// proves that agent ran.
const (
	readerMarker = "MARKER-reader-2c9d"
	writerMarker = "MARKER-writer-7f3a"
	leadMarker   = "MARKER-lead-51e0"
)

var (
	readerDef = agentDef("name: reader\ndescription: Reads files\ntools: Read\nmodel: haiku", readerMarker)
	writerDef = agentDef("name: writer\ndescription: Writes files\ntools: Read, Write, Edit, Bash\nmodel: haiku", writerMarker)
	// A definition named reader that may write: used where the host runs
	// one definition and spawngate judges another of the same name.
	writingReaderDef = func(marker string) string {
		return agentDef("name: reader\ndescription: Reads files\ntools: Read, Write, Bash\nmodel: haiku", marker)
	}
	builtinTypes = []string{"general-purpose", "Explore", "claude", "Plan", "statusline-setup", "fork", ""}
)

// e2eCase is one scenario and what must hold after it.
type e2eCase struct {
	name string
	sc   func(t *testing.T) scenario
	// check is spawngate's expectation ("forbidden never starts", "allowed
	// starts"); knownOpen may excuse its failure.
	check func(t *testing.T, o *outcome) error
	// facts are what the client was seen to do, which the expectation rests
	// on; never excused, so a client that changes is noticed.
	facts func(t *testing.T, o *outcome) error
	// promptBlocked says the run is right to end before any model request:
	// a hook on UserPromptExpansion blocked the prompt itself.
	promptBlocked bool
}

func runCases(t *testing.T, cases []e2eCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			o := c.sc(t).run(t)
			if errors.Is(o.Err, context.DeadlineExceeded) || len(o.Requests) == 0 && !c.promptBlocked {
				t.Fatalf("the run itself failed: %s", o.describe())
			}
			if c.facts != nil {
				if err := c.facts(t, o); err != nil {
					t.Errorf("the client no longer behaves as recorded (re-check the findings): %v\n%s", err, o.describe())
				}
			}
			err := c.check(t, o)
			reason, open := knownOpen[c.name]
			switch {
			case open && err != nil:
				t.Skipf("known open, %s: %v", reason, err)
			case open:
				t.Fatalf("listed in knownOpen (%s) but passes now: remove it from knownOpen", reason)
			case err != nil:
				t.Fatalf("%v\n%s", err, o.describe())
			}
		})
	}
}

// starts is "allowed starts".
func starts(marker string) func(*testing.T, *outcome) error {
	return func(t *testing.T, o *outcome) error {
		if !o.started(marker) {
			return fmt.Errorf("the agent with %s never started", marker)
		}
		return nil
	}
}

// neverStarts is "forbidden never starts".
func neverStarts(markers ...string) func(*testing.T, *outcome) error {
	return func(t *testing.T, o *outcome) error {
		for _, m := range markers {
			if o.started(m) {
				return fmt.Errorf("the agent with %s started, with tools %v", m, o.subTools(m))
			}
		}
		return nil
	}
}

// noChild is "nothing started": for built-in agents, which carry no marker.
func noChild(t *testing.T, o *outcome) error {
	if subs := o.subRequests(); len(subs) > 0 {
		return fmt.Errorf("a sub-agent started, with tools %v", offered(subs[0]))
	}
	return nil
}

// all joins checks; the first failure is the answer.
func all(checks ...func(*testing.T, *outcome) error) func(*testing.T, *outcome) error {
	return func(t *testing.T, o *outcome) error {
		for _, c := range checks {
			if err := c(t, o); err != nil {
				return err
			}
		}
		return nil
	}
}

// holdsTools fails unless the agent with marker could use each tool.
func holdsTools(marker string, tools ...string) func(*testing.T, *outcome) error {
	return func(t *testing.T, o *outcome) error {
		got := o.subTools(marker)
		for _, want := range tools {
			if !slices.Contains(got, want) {
				return fmt.Errorf("the agent with %s holds %v, not %s", marker, got, want)
			}
		}
		t.Logf("the agent with %s holds %v", marker, got)
		return nil
	}
}

// denied says whether a hook call answered with Claude Code's deny.
func denied(h hookCall) bool {
	return h.Exit == "0" && strings.Contains(h.Stdout, `"permissionDecision":"deny"`)
}

// hookCalls fails unless the hook ran n times for tool.
func hookCalls(tool string, n int) func(*testing.T, *outcome) error {
	return func(t *testing.T, o *outcome) error {
		if got := len(o.hooksFor(tool)); got != n {
			return fmt.Errorf("the hook ran %d times for %s, not %d", got, tool, n)
		}
		return nil
	}
}

// payloadFact fails unless the first hook call for tool satisfies ok, and
// saves that payload as a fixture when asked to.
func payloadFact(tool, fixture string, ok func(p map[string]any) error) func(*testing.T, *outcome) error {
	return func(t *testing.T, o *outcome) error {
		hs := o.hooksFor(tool)
		if len(hs) == 0 {
			return fmt.Errorf("no hook call for %s", tool)
		}
		t.Logf("payload: %s", strings.TrimSpace(hs[0].Stdin))
		if fixture != "" {
			savePayload(t, o, hs[0], fixture)
		}
		if ok == nil {
			return nil
		}
		return ok(hs[0].Payload)
	}
}

func toolInput(p map[string]any) map[string]any { m, _ := p["tool_input"].(map[string]any); return m }

// TestGate covers the paths spawngate handles today: a scenario here that
// fails is a regression.
func TestGate(t *testing.T) {
	clientPath(t)
	t.Logf("network namespace of its own: %v", inNetns)
	runCases(t, gateCases())
}

func gateCases() []e2eCase {
	return []e2eCase{{
		name: "reader-starts-writer-never",
		sc: func(t *testing.T) scenario {
			return scenario{
				Files: map[string]string{".claude/agents/reader.md": readerDef, ".claude/agents/writer.md": writerDef},
				Main:  []step{spawn("reader"), spawn("writer")},
			}
		},
		check: all(starts(readerMarker), neverStarts(writerMarker), hookCalls("Agent", 2)),
		facts: all(
			payloadFact("Agent", "agent", func(p map[string]any) error {
				for _, k := range []string{"session_id", "transcript_path", "cwd", "permission_mode", "hook_event_name", "tool_input", "tool_use_id"} {
					if _, ok := p[k]; !ok {
						return fmt.Errorf("the payload has no %s", k)
					}
				}
				if _, ok := p["agent_id"]; ok {
					return errors.New("a top-level spawn's payload has agent_id")
				}
				return nil
			}),
			func(t *testing.T, o *outcome) error {
				if got := o.subTools(readerMarker); !slices.Equal(got, []string{"Read"}) {
					return fmt.Errorf("the reader holds %v, not [Read]", got)
				}
				return nil
			}),
	}, {
		name: "builtin-and-unknown-types-refused",
		sc: func(t *testing.T) scenario {
			var main []step
			for _, b := range append(slices.Clone(builtinTypes), "no-such-agent") {
				main = append(main, spawn(b))
			}
			return scenario{Main: main}
		},
		check: all(noChild, func(t *testing.T, o *outcome) error {
			hs := o.hooksFor("Agent")
			if len(hs) != len(builtinTypes)+1 {
				return fmt.Errorf("the hook ran %d times, not %d", len(hs), len(builtinTypes)+1)
			}
			for _, h := range hs {
				if !denied(h) {
					return fmt.Errorf("%v was not refused: exit %s, %q", toolInput(h.Payload)["subagent_type"], h.Exit, h.Stdout)
				}
			}
			return nil
		}),
		facts: func(t *testing.T, o *outcome) error {
			// Finding 13: fork is no listed agent but a type the Agent tool takes.
			want := []string{"claude", "Explore", "general-purpose", "Plan", "statusline-setup"}
			if got := o.initAgents(); !slices.Equal(got, want) {
				return fmt.Errorf("the client lists the agents %v, not %v", got, want)
			}
			return nil
		},
	}, {
		name: "bypass-session-refused",
		sc: func(t *testing.T) scenario {
			return scenario{
				Files: map[string]string{".claude/agents/reader.md": readerDef},
				Args:  []string{"--permission-mode", "bypassPermissions"},
				Main:  []step{spawn("reader")},
			}
		},
		check: neverStarts(readerMarker),
		facts: payloadFact("Agent", "agent-bypass-session", func(p map[string]any) error {
			if p["permission_mode"] != "bypassPermissions" {
				return fmt.Errorf("permission_mode is %v", p["permission_mode"])
			}
			return nil
		}),
	}, {
		name: "missing-policy-blocks",
		sc: func(t *testing.T) scenario {
			return scenario{NoPolicy: true, Files: map[string]string{".claude/agents/reader.md": readerDef}, Main: []step{spawn("reader")}}
		},
		check: all(neverStarts(readerMarker), func(t *testing.T, o *outcome) error {
			hs := o.hooksFor("Agent")
			if len(hs) != 1 || hs[0].Exit != "2" || strings.TrimSpace(hs[0].Stderr) == "" {
				return errors.New("the hook did not exit 2 with a reason")
			}
			return nil
		}),
	}, {
		name: "nested-spawn-gated-in-sub-agent",
		sc: func(t *testing.T) scenario {
			return scenario{
				Policy: spawnPolicy("{{ROOT}}"),
				Files: map[string]string{
					".claude/agents/lead.md":   agentDef("name: lead\ndescription: Leads\ntools: Read, Agent\nmodel: haiku", leadMarker),
					".claude/agents/writer.md": writerDef, ".claude/agents/reader.md": readerDef,
				},
				Main: []step{spawn("lead")},
				Sub:  map[string][]step{leadMarker: {spawn("writer"), spawn("reader")}},
			}
		},
		check: all(starts(leadMarker), neverStarts(writerMarker), starts(readerMarker)),
		facts: func(t *testing.T, o *outcome) error {
			var nested []hookCall
			for _, h := range o.hooksFor("Agent") {
				if h.Payload["agent_type"] == "lead" {
					nested = append(nested, h)
				}
			}
			if len(nested) != 2 {
				return fmt.Errorf("%d hook calls came from the lead, not 2", len(nested))
			}
			id, _ := nested[0].Payload["agent_id"].(string)
			if len(id) != 17 || id[0] != 'a' {
				return fmt.Errorf("the lead's agent_id is %q", id)
			}
			savePayload(t, o, nested[0], "agent-nested")
			return nil
		},
	}, {
		// Finding 12: a symlinked definition file is followed by both.
		name: "definition-file-symlink-starts",
		sc: func(t *testing.T) scenario {
			return scenario{
				Files:    map[string]string{"defs/reader.md": readerDef},
				Symlinks: map[string]string{".claude/agents/reader.md": "../../defs/reader.md"},
				Main:     []step{spawn("reader")},
			}
		},
		check: starts(readerMarker),
	}, {
		// Finding 4: case and separators aside, when no name is equal.
		name: "name-spaced-starts",
		sc: func(t *testing.T) scenario {
			return scenario{Files: map[string]string{".claude/agents/cr.md": agentDef("name: code-reviewer\ndescription: Reviews\ntools: Read\nmodel: haiku", "MARKER-cr-5b1d")},
				Main: []step{spawn("Code Reviewer")}}
		},
		check: starts("MARKER-cr-5b1d"),
	}, {
		// Finding 4: two names equal only loosely make the host refuse. Run
		// without the hook, which refuses it first, so that the host's own
		// answer is seen.
		name: "name-ambiguous-refused-by-host",
		sc: func(t *testing.T) scenario {
			return scenario{NoSettings: true, Files: map[string]string{".claude/agents/gp.md": agentDef("name: general_purpose\ndescription: GP\ntools: Read\nmodel: haiku", "MARKER-gp-0c4e")},
				Main: []step{spawn("General Purpose")}}
		},
		check: noChild,
		facts: func(t *testing.T, o *outcome) error {
			for _, r := range o.mainToolResults() {
				if strings.Contains(r.Text, "is ambiguous") {
					return nil
				}
			}
			return errors.New("the host did not answer that the type is ambiguous")
		},
	}, {
		// The host gives an agent with tools: "*" every tool; spawngate
		// refuses the pattern.
		name: "tools-star-refused",
		sc: func(t *testing.T) scenario {
			return scenario{Files: map[string]string{".claude/agents/star.md": agentDef("name: star\ndescription: Star\ntools: \"*\"\nmodel: haiku", "MARKER-star-9a77")},
				Main: []step{spawn("star")}}
		},
		check: neverStarts("MARKER-star-9a77"),
	}, {
		// Finding 10: isolation is honoured; the worktree lies in the repository.
		name: "isolation-worktree-starts-inside-repo",
		sc: func(t *testing.T) scenario {
			return scenario{Files: map[string]string{".claude/agents/reader.md": readerDef},
				Main: []step{callTool("Agent", map[string]any{"description": "e2e", "prompt": "Do it.", "subagent_type": "reader", "isolation": "worktree"})}}
		},
		check: starts(readerMarker),
		facts: func(t *testing.T, o *outcome) error {
			dir := workingDir(o, readerMarker)
			if !strings.HasPrefix(dir, filepath.Join(o.Root, ".claude", "worktrees")+string(filepath.Separator)) {
				return fmt.Errorf("the child works in %q", dir)
			}
			return nil
		},
	}, {
		// Finding 10: a call's mode reaches the hook and is judged: a child
		// asked to bypass permissions is refused, even though this version
		// runs an ordinary spawn in the session's mode whatever the call
		// asks (host-call-cwd-and-mode-ignored), because a teammate spawn
		// honours it. cwd never reaches the hook.
		name: "call-mode-bypass-refused",
		sc: func(t *testing.T) scenario {
			return scenario{Files: map[string]string{".claude/agents/reader.md": readerDef},
				Main: []step{callTool("Agent", map[string]any{"description": "e2e", "prompt": "Do it.", "subagent_type": "reader", "cwd": "/", "mode": "bypassPermissions"})}}
		},
		check: neverStarts(readerMarker),
		facts: payloadFact("Agent", "", func(p map[string]any) error {
			in := toolInput(p)
			if _, ok := in["cwd"]; ok {
				return errors.New("tool_input.cwd reached the hook")
			}
			if in["mode"] != "bypassPermissions" {
				return errors.New("tool_input.mode did not reach the hook")
			}
			return nil
		}),
	}, {
		// What this version does with a call's cwd and mode, seen without
		// the hook: the child works in the repository.
		name: "host-call-cwd-and-mode-ignored",
		sc: func(t *testing.T) scenario {
			return scenario{NoSettings: true, Files: map[string]string{".claude/agents/reader.md": readerDef},
				Main: []step{callTool("Agent", map[string]any{"description": "e2e", "prompt": "Do it.", "subagent_type": "reader", "cwd": "/", "mode": "bypassPermissions"})}}
		},
		check: starts(readerMarker),
		facts: func(t *testing.T, o *outcome) error {
			if dir := workingDir(o, readerMarker); dir != o.Root {
				return fmt.Errorf("the child works in %q", dir)
			}
			return nil
		},
	}}
}

// workingDir is the working directory the client told the agent with
// marker about.
func workingDir(o *outcome, marker string) string {
	for _, r := range o.requestsWith(marker) {
		const key = "Primary working directory: "
		body := string(r.Body)
		if i := strings.Index(body, key); i >= 0 {
			rest := body[i+len(key):]
			if j := strings.IndexAny(rest, `\"`); j >= 0 {
				rest = rest[:j]
			}
			return rest
		}
	}
	return ""
}

const (
	wskill = "---\nname: wskill\ndescription: Runs the writer\ncontext: fork\nagent: writer\n---\nDo the skill task. MARKER-skill-e61b\n"
	gskill = "---\nname: gskill\ndescription: Runs in a fork\ncontext: fork\n---\nDo the skill task. MARKER-skill-3f08\n"
	// workflowScript asks for the writer from a workflow.
	workflowScript = "export const meta = { name: 'e2eflow', description: 'e2e workflow' }\nawait agent('Do the workflow task.', { agentType: 'writer' })\n"
)

// wideSettings is the README's hook with the matcher widened to the other
// tools that start agents, as a fix for findings 1 and 2 would need.
func wideSettings() string { return settingsWithHook("Agent|Task|Skill|Workflow", "{{POLICY}}") }

// TestFindings holds one scenario per finding about how Claude Code
// 2.1.332 really starts sub-agents. Each asserts the right outcome;
// those spawngate gets wrong today are in knownOpen. The facts each
// records are the evidence for the finding.
func TestFindings(t *testing.T) {
	clientPath(t)
	runCases(t, findingCases())
}

// TestKnownOpenNamesScenarios keeps knownOpen from naming a scenario that
// does not exist (and so excusing nothing); it needs no client.
func TestKnownOpenNamesScenarios(t *testing.T) {
	names := map[string]bool{}
	for _, c := range append(gateCases(), findingCases()...) {
		if names[c.name] {
			t.Errorf("two scenarios are named %s", c.name)
		}
		names[c.name] = true
	}
	for name := range knownOpen {
		if !names[name] {
			t.Errorf("knownOpen names %s, which is no scenario", name)
		}
	}
}

func findingCases() []e2eCase {
	// The test binary itself serves MCP for the mcpServers scenario.
	self, _ := os.Executable()
	mcpDef := func(marker, log string) string {
		return agentDef("name: mcpa\ndescription: Uses MCP\ntools: Read\nmodel: haiku\nmcpServers:\n  - e2e:\n      type: stdio\n      command: "+self+
			"\n      env:\n        "+envMCPServer+": "+log, marker)
	}
	return []e2eCase{{
		// Finding 1.
		name: "skill-fork-runs-named-agent",
		sc: func(t *testing.T) scenario {
			return scenario{Settings: wideSettings(),
				Files: map[string]string{".claude/agents/writer.md": writerDef, ".claude/skills/wskill/SKILL.md": wskill},
				Main:  []step{callTool("Skill", map[string]any{"skill": "wskill"})}}
		},
		check: neverStarts(writerMarker),
		facts: all(hookCalls("Agent", 0), payloadFact("Skill", "skill", nil)),
	}, {
		name: "skill-fork-runs-builtin",
		sc: func(t *testing.T) scenario {
			return scenario{Settings: wideSettings(), Files: map[string]string{".claude/skills/gskill/SKILL.md": gskill},
				Main: []step{callTool("Skill", map[string]any{"skill": "gskill"})}}
		},
		check: noChild,
		facts: hookCalls("Agent", 0),
	}, {
		name: "command-fork-runs-named-agent",
		sc: func(t *testing.T) scenario {
			return scenario{Settings: wideSettings(),
				Files: map[string]string{".claude/agents/writer.md": writerDef,
					".claude/commands/wcmd.md": "---\ndescription: Runs the writer\ncontext: fork\nagent: writer\n---\nDo the command task.\n"},
				Main: []step{callTool("Skill", map[string]any{"skill": "wcmd"})}}
		},
		check: neverStarts(writerMarker),
		facts: hookCalls("Agent", 0),
	}, {
		// The README's UserPromptExpansion hook refuses the prompt itself:
		// no model request at all.
		name: "slash-command-fork-runs-named-agent",
		sc: func(t *testing.T) scenario {
			return scenario{Settings: settingsWithHook("*", "{{POLICY}}"), Prompt: "/wskill",
				Files: map[string]string{".claude/agents/writer.md": writerDef, ".claude/skills/wskill/SKILL.md": wskill}}
		},
		promptBlocked: true,
		check:         neverStarts(writerMarker),
		facts: func(t *testing.T, o *outcome) error {
			var events []string
			for _, h := range o.Hooks {
				events = append(events, fmt.Sprint(h.Payload["hook_event_name"]))
			}
			if !slices.Equal(events, []string{"UserPromptExpansion"}) {
				return fmt.Errorf("hook calls on %v, expected one on UserPromptExpansion and no PreToolUse", events)
			}
			return nil
		},
	}, {
		// Permission rules do not reach a forked skill's agent.
		name: "host-deny-rule-misses-forked-skill",
		sc: func(t *testing.T) scenario {
			return scenario{NoSettings: true,
				Files: map[string]string{".claude/agents/writer.md": writerDef, ".claude/skills/wskill/SKILL.md": wskill,
					".claude/settings.local.json": `{"permissions": {"deny": ["Agent(writer)"]}}`},
				Main: []step{callTool("Skill", map[string]any{"skill": "wskill"})}}
		},
		check: starts(writerMarker),
	}, {
		// Finding 2. Workflow asks for permission in default mode, so the
		// run allows it the way a user who opted in would.
		name: "workflow-script-runs-agent",
		sc: func(t *testing.T) scenario {
			return scenario{Settings: wideSettings(), Args: []string{"--allowedTools", "Workflow"},
				Files: map[string]string{".claude/agents/writer.md": writerDef},
				Main:  []step{callTool("Workflow", map[string]any{"script": workflowScript})}}
		},
		check: neverStarts(writerMarker),
		facts: all(hookCalls("Agent", 0), payloadFact("Workflow", "workflow-script", nil)),
	}, {
		name: "workflow-named-runs-agent",
		sc: func(t *testing.T) scenario {
			return scenario{Settings: wideSettings(), Args: []string{"--allowedTools", "Workflow"},
				Files: map[string]string{".claude/agents/writer.md": writerDef, ".claude/workflows/e2eflow.js": workflowScript},
				Main:  []step{callTool("Workflow", map[string]any{"name": "e2eflow"})}}
		},
		check: neverStarts(writerMarker),
		facts: all(hookCalls("Agent", 0), payloadFact("Workflow", "workflow-named", nil)),
	}, {
		// With every tool matched, the workflow's agent() call still makes no
		// PreToolUse call; the child's own tools do, under its agent_type.
		// So a workflow the policy allows by name runs whatever agents its
		// script starts: allowed_workflows trusts the script.
		name: "host-workflow-agent-has-no-pretooluse",
		sc: func(t *testing.T) scenario {
			return scenario{Settings: settingsWithHook("*", "{{POLICY}}"), Args: []string{"--allowedTools", "Workflow"},
				Policy: "allowed_tools: [Read, Grep, Glob, Workflow]\nallow_spawn: true\nallowed_workflows: [e2eflow]\nworkspace_root: {{ROOT}}\nbudget_cap_tokens: 200000\n",
				Files:  map[string]string{".claude/agents/writer.md": writerDef, ".claude/workflows/e2eflow.js": workflowScript},
				Main:   []step{callTool("Workflow", map[string]any{"name": "e2eflow"})},
				Sub:    map[string][]step{writerMarker: {callTool("Bash", map[string]any{"command": "true", "description": "e2e"})}}}
		},
		check: all(starts(writerMarker), hookCalls("Agent", 0), func(t *testing.T, o *outcome) error {
			for _, h := range o.hooksFor("Bash") {
				if h.Payload["agent_type"] == "writer" && h.Payload["agent_id"] != nil {
					return nil
				}
			}
			return errors.New("no hook call came from the writer's own Bash")
		}),
	}, {
		// A deny rule does reach a workflow's agent(): what the README's
		// pairing can lean on.
		name: "host-deny-rule-stops-workflow-agent",
		sc: func(t *testing.T) scenario {
			return scenario{NoSettings: true, Args: []string{"--allowedTools", "Workflow"},
				Files: map[string]string{".claude/agents/writer.md": writerDef,
					".claude/settings.local.json": `{"permissions": {"deny": ["Agent(writer)"]}}`},
				Main: []step{callTool("Workflow", map[string]any{"script": workflowScript})}}
		},
		check: neverStarts(writerMarker),
	}, {
		// Finding 3.
		name: "cli-agents-redefine-type",
		sc: func(t *testing.T) scenario {
			return scenario{Files: map[string]string{".claude/agents/reader.md": readerDef},
				Args: []string{"--agents", `{"reader":{"description":"Reads files","prompt":"CLI reader MARKER-cli-reader-8d21","tools":["Read","Write","Bash"],"model":"haiku"}}`},
				Main: []step{spawn("reader")}}
		},
		check: neverStarts("MARKER-cli-reader-8d21"),
		facts: all(neverStarts(readerMarker), func(t *testing.T, o *outcome) error {
			// What a hook can learn of it: the client's command line, the
			// parent of its shell, also named by CLAUDE_PID.
			hs := o.hooksFor("Agent")
			if len(hs) == 0 || hs[0].Env["CLAUDE_PID"] == "" {
				return errors.New("the hook has no CLAUDE_PID")
			}
			if len(hs[0].Parents) < 2 || !strings.Contains(hs[0].Parents[1], "--agents") || !strings.Contains(hs[0].Parents[1], "MARKER-cli-reader-8d21") {
				return fmt.Errorf("the client's command line, as the hook sees it, holds no --agents JSON: %q", hs[0].Parents)
			}
			return nil
		}),
	}, {
		// Finding 4: an exact name first, over every folder; then case and
		// separators aside.
		name: "name-exact-builtin-over-underscore",
		sc: func(t *testing.T) scenario {
			return scenario{Files: map[string]string{".claude/agents/gp.md": agentDef("name: general_purpose\ndescription: GP\ntools: Read\nmodel: haiku", "MARKER-gp-0c4e")},
				Main: []step{spawn("general-purpose")}}
		},
		check: noChild,
	}, {
		name: "name-exact-builtin-over-lowercase",
		sc: func(t *testing.T) scenario {
			return scenario{Files: map[string]string{".claude/agents/ex.md": agentDef("name: explore\ndescription: EX\ntools: Read\nmodel: haiku", "MARKER-ex-77f2")},
				Main: []step{spawn("Explore")}}
		},
		check: noChild,
	}, {
		name: "name-exact-user-over-project",
		sc: func(t *testing.T) scenario {
			return scenario{Files: map[string]string{
				".claude/agents/cr.md":              agentDef("name: code_reviewer\ndescription: CR\ntools: Read\nmodel: haiku", "MARKER-cr-proj-4a10"),
				"~/.claude/agents/code-reviewer.md": agentDef("name: code-reviewer\ndescription: CR\ntools: Read, Write, Bash\nmodel: haiku", "MARKER-cr-user-91bb")},
				Main: []step{spawn("code-reviewer")}}
		},
		check: neverStarts("MARKER-cr-user-91bb"),
	}, {
		name: "name-separators-dropped",
		sc: func(t *testing.T) scenario {
			return scenario{Files: map[string]string{".claude/agents/cr.md": agentDef("name: code-reviewer\ndescription: CR\ntools: Read\nmodel: haiku", "MARKER-cr-5b1d")},
				Main: []step{spawn("codereviewer")}}
		},
		check: starts("MARKER-cr-5b1d"),
	}, {
		// Finding 5: agents come from the folders of the session's start, and
		// a cd moves only the payload's cwd.
		name: "cd-does-not-move-agent-resolution",
		sc: func(t *testing.T) scenario {
			return scenario{Args: []string{"--allowedTools", "Bash(cd:*)"},
				Files: map[string]string{
					".claude/agents/reader.md":     writingReaderDef("MARKER-root-reader-1c3e"),
					"pkg/.claude/agents/reader.md": agentDef("name: reader\ndescription: Reads files\ntools: Read\nmodel: haiku", "MARKER-pkg-reader-6e02"),
				},
				Main: []step{callTool("Bash", map[string]any{"command": "cd pkg", "description": "enter pkg"}), spawn("reader")}}
		},
		check: neverStarts("MARKER-root-reader-1c3e"),
		facts: all(neverStarts("MARKER-pkg-reader-6e02"), projectDirFacts("pkg", "")),
	}, {
		// The project's settings.json is read from the start folder only, so
		// a session started below the repository root runs without the
		// hook in the root's .claude/settings.json (its agents still load).
		// Why the README's enforcing installation is managed settings.
		name: "host-session-in-subfolder-skips-root-settings",
		sc: func(t *testing.T) scenario {
			return scenario{Dir: "pkg", Files: map[string]string{".claude/agents/writer.md": writerDef, "pkg/x.txt": "x\n"},
				Main: []step{spawn("writer")}}
		},
		check: starts(writerMarker),
		facts: hookSources(),
	}, {
		// The managed hook holds wherever the session starts.
		name: "managed-hook-holds-in-subfolder",
		sc: func(t *testing.T) scenario {
			return scenario{Dir: "pkg", Managed: managedHookSettings(`"allowManagedHooksOnly": true`),
				Files: map[string]string{".claude/agents/writer.md": writerDef, "pkg/x.txt": "x\n"},
				Main:  []step{spawn("writer")}}
		},
		check: neverStarts(writerMarker),
		facts: hookSources("managed"),
	}, {
		// With the hook in user settings: the closest agents folder wins,
		// and both cwd and CLAUDE_PROJECT_DIR are the start folder.
		name: "session-in-subfolder-resolves-closest",
		sc: func(t *testing.T) scenario {
			return scenario{Dir: "pkg", NoSettings: true,
				Files: map[string]string{
					"~/.claude/settings.json":      settingsWithHook(readmeMatcher, "{{POLICY}}"),
					".claude/agents/reader.md":     writingReaderDef("MARKER-root-reader-1c3e"),
					"pkg/.claude/agents/reader.md": agentDef("name: reader\ndescription: Reads files\ntools: Read\nmodel: haiku", "MARKER-pkg-reader-6e02"),
				},
				Main: []step{spawn("reader")}}
		},
		check: all(starts("MARKER-pkg-reader-6e02"), neverStarts("MARKER-root-reader-1c3e")),
		facts: projectDirFacts("pkg", "pkg"),
	}, {
		// Finding 6: only a managed hook survives the switches below it.
		name: "managed-hook-survives-local-disableAllHooks",
		sc: func(t *testing.T) scenario {
			return scenario{Managed: managedHookSettings(""), Files: map[string]string{
				".claude/agents/writer.md": writerDef, ".claude/settings.local.json": `{"disableAllHooks": true}`},
				Main: []step{spawn("writer")}}
		},
		check: neverStarts(writerMarker),
		facts: hookSources("managed"),
	}, {
		name: "managed-hook-survives-settings-flag",
		sc: func(t *testing.T) scenario {
			return scenario{Managed: managedHookSettings(""), Args: []string{"--settings", `{"disableAllHooks": true}`},
				Files: map[string]string{".claude/agents/writer.md": writerDef}, Main: []step{spawn("writer")}}
		},
		check: neverStarts(writerMarker),
		facts: hookSources("managed"),
	}, {
		name: "host-local-disableAllHooks-drops-project-hook",
		sc: func(t *testing.T) scenario {
			return scenario{Files: map[string]string{".claude/agents/writer.md": writerDef, ".claude/settings.local.json": `{"disableAllHooks": true}`},
				Main: []step{spawn("writer")}}
		},
		check: all(starts(writerMarker), hookSources()),
	}, {
		name: "host-managed-allowManagedHooksOnly-drops-project-hook",
		sc: func(t *testing.T) scenario {
			return scenario{Managed: `{"allowManagedHooksOnly": true}`, Files: map[string]string{".claude/agents/writer.md": writerDef},
				Main: []step{spawn("writer")}}
		},
		check: all(starts(writerMarker), hookSources()),
	}, {
		name: "host-managed-disableAllHooks-drops-managed-hook",
		sc: func(t *testing.T) scenario {
			return scenario{Managed: managedHookSettings(`"disableAllHooks": true`), Files: map[string]string{".claude/agents/writer.md": writerDef},
				Main: []step{spawn("writer")}}
		},
		check: all(starts(writerMarker), hookSources()),
	}, {
		// Finding 7 (a trusted project, as after an interactive first run;
		// the servers of an untrusted project's agents are skipped).
		name: "mcp-servers-add-tools",
		sc: func(t *testing.T) scenario {
			return scenario{Trusted: true,
				Files: map[string]string{".claude/agents/mcpa.md": mcpDef("MARKER-mcp-2f6c", "{{ROOT}}/../mcp.log")},
				Main:  []step{spawn("mcpa")}}
		},
		check: neverStarts("MARKER-mcp-2f6c"),
		facts: func(t *testing.T, o *outcome) error {
			if !o.started("MARKER-mcp-2f6c") {
				return nil // refused: nothing to see
			}
			b, _ := os.ReadFile(filepath.Join(o.Root, "..", "mcp.log"))
			if !strings.Contains(string(b), "tools/list") {
				return fmt.Errorf("the frontmatter MCP server was not asked for tools: %q", b)
			}
			return holdsTools("MARKER-mcp-2f6c", "mcp__e2e__"+mcpToolName)(t, o)
		},
	}, {
		// Finding 8.
		name: "frontmatter-hooks-run",
		sc: func(t *testing.T) scenario {
			def := agentDef("name: hooked\ndescription: Has hooks\ntools: Read\nmodel: haiku\nhooks:\n  PreToolUse:\n    - matcher: \"*\"\n      hooks:\n"+
				"        - type: command\n          command: \"touch {{ROOT}}/../frontmatter-hook-ran\"", "MARKER-hooked-0b9e")
			return scenario{Trusted: true, Files: map[string]string{".claude/agents/hooked.md": def, "a.txt": "a\n"},
				Main: []step{spawn("hooked")},
				Sub:  map[string][]step{"MARKER-hooked-0b9e": {callTool("Read", map[string]any{"file_path": "{{ROOT}}/a.txt"})}}}
		},
		check: neverStarts("MARKER-hooked-0b9e"),
		facts: func(t *testing.T, o *outcome) error {
			if !o.started("MARKER-hooked-0b9e") {
				return nil
			}
			if _, err := os.Stat(filepath.Join(o.Root, "..", "frontmatter-hook-ran")); err != nil {
				return errors.New("the definition's own PreToolUse hook did not run")
			}
			return nil
		},
	}, {
		// Finding 9.
		name: "memory-adds-write-edit",
		sc: func(t *testing.T) scenario {
			return scenario{Files: map[string]string{".claude/agents/mem.md": agentDef("name: mem\ndescription: Remembers\ntools: Read\nmodel: haiku\nmemory: project", "MARKER-mem-d5a0")},
				Main: []step{spawn("mem")}}
		},
		check: neverStarts("MARKER-mem-d5a0"),
		facts: func(t *testing.T, o *outcome) error {
			if !o.started("MARKER-mem-d5a0") {
				return nil
			}
			return holdsTools("MARKER-mem-d5a0", "Read", "Write", "Edit")(t, o)
		},
	}, {
		// Finding 11.
		name: "frontmatter-ends-at-first-dashes",
		sc: func(t *testing.T) scenario {
			return scenario{Files: map[string]string{".claude/agents/dash.md": agentDef("name: dash\ndescription: reads---carefully\ntools: Read\nmodel: haiku", "MARKER-dash-3c81")},
				Main: []step{spawn("dash")}}
		},
		check: neverStarts("MARKER-dash-3c81"),
		facts: func(t *testing.T, o *outcome) error {
			if !o.started("MARKER-dash-3c81") {
				return nil
			}
			return holdsTools("MARKER-dash-3c81", "Bash", "Write", "Edit", "Agent")(t, o)
		},
	}, {
		// Finding 12.
		name: "agents-folder-symlink-followed",
		sc: func(t *testing.T) scenario {
			return scenario{Files: map[string]string{"~/../shared-agents/reader.md": readerDef},
				Symlinks: map[string]string{".claude/agents": "{{HOME}}/../shared-agents"},
				Main:     []step{spawn("reader")}}
		},
		check: starts(readerMarker),
	}, {
		name: "agents-subfolder-symlink-shadows",
		sc: func(t *testing.T) scenario {
			return scenario{Files: map[string]string{"~/../more/reader.md": writingReaderDef("MARKER-linked-reader-e03a"), "~/.claude/agents/reader.md": readerDef},
				Symlinks: map[string]string{".claude/agents/more": "{{HOME}}/../more"},
				Main:     []step{spawn("reader")}}
		},
		check: neverStarts("MARKER-linked-reader-e03a"),
	}, {
		name: "add-dir-agents-shadow-user",
		sc: func(t *testing.T) scenario {
			return scenario{Files: map[string]string{"~/../extra/.claude/agents/reader.md": writingReaderDef("MARKER-extra-reader-7b55"), "~/.claude/agents/reader.md": readerDef},
				Args: []string{"--add-dir", "{{HOME}}/../extra"},
				Main: []step{spawn("reader")}}
		},
		check: neverStarts("MARKER-extra-reader-7b55"),
	}, {
		// Another way in: with observer agents switched on, a definition's
		// observer: starts the agents it names beside it, with no tool call.
		name: "observer-frontmatter-starts-agent",
		sc: func(t *testing.T) scenario {
			return scenario{Env: []string{"CLAUDE_CODE_EXPERIMENTAL_OBSERVER_AGENTS=1"},
				Files: map[string]string{
					".claude/agents/reader.md": agentDef("name: reader\ndescription: Reads files\ntools: Read\nmodel: haiku\nobserver: writer", readerMarker),
					".claude/agents/writer.md": writerDef, "a.txt": "a\n",
				},
				Main: []step{spawn("reader")},
				// The observer is told of the reader's tool calls.
				Sub: map[string][]step{readerMarker: {callTool("Read", map[string]any{"file_path": "{{ROOT}}/a.txt"})}}}
		},
		check: neverStarts(writerMarker),
		facts: hookCalls("Agent", 1),
	}, {
		// An observer the policy allows starts beside its agent.
		name: "observer-allowed-starts",
		sc: func(t *testing.T) scenario {
			return scenario{Env: []string{"CLAUDE_CODE_EXPERIMENTAL_OBSERVER_AGENTS=1"},
				Files: map[string]string{
					".claude/agents/reader.md":  agentDef("name: reader\ndescription: Reads files\ntools: Read\nmodel: haiku\nobserver: watcher", readerMarker),
					".claude/agents/watcher.md": agentDef("name: watcher\ndescription: Watches\ntools: Read\nmodel: haiku", "MARKER-watcher-3f70"), "a.txt": "a\n",
				},
				Main: []step{spawn("reader")},
				Sub:  map[string][]step{readerMarker: {callTool("Read", map[string]any{"file_path": "{{ROOT}}/a.txt"})}}}
		},
		check: all(starts(readerMarker), starts("MARKER-watcher-3f70")),
		facts: hookCalls("Agent", 1),
	}, {
		// A /command on a fork skill whose agent the policy allows runs.
		name: "slash-command-fork-allowed-starts",
		sc: func(t *testing.T) scenario {
			return scenario{Prompt: "/rskill",
				Files: map[string]string{".claude/agents/reader.md": readerDef,
					".claude/skills/rskill/SKILL.md": "---\nname: rskill\ndescription: Runs the reader\ncontext: fork\nagent: reader\n---\nDo the skill task.\n"}}
		},
		check: starts(readerMarker),
	}}
}

// managedHookSettings is managed settings holding the README's hook, told
// apart from a project one by its --timeout 19s; extra adds keys.
func managedHookSettings(extra string) string {
	handler := `{"type": "command", "command": "spawngate hook claude-code --policy {{POLICY}} --timeout 19s", "timeout": 30}`
	s := `{"hooks": {"PreToolUse": [{"matcher": "` + readmeMatcher + `", "hooks": [` + handler + `]}], ` +
		`"UserPromptExpansion": [{"hooks": [` + handler + `]}]}`
	if extra != "" {
		s += ", " + extra
	}
	return s + "}"
}

// hookSources fails unless the hook calls came from exactly these
// settings layers, in order ("managed" or "project").
func hookSources(want ...string) func(*testing.T, *outcome) error {
	return func(t *testing.T, o *outcome) error {
		var got []string
		for _, h := range o.Hooks {
			src := "project"
			if slices.Contains(h.Args, "19s") {
				src = "managed"
			}
			got = append(got, src)
		}
		if !slices.Equal(got, want) {
			return fmt.Errorf("hook calls from %v, not %v", got, want)
		}
		return nil
	}
}

// projectDirFacts checks where the payload's cwd and the hook's
// CLAUDE_PROJECT_DIR point, relative to the repository.
func projectDirFacts(cwd, projectDir string) func(*testing.T, *outcome) error {
	return func(t *testing.T, o *outcome) error {
		hs := o.hooksFor("Agent")
		if len(hs) == 0 {
			return errors.New("no hook call")
		}
		h := hs[0]
		t.Logf("payload cwd %v, CLAUDE_PROJECT_DIR %q, transcript_path %v", h.Payload["cwd"], h.Env["CLAUDE_PROJECT_DIR"], h.Payload["transcript_path"])
		if want := filepath.Join(o.Root, cwd); h.Payload["cwd"] != want {
			return fmt.Errorf("payload cwd %v, not %s", h.Payload["cwd"], want)
		}
		if want := filepath.Join(o.Root, projectDir); h.Env["CLAUDE_PROJECT_DIR"] != want {
			return fmt.Errorf("CLAUDE_PROJECT_DIR %q, not %s", h.Env["CLAUDE_PROJECT_DIR"], want)
		}
		return nil
	}
}
