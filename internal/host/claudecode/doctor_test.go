package claudecode

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/spawngate/spawngate/internal/host/doctor"
	"github.com/spawngate/spawngate/internal/host/hosttest"
)

// The folders of an installation under test, relative to its base:
// managed settings under root, user settings under home, project
// settings under proj.
const (
	managedJSON = "root/etc/claude-code/managed-settings.json"
	dropIn      = "root/etc/claude-code/managed-settings.d/"
	userJSON    = "home/.claude/settings.json"
	projectJSON = "proj/.claude/settings.json"
	localJSON   = "proj/.claude/settings.local.json"
)

// goodCommand is the README's command with absolute paths: {{BIN}} is an
// executable outside the project, {{POLICY}} a policy file beside it.
const goodCommand = `{{BIN}} hook claude-code --policy {{POLICY}} --timeout 20s`

// withHook is a settings file holding one PreToolUse group; top adds
// top-level settings (`"allowManagedHooksOnly": true, `).
func withHook(top, matcher, handler string) string {
	return `{` + top + `
  "hooks": {
    "PreToolUse": [
      {
        "matcher": ` + fmt.Sprintf("%q", matcher) + `,
        "hooks": [
          ` + handler + `
        ]
      }
    ]
  }
}
`
}

// command is a command handler that fails closed ("onFailure": "block"):
// given without a shell (command and args apart) when cmd is plain
// words, as the README gives it; through a shell, as written, when cmd
// uses the shell (doctor then also reports the shell).
func command(cmd string, timeout string) string {
	h := `{"type": "command", "command": ` + fmt.Sprintf("%q", cmd)
	if plainWords.MatchString(cmd) {
		words := strings.Fields(cmd)
		args, _ := json.Marshal(words[1:])
		h = `{"type": "command", "command": ` + fmt.Sprintf("%q", words[0]) + `, "args": ` + string(args)
	}
	if timeout != "" {
		h += `, "timeout": ` + timeout
	}
	return h + `, "onFailure": "block"}`
}

// handlerWith is the README's handler with more keys.
func handlerWith(keys string) string {
	h := command(goodCommand, "30")
	return strings.TrimSuffix(h, "}") + ", " + keys + "}"
}

// shellCommand is a command handler that runs through a shell.
func shellCommand(cmd string, timeout string) string {
	h := `{"type": "command", "command": ` + fmt.Sprintf("%q", cmd)
	if timeout != "" {
		h += `, "timeout": ` + timeout
	}
	return h + `, "onFailure": "block"}`
}

// plainWords is a command with nothing a shell would read otherwise.
var plainWords = regexp.MustCompile(`^[A-Za-z0-9_./{}:=, -]+$`)

const only = `"allowManagedHooksOnly": true,`

// goodManaged is a managed installation that holds.
var goodManaged = withHook(only, "Agent|Task|Skill|Workflow", command(goodCommand, "30"))

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func diagnose(t *testing.T, base, project string) *doctor.Diagnosis {
	t.Helper()
	if project == "" {
		project = "proj"
	}
	o := hosttest.DoctorOptions(base, Name)
	o.Project = filepath.Join(base, project)
	d, err := Adapter{}.Doctor(context.Background(), o)
	if err != nil {
		t.Fatalf("Doctor: %v", err)
	}
	// Most cases are about the PreToolUse hook: where the installation
	// names no UserPromptExpansion hook at all, its absence (one finding,
	// held by TestDoctorExpansion) is left out.
	mentions := false
	filepath.WalkDir(base, func(path string, e os.DirEntry, err error) error {
		if err == nil && e.Type().IsRegular() {
			if b, err := os.ReadFile(path); err == nil && strings.Contains(string(b), Expansion) {
				mentions = true
			}
		}
		return nil
	})
	if !mentions {
		d.Findings = slices.DeleteFunc(d.Findings, func(f doctor.Finding) bool {
			return f.ID == "hook.absent" && f.Pointer == "/hooks/"+Expansion
		})
	}
	return d
}

