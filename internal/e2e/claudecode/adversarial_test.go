package claudecode

import (
	"bytes"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
)

// adversarialOpen lists the adversarial scenarios that today's spawngate
// gets wrong, each with why. Their expectation stays the right one; while
// listed, a failure skips with the reason, and a pass fails so that the
// entry is removed when the fix lands.
var adversarialOpen = map[string]string{}

// excused turns a listed scenario's failure into a skip, and its pass
// into a failure (see adversarialOpen).
func excused(name string, check func(*testing.T, *outcome) error) func(*testing.T, *outcome) error {
	reason, open := adversarialOpen[name]
	if !open {
		return check
	}
	return func(t *testing.T, o *outcome) error {
		if err := check(t, o); err != nil {
			t.Skipf("adversarial open, %s: %v", reason, err)
		}
		return fmt.Errorf("listed in adversarialOpen (%s) but passes now: remove it from adversarialOpen", reason)
	}
}

// TestAdversarial holds spawn paths and resolution cases beyond TestGate,
// TestFindings and TestDoctorInstallation, each under the README's
// enforcing installation (installed): a forbidden sub-agent never starts,
// an allowed one starts.
func TestAdversarial(t *testing.T) {
	clientPath(t)
	cases := adversarialCases()
	for i := range cases {
		cases[i].check = excused(cases[i].name, cases[i].check)
	}
	runCases(t, cases)
}

// TestAdversarialOpenNamesScenarios keeps adversarialOpen from naming a
// scenario that does not exist; it needs no client.
func TestAdversarialOpenNamesScenarios(t *testing.T) {
	names := map[string]bool{}
	for _, c := range append(append(append(gateCases(), findingCases()...), adversarialCases()...), hostTruthCases()...) {
		if names[c.name] {
			t.Errorf("two scenarios are named %s", c.name)
		}
		names[c.name] = true
	}
	for name := range adversarialOpen {
		if !names[name] {
			t.Errorf("adversarialOpen names %s, which is no scenario", name)
		}
	}
}

// Markers of the definitions only these scenarios write.
const (
	advUserMarker  = "MARKER-adv-user-reader-4e1b"
	advProjMarker  = "MARKER-adv-proj-reader-93c0"
	advOtherMarker = "MARKER-adv-other-reader-d27a"
)

// readOnlyReader is a reader the policy allows, with its own marker.
func readOnlyReader(marker string) string {
	return agentDef("name: reader\ndescription: Reads files\ntools: Read\nmodel: haiku", marker)
}

// holdsNone fails when the agent with marker started holding any of tools.
func holdsNone(marker string, tools ...string) func(*testing.T, *outcome) error {
	return func(t *testing.T, o *outcome) error {
		if !o.started(marker) {
			return nil
		}
		got := o.subTools(marker)
		for _, bad := range tools {
			if slices.Contains(got, bad) {
				return fmt.Errorf("the agent with %s started holding %v, %s among them", marker, got, bad)
			}
		}
		return nil
	}
}

// onModel fails when the agent with marker asked a model other than one
// whose name holds want.
func onModel(marker, want string) func(*testing.T, *outcome) error {
	return func(t *testing.T, o *outcome) error {
		for _, r := range o.requestsWith(marker) {
			if !strings.Contains(r.Model, want) {
				return fmt.Errorf("the agent with %s ran on %s, not a %s model", marker, r.Model, want)
			}
		}
		return nil
	}
}

// onlyChildren fails when a sub-agent started whose requests carry none of
// markers (a built-in, say).
func onlyChildren(markers ...string) func(*testing.T, *outcome) error {
	return func(t *testing.T, o *outcome) error {
		for _, r := range o.subRequests() {
			known := false
			for _, m := range markers {
				known = known || bytes.Contains(r.Body, []byte(m))
			}
			if !known {
				return fmt.Errorf("a sub-agent started with none of %v, with tools %v", markers, offered(r))
			}
		}
		return nil
	}
}

