package claudecode

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spawngate/spawngate/internal/document"
	"github.com/spawngate/spawngate/internal/host"
	"github.com/spawngate/spawngate/internal/host/hosttest"
)

// launchWorld is a session's folders: a project with its agents, skills
// and commands, a user's home and a machine root, each written by the
// test; the session started in the project.
type launchWorld struct {
	project, home, root string
}

func newLaunchWorld(t *testing.T, files map[string]string) launchWorld {
	t.Helper()
	base := hosttest.OutsideRepo(t)
	w := launchWorld{project: filepath.Join(base, "p"), home: filepath.Join(base, "h"), root: filepath.Join(base, "r")}
	tree := map[string]string{
		"p/.claude/agents/writer.md": claudeAgent("writer", "Read, Write"),
		"p/.claude/agents/reader.md": claudeAgent("reader", "Read"),
		"h/":                         "", "r/": "",
	}
	for k, v := range files {
		tree[k] = v
	}
	hosttest.WriteTree(t, base, tree)
	return w
}

// env is the hook's environment in the session; extra adds variables.
func (w launchWorld) env(extra ...string) host.Env {
	vars := map[string]string{"CLAUDE_PROJECT_DIR": w.project}
	for i := 0; i+1 < len(extra); i += 2 {
		vars[extra[i]] = extra[i+1]
	}
	return host.Env{
		AgentsDirs: []string{filepath.Join(w.project, ".claude", "agents")},
		Home:       w.home, Root: w.root, Limits: document.DefaultLimits, Budget: "100",
		Getenv: func(k string) string { return vars[k] },
	}
}

func skillPayload(w launchWorld, skill, args string) map[string]any {
	input := map[string]any{"skill": skill}
	if args != "" {
		input["args"] = args
	}
	return map[string]any{"session_id": "s1", "cwd": w.project, "tool_name": "Skill", "tool_use_id": "toolu_1", "tool_input": input}
}

func fork(agentLine string, extra string) string {
	s := "---\ndescription: d\ncontext: fork\n"
	if agentLine != "" {
		s += "agent: " + agentLine + "\n"
	}
	return s + extra + "---\nDo the task.\n"
}