// TestDoctorExpansion: a /command with context: fork starts its agent
// with no tool call, so an installation holds only with spawngate on
// UserPromptExpansion too, selecting every command.
func TestDoctorExpansion(t *testing.T) {
	expansion := func(matcher string) string {
		m := ""
		if matcher != "" {
			m = `"matcher": ` + fmt.Sprintf("%q", matcher) + `, `
		}
		return `{"allowManagedHooksOnly": true, "hooks": {"PreToolUse": [{"matcher": "Agent|Task|Skill|Workflow", "hooks": [` + command(goodCommand, "30") + `]}],
  "UserPromptExpansion": [{` + m + `"hooks": [` + command(goodCommand, "30") + `]}]}}`
	}
	for _, tc := range []struct {
		name  string
		files map[string]string
		want  []string
	}{
		{"both hooks, managed", map[string]string{managedJSON: expansion("")}, nil},
		{"a matcher of *", map[string]string{managedJSON: expansion("*")}, nil},
		{"a matcher that selects some commands", map[string]string{managedJSON: expansion("fix")}, []string{"hook.matcher " + managedJSON + " /hooks/UserPromptExpansion/0/matcher"}},
		{"no expansion hook", map[string]string{managedJSON: goodManaged, userJSON: `{"hooks": {"UserPromptExpansion": []}}`}, []string{"hook.absent " + managedJSON + " /hooks/UserPromptExpansion"}},
		{"the expansion hook in project settings only", map[string]string{managedJSON: goodManaged,
			projectJSON: `{"hooks": {"UserPromptExpansion": [{"hooks": [` + command(goodCommand, "30") + `]}]}}`},
			// allowManagedHooksOnly drops it.
			[]string{"hook.absent " + managedJSON + " /hooks/UserPromptExpansion"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			base := hosttest.Install(t, tc.files)
			d := diagnose(t, base, "")
			var got []string
			for _, f := range d.Findings {
				got = append(got, brief(base, f))
			}
			slices.Sort(got)
			if !slices.Equal(got, tc.want) {
				t.Fatalf("findings:\n got %q\nwant %q\n%s", got, tc.want, show(d))
			}
			if d.Holds() != (len(tc.want) == 0) {
				t.Errorf("Holds() = %v", d.Holds())
			}
		})
	}
}

// brief is a finding as the table states it: its ID, the file relative
// to the base, and the pointer.
func brief(base string, f doctor.Finding) string {
	rel, _ := filepath.Rel(base, f.File)
	return f.ID + " " + filepath.ToSlash(rel) + " " + f.Pointer
}

