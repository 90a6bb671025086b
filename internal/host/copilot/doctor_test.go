package copilot

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/spawngate/spawngate/internal/host/doctor"
	"github.com/spawngate/spawngate/internal/host/hosttest"
)

// The files of an installation under test, relative to its base: the
// machine's under root, the user's under home (COPILOT_HOME unset unless
// a case sets it), the repository's under proj.
const (
	policyJSON     = "root/etc/github-copilot/policy.d/spawngate.json"
	managedJSON    = "root/etc/github-copilot/managed-settings.json"
	userSettings   = "home/.copilot/settings.json"
	userHook       = "home/.copilot/hooks/spawngate.json"
	repoHook       = "proj/.github/hooks/spawngate.json"
	repoSettings   = "proj/.github/copilot/settings.json"
	repoLocal      = "proj/.github/copilot/settings.local.json"
	claudeSettings = "proj/.claude/settings.json"
)

// goodCommand is the documented command with absolute paths: {{BIN}} is
// an executable outside the project, {{POLICY}} a policy file beside it.
const goodCommand = `{{BIN}} hook copilot --policy {{POLICY}} --timeout 20s`

// handlerOf is a command handler of the given fields; goodHandler is the
// documented one.
func handlerOf(fields string) string { return `{` + fields + `}` }

var goodHandler = handlerOf(`"type": "command", "bash": "` + goodCommand + `", "timeoutSec": 30, "matcher": "task"`)

// withGood is the documented handler with one field changed or added
// (`"timeoutSec": 20`), or one removed (`-"matcher"`).
func withGood(change string) string {
	fields := []string{`"type": "command"`, `"bash": "` + goodCommand + `"`, `"timeoutSec": 30`, `"matcher": "task"`}
	key, _, _ := strings.Cut(strings.TrimPrefix(change, "-"), ":")
	i := slices.IndexFunc(fields, func(f string) bool { return strings.HasPrefix(f, key+":") || f == key })
	switch {
	case strings.HasPrefix(change, "-"):
		fields = slices.Delete(fields, i, i+1)
	case i >= 0:
		fields[i] = change
	default:
		fields = append(fields, change)
	}
	return handlerOf(strings.Join(fields, ", "))
}

// hookFile is a hook file holding handlers on event, one a line.
func hookFile(event string, handlers ...string) string {
	return `{
  "version": 1,
  "hooks": {
    "` + event + `": [
      ` + strings.Join(handlers, ",\n      ") + `
    ]
  }
}
`
}

// settingsWith is a settings file holding handlers on preToolUse, with
// more top-level settings (`"disableAllHooks": true, `).
func settingsWith(top string, handlers ...string) string {
	return `{` + top + `"hooks": {"preToolUse": [` + strings.Join(handlers, ", ") + `]}}`
}

const (
	managedOnly = `{"allowManagedHooksOnly": true}`
	disableAll  = `{"disableAllHooks": true}`
)

// documentedInstall is the documented installation: the policy file and
// managed settings.
var documentedInstall = map[string]string{policyJSON: hookFile(preToolUse, goodHandler), managedJSON: managedOnly}

// installWith is files with more added (or replaced).
func installWith(files map[string]string, more ...string) map[string]string {
	out := map[string]string{}
	for k, v := range files {
		out[k] = v
	}
	for i := 0; i+1 < len(more); i += 2 {
		out[more[i]] = more[i+1]
	}
	return out
}