// children sums up a spawn: each child's role, and its problem when it
// has one.
func children(t *testing.T, sp *host.Spawn) string {
	t.Helper()
	if sp == nil {
		return "none"
	}
	var parts []string
	for _, c := range sp.Children {
		facts, _ := c.Child["agent"].(map[string]any)
		s, _ := c.Child["role"].(string)
		if p, ok := facts["problem"].(string); ok {
			s += " [" + p + "]"
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, "; ")
}

// TestSkillSpawn: a Skill call is judged by the skill Claude Code would
// run for the name (the first found, in its order) and, when that skill
// forks, by the agent it forks.
func TestSkillSpawn(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name  string
		files map[string]string
		skill string
		want  string
	}{
		{"a fork skill runs its agent", map[string]string{"p/.claude/skills/fix/SKILL.md": fork("writer", "")}, "fix", "writer"},
		{"without agent: general-purpose", map[string]string{"p/.claude/skills/fix/SKILL.md": fork("", "")}, "fix", "general-purpose [agent type \"general-purpose\" is built in"},
		{"an agent: that is not defined: general-purpose", map[string]string{"p/.claude/skills/fix/SKILL.md": fork("ghost", "")}, "fix", "general-purpose ["},
		{"an inline skill starts no sub-agent", map[string]string{"p/.claude/skills/fix/SKILL.md": "---\ndescription: d\n---\nInline.\n"}, "fix", "none"},
		{"no frontmatter: inline", map[string]string{"p/.claude/skills/fix/SKILL.md": "Just text.\n"}, "fix", "none"},
		{"the user's skill comes before the project's", map[string]string{
			"p/.claude/skills/fix/SKILL.md": fork("writer", ""),
			"h/.claude/skills/fix/SKILL.md": fork("reader", ""),
		}, "fix", "reader"},
		{"the managed skill comes first", map[string]string{
			"h/.claude/skills/fix/SKILL.md":                 "---\ndescription: d\n---\nInline.\n",
			"r/etc/claude-code/.claude/skills/fix/SKILL.md": fork("writer", ""),
		}, "fix", "writer"},
		{"a skill comes before a command of the same name", map[string]string{
			"p/.claude/skills/fix/SKILL.md": fork("reader", ""),
			"h/.claude/commands/fix.md":     fork("writer", ""),
		}, "fix", "reader"},
		{"disable-model-invocation: the Skill tool runs the next one", map[string]string{
			"h/.claude/skills/fix/SKILL.md": fork("reader", "disable-model-invocation: true\n"),
			"p/.claude/skills/fix/SKILL.md": fork("writer", ""),
		}, "fix", "writer"},
		{"a command in a subfolder", map[string]string{"p/.claude/commands/ops/fix.md": fork("writer", "")}, "ops:fix", "writer"},
		{"a skill is one level deep", map[string]string{"p/.claude/skills/ops/fix/SKILL.md": fork("writer", "")}, "ops:fix", "skill:ops:fix [skill \"ops:fix\" is not defined"},
		{"a leading slash is the same skill", map[string]string{"p/.claude/skills/fix/SKILL.md": fork("writer", "")}, "/fix", "writer"},
		{"an unknown skill cannot be known not to fork", nil, "nowhere", "skill:nowhere [skill \"nowhere\" is not defined"},
		{"a bundled skill that forks", nil, "review", "general-purpose [agent type \"general-purpose\" is built in"},
		{"frontmatter the gate cannot read that says fork", map[string]string{"p/.claude/skills/fix/SKILL.md": "---\ndescription: [a\ncontext: fork\n---\nx\n"}, "fix", "skill:fix [skill \"fix\" ("},
		{"frontmatter the gate cannot read, inline", map[string]string{"p/.claude/skills/fix/SKILL.md": "---\ndescription: [a\n---\nx\n"}, "fix", "none"},
		{"an unreadable skill file", map[string]string{"p/.claude/skills/fix/SKILL.md/": ""}, "fix", "skill:fix [skill \"fix\" is not defined"},
		{"a call that names no skill", nil, "", "skill [the Skill call names no skill]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newLaunchWorld(t, tc.files)
			sp, err := Adapter{}.Spawn(ctx, skillPayload(w, tc.skill, ""), w.env())
			if err != nil {
				t.Fatal(err)
			}
			if got := children(t, sp); !strings.HasPrefix(got, tc.want) || (tc.want == "none") != (got == "none") {
				t.Errorf("children %s\nwant     %s...", got, tc.want)
			}
		})
	}

	// The forked child's brief is the skill's body and the call's args, on
	// the skill's model, which overrides the agent's.
	w := newLaunchWorld(t, map[string]string{"p/.claude/skills/fix/SKILL.md": fork("writer", "model: opus\n")})
	sp, err := Adapter{}.Spawn(ctx, skillPayload(w, "fix", "the bug in x.go"), w.env())
	if err != nil || sp == nil || len(sp.Children) != 1 {
		t.Fatalf("%v %v", sp, err)
	}
	c := sp.Children[0].Child
	facts := c["agent"].(map[string]any)
	if c["brief"] != "Do the task.\n\nthe bug in x.go" || c["model"] != "opus" || facts["skill"] != "fix" || facts["launch"] != "skill" || sp.Event != "PreToolUse" {
		t.Errorf("child %v, event %q", c, sp.Event)
	}
}

func expansionPayload(w launchWorld, kind, name string) map[string]any {
	return map[string]any{"session_id": "s1", "cwd": w.project, "hook_event_name": Expansion,
		"expansion_type": kind, "command_name": name, "command_args": "now", "prompt": "/" + name + " now"}
}