func TestDoctor(t *testing.T) {
	const h0 = "/hooks/PreToolUse/0/hooks/0"
	for _, tc := range []struct {
		name    string
		files   map[string]string
		project string // the folder sessions start in, under the base; "" is proj
		want    []string
		// problem, when set, must be in a finding's problem, and
		// notProblem not in the first's.
		problem, notProblem string
	}{{
		name:  "managed-holds",
		files: map[string]string{managedJSON: goodManaged},
	}, {
		name:  "managed-holds-despite-project-disableAllHooks",
		files: map[string]string{managedJSON: goodManaged, localJSON: `{"disableAllHooks": true}`, projectJSON: `{"disableAllHooks": true}`, userJSON: `{"disableAllHooks": true}`},
	}, {
		name: "managed-hook-in-drop-in-holds",
		files: map[string]string{managedJSON: `{"allowManagedHooksOnly": true}`,
			dropIn + "10-spawngate.json": withHook("", "Agent|Task|Skill|Workflow", command(goodCommand, "30"))},
	}, {
		name:    "nothing-at-all",
		want:    []string{"hook.absent " + managedJSON + " /hooks/PreToolUse"},
		problem: "no PreToolUse hook in any settings Claude Code reads here runs spawngate",
	}, {
		name:  "other-hooks-only",
		files: map[string]string{projectJSON: withHook("", "Bash", command("/usr/bin/true", ""))},
		want:  []string{"hook.absent " + managedJSON + " /hooks/PreToolUse"},
	}, {
		name:    "project-hook-can-be-turned-off",
		files:   map[string]string{projectJSON: withHook("", "Agent|Task|Skill|Workflow", command(goodCommand, "30"))},
		want:    []string{"hook.unmanaged " + projectJSON + " " + h0},
		problem: "a session started in a subfolder does not read it",
	}, {
		name:    "user-hook-can-be-turned-off",
		files:   map[string]string{userJSON: withHook("", "Agent|Task|Skill|Workflow", command(goodCommand, "30"))},
		want:    []string{"hook.unmanaged " + userJSON + " " + h0},
		problem: `the spawngate hook is in user settings, which a session can turn off: "disableAllHooks": true in`,
		// a session reads user settings wherever it starts
		notProblem: "subfolder",
	}, {
		name:  "allowManagedHooksOnly-outside-managed-is-ignored",
		files: map[string]string{projectJSON: withHook(only, "Agent|Task|Skill|Workflow", command(goodCommand, "30"))},
		want:  []string{"hook.unmanaged " + projectJSON + " " + h0},
	}, {
		name: "local-disableAllHooks-turns-off-project-hook",
		files: map[string]string{projectJSON: withHook("", "Agent|Task|Skill|Workflow", command(goodCommand, "30")),
			localJSON: `{"disableAllHooks": true}`},
		want: []string{
			"hook.disabled " + localJSON + " /disableAllHooks",
			"hook.absent " + managedJSON + " /hooks/PreToolUse",
		},
		problem: `"disableAllHooks": true in local project settings turns off the spawngate hook in `,
	}, {
		name: "user-disableAllHooks-turns-off-project-hook",
		files: map[string]string{projectJSON: withHook("", "Agent|Task|Skill|Workflow", command(goodCommand, "30")),
			userJSON: `{"disableAllHooks": true}`},
		want: []string{
			"hook.disabled " + userJSON + " /disableAllHooks",
			"hook.absent " + managedJSON + " /hooks/PreToolUse",
		},
	}, {
		name:  "managed-disableAllHooks-turns-off-managed-hook",
		files: map[string]string{managedJSON: withHook(only+` "disableAllHooks": true,`, "Agent|Task|Skill|Workflow", command(goodCommand, "30"))},
		want: []string{
			"hook.disabled " + managedJSON + " /disableAllHooks",
			"hook.absent " + managedJSON + " /hooks/PreToolUse",
		},
		problem: "turns off every hook",
	}, {
		name: "managed-allowManagedHooksOnly-drops-project-hook",
		files: map[string]string{managedJSON: `{"allowManagedHooksOnly": true}`,
			projectJSON: withHook("", "Agent|Task|Skill|Workflow", command(goodCommand, "30"))},
		want:    []string{"hook.absent " + managedJSON + " /hooks/PreToolUse"},
		problem: `turned off by "allowManagedHooksOnly": true in`,
	}, {
		name:  "managed-hook-not-alone",
		files: map[string]string{managedJSON: withHook("", "Agent|Task|Skill|Workflow", command(goodCommand, "30"))},
		want:  []string{"hooks.unrestricted " + managedJSON + " /allowManagedHooksOnly"},
	}, {
		name: "drop-in-turns-allowManagedHooksOnly-off",
		files: map[string]string{managedJSON: goodManaged,
			dropIn + "20-off.json": `{"allowManagedHooksOnly": false}`},
		want: []string{"hooks.unrestricted " + dropIn + "20-off.json /allowManagedHooksOnly"},
	}, {
		name:  "drop-in-not-json-is-not-read",
		files: map[string]string{managedJSON: goodManaged, dropIn + "20-off.json.bak": `{"allowManagedHooksOnly": false}`},
	}, {
		name:  "project-settings-above-the-start-folder-are-not-read",
		files: map[string]string{projectJSON: withHook("", "*", command(goodCommand, "30")), "proj/pkg/": ""},
		// The session starts in proj/pkg: proj's settings are not its own.
		project: "proj/pkg",
		want:    []string{"hook.absent " + managedJSON + " /hooks/PreToolUse"},
	}, {
		name:    "matcher-misses-skill-and-workflow",
		files:   map[string]string{managedJSON: withHook(only, "Agent|Task", command(goodCommand, "30"))},
		want:    []string{"hook.matcher " + managedJSON + " /hooks/PreToolUse/0/matcher"},
		problem: `"matcher": "Agent|Task" does not select Skill or Workflow`,
	}, {
		name:    "matcher-Task-alone",
		files:   map[string]string{managedJSON: withHook(only, "Task", command(goodCommand, "30"))},
		want:    []string{"hook.matcher " + managedJSON + " /hooks/PreToolUse/0/matcher"},
		problem: "does not select Agent, Skill or Workflow",
	}, {
		name:  "matcher-star",
		files: map[string]string{managedJSON: withHook(only, "*", command(goodCommand, "30"))},
	}, {
		name:  "matcher-empty",
		files: map[string]string{managedJSON: withHook(only, "", command(goodCommand, "30"))},
	}, {
		name: "matcher-omitted",
		files: map[string]string{managedJSON: `{"allowManagedHooksOnly": true, "hooks": {"PreToolUse": [{"hooks": [` +
			command(goodCommand, "30") + `]}]}}`},
	}, {
		name:  "matcher-comma-list-with-spaces",
		files: map[string]string{managedJSON: withHook(only, "Agent, Skill ,Workflow", command(goodCommand, "30"))},
	}, {
		name:  "matcher-regex",
		files: map[string]string{managedJSON: withHook(only, "^(Agent|Skill|Workflow)$", command(goodCommand, "30"))},
	}, {
		name:    "matcher-regex-that-misses",
		files:   map[string]string{managedJSON: withHook(only, "^A.*", command(goodCommand, "30"))},
		want:    []string{"hook.matcher " + managedJSON + " /hooks/PreToolUse/0/matcher"},
		problem: "does not select Skill or Workflow",
	}, {
		name:    "matcher-regex-go-cannot-read",
		files:   map[string]string{managedJSON: withHook(only, "(?=Agent)", command(goodCommand, "30"))},
		want:    []string{"hook.matcher " + managedJSON + " /hooks/PreToolUse/0/matcher"},
		problem: "cannot be checked",
	}, {
		// Go's regexp reads each of these as selecting every spawn tool;
		// JavaScript, Claude Code's engine, does not: (?i) does not
		// compile, \z is a plain z, \Q a plain Q, (?P< does not compile,
		// [[:alpha:]] is a class of : a h l p.
		name:    "matcher-js-reads-otherwise-case",
		files:   map[string]string{managedJSON: withHook(only, `(?i)agent|skill|workflow`, command(goodCommand, "30"))},
		want:    []string{"hook.matcher " + managedJSON + " /hooks/PreToolUse/0/matcher"},
		problem: "Claude Code reads it as a JavaScript regular expression",
	}, {
		name:  "matcher-js-reads-otherwise-z",
		files: map[string]string{managedJSON: withHook(only, `^(Agent|Task|Skill|Workflow)\z`, command(goodCommand, "30"))},
		want:  []string{"hook.matcher " + managedJSON + " /hooks/PreToolUse/0/matcher"},
	}, {
		name:  "matcher-js-reads-otherwise-Q",
		files: map[string]string{managedJSON: withHook(only, `\QAgent\E|Skill|Workflow`, command(goodCommand, "30"))},
		want:  []string{"hook.matcher " + managedJSON + " /hooks/PreToolUse/0/matcher"},
	}, {
		name:  "matcher-js-reads-otherwise-named",
		files: map[string]string{managedJSON: withHook(only, `(?P<t>Agent|Skill|Workflow)`, command(goodCommand, "30"))},
		want:  []string{"hook.matcher " + managedJSON + " /hooks/PreToolUse/0/matcher"},
	}, {
		name:  "matcher-js-reads-otherwise-posix",
		files: map[string]string{managedJSON: withHook(only, `[[:alpha:]]+`, command(goodCommand, "30"))},
		want:  []string{"hook.matcher " + managedJSON + " /hooks/PreToolUse/0/matcher"},
	}, {
		name: "matchers-of-two-hooks-together-cover",
		files: map[string]string{managedJSON: `{"allowManagedHooksOnly": true, "hooks": {"PreToolUse": [` +
			`{"matcher": "Agent", "hooks": [` + command(goodCommand, "30") + `]},` +
			`{"matcher": "Skill|Workflow", "hooks": [` + command(goodCommand, "30") + `]}]}}`},
	}, {
		name: "a-turned-off-hook-covers-nothing",
		files: map[string]string{managedJSON: withHook(only, "Agent", command(goodCommand, "30")),
			projectJSON: withHook("", "Skill|Workflow", command(goodCommand, "30"))},
		want: []string{"hook.matcher " + managedJSON + " /hooks/PreToolUse/0/matcher"},
	}, {
		name:    "command-found-on-PATH",
		files:   map[string]string{managedJSON: withHook(only, "*", command("spawngate hook claude-code --policy {{POLICY}} --timeout 20s", "30"))},
		want:    []string{"hook.command " + managedJSON + " " + h0 + "/command"},
		problem: `the command runs "spawngate", which is looked for when the hook runs`,
	}, {
		name:  "command-relative-path",
		files: map[string]string{managedJSON: withHook(only, "*", command("bin/spawngate hook claude-code --policy {{POLICY}} --timeout 20s", "30"))},
		want:  []string{"hook.command " + managedJSON + " " + h0 + "/command"},
	}, {
		name:    "command-missing",
		files:   map[string]string{managedJSON: withHook(only, "*", command("{{BASE}}/nowhere/spawngate hook claude-code --policy {{POLICY}} --timeout 20s", "30"))},
		want:    []string{"hook.command " + managedJSON + " " + h0 + "/command"},
		problem: "does not exist",
	}, {
		name: "command-not-executable",
		files: map[string]string{managedJSON: withHook(only, "*", command("{{BASE}}/other/spawngate hook claude-code --policy {{POLICY}} --timeout 20s", "30")),
			"other/spawngate": "#!/bin/sh\n"},
		want:    []string{"hook.command " + managedJSON + " " + h0 + "/command"},
		problem: "is not executable",
	}, {
		name: "command-is-a-folder",
		files: map[string]string{managedJSON: withHook(only, "*", command("{{BASE}}/other/spawngate hook claude-code --policy {{POLICY}} --timeout 20s", "30")),
			"other/spawngate/": ""},
		want:    []string{"hook.command " + managedJSON + " " + h0 + "/command"},
		problem: "is a folder",
	}, {
		name:    "command-runs-check",
		files:   map[string]string{managedJSON: withHook(only, "*", command("{{BIN}} check --policy {{POLICY}}", "30"))},
		want:    []string{"hook.command " + managedJSON + " " + h0 + "/command"},
		problem: `the command runs "spawngate check", not spawngate hook claude-code`,
	}, {
		name:    "command-answers-for-codex",
		files:   map[string]string{managedJSON: withHook(only, "*", command("{{BIN}} hook codex --policy {{POLICY}}", "30"))},
		want:    []string{"hook.command " + managedJSON + " " + h0 + "/command"},
		problem: `"spawngate hook codex"`,
	}, {
		name:    "command-or-true",
		files:   map[string]string{managedJSON: withHook(only, "*", command(goodCommand+" || true", "30"))},
		want:    []string{"hook.command " + managedJSON + " " + h0 + "/command", "hook.command " + managedJSON + " " + h0 + "/command"},
		problem: `(it holds "||")`,
	}, {
		name:    "command-through-a-variable",
		files:   map[string]string{managedJSON: withHook(only, "*", command("$SPAWNGATE hook claude-code --policy {{POLICY}}", "30"))},
		want:    []string{"hook.command " + managedJSON + " " + h0 + "/command", "hook.command " + managedJSON + " " + h0 + "/command"},
		problem: "uses $SPAWNGATE, which doctor cannot know",
	}, {
		name:    "command-through-a-wrapper",
		files:   map[string]string{managedJSON: withHook(only, "*", command("/bin/sh -c 'spawngate hook claude-code'", "30"))},
		want:    []string{"hook.command " + managedJSON + " " + h0 + "/command", "hook.command " + managedJSON + " " + h0 + "/command"},
		problem: `does not run it directly (it runs "/bin/sh")`,
	}, {
		name: "command-in-home-through-HOME-and-tilde",
		files: map[string]string{managedJSON: withHook(only, "*", command(`"$HOME/bin/spawngate" hook claude-code --policy ~/policy.yaml --timeout 20s`, "30")),
			"home/bin/spawngate": "", "home/policy.yaml": "allowed_tools: [Read]\n"},
		// The binary and the policy lie in the home folder, which the
		// session writes.
		want: []string{"hook.command " + managedJSON + " " + h0 + "/command", "hook.command " + managedJSON + " " + h0 + "/command", "hook.writable " + managedJSON + " " + h0 + "/command", "hook.writable " + managedJSON + " " + h0 + "/command"},
		// written without the executable bit by install
		problem: "/home/bin/spawngate is not executable",
	}, {
		name: "command-exec-form",
		files: map[string]string{managedJSON: withHook(only, "*",
			`{"type": "command", "command": "{{BIN}}", "args": ["hook", "claude-code", "--policy", "{{POLICY}}", "--timeout", "20s"], "timeout": 30, "onFailure": "block"}`)},
	}, {
		// Each key of the handler that lets a spawn through unjudged, as
		// Claude Code 2.1.332 reads it (seen on the client: the writer
		// started under each).
		name:    "handler-async",
		files:   map[string]string{managedJSON: withHook(only, "*", handlerWith(`"async": true`))},
		want:    []string{"hook.handler " + managedJSON + " " + h0 + "/async"},
		problem: "not wait for it",
	}, {
		name:  "handler-async-false",
		files: map[string]string{managedJSON: withHook(only, "*", handlerWith(`"async": false, "asyncRewake": false, "shell": "bash", "statusMessage": "judging"`))},
	}, {
		name:  "handler-async-rewake",
		files: map[string]string{managedJSON: withHook(only, "*", handlerWith(`"asyncRewake": true`))},
		want:  []string{"hook.handler " + managedJSON + " " + h0 + "/asyncRewake"},
	}, {
		name:    "handler-if",
		files:   map[string]string{managedJSON: withHook(only, "*", handlerWith(`"if": "Agent(reader)"`))},
		want:    []string{"hook.handler " + managedJSON + " " + h0 + "/if"},
		problem: "matches an Agent(...) rule against no call",
	}, {
		name:    "handler-shell-powershell",
		files:   map[string]string{managedJSON: withHook(only, "*", handlerWith(`"shell": "powershell"`))},
		want:    []string{"hook.handler " + managedJSON + " " + h0 + "/shell"},
		problem: "which need not be installed",
	}, {
		name:    "handler-on-failure-continue",
		files:   map[string]string{managedJSON: withHook(only, "*", strings.Replace(command(goodCommand, "30"), `"block"`, `"continue"`, 1))},
		want:    []string{"hook.handler " + managedJSON + " " + h0 + "/onFailure"},
		problem: "lets a spawn through when the hook cannot start",
	}, {
		name:    "handler-no-on-failure",
		files:   map[string]string{managedJSON: withHook(only, "*", strings.Replace(command(goodCommand, "30"), `, "onFailure": "block"`, "", 1))},
		want:    []string{"hook.handler " + managedJSON + " " + h0},
		problem: `Claude Code's default, "continue"`,
	}, {
		name:    "handler-key-unknown",
		files:   map[string]string{managedJSON: withHook(only, "*", handlerWith(`"retry": 3`))},
		want:    []string{"hook.handler " + managedJSON + " " + h0 + "/retry"},
		problem: `"retry" is not a key Claude Code 2.1.332 reads`,
	}, {
		name:    "command-through-a-shell",
		files:   map[string]string{managedJSON: withHook(only, "*", shellCommand(goodCommand, "30"))},
		want:    []string{"hook.command " + managedJSON + " " + h0 + "/command"},
		problem: "CLAUDE_CODE_SHELL_PREFIX",
	}, {
		name: "command-exec-form-not-a-hook",
		files: map[string]string{managedJSON: withHook(only, "*",
			`{"type": "command", "command": "{{BIN}}", "args": ["check", "--policy", "{{POLICY}}"], "timeout": 30, "onFailure": "block"}`)},
		want: []string{"hook.command " + managedJSON + " " + h0 + "/command"},
	}, {
		name: "command-inside-the-project",
		files: map[string]string{managedJSON: withHook(only, "*", command("${CLAUDE_PROJECT_DIR}/tools/spawngate hook claude-code --policy {{POLICY}} --timeout 20s", "30")),
			"proj/tools/spawngate": ""},
		want: []string{
			"hook.command " + managedJSON + " " + h0 + "/command",
			"hook.command " + managedJSON + " " + h0 + "/command",
			"hook.writable " + managedJSON + " " + h0 + "/command",
		},
	}, {
		name:    "timeout-equal-to-spawngate's",
		files:   map[string]string{managedJSON: withHook(only, "*", command(goodCommand, "20"))},
		want:    []string{"hook.timeout " + managedJSON + " " + h0 + "/timeout"},
		problem: `"timeout": 20 is not above spawngate's own --timeout of 20s`,
	}, {
		name:    "timeout-against-spawngate's-default",
		files:   map[string]string{managedJSON: withHook(only, "*", command("{{BIN}} hook claude-code --policy {{POLICY}}", "30"))},
		want:    []string{"hook.timeout " + managedJSON + " " + h0 + "/timeout"},
		problem: "--timeout of 30s",
	}, {
		name:  "timeout-above-spawngate's-default",
		files: map[string]string{managedJSON: withHook(only, "*", command("{{BIN}} hook claude-code --policy {{POLICY}}", "30.5"))},
	}, {
		name:  "timeout-unset-is-600-seconds",
		files: map[string]string{managedJSON: withHook(only, "*", command("{{BIN}} hook claude-code --policy {{POLICY}} --timeout 9m59s", ""))},
	}, {
		name:    "timeout-unset-against-10-minutes",
		files:   map[string]string{managedJSON: withHook(only, "*", command("{{BIN}} hook claude-code --policy {{POLICY}} --timeout 10m", ""))},
		want:    []string{"hook.timeout " + managedJSON + " " + h0},
		problem: `no "timeout" (Claude Code's default, 600 s)`,
	}, {
		name:  "timeout-in-minutes",
		files: map[string]string{managedJSON: withHook(only, "*", command("{{BIN}} hook claude-code --policy {{POLICY}} --timeout 1m", "61"))},
	}, {
		name: "timeout-not-a-number",
		files: map[string]string{managedJSON: withHook(only, "*",
			`{"type": "command", "command": "{{BIN}}", "args": ["hook", "claude-code", "--policy", "{{POLICY}}", "--timeout", "20s"], "timeout": "30", "onFailure": "block"}`)},
		want: []string{"settings.invalid " + managedJSON + " " + h0 + "/timeout"},
	}, {
		name: "http-hook",
		files: map[string]string{managedJSON: withHook(only, "*",
			`{"type": "http", "url": "http://127.0.0.1:8321/v1/hooks/claude-code", "timeout": 30}`)},
		want:    []string{"hook.http " + managedJSON + " " + h0 + "/url"},
		problem: "when that server is down",
	}, {
		name: "other-http-hook-is-not-spawngate",
		files: map[string]string{managedJSON: goodManaged,
			projectJSON: withHook("", "*", `{"type": "http", "url": "http://127.0.0.1:9000/audit"}`)},
	}, {
		name:    "policy-missing",
		files:   map[string]string{managedJSON: withHook(only, "*", command("{{BIN}} hook claude-code --policy {{BASE}}/nowhere.yaml --timeout 20s", "30"))},
		want:    []string{"hook.policy " + managedJSON + " " + h0 + "/command"},
		problem: "every spawn would be refused",
	}, {
		name:  "policy-relative",
		files: map[string]string{managedJSON: withHook(only, "*", command("{{BIN}} hook claude-code --policy policy.yaml --timeout 20s", "30")), "proj/policy.yaml": "x: 1\n"},
		want:  []string{"hook.policy " + managedJSON + " " + h0 + "/command", "hook.writable " + managedJSON + " " + h0 + "/command"},
		// found, read against the project, and still relative
		problem: `--policy "policy.yaml" is a relative path`,
	}, {
		name: "policy-inside-the-project",
		files: map[string]string{managedJSON: withHook(only, "*", command("{{BIN}} hook claude-code --policy {{PROJECT}}/.claude/policy.yaml --timeout 20s", "30")),
			"proj/.claude/policy.yaml": "x: 1\n"},
		want: []string{"hook.writable " + managedJSON + " " + h0 + "/command"},
	}, {
		name:    "hook-flags-the-hook-refuses",
		files:   map[string]string{managedJSON: withHook(only, "*", command(goodCommand+" --format json", "30"))},
		want:    []string{"hook.policy " + managedJSON + " " + h0 + "/command"},
		problem: "the hook cannot start",
	}, {
		name:    "managed-not-json",
		files:   map[string]string{managedJSON: "{\n  \"allowManagedHooksOnly\": true,\n}\n"},
		want:    []string{"hook.absent " + managedJSON + " /hooks/PreToolUse", "settings.invalid " + managedJSON + " "},
		problem: "no PreToolUse hook in any settings",
	}, {
		name:  "local-not-json-is-ignored-with-its-disableAllHooks",
		files: map[string]string{managedJSON: goodManaged, localJSON: `{"disableAllHooks": tru}`},
		want:  []string{"settings.invalid " + localJSON + " "},
	}, {
		name:  "managed-not-an-object",
		files: map[string]string{managedJSON: `[]`},
		want:  []string{"hook.absent " + managedJSON + " /hooks/PreToolUse", "settings.invalid " + managedJSON + " "},
	}, {
		name:  "empty-file-is-no-settings",
		files: map[string]string{managedJSON: goodManaged, localJSON: "\n"},
	}, {
		name: "hooks-in-the-wrong-shape-beside-spawngate",
		files: map[string]string{managedJSON: `{"allowManagedHooksOnly": true, "hooks": {"PreToolUse": [` +
			`{"matcher": "*", "hooks": [` + command(goodCommand, "30") + `]}, {"matcher": 3, "hooks": []}]}}`},
		want: []string{"settings.invalid " + managedJSON + " /hooks/PreToolUse/1/matcher"},
	}, {
		name:  "hooks-in-the-wrong-shape-without-spawngate-are-not-ours",
		files: map[string]string{managedJSON: goodManaged, userJSON: `{"hooks": {"PreToolUse": {"matcher": "*"}}}`},
	}, {
		name:  "disableAllHooks-not-a-boolean",
		files: map[string]string{managedJSON: withHook(only+` "disableAllHooks": "true",`, "*", command(goodCommand, "30"))},
		want:  []string{"settings.invalid " + managedJSON + " /disableAllHooks"},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			base := hosttest.Install(t, tc.files)
			d := diagnose(t, base, tc.project)
			var got []string
			for _, f := range d.Findings {
				got = append(got, brief(base, f))
				if f.Problem == "" || f.Fix == "" {
					t.Errorf("finding without a problem or a fix: %+v", f)
				}
			}
			want := slices.Clone(tc.want)
			slices.Sort(want)
			slices.Sort(got)
			if !slices.Equal(got, want) {
				t.Fatalf("findings:\n got %q\nwant %q\n%s", got, want, show(d))
			}
			if d.Holds() != (len(tc.want) == 0) {
				t.Errorf("Holds() = %v with %d findings", d.Holds(), len(d.Findings))
			}
			if tc.problem != "" && !slices.ContainsFunc(d.Findings, func(f doctor.Finding) bool { return strings.Contains(f.Problem, tc.problem) }) {
				t.Errorf("no finding says %q:\n%s", tc.problem, show(d))
			}
			if tc.notProblem != "" && strings.Contains(d.Findings[0].Problem, tc.notProblem) {
				t.Errorf("problem %q says %q", d.Findings[0].Problem, tc.notProblem)
			}
		})
	}
}