func fatalIf(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// diagnose runs the doctor on an installation: the project is proj
// unless given; env is the environment ({{BASE}} filled in).
func diagnose(t *testing.T, base, project string, env map[string]string) *doctor.Diagnosis {
	t.Helper()
	if project == "" {
		project = "proj"
	}
	o := hosttest.DoctorOptions(base, Name)
	o.Project = filepath.Join(base, project)
	o.Getenv = func(k string) string { return strings.ReplaceAll(env[k], "{{BASE}}", base) }
	d, err := Adapter{}.Doctor(context.Background(), o)
	if err != nil {
		t.Fatalf("Doctor: %v", err)
	}
	return d
}

// brief is a finding as the table states it: its ID, the file relative
// to the base, and the pointer.
func brief(base string, f doctor.Finding) string {
	rel, _ := filepath.Rel(base, f.File)
	return f.ID + " " + filepath.ToSlash(rel) + " " + f.Pointer
}

func showFindings(d *doctor.Diagnosis) string {
	var b strings.Builder
	for _, f := range d.Findings {
		fmt.Fprintf(&b, "  %s:%d %s %s: %s; fix: %s\n", f.File, f.Line, f.ID, f.Pointer, f.Problem, f.Fix)
	}
	return b.String()
}

func TestDoctor(t *testing.T) {
	const (
		h0   = "/hooks/preToolUse/0"
		m0   = h0 + "/matcher"
		cmd0 = h0 + "/bash"
	)
	absent := "hook.absent " + policyJSON + " /hooks/preToolUse"
	unrestricted := "hooks.unrestricted " + managedJSON + " /allowManagedHooksOnly"
	chmod := func(rel string, mode os.FileMode) func(*testing.T, string) {
		return func(t *testing.T, base string) { fatalIf(t, os.Chmod(filepath.Join(base, rel), mode)) }
	}
	for _, tc := range []struct {
		name    string
		files   map[string]string
		project string            // the folder sessions start in, under the base; "" is proj
		env     map[string]string // the environment; COPILOT_HOME unset unless set here
		prepare func(t *testing.T, base string)
		want    []string
		// problem, when set, must be in the problem of the finding it
		// names by its brief (the first finding when of is "").
		problem, of string
	}{{
		name:  "documentedInstall-holds",
		files: documentedInstall,
	}, {
		name: "documentedInstall-holds-whatever-the-repository-and-the-user-say",
		files: installWith(documentedInstall, repoSettings, disableAll, repoLocal, disableAll, claudeSettings, disableAll,
			userSettings, disableAll, userHook, hookFile(preToolUse, withGood(`"bash": "/bin/true"`))),
	}, {
		name:  "documentedInstall-in-exec-form-holds",
		files: installWith(documentedInstall, policyJSON, hookFile(preToolUse, handlerOf(`"type": "command", "exec": "{{BIN}}", "args": ["hook", "copilot", "--policy", "{{POLICY}}", "--timeout", "20s"], "timeoutSec": 30, "matcher": "task"`))),
	}, {
		name:    "nothing-at-all",
		want:    []string{absent},
		problem: "no preToolUse hook in any file Copilot CLI reads here runs spawngate",
	}, {
		name:    "policy-without-allowManagedHooksOnly",
		files:   map[string]string{policyJSON: hookFile(preToolUse, goodHandler)},
		want:    []string{unrestricted},
		problem: "one that answers with modifiedArgs changes the spawn after spawngate judged it",
	}, {
		name:    "policy-with-strictPluginOnlyCustomization-only",
		files:   installWith(documentedInstall, managedJSON, `{"strictPluginOnlyCustomization": ["hooks", "agents"]}`),
		want:    []string{unrestricted},
		problem: "hooks of plugins a user enables still run beside the spawngate hook",
	}, {
		name:    "user-hook-only",
		files:   map[string]string{userHook: hookFile(preToolUse, goodHandler)},
		want:    []string{"hook.unmanaged " + userHook + " " + h0},
		problem: "the spawngate hook is in user config, which a session can change or turn off",
	}, {
		name: "user-hook-in-a-subfolder-of-hooks",
		files: map[string]string{"home/.copilot/hooks/gate/spawngate.json": hookFile(preToolUse, goodHandler),
			"home/.copilot/hooks/spawngate.jsonc": hookFile(preToolUse, goodHandler)},
		want: []string{"hook.unmanaged home/.copilot/hooks/gate/spawngate.json " + h0},
	}, {
		name:  "user-hooks-folder-a-link",
		files: map[string]string{"dotfiles/copilot-hooks/spawngate.json": hookFile(preToolUse, goodHandler), "home/.copilot/hooks": "->../../dotfiles/copilot-hooks"},
		want:  []string{"hook.unmanaged " + userHook + " " + h0},
	}, {
		// The user's settings.json may hold comments and trailing commas.
		name:  "user-hook-in-settings-with-comments",
		files: map[string]string{userSettings: "// the user's\n{\"model\": \"x\", /* gate */ \"hooks\": {\"preToolUse\": [" + goodHandler + ",]},}\n"},
		want:  []string{"hook.unmanaged " + userSettings + " " + h0},
	}, {
		name: "copilot-home-moves-the-user-layer",
		files: map[string]string{userHook: hookFile(preToolUse, goodHandler), "home/.copilot/hooks/broken.json": `{"spawngate"`,
			"elsewhere/hooks/spawngate.json": hookFile(preToolUse, goodHandler)},
		env:  map[string]string{"COPILOT_HOME": "{{BASE}}/elsewhere"},
		want: []string{"hook.unmanaged elsewhere/hooks/spawngate.json " + h0},
	}, {
		name:  "copilot-home-relative-to-the-session's-folder",
		files: map[string]string{userHook: hookFile(preToolUse, goodHandler), "proj/ch/hooks/spawngate.json": hookFile(preToolUse, goodHandler)},
		env:   map[string]string{"COPILOT_HOME": "ch"},
		want:  []string{"hook.unmanaged proj/ch/hooks/spawngate.json " + h0},
	}, {
		name:    "repository-hook-only",
		files:   map[string]string{repoHook: hookFile(preToolUse, goodHandler)},
		want:    []string{"hook.unmanaged " + repoHook + " " + h0},
		problem: "a session started in a subfolder, or in a folder the user does not trust, does not read it",
	}, {
		name:    "repository-hook-not-read-from-a-subfolder",
		files:   map[string]string{repoHook: hookFile(preToolUse, goodHandler), "proj/sub/": ""},
		project: "proj/sub",
		want:    []string{absent},
	}, {
		name:  "repository-hook-in-claude-settings",
		files: map[string]string{"proj/.claude/settings.local.json": settingsWith("", goodHandler)},
		want:  []string{"hook.unmanaged proj/.claude/settings.local.json " + h0},
	}, {
		name:    "repository-settings-turn-the-user-hook-off",
		files:   map[string]string{userHook: hookFile(preToolUse, goodHandler), repoSettings: disableAll},
		want:    []string{absent, "hook.disabled " + repoSettings + " /disableAllHooks"},
		problem: `is turned off by "disableAllHooks": true in {{BASE}}/` + repoSettings,
		of:      absent,
	}, {
		name:  "local-repository-settings-turn-the-user-hook-off",
		files: map[string]string{userHook: hookFile(preToolUse, goodHandler), repoLocal: disableAll},
		want:  []string{absent, "hook.disabled " + repoLocal + " /disableAllHooks"},
	}, {
		name:  "claude-settings-turn-the-repository-hook-off",
		files: map[string]string{repoHook: hookFile(preToolUse, goodHandler), claudeSettings: disableAll},
		want:  []string{absent, "hook.disabled " + claudeSettings + " /disableAllHooks"},
	}, {
		// Copilot CLI reads a repository's settings strictly: one with a
		// comment is not read, its switch neither.
		name:  "repository-settings-with-a-comment-are-not-read",
		files: map[string]string{userHook: hookFile(preToolUse, goodHandler), repoSettings: "// off\n" + disableAll},
		want:  []string{"hook.unmanaged " + userHook + " " + h0},
	}, {
		name:    "repository-settings-in-a-subfolder's-parent-are-not-read",
		files:   map[string]string{userHook: hookFile(preToolUse, goodHandler), repoSettings: disableAll, "proj/sub/": ""},
		project: "proj/sub",
		want:    []string{"hook.unmanaged " + userHook + " " + h0},
	}, {
		name:  "disableAllHooks-in-the-hook-file-itself",
		files: map[string]string{userHook: strings.Replace(hookFile(preToolUse, goodHandler), `"version": 1,`, `"version": 1, "disableAllHooks": true,`, 1)},
		want:  []string{absent, "hook.disabled " + userHook + " /disableAllHooks"},
	}, {
		// The user's disableAllHooks turns off the hooks of its own file
		// only.
		name:  "user-settings-disableAllHooks-leaves-the-hooks-folder",
		files: map[string]string{userHook: hookFile(preToolUse, goodHandler), userSettings: disableAll},
		want:  []string{"hook.unmanaged " + userHook + " " + h0},
	}, {
		name:  "user-settings-disableAllHooks-turns-off-its-own-hooks",
		files: map[string]string{userSettings: settingsWith(`"disableAllHooks": true, `, goodHandler)},
		want:  []string{absent, "hook.disabled " + userSettings + " /disableAllHooks"},
	}, {
		name:    "allowManagedHooksOnly-turns-the-user-hook-off",
		files:   map[string]string{userHook: hookFile(preToolUse, goodHandler), managedJSON: managedOnly},
		want:    []string{absent},
		problem: `is turned off by "allowManagedHooksOnly": true in`,
	}, {
		name:    "strictPluginOnlyCustomization-turns-the-repository-hook-off",
		files:   map[string]string{repoHook: hookFile(preToolUse, goodHandler), managedJSON: `{"strictPluginOnlyCustomization": true}`},
		want:    []string{absent},
		problem: `"strictPluginOnlyCustomization", which locks hooks`,
	}, {
		name:    "matcher-Agent-on-camelCase-preToolUse",
		files:   installWith(documentedInstall, policyJSON, hookFile(preToolUse, withGood(`"matcher": "Agent"`))),
		want:    []string{"hook.matcher " + policyJSON + " " + m0},
		problem: `"matcher": "Agent" on preToolUse does not select task`,
	}, {
		name:  "matcher-Agent-on-PascalCase-PreToolUse",
		files: installWith(documentedInstall, policyJSON, hookFile(pascalPreToolUse, withGood(`"matcher": "Agent"`))),
	}, {
		name:  "matcher-task-on-PascalCase-PreToolUse",
		files: installWith(documentedInstall, policyJSON, hookFile(pascalPreToolUse, goodHandler)),
	}, {
		name:  "matcher-case-counts",
		files: installWith(documentedInstall, policyJSON, hookFile(preToolUse, withGood(`"matcher": "Task"`))),
		want:  []string{"hook.matcher " + policyJSON + " " + m0},
	}, {
		name:  "matcher-must-match-the-whole-name",
		files: installWith(documentedInstall, policyJSON, hookFile(preToolUse, withGood(`"matcher": "tas"`))),
		want:  []string{"hook.matcher " + policyJSON + " " + m0},
	}, {
		name:  "matcher-alternatives",
		files: installWith(documentedInstall, policyJSON, hookFile(preToolUse, withGood(`"matcher": "view|task"`))),
	}, {
		name:  "matcher-omitted-selects-every-tool",
		files: installWith(documentedInstall, policyJSON, hookFile(preToolUse, withGood(`-"matcher"`))),
	}, {
		name:    "matcher-star-does-not-compile",
		files:   installWith(documentedInstall, policyJSON, hookFile(preToolUse, withGood(`"matcher": "*"`))),
		want:    []string{"hook.matcher " + policyJSON + " " + m0},
		problem: `"matcher": "*" is not a regular expression (missing argument to repetition operator: ` + "`*`" + `): Copilot CLI skips the hook`,
	}, {
		name:  "matchers-of-two-hooks-together-cover",
		files: installWith(documentedInstall, policyJSON, hookFile(pascalPreToolUse, withGood(`"matcher": "Agent"`)), "root/etc/github-copilot/policy.d/z.json", hookFile(preToolUse, goodHandler)),
	}, {
		name:    "matcher-empty-skips-the-user-hook",
		files:   map[string]string{userHook: hookFile(preToolUse, withGood(`"matcher": ""`))},
		want:    []string{absent, "hook.matcher " + userHook + " " + m0},
		problem: "Copilot CLI skips this hook",
		of:      "hook.matcher " + userHook + " " + m0,
	}, {
		name:  "nested-form-in-a-user-hook-file",
		files: map[string]string{userHook: hookFile(preToolUse, `{"matcher": "task", "hooks": [`+withGood(`-"matcher"`)+`]}`)},
		want:  []string{"hook.unmanaged " + userHook + " " + h0 + "/hooks/0"},
	}, {
		// A handler's own matcher replaces its group's.
		name:  "nested-form-handler-matcher-wins",
		files: map[string]string{userHook: hookFile(preToolUse, `{"matcher": "view", "hooks": [`+goodHandler+`]}`)},
		want:  []string{"hook.unmanaged " + userHook + " " + h0 + "/hooks/0"},
	}, {
		name:  "nested-form-group-matcher-misses",
		files: map[string]string{userHook: hookFile(preToolUse, `{"matcher": "view", "hooks": [`+withGood(`-"matcher"`)+`]}`)},
		want:  []string{"hook.unmanaged " + userHook + " " + h0 + "/hooks/0", "hook.matcher " + userHook + " " + m0},
	}, {
		name:    "nested-form-drops-a-policy-file",
		files:   installWith(documentedInstall, policyJSON, hookFile(preToolUse, `{"matcher": "task", "hooks": [`+withGood(`-"matcher"`)+`]}`)),
		want:    []string{absent, "settings.invalid " + policyJSON + " " + h0},
		problem: "Copilot CLI skips the whole policy file",
		of:      "settings.invalid " + policyJSON + " " + h0,
	}, {
		name:    "timeoutSec-equal-to-spawngate's",
		files:   installWith(documentedInstall, policyJSON, hookFile(preToolUse, withGood(`"timeoutSec": 20`))),
		want:    []string{"hook.timeout " + policyJSON + " " + h0 + "/timeoutSec"},
		problem: `"timeoutSec": 20 is not above spawngate's own --timeout of 20s`,
	}, {
		name:  "timeoutSec-unset-is-30-seconds",
		files: installWith(documentedInstall, policyJSON, hookFile(preToolUse, withGood(`-"timeoutSec"`))),
	}, {
		name:    "timeoutSec-unset-against-30-seconds",
		files:   installWith(documentedInstall, policyJSON, hookFile(preToolUse, handlerOf(`"bash": "{{BIN}} hook copilot --policy {{POLICY}} --timeout 30s", "matcher": "task"`))),
		want:    []string{"hook.timeout " + policyJSON + " " + h0},
		problem: `no "timeoutSec" (Copilot CLI's default, 30 s)`,
	}, {
		name:    "timeout-alias",
		files:   installWith(documentedInstall, policyJSON, hookFile(preToolUse, withGood(`-"timeoutSec"`)[:len(withGood(`-"timeoutSec"`))-1]+`, "timeout": 20}`)),
		want:    []string{"hook.timeout " + policyJSON + " " + h0 + "/timeout"},
		problem: `"timeout": 20 is not above`,
	}, {
		name:  "timeoutSec-wins-over-timeout",
		files: installWith(documentedInstall, policyJSON, hookFile(preToolUse, withGood(`"timeout": 5`))),
	}, {
		name:    "timeoutSec-a-string-drops-a-policy-file",
		files:   installWith(documentedInstall, policyJSON, hookFile(preToolUse, withGood(`"timeoutSec": "30"`))),
		want:    []string{absent, "settings.invalid " + policyJSON + " " + h0 + "/timeoutSec"},
		problem: "hooks.preToolUse[0].timeoutSec is not a positive number of seconds: Copilot CLI skips the whole policy file",
		of:      "settings.invalid " + policyJSON + " " + h0 + "/timeoutSec",
	}, {
		name:    "timeoutSec-zero-skips-the-user-hook",
		files:   map[string]string{userHook: hookFile(preToolUse, withGood(`"timeoutSec": 0`))},
		want:    []string{absent, "settings.invalid " + userHook + " " + h0 + "/timeoutSec"},
		problem: "Copilot CLI skips this hook",
		of:      "settings.invalid " + userHook + " " + h0 + "/timeoutSec",
	}, {
		name:  "malformed-hook-beside-the-user's-gate",
		files: map[string]string{userHook: hookFile(preToolUse, handlerOf(`"bash": "`+goodCommand+`", "exec": "{{BIN}}"`), goodHandler)},
		want:  []string{"settings.invalid " + userHook + " " + h0, "hook.unmanaged " + userHook + " /hooks/preToolUse/1"},
	}, {
		name:    "env-in-the-handler",
		files:   installWith(documentedInstall, policyJSON, hookFile(preToolUse, withGood(`"env": {"BASH_ENV": "/tmp/x.sh"}`))),
		want:    []string{"hook.handler " + policyJSON + " " + h0 + "/env"},
		problem: `"env" sets BASH_ENV for the hook`,
	}, {
		name:    "BASH_ENV-in-the-environment",
		files:   documentedInstall,
		env:     map[string]string{"BASH_ENV": "/tmp/x.sh"},
		want:    []string{"hook.command " + policyJSON + " " + cmd0},
		problem: "BASH_ENV is set (to /tmp/x.sh)",
	}, {
		name:  "BASH_ENV-does-not-reach-an-exec-hook",
		files: installWith(documentedInstall, policyJSON, hookFile(preToolUse, handlerOf(`"exec": "{{BIN}}", "args": ["hook", "copilot", "--policy", "{{POLICY}}", "--timeout", "20s"], "timeoutSec": 30, "matcher": "task"`))),
		env:   map[string]string{"BASH_ENV": "/tmp/x.sh"},
	}, {
		name:    "command-found-on-PATH",
		files:   installWith(documentedInstall, policyJSON, hookFile(preToolUse, withGood(`"bash": "spawngate hook copilot --policy {{POLICY}} --timeout 20s"`))),
		want:    []string{"hook.command " + policyJSON + " " + cmd0},
		problem: `the command runs "spawngate", which is looked for when the hook runs`,
	}, {
		name:    "command-missing",
		files:   installWith(documentedInstall, policyJSON, hookFile(preToolUse, withGood(`"bash": "{{BASE}}/nowhere/spawngate hook copilot --policy {{POLICY}} --timeout 20s"`))),
		want:    []string{"hook.command " + policyJSON + " " + cmd0},
		problem: "does not exist",
	}, {
		name:    "command-for-another-host",
		files:   installWith(documentedInstall, policyJSON, hookFile(preToolUse, withGood(`"bash": "{{BIN}} hook claude-code --policy {{POLICY}}"`))),
		want:    []string{"hook.command " + policyJSON + " " + cmd0},
		problem: `not spawngate hook copilot`,
	}, {
		name:    "command-or-true",
		files:   installWith(documentedInstall, policyJSON, hookFile(preToolUse, withGood(`"bash": "`+goodCommand+` || true"`))),
		want:    []string{"hook.command " + policyJSON + " " + cmd0},
		problem: `(it holds "||")`,
	}, {
		name:  "command-alias-of-bash",
		files: installWith(documentedInstall, policyJSON, hookFile(preToolUse, handlerOf(`"command": "`+goodCommand+`", "timeoutSec": 30, "matcher": "task"`))),
	}, {
		name:    "policy-missing",
		files:   installWith(documentedInstall, policyJSON, hookFile(preToolUse, withGood(`"bash": "{{BIN}} hook copilot --policy {{BASE}}/nowhere.yaml --timeout 20s"`))),
		want:    []string{"hook.policy " + policyJSON + " " + cmd0},
		problem: "every spawn would be refused",
	}, {
		name:    "spawngate-on-subagentStart",
		files:   installWith(documentedInstall, policyJSON, hookFile("subagentStart", withGood(`-"matcher"`))),
		want:    []string{absent, "hook.event " + policyJSON + " /hooks/subagentStart/0"},
		problem: "spawngate runs on subagentStart, which does not stop a spawn",
		of:      "hook.event " + policyJSON + " /hooks/subagentStart/0",
	}, {
		name:    "http-hook",
		files:   installWith(documentedInstall, policyJSON, hookFile(preToolUse, `{"type": "http", "url": "http://127.0.0.1:8321/v1/hooks/copilot?spawngate", "timeoutSec": 30, "matcher": "task"}`)),
		want:    []string{"hook.http " + policyJSON + " " + h0 + "/url"},
		problem: "doctor does not check one",
	}, {
		name:    "policy-file-not-json",
		files:   installWith(documentedInstall, policyJSON, strings.Replace(hookFile(preToolUse, goodHandler), "]", "],", 1)),
		want:    []string{absent, "settings.invalid " + policyJSON + " "},
		problem: "does not parse as JSON (line 7",
		of:      "settings.invalid " + policyJSON + " ",
	}, {
		name:    "policy-file-without-version",
		files:   installWith(documentedInstall, policyJSON, strings.Replace(hookFile(preToolUse, goodHandler), `"version": 1,`, "", 1)),
		want:    []string{absent, "settings.invalid " + policyJSON + " "},
		problem: `has no "version": 1, which a policy file must have`,
		of:      "settings.invalid " + policyJSON + " ",
	}, {
		name:  "policy-file-with-disableAllHooks",
		files: installWith(documentedInstall, policyJSON, strings.Replace(hookFile(preToolUse, goodHandler), `"version": 1,`, `"version": 1, "disableAllHooks": false,`, 1)),
		want:  []string{absent, "settings.invalid " + policyJSON + " /disableAllHooks"},
	}, {
		name:  "user-hook-file-of-another-version",
		files: map[string]string{userHook: strings.Replace(hookFile(preToolUse, goodHandler), `"version": 1`, `"version": 2`, 1)},
		want:  []string{absent, "settings.invalid " + userHook + " /version"},
	}, {
		name:  "user-hook-file-without-version",
		files: map[string]string{userHook: strings.Replace(hookFile(preToolUse, goodHandler), `"version": 1,`, "", 1)},
		want:  []string{"hook.unmanaged " + userHook + " " + h0},
	}, {
		name:    "event-not-a-list-drops-the-file",
		files:   map[string]string{userHook: strings.Replace(hookFile(preToolUse, goodHandler), `"hooks": {`, `"hooks": {"postToolUse": {},`, 1)},
		want:    []string{absent, "settings.invalid " + userHook + " /hooks/postToolUse"},
		problem: "drops every hook in the file",
		of:      "settings.invalid " + userHook + " /hooks/postToolUse",
	}, {
		name:  "broken-hook-file-without-spawngate-is-not-ours",
		files: installWith(documentedInstall, userHook, "{", repoSettings, "{"),
	}, {
		name:    "policy-file-writable-by-its-group",
		files:   documentedInstall,
		prepare: chmod(policyJSON, 0o664),
		want:    []string{absent, "settings.invalid " + policyJSON + " "},
		problem: "can be written by its group or every user (mode 0664): Copilot CLI skips such a policy file",
		of:      "settings.invalid " + policyJSON + " ",
	}, {
		name:    "policy-file-a-link",
		files:   installWith(documentedInstall, policyJSON, "->../gate.json", "root/etc/github-copilot/gate.json", hookFile(preToolUse, goodHandler)),
		want:    []string{absent, "settings.invalid " + policyJSON + " "},
		problem: "is a symbolic link",
		of:      "settings.invalid " + policyJSON + " ",
	}, {
		name: "policy-file-not-named-json",
		files: map[string]string{"root/etc/github-copilot/policy.d/spawngate.yaml": hookFile(preToolUse, goodHandler), managedJSON: managedOnly,
			"root/etc/github-copilot/policy.d/sub/spawngate.json": hookFile(preToolUse, goodHandler)},
		want: []string{absent, "settings.invalid root/etc/github-copilot/policy.d/spawngate.yaml "},
	}, {
		name:    "policy-folder-writable-by-all",
		files:   documentedInstall,
		prepare: chmod("root/etc/github-copilot/policy.d", 0o777),
		want:    []string{"hook.writable " + policyJSON + " "},
		problem: "the model can delete the policy file",
	}, {
		name:    "managed-settings-not-json",
		files:   installWith(documentedInstall, managedJSON, "// managed\n"+managedOnly),
		want:    []string{unrestricted, "settings.invalid " + managedJSON + " "},
		problem: `Copilot CLI rejects the whole file, "allowManagedHooksOnly" with it`,
		of:      "settings.invalid " + managedJSON + " ",
	}, {
		name:    "managed-settings-writable-by-all",
		files:   documentedInstall,
		prepare: chmod(managedJSON, 0o666),
		want:    []string{unrestricted, "settings.invalid " + managedJSON + " "},
	}, {
		name:  "managed-settings-allowManagedHooksOnly-a-string",
		files: installWith(documentedInstall, managedJSON, `{"allowManagedHooksOnly": "true"}`),
		want:  []string{unrestricted, "settings.invalid " + managedJSON + " /allowManagedHooksOnly"},
	}, {
		name:  "managed-settings-unknown-keys-are-ignored",
		files: installWith(documentedInstall, managedJSON, `{"allowManagedHooksOnly": true, "disableAllHooks": true, "x": 1}`),
	}} {
		t.Run(tc.name, func(t *testing.T) {
			base := hosttest.Install(t, tc.files)
			if tc.prepare != nil {
				tc.prepare(t, base)
			}
			says := map[string]string{}
			if tc.problem != "" {
				says[cmp.Or(append([]string{tc.of}, tc.want...)...)] = tc.problem
			}
			wantFindings(t, base, diagnose(t, base, tc.project, tc.env), tc.want, says)
		})
	}
}

// wantFindings holds a diagnosis to the findings wanted, by brief and in
// any order, each with a problem and a fix; says are texts the problem of
// the finding of that brief must hold ({{BASE}} for the base). It holds
// when nothing is wanted.
func wantFindings(t *testing.T, base string, d *doctor.Diagnosis, want []string, says map[string]string) {
	t.Helper()
	t.Logf("findings:\n%s", showFindings(d))
	got := make([]string, len(d.Findings))
	for i, f := range d.Findings {
		got[i] = brief(base, f)
		text, checked := says[got[i]]
		switch {
		case f.Problem == "" || f.Fix == "":
			t.Errorf("%s: a finding needs a problem and a fix: %+v", got[i], f)
		case checked && !strings.Contains(f.Problem, strings.ReplaceAll(text, "{{BASE}}", base)):
			t.Errorf("%s: the problem does not say %q:\n%s", got[i], text, f.Problem)
		}
		delete(says, got[i])
	}
	sorted := slices.Sorted(slices.Values(want))
	if slices.Sort(got); !slices.Equal(got, sorted) {
		t.Fatalf("findings\n got %q\nwant %q\n%s", got, sorted, showFindings(d))
	}
	for b := range says {
		t.Errorf("no finding %s to say %q", b, says[b])
	}
	if d.Holds() == (len(want) > 0) {
		t.Errorf("Holds() is %v with %d findings", d.Holds(), len(d.Findings))
	}
}

// TestDoctorNotRoot: Copilot CLI skips a policy file, and rejects managed
// settings, that root does not own. Only root can give a file away.
func TestDoctorNotRoot(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("only root can give a file to another user")
	}
	for _, tc := range []struct {
		file string
		want []string
	}{
		{policyJSON, []string{"hook.absent " + policyJSON + " /hooks/preToolUse", "settings.invalid " + policyJSON + " "}},
		{managedJSON, []string{"hooks.unrestricted " + managedJSON + " /allowManagedHooksOnly", "settings.invalid " + managedJSON + " "}},
	} {
		t.Run(strings.ReplaceAll(tc.file, "/", "-"), func(t *testing.T) {
			base := hosttest.Install(t, documentedInstall)
			fatalIf(t, os.Lchown(filepath.Join(base, tc.file), 4242, 4242))
			wantFindings(t, base, diagnose(t, base, "", nil), tc.want, map[string]string{tc.want[1]: "is not owned by root"})
		})
	}
}

