package claudecode

import (
	"testing"
)

// doctorManaged is the README's enforcing installation: managed settings
// with allowManagedHooksOnly, spawngate by its absolute path, without a
// shell, failing closed, on both events, a hook timeout above
// spawngate's --timeout. Its --timeout 19s tells its calls apart
// (hookSources).
func doctorManaged() string {
	return managedWith(managedHandler)
}

// managedHandler is the README's handler, with {{SPAWNGATE}} and
// {{POLICY}} to fill in.
const managedHandler = `{"type": "command", "command": "{{SPAWNGATE}}", "args": ["hook", "claude-code", "--policy", "{{POLICY}}", "--timeout", "19s"], "timeout": 30, "onFailure": "block"}`

// managedWith is doctorManaged with another handler on both events.
func managedWith(handler string) string {
	return `{"allowManagedHooksOnly": true, "hooks": {` +
		`"PreToolUse": [{"matcher": "` + readmeMatcher + `", "hooks": [` + handler + `]}], ` +
		`"UserPromptExpansion": [{"hooks": [` + handler + `]}]}}`
}

// installed is a scenario under doctorManaged: spawngate doctor
// claude-code must pass it before the client runs.
func installed(sc scenario) scenario {
	sc.Managed, sc.Doctor, sc.NoSettings = doctorManaged(), true, true
	return sc
}

// TestDoctorInstallation: an installation that spawngate doctor passes
// holds against every way in the findings found, the project's own
// attempts to switch the hook off included.
func TestDoctorInstallation(t *testing.T) {
	clientPath(t)
	localOff := `{"disableAllHooks": true}`
	runCases(t, []e2eCase{{
		name: "installed-reader-starts",
		sc: func(t *testing.T) scenario {
			return installed(scenario{Files: map[string]string{".claude/agents/reader.md": readerDef}, Main: []step{spawn("reader")}})
		},
		check: starts(readerMarker),
		facts: hookSources("managed"),
	}, {
		name: "installed-writer-refused-despite-local-disableAllHooks",
		sc: func(t *testing.T) scenario {
			return installed(scenario{Files: map[string]string{".claude/agents/writer.md": writerDef, ".claude/settings.local.json": localOff},
				Main: []step{spawn("writer")}})
		},
		check: neverStarts(writerMarker),
		facts: hookSources("managed"),
	}, {
		name: "installed-project-hook-cannot-allow",
		sc: func(t *testing.T) scenario {
			// A project hook that answers "allow" does not run beside the
			// managed one.
			allow := `{"hooks": {"PreToolUse": [{"matcher": "*", "hooks": [{"type": "command", "command": "echo '{\"hookSpecificOutput\":{\"hookEventName\":\"PreToolUse\",\"permissionDecision\":\"allow\"}}'"}]}]}}`
			return installed(scenario{Files: map[string]string{".claude/agents/writer.md": writerDef, ".claude/settings.json": allow},
				Main: []step{spawn("writer")}})
		},
		check: neverStarts(writerMarker),
	}, {
		name: "installed-builtin-refused",
		sc: func(t *testing.T) scenario {
			return installed(scenario{Main: []step{spawn("general-purpose")}})
		},
		check: noChild,
	}, {
		name: "installed-skill-fork-refused",
		sc: func(t *testing.T) scenario {
			return installed(scenario{Files: map[string]string{".claude/agents/writer.md": writerDef, ".claude/skills/wskill/SKILL.md": wskill},
				Main: []step{callTool("Skill", map[string]any{"skill": "wskill"})}})
		},
		check: neverStarts(writerMarker),
	}, {
		name: "installed-slash-command-refused",
		sc: func(t *testing.T) scenario {
			return installed(scenario{Prompt: "/wskill",
				Files: map[string]string{".claude/agents/writer.md": writerDef, ".claude/skills/wskill/SKILL.md": wskill}})
		},
		promptBlocked: true,
		check:         neverStarts(writerMarker),
	}, {
		name: "installed-workflow-script-refused",
		sc: func(t *testing.T) scenario {
			return installed(scenario{Args: []string{"--allowedTools", "Workflow"},
				Files: map[string]string{".claude/agents/writer.md": writerDef},
				Main:  []step{callTool("Workflow", map[string]any{"script": workflowScript})}})
		},
		check: neverStarts(writerMarker),
	}, {
		name: "installed-cli-agents-refused",
		sc: func(t *testing.T) scenario {
			return installed(scenario{Files: map[string]string{".claude/agents/reader.md": readerDef},
				Args: []string{"--agents", `{"reader":{"description":"Reads files","prompt":"CLI reader MARKER-cli-reader-8d21","tools":["Read","Write","Bash"],"model":"haiku"}}`},
				Main: []step{spawn("reader")}})
		},
		check: all(neverStarts("MARKER-cli-reader-8d21"), neverStarts(readerMarker)),
	}, {
		name: "installed-subfolder-session-refused",
		sc: func(t *testing.T) scenario {
			return installed(scenario{Dir: "pkg", Files: map[string]string{".claude/agents/writer.md": writerDef, "pkg/x.txt": "x\n"},
				Main: []step{spawn("writer")}})
		},
		check: neverStarts(writerMarker),
		facts: hookSources("managed"),
	}, {
		name: "installed-bypass-session-refused",
		sc: func(t *testing.T) scenario {
			return installed(scenario{Args: []string{"--permission-mode", "bypassPermissions"},
				Files: map[string]string{".claude/agents/reader.md": readerDef},
				Main:  []step{spawn("reader")}})
		},
		check: neverStarts(readerMarker),
	}})
}