func show(d *doctor.Diagnosis) string {
	var b strings.Builder
	for _, f := range d.Findings {
		fmt.Fprintf(&b, "  %s:%d %s: %s; fix: %s\n", f.File, f.Line, f.ID, f.Problem, f.Fix)
	}
	return b.String()
}

// TestDoctorPlaces holds the lines and the order of what is reported:
// each finding at the line of its setting, in the order of the file, and
// the gate that holds at its handler.
func TestDoctorPlaces(t *testing.T) {
	lower := withHook("", "Agent", command("spawngate hook claude-code --policy {{POLICY}}", ""))
	base := hosttest.Install(t, map[string]string{managedJSON: goodManaged, projectJSON: lower})
	d := diagnose(t, base, "")
	// allowManagedHooksOnly drops the project's hook: nothing of it is
	// reported, and the managed one gates.
	if len(d.Findings) != 0 || !d.Holds() {
		t.Fatalf("findings of a hook that does not run:\n%s", show(d))
	}
	if want := (doctor.Place{File: filepath.Join(base, managedJSON), Line: 7, Pointer: "/hooks/PreToolUse/0/hooks/0"}); !slices.Equal(d.Gates, []doctor.Place{want}) {
		t.Fatalf("gates: %+v, want %+v", d.Gates, want)
	}

	base = hosttest.Install(t, map[string]string{projectJSON: lower, localJSON: "{\n  \"permissions\": {}\n}\n"})
	d = diagnose(t, base, "")
	var got []string
	for _, f := range d.Findings {
		rel, _ := filepath.Rel(base, f.File)
		got = append(got, fmt.Sprintf("%s:%d %s", filepath.ToSlash(rel), f.Line, f.ID))
	}
	want := []string{
		projectJSON + ":5 hook.matcher",
		projectJSON + ":7 hook.unmanaged",
		projectJSON + ":7 hook.command",
	}
	if !slices.Equal(got, want) {
		t.Fatalf("findings in order: got %q, want %q\n%s", got, want, show(d))
	}
}