// TestDoctorPlaces holds the lines of what is reported and of the gate
// that holds, in files written over several lines, comments among them.
func TestDoctorPlaces(t *testing.T) {
	policy := "{\n" + // 1
		"  \"version\": 1,\n" + // 2
		"  \"hooks\": {\n" + // 3
		"    \"preToolUse\": [\n" + // 4
		"      {\"type\": \"command\", \"bash\": \"" + goodCommand + "\",\n" + // 5
		"       \"timeoutSec\": 20,\n" + // 6
		"       \"matcher\": \"Agent\"}\n" + // 7
		"    ]\n" + // 8
		"  }\n" + // 9
		"}\n"
	user := "// the user's settings\n" + // 1
		"{\n" + // 2
		"  \"hooks\": {\"preToolUse\": [\n" + // 3
		"    " + goodHandler + ",\n" + // 4
		"  ]},\n" + // 5
		"}\n"
	for _, tc := range []struct {
		name  string
		files map[string]string
		// findings are FILE:LINE ID in the order reported; gates FILE:LINE.
		findings, gates []string
	}{{
		name:  "documented",
		files: documentedInstall,
		gates: []string{policyJSON + ":5"},
	}, {
		name:  "every-layer",
		files: map[string]string{policyJSON: policy, userSettings: user, repoSettings: "{\n\n" + `"disableAllHooks": true}`},
		findings: []string{repoSettings + ":3 hook.disabled", managedJSON + ":0 hooks.unrestricted",
			policyJSON + ":6 hook.timeout", policyJSON + ":7 hook.matcher"},
		gates: []string{policyJSON + ":5"},
	}, {
		name:     "the-user's-settings-with-comments",
		files:    map[string]string{userSettings: user},
		findings: []string{userSettings + ":4 hook.unmanaged"},
		gates:    []string{userSettings + ":4"},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			base := hosttest.Install(t, tc.files)
			d := diagnose(t, base, "", nil)
			at := func(file string, line int) string {
				rel, _ := filepath.Rel(base, file)
				return fmt.Sprintf("%s:%d", filepath.ToSlash(rel), line)
			}
			var findings, gates []string
			for _, f := range d.Findings {
				findings = append(findings, at(f.File, f.Line)+" "+f.ID)
			}
			for _, g := range d.Gates {
				gates = append(gates, at(g.File, g.Line))
			}
			if !slices.Equal(findings, tc.findings) || !slices.Equal(gates, tc.gates) {
				t.Errorf("findings %q and gates %q,\nwant %q and %q\n%s", findings, gates, tc.findings, tc.gates, showFindings(d))
			}
		})
	}
}