// TestExpansionSpawn: a /command in a prompt starts a fork skill's agent
// with no tool call; the UserPromptExpansion hook judges it.
func TestExpansionSpawn(t *testing.T) {
	ctx := context.Background()
	w := newLaunchWorld(t, map[string]string{
		"p/.claude/skills/fix/SKILL.md":    fork("writer", ""),
		"p/.claude/skills/tidy/SKILL.md":   "---\ndescription: d\n---\nInline.\n",
		"p/.claude/skills/manual/SKILL.md": fork("writer", "disable-model-invocation: true\n"),
		"h/.claude/skills/hidden/SKILL.md": fork("writer", "user-invocable: false\n"),
		"p/.claude/skills/hidden/SKILL.md": fork("reader", ""),
	})
	for _, tc := range []struct {
		kind, name, want string
	}{
		{"slash_command", "fix", "writer"},
		{"slash_command", "/fix", "writer"},
		{"slash_command", "tidy", "none"},
		// The user may run what the model may not, and not what is hidden
		// from the user.
		{"slash_command", "manual", "writer"},
		{"slash_command", "hidden", "reader"},
		{"slash_command", "review", "general-purpose"},
		// Claude Code's own commands run no sub-agent of their own.
		{"slash_command", "init", "none"},
		// A plugin's command the gate cannot read is refused.
		{"slash_command", "plug:fix", "skill:plug:fix ["},
		{"mcp_prompt", "fix", "none"},
	} {
		sp, err := Adapter{}.Spawn(ctx, expansionPayload(w, tc.kind, tc.name), w.env())
		if err != nil {
			t.Fatalf("%s %s: %v", tc.kind, tc.name, err)
		}
		if got := children(t, sp); !strings.HasPrefix(got, tc.want) || (tc.want == "none") != (got == "none") {
			t.Errorf("%s %s: children %s, want %s", tc.kind, tc.name, got, tc.want)
		}
		if sp != nil && (sp.Event != Expansion || sp.Session != "s1") {
			t.Errorf("%s: event %q session %q", tc.name, sp.Event, sp.Session)
		}
	}
	for _, tc := range []struct {
		name    string
		payload map[string]any
		want    string
	}{
		{"an expansion the gate does not know", map[string]any{"hook_event_name": Expansion, "cwd": w.project, "expansion_type": "macro", "command_name": "fix"}, `/expansion_type: expansion_type "macro" is not one the gate knows`},
		{"no expansion type", map[string]any{"hook_event_name": Expansion, "cwd": w.project, "command_name": "fix"}, `/expansion_type: expansion_type "" is not one the gate knows`},
		{"a command name that is not a string", map[string]any{"hook_event_name": Expansion, "cwd": w.project, "expansion_type": "slash_command", "command_name": 7}, "/command_name"},
	} {
		_, err := Adapter{}.Spawn(ctx, tc.payload, w.env())
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
}

// TestObservers: with observer agents on, a definition's observer: starts
// those agents beside the child, each judged as a child of the spawn.
func TestObservers(t *testing.T) {
	ctx := context.Background()
	w := newLaunchWorld(t, map[string]string{
		"p/.claude/agents/watched.md": "---\nname: watched\ndescription: d\ntools: Read\nobserver: writer, ghost,reader , a, b\n---\n",
		"p/.claude/agents/a.md":       "---\nname: a\ndescription: d\ntools: Read\nobserver: b\n---\n",
		"p/.claude/agents/b.md":       "---\nname: b\ndescription: d\ntools: Read\nobserver: a\n---\n",
	})
	payload := agentPayload(w.project, map[string]any{"subagent_type": "watched", "prompt": "p"}, nil)
	sp, err := Adapter{}.Spawn(ctx, payload, w.env())
	if err != nil {
		t.Fatal(err)
	}
	if got := children(t, sp); got != "watched" {
		t.Errorf("observers off: %s", got)
	}
	for _, on := range []string{"1", "true", "yes"} {
		sp, err = Adapter{}.Spawn(ctx, payload, w.env("CLAUDE_CODE_EXPERIMENTAL_OBSERVER_AGENTS", on))
		if err != nil {
			t.Fatal(err)
		}
		// The first four names; a's observer b, and b's a, each once.
		want := `watched; writer; ghost [agent type "ghost" is not defined in any agents folder (looked in ` + filepath.Join(w.project, ".claude", "agents") + `)]; reader; a; b`
		if got := children(t, sp); got != want {
			t.Errorf("observers %s: %s\nwant %s", on, got, want)
		}
		o := sp.Children[1].Child
		facts := o["agent"].(map[string]any)
		if facts["launch"] != "observer" || facts["observes"] != "watched" || o["id"] != "toolu_1/observer/1" || o["brief"] != nil {
			t.Errorf("observer child %v", o)
		}
	}
	if got := children(t, mustSpawn(t, payload, w.env("CLAUDE_CODE_EXPERIMENTAL_OBSERVER_AGENTS", "0"))); got != "watched" {
		t.Errorf("observers 0: %s", got)
	}
}

func mustSpawn(t *testing.T, payload map[string]any, env host.Env) *host.Spawn {
	t.Helper()
	sp, err := Adapter{}.Spawn(context.Background(), payload, env)
	if err != nil {
		t.Fatal(err)
	}
	return sp
}

// TestWorkflowSpawn: a workflow is judged by its name; a script written
// into the call has none.
func TestWorkflowSpawn(t *testing.T) {
	w := newLaunchWorld(t, map[string]string{
		"p/.claude/workflows/nightly.js": "export const meta = { name: 'nightly' }\n",
		// The name is the script's meta.name, not its file's.
		"p/.claude/workflows/a.js":   "export const meta = {\n  description: 'x',\n  name: \"weekly-report\",\n}\n",
		"p/.claude/workflows/old.js": "export const meta = { name: 'other' }\n",
	})
	for _, tc := range []struct {
		name  string
		input map[string]any
		want  string
	}{
		{"a named workflow", map[string]any{"name": "nightly"}, "workflow:nightly"},
		{"named by its meta", map[string]any{"name": "weekly-report"}, "workflow:weekly-report"},
		{"a file name is not a workflow's name", map[string]any{"name": "old"}, `workflow:old [workflow "old" is not found`},
		{"a built-in workflow", map[string]any{"name": "deep-research"}, "workflow:deep-research"},
		{"a name with no file", map[string]any{"name": "weekly"}, `workflow:weekly [workflow "weekly" is not found`},
		{"a script", map[string]any{"script": "await agent('x')"}, "workflow [the workflow script is written into the call"},
		{"a name and a script", map[string]any{"name": "nightly", "script": "await agent('x')"}, "workflow [the workflow script is written into the call"},
		{"a script path", map[string]any{"scriptPath": "/tmp/x.js"}, "workflow [the workflow script is written into the call"},
	} {
		p := map[string]any{"session_id": "s1", "cwd": w.project, "tool_name": "Workflow", "tool_use_id": "toolu_1", "tool_input": tc.input}
		sp := mustSpawn(t, p, w.env())
		if got := children(t, sp); !strings.HasPrefix(got, tc.want) {
			t.Errorf("%s: %s, want %s", tc.name, got, tc.want)
		}
		c := sp.Children[0].Child
		if tools, _ := c["tools"].([]any); len(tools) != 1 || tools[0] != "Workflow" {
			t.Errorf("%s: tools %v", tc.name, c["tools"])
		}
	}
}

// TestDeny: Claude Code reads PreToolUse's deny on PreToolUse only; on
// every other event, and where the event is not known, the top-level
// decision block.
func TestDeny(t *testing.T) {
	for event, want := range map[string]string{
		"PreToolUse": `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"no <way>"}}` + "\n",
		Expansion:    `{"decision":"block","reason":"no <way>"}` + "\n",
		"":           `{"decision":"block","reason":"no <way>"}` + "\n",
	} {
		if got := string(Adapter{}.Deny(event, "no <way>")); got != want {
			t.Errorf("Deny(%q) = %s, want %s", event, got, want)
		}
	}
}