// TestDoctorCannotEvaluate: a settings file (or the drop-in folder) that
// exists and cannot be read is an error, never a finding or a pass.
func TestDoctorCannotEvaluate(t *testing.T) {
	for _, tc := range []struct{ name, folder, file, huge string }{
		{name: "managed-is-a-folder", folder: managedJSON},
		{name: "user-is-a-folder", folder: userJSON},
		{name: "local-is-a-folder", folder: localJSON},
		{name: "drop-ins-are-a-file", file: strings.TrimSuffix(dropIn, "/")},
		// A project can write a settings file of any size; doctor reads no
		// more than doctor.MaxConfigBytes of it.
		{name: "local-too-large", huge: localJSON},
	} {
		t.Run(tc.name, func(t *testing.T) {
			base := hosttest.Install(t, map[string]string{managedJSON: goodManaged})
			switch {
			case tc.folder != "":
				must(t, os.RemoveAll(filepath.Join(base, tc.folder)))
				must(t, os.MkdirAll(filepath.Join(base, tc.folder), 0o755))
			case tc.huge != "":
				must(t, os.MkdirAll(filepath.Dir(filepath.Join(base, tc.huge)), 0o755))
				big := `{"permissions": {"allow": ["` + strings.Repeat("x", doctor.MaxConfigBytes) + `"]}}`
				must(t, os.WriteFile(filepath.Join(base, tc.huge), []byte(big), 0o644))
			default:
				must(t, os.WriteFile(filepath.Join(base, tc.file), nil, 0o644))
			}
			_, err := Adapter{}.Doctor(context.Background(), hosttest.DoctorOptions(base, Name))
			var de *doctor.Error
			if !errors.As(err, &de) {
				t.Fatalf("got %v, want a *doctor.Error", err)
			}
		})
	}
}