// TestDoctorCannotEvaluate: a file Copilot CLI reads that exists and
// cannot be read (a folder where a file belongs, a file far larger than
// any a doctor reads, a file where policy.d belongs) is an error, never a
// finding or a pass.
func TestDoctorCannotEvaluate(t *testing.T) {
	big := `{"hooks": {}, "x": "` + strings.Repeat("x", doctor.MaxConfigBytes) + `"}`
	for _, tc := range []struct {
		path, content string
		drop          string // a file of the installation the path stands in place of
		says          string
	}{
		{managedJSON + "/", "", managedJSON, "is not a file"},
		{userSettings + "/", "", "", "is not a file"},
		{repoSettings + "/", "", "", "is not a file"},
		{claudeSettings + "/", "", "", "is not a file"},
		{userHook, big, "", "larger than"},
		{"root/etc/github-copilot/policy.d", "{}", policyJSON, "cannot be read"},
	} {
		t.Run(strings.ReplaceAll(strings.Trim(tc.path, "/"), "/", "-"), func(t *testing.T) {
			files := installWith(documentedInstall, tc.path, tc.content)
			delete(files, tc.drop)
			base := hosttest.Install(t, files)
			diag, err := Adapter{}.Doctor(context.Background(), hosttest.DoctorOptions(base, Name))
			var de *doctor.Error
			if !errors.As(err, &de) || !strings.Contains(de.Msg, tc.says) {
				t.Fatalf("got %v and %v, want a *doctor.Error saying %q", diag, err, tc.says)
			}
		})
	}
}