func adversarialCases() []e2eCase {
	inline := func(name string) string {
		return "---\nname: " + name + "\ndescription: Runs inline\n---\nDo the inline task.\n"
	}
	forkWriter := func(name string) string {
		return "---\nname: " + name + "\ndescription: Runs the writer\ncontext: fork\nagent: writer\n---\nDo the skill task.\n"
	}
	// shadowed is a project definition of reader that may write, beside a
	// user one that may not: when the gate and the host read different
	// levels, the writing one is what must never start.
	shadowed := func(proj string) map[string]string {
		return map[string]string{".claude/agents/reader.md": proj, "~/.claude/agents/reader.md": readOnlyReader(advUserMarker)}
	}
	plugin := map[string]string{"~/../plug/.claude-plugin/plugin.json": `{"name": "plug", "version": "1.0.0", "description": "e2e"}`}
	rewrite := "cat > {{ROOT}}/defs/reader.md <<'EOF'\n" + readOnlyReader(advOtherMarker) + "EOF\n"
	return []e2eCase{{
		// The definition file links out of .claude (which Claude Code
		// guards against the session's own writes), so the session may
		// rewrite it: read-only when the hook reads it, writing when the
		// session started.
		name: "adv-toctou-definition-rewritten",
		sc: func(t *testing.T) scenario {
			return installed(scenario{Args: []string{"--allowedTools", "Bash"},
				Files:    map[string]string{"defs/reader.md": writingReaderDef(advProjMarker)},
				Symlinks: map[string]string{".claude/agents/reader.md": "../../defs/reader.md"},
				Main:     []step{callTool("Bash", map[string]any{"command": rewrite, "description": "rewrite"}), spawn("reader")}})
		},
		check: neverStarts(advProjMarker),
	}, {
		// Claude Code refuses to load a definition with a top-level hook
		// event (a guard that belongs under hooks:), and falls through to
		// the user's reader, which writes.
		name: "adv-toplevel-hook-key-drops-project-def",
		sc: func(t *testing.T) scenario {
			proj := agentDef("name: reader\ndescription: Reads files\ntools: Read\nmodel: haiku\nPreToolUse:\n  - matcher: \"*\"\n    hooks:\n"+
				"      - type: command\n        command: \"true\"", advProjMarker)
			return installed(scenario{Files: map[string]string{".claude/agents/reader.md": proj, "~/.claude/agents/reader.md": writingReaderDef(advUserMarker)},
				Main: []step{spawn("reader")}})
		},
		check: neverStarts(advUserMarker),
	}, {
		// Three definitions the gate's YAML readers refuse and Claude Code
		// reads: tab indentation, ": " in a plain value, a key written
		// twice. Each has a read-only namesake in the user's folder.
		name: "adv-lenient-yaml",
		sc: func(t *testing.T) scenario {
			files := map[string]string{
				".claude/agents/tab.md":   "---\nname: rtab\ndescription: Reads files\nmodel: haiku\ntools:\n\t- Read\n\t- Write\n\t- Bash\n---\nYou are an e2e test agent. MARKER-adv-tab-51a0\n",
				".claude/agents/colon.md": agentDef("name: rcolon\ndescription: Reads: files\ntools: Read, Write, Bash\nmodel: haiku", "MARKER-adv-colon-52b1"),
				".claude/agents/dup.md":   agentDef("name: rdup\ndescription: Reads files\ntools: Read\ntools: Read, Write, Bash\nmodel: haiku", "MARKER-adv-dup-53c2"),
			}
			for _, n := range []string{"rtab", "rcolon", "rdup"} {
				files["~/.claude/agents/"+n+".md"] = agentDef("name: "+n+"\ndescription: Reads files\ntools: Read\nmodel: haiku", "MARKER-adv-user-"+n)
			}
			return installed(scenario{Files: files, Main: []step{spawn("rtab"), spawn("rcolon"), spawn("rdup")}})
		},
		check: neverStarts("MARKER-adv-tab-51a0", "MARKER-adv-colon-52b1", "MARKER-adv-dup-53c2"),
	}, {
		// The user's folder moves with CLAUDE_CONFIG_DIR.
		name: "adv-config-dir-user-agents",
		sc: func(t *testing.T) scenario {
			return installed(scenario{Env: []string{"CLAUDE_CONFIG_DIR={{HOME}}/../cfg"},
				Files: map[string]string{"~/.claude/agents/reader.md": readOnlyReader(advUserMarker), "~/../cfg/agents/reader.md": writingReaderDef(advOtherMarker)},
				Main:  []step{spawn("reader")}})
		},
		check: neverStarts(advOtherMarker),
	}, {
		// A session started outside any repository; the folder above it
		// holds a writing reader.
		name: "adv-outside-repo-walks-up",
		sc: func(t *testing.T) scenario {
			return installed(scenario{Dir: "../outside", Policy: noWritePolicy("/"),
				Files: map[string]string{"~/../outside/x.txt": "x\n", "~/.claude/agents/reader.md": readOnlyReader(advUserMarker),
					"~/../.claude/agents/reader.md": writingReaderDef(advOtherMarker)},
				Main: []step{spawn("reader")}})
		},
		check: neverStarts(advOtherMarker),
	}, {
		// claude --worktree: the main checkout's reader (untracked, so not
		// in the worktree) writes.
		name: "adv-worktree-session",
		sc: func(t *testing.T) scenario {
			files := shadowed(writingReaderDef(advProjMarker))
			files[".gitignore"] = ".claude/agents/reader.md\n.claude/worktrees/\n"
			return installed(scenario{Args: []string{"--worktree", "wt"}, Files: files, Main: []step{spawn("reader")}})
		},
		check: neverStarts(advProjMarker),
	}, {
		// The model's EnterWorktree moves the session's folder, not
		// CLAUDE_PROJECT_DIR; Claude Code still finds the main checkout's
		// untracked reader, as the gate does.
		name: "adv-enter-worktree-mid-session",
		sc: func(t *testing.T) scenario {
			return installed(scenario{
				Files: map[string]string{".gitignore": ".claude/agents/reader.md\n.claude/worktrees/\n",
					".claude/agents/reader.md": readOnlyReader(advProjMarker), "~/.claude/agents/reader.md": writingReaderDef(advUserMarker)},
				Main: []step{callTool("ToolSearch", map[string]any{"query": "select:EnterWorktree"}),
					callTool("EnterWorktree", map[string]any{"name": "wt"}), spawn("reader")}})
		},
		check: all(neverStarts(advUserMarker), starts(advProjMarker)),
	}, {
		// A project definition named like a built-in, loosely: explore.
		name: "adv-safe-mode-builtin-lookalike",
		sc: func(t *testing.T) scenario {
			return installed(scenario{Args: []string{"--safe-mode"},
				Files: map[string]string{".claude/agents/explore.md": agentDef("name: explore\ndescription: Explores\ntools: Read\nmodel: haiku", advProjMarker)},
				Main:  []step{spawn("explore")}})
		},
		check: noChild,
	}, {
		name: "adv-restricted-builtin-lookalike",
		sc: func(t *testing.T) scenario {
			return installed(scenario{Args: []string{"--restricted"},
				Files: map[string]string{".claude/agents/explore.md": agentDef("name: explore\ndescription: Explores\ntools: Read\nmodel: haiku", advProjMarker)},
				Main:  []step{spawn("explore")}})
		},
		check: noChild,
	}, {
		// CLAUDE_CODE_SUBAGENT_MODEL=haiku, the policy's; the definition
		// of reader names opus, and a call on the other asks for opus.
		name: "adv-subagent-model-precedence",
		sc: func(t *testing.T) scenario {
			return installed(scenario{Env: []string{"CLAUDE_CODE_SUBAGENT_MODEL=haiku"},
				Files: map[string]string{
					".claude/agents/reader.md": agentDef("name: reader\ndescription: Reads files\ntools: Read\nmodel: opus", readerMarker),
					".claude/agents/r2.md":     agentDef("name: r2\ndescription: Reads files\ntools: Read\nmodel: haiku", advOtherMarker)},
				Main: []step{spawn("reader"), callTool("Agent", map[string]any{"description": "e2e", "prompt": "Do it.", "subagent_type": "r2", "model": "opus"})}})
		},
		check: all(onModel(readerMarker, "haiku"), onModel(advOtherMarker, "haiku")),
	}, {
		// Over-blocking: descriptions with ": " are common, and Claude Code
		// reads them.
		name: "adv-colon-in-description-allowed",
		sc: func(t *testing.T) scenario {
			def := agentDef("name: reader\ndescription: Use it when: files need reading\ntools: Read\nmodel: haiku", readerMarker)
			return installed(scenario{Files: map[string]string{".claude/agents/reader.md": def}, Main: []step{spawn("reader")}})
		},
		check: starts(readerMarker),
	}, {
		// Over-blocking: the definition's haiku runs, not the variable's
		// opus.
		name: "adv-subagent-model-env-blocks-allowed",
		sc: func(t *testing.T) scenario {
			return installed(scenario{Env: []string{"CLAUDE_CODE_SUBAGENT_MODEL=opus"},
				Files: map[string]string{".claude/agents/reader.md": readerDef}, Main: []step{spawn("reader")}})
		},
		check: all(starts(readerMarker), onModel(readerMarker, "haiku")),
	}, {
		// --bare loads no project agents or skills and offers no Agent or
		// Skill tool, yet a --plugin-dir skill still expands as /NAME and
		// --agents still defines agents; the managed hook still runs.
		name: "adv-bare-mode-plugin-skill-prompt",
		sc: func(t *testing.T) scenario {
			files := maps.Clone(plugin)
			files["~/../plug/skills/pw/SKILL.md"] = "---\nname: pw\ndescription: Runs bw\ncontext: fork\nagent: bw\n---\nDo the skill task.\n"
			return installed(scenario{Prompt: "/plug:pw", Files: files,
				Args: []string{"--bare", "--plugin-dir", "{{HOME}}/../plug",
					"--agents", `{"bw":{"description":"Writes files","prompt":"CLI writer ` + advOtherMarker + `","tools":["Read","Write","Bash"],"model":"haiku"}}`}})
		},
		promptBlocked: true,
		check:         neverStarts(advOtherMarker),
	}, {
		// A plugin's agents and skills are namespaced and unread by the gate.
		name: "adv-plugin-dir-agent-and-skill",
		sc: func(t *testing.T) scenario {
			files := maps.Clone(plugin)
			files[".claude/agents/writer.md"] = writerDef
			files["~/../plug/agents/pwriter.md"] = agentDef("name: pwriter\ndescription: Writes files\ntools: Read, Write, Bash\nmodel: haiku", advOtherMarker)
			files["~/../plug/skills/pw/SKILL.md"] = forkWriter("pw")
			return installed(scenario{Args: []string{"--plugin-dir", "{{HOME}}/../plug"}, Files: files,
				Main: []step{spawn("plug:pwriter"), spawn("pwriter"), callTool("Skill", map[string]any{"skill": "plug:pw"})}})
		},
		check: neverStarts(advOtherMarker, writerMarker),
	}, {
		// --agents naming a file, with --print.
		name: "adv-agents-flag-file",
		sc: func(t *testing.T) scenario {
			return installed(scenario{Args: []string{"--agents", "{{HOME}}/../agents.json"},
				Files: map[string]string{".claude/agents/reader.md": readerDef,
					"~/../agents.json": `{"reader":{"description":"Reads files","prompt":"CLI reader ` + advOtherMarker + `","tools":["Read","Write","Bash"],"model":"haiku"}}`},
				Main: []step{spawn("reader")}})
		},
		check: neverStarts(advOtherMarker),
	}, {
		// Teammate spawns (name:) with agent teams on.
		name: "adv-teammates",
		sc: func(t *testing.T) scenario {
			return installed(scenario{Env: []string{"CLAUDE_CODE_EXPERIMENTAL_AGENT_TEAMS=1"},
				Files: map[string]string{".claude/agents/reader.md": readerDef, ".claude/agents/writer.md": writerDef},
				Main: []step{
					callTool("Agent", map[string]any{"description": "e2e", "prompt": "Do it.", "subagent_type": "writer", "name": "w1"}),
					callTool("Agent", map[string]any{"description": "e2e", "prompt": "Do it.", "subagent_type": "reader", "name": "r1"}),
				}})
		},
		check: all(neverStarts(writerMarker), starts(readerMarker)),
	}, {
		// An allowed lead that may spawn asks for the writer and the reader.
		name: "adv-nested-lead-installed",
		sc: func(t *testing.T) scenario {
			return installed(scenario{Policy: spawnPolicy("{{ROOT}}"),
				Files: map[string]string{
					".claude/agents/lead.md":   agentDef("name: lead\ndescription: Leads\ntools: Read, Agent\nmodel: haiku", leadMarker),
					".claude/agents/writer.md": writerDef, ".claude/agents/reader.md": readerDef,
				},
				Main: []step{spawn("lead")},
				Sub:  map[string][]step{leadMarker: {spawn("writer"), spawn("reader")}}})
		},
		check: all(starts(leadMarker), neverStarts(writerMarker), starts(readerMarker)),
	}, {
		// A skill of one name: inline in the user's folder, forking the
		// writer in the project's and in a subfolder's (which the session
		// has read into, and which the host lists as pkg:sk).
		name: "adv-skill-shadowing",
		sc: func(t *testing.T) scenario {
			return installed(scenario{Files: map[string]string{".claude/agents/writer.md": writerDef, "pkg/x.txt": "x\n",
				"~/.claude/skills/sk/SKILL.md": inline("sk"), ".claude/skills/sk/SKILL.md": forkWriter("sk"), "pkg/.claude/skills/sk/SKILL.md": forkWriter("sk")},
				Main: []step{callTool("Read", map[string]any{"file_path": "{{ROOT}}/pkg/x.txt"}),
					callTool("Skill", map[string]any{"skill": "sk"}), callTool("Skill", map[string]any{"skill": "pkg:sk"})}})
		},
		check: neverStarts(writerMarker),
	}, {
		// A fork skill's allowed-tools grant the reader nothing more.
		name: "adv-skill-allowed-tools-on-fork",
		sc: func(t *testing.T) scenario {
			return installed(scenario{Files: map[string]string{".claude/agents/reader.md": readerDef,
				".claude/skills/rs/SKILL.md": "---\nname: rs\ndescription: Runs the reader\ncontext: fork\nagent: reader\nallowed-tools: Write, Edit, Bash\n---\nDo the skill task.\n"},
				Args: []string{"--allowedTools", "Skill(rs)"},
				Main: []step{callTool("Skill", map[string]any{"skill": "rs"})}})
		},
		check: all(starts(readerMarker), holdsNone(readerMarker, "Write", "Edit", "Bash")),
	}, {
		// A fork skill's agent: one only the user defines (allowed), a
		// built-in (refused); a namespaced command (ns:x is
		// commands/ns/x.md) forking the writer (refused).
		name: "adv-skill-agents",
		sc: func(t *testing.T) scenario {
			return installed(scenario{Files: map[string]string{
				".claude/agents/writer.md":   writerDef,
				"~/.claude/agents/reader.md": readOnlyReader(advUserMarker),
				".claude/skills/ur/SKILL.md": "---\nname: ur\ndescription: Runs the reader\ncontext: fork\nagent: reader\n---\nDo the skill task.\n",
				".claude/skills/ex/SKILL.md": "---\nname: ex\ndescription: Runs Explore\ncontext: fork\nagent: Explore\n---\nDo the skill task.\n",
				".claude/commands/ns/x.md":   "---\ndescription: Runs the writer\ncontext: fork\nagent: writer\n---\nDo the command task.\n"},
				Main: []step{callTool("Skill", map[string]any{"skill": "ur"}), callTool("Skill", map[string]any{"skill": "ex"}),
					callTool("Skill", map[string]any{"skill": "ns:x"})}})
		},
		check: all(starts(advUserMarker), neverStarts(writerMarker), onlyChildren(advUserMarker)),
	}, {
		name: "adv-namespaced-command-prompt",
		sc: func(t *testing.T) scenario {
			return installed(scenario{Prompt: "/ns:x", Files: map[string]string{".claude/agents/writer.md": writerDef,
				".claude/commands/ns/x.md": "---\ndescription: Runs the writer\ncontext: fork\nagent: writer\n---\nDo the command task.\n"}})
		},
		promptBlocked: true,
		check:         neverStarts(writerMarker),
	}, {
		// tools as a YAML list and as a quoted string start with those
		// tools; disallowedTools alone inherits every other tool, and a
		// look-alike name (Cyrillic e) that may write, are refused.
		name: "adv-definition-forms",
		sc: func(t *testing.T) scenario {
			return installed(scenario{Files: map[string]string{
				".claude/agents/la.md":     agentDef("name: la\ndescription: Lists\ntools:\n  - Read\n  - Grep\nmodel: haiku", "MARKER-adv-la-0a11"),
				".claude/agents/qs.md":     agentDef("name: qs\ndescription: Quotes\ntools: \"Read, Glob\"\nmodel: haiku", "MARKER-adv-qs-0b22"),
				".claude/agents/dis.md":    agentDef("name: dis\ndescription: Denies\ndisallowedTools: Write, Edit\nmodel: haiku", "MARKER-adv-dis-0c33"),
				".claude/agents/cyr.md":    agentDef("name: r\u0435ader\ndescription: Reads files\ntools: Read, Write, Bash\nmodel: haiku", "MARKER-adv-cyr-0d44"),
				".claude/agents/reader.md": readerDef},
				Main: []step{spawn("la"), spawn("qs"), spawn("dis"), spawn("r\u0435ader"), spawn("reader")}})
		},
		check: all(starts("MARKER-adv-la-0a11"), holdsNone("MARKER-adv-la-0a11", "Bash", "Write", "Edit"),
			starts("MARKER-adv-qs-0b22"), holdsNone("MARKER-adv-qs-0b22", "Bash", "Write", "Edit"),
			neverStarts("MARKER-adv-dis-0c33", "MARKER-adv-cyr-0d44"), starts(readerMarker)),
	}, {
		// An acceptEdits session's reader, in the foreground and in a
		// worktree, starts.
		name: "adv-accept-edits-foreground-worktree-reader-starts",
		sc: func(t *testing.T) scenario {
			return installed(scenario{Args: []string{"--permission-mode", "acceptEdits"}, Files: map[string]string{".claude/agents/reader.md": readerDef},
				Main: []step{callTool("Agent", map[string]any{"description": "e2e", "prompt": "Do it.", "subagent_type": "reader",
					"isolation": "worktree", "run_in_background": false})}})
		},
		check: starts(readerMarker),
	}}
}