func TestMatcherMatches(t *testing.T) {
	for _, tc := range []struct {
		matcher, tool string
		want          bool
	}{
		{"", "Skill", true},
		{"*", "Workflow", true},
		{"Agent", "Agent", true},
		{"Agent", "AgentX", false},   // a name is exact...
		{"Agen", "Agent", false},     // ... not a prefix
		{"Agent|Task", "Task", true}, // a list
		{"Agent,Skill", "Skill", true},
		{"Agent | Skill", "Skill", true},
		{"agent", "Agent", false},
		{"Ag.nt", "Agent", true},     // a regular expression, unanchored
		{"gen", "Agent", false},      // letters only: an exact name
		{"^Work", "Workflow", true},  // unanchored at the end
		{"Skill$", "Skills", false},  // anchored
		{"mcp__.*", "Agent", false},  // another tool's
		{"Agent-1", "Agent-1", true}, // hyphens are exact
	} {
		got, err := matcherMatches(tc.matcher, tc.tool)
		if err != nil || got != tc.want {
			t.Errorf("matcherMatches(%q, %q) = %v, %v; want %v", tc.matcher, tc.tool, got, err, tc.want)
		}
	}
	if _, err := matcherMatches("(?!Agent)", "Agent"); err == nil {
		t.Error("a lookahead, which Go's regexp does not read, was read")
	}
}