// FuzzDoctorHookFile: any hook file in any layer, doctor reads without
// panicking: its shape, its hooks, its switches and their lines.
func FuzzDoctorHookFile(f *testing.F) {
	for _, s := range []string{hookFile(preToolUse, goodHandler), settingsWith(`"disableAllHooks": true, `, goodHandler),
		hookFile(preToolUse, `{"matcher": "(", "hooks": [{"exec": "spawngate", "args": [1]}]}`, `{"type": "http", "url": "spawngate"}`),
		`{"version": 1, "hooks": {"PreToolUse": [{"bash": "spawngate", "timeout": -1, "env": {"A": 1}}]}}`} {
		f.Add(s, uint8(0), true)
	}
	f.Fuzz(func(t *testing.T, s string, layer uint8, settings bool) {
		d := &checkup{}
		l := hookLayer(layer % 3)
		doc := &configDoc{File: &doctor.File{Path: "/c/hooks.json", Data: doctor.StripJSONC([]byte(s))}, layer: l, settings: settings && l != policyLayer}
		d.Files = append(d.Files, doc.File)
		d.docs = append(d.docs, doc)
		v, _, problem := doctor.DecodeJSON(doc.Data)
		obj, ok := v.(map[string]any)
		if problem != "" || !ok {
			return
		}
		doc.Tree = obj
		d.collect(doc)
		diag := d.judge(context.Background())
		d.Finish(diag)
	})
}
