package codex

import (
	"context"
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

// The files of an installation under test, relative to its base: the
// machine's under root, the user's under home (CODEX_HOME is home/.codex
// unless a case sets it), the project's under proj.
const (
	reqTOML  = "root/etc/codex/requirements.toml"
	sysTOML  = "root/etc/codex/config.toml"
	sysJSON  = "root/etc/codex/hooks.json"
	userTOML = "home/.codex/config.toml"
	userJSON = "home/.codex/hooks.json"
	projTOML = "proj/.codex/config.toml"
	projJSON = "proj/.codex/hooks.json"
)

// goodCommand is the README's command with absolute paths: {{BIN}} is an
// executable outside the project, {{POLICY}} a policy file beside it.
const goodCommand = `{{BIN}} hook codex --policy {{POLICY}} --timeout 20s`

// managedOnly is requirements that keep every hook but managed ones out
// and hooks on.
const managedOnly = "allow_managed_hooks_only = true\n\n[features]\nhooks = true\n"

// tomlHook is a [hooks] group in array-of-tables form; matcher "-" leaves
// it out, timeout "" too.
func tomlHook(matcher, command, timeout string) string {
	s := "[[hooks.PreToolUse]]\n"
	if matcher != "-" {
		s += "matcher = " + tomlString(matcher) + "\n"
	}
	s += "\n[[hooks.PreToolUse.hooks]]\ntype = \"command\"\ncommand = " + tomlString(command) + "\n"
	if timeout != "" {
		s += "timeout = " + timeout + "\n"
	}
	return s
}

// tomlString is a TOML literal string, or a basic one when s holds a
// quote.
func tomlString(s string) string {
	if strings.Contains(s, "'") {
		return fmt.Sprintf("%q", s)
	}
	return "'" + s + "'"
}

// jsonHooks is a hooks.json holding one group per handler, on event.
func jsonHooks(event, matcher string, handlers ...string) string {
	m := ""
	if matcher != "-" {
		m = `"matcher": ` + fmt.Sprintf("%q", matcher) + ", "
	}
	return `{
  "hooks": {
    "` + event + `": [
      {` + m + `"hooks": [
        ` + strings.Join(handlers, ",\n        ") + `
      ]}
    ]
  }
}
`
}

// command is a command handler; extra adds fields (`, "async": true`).
func command(cmd, timeout, extra string) string {
	h := `{"type": "command", "command": ` + fmt.Sprintf("%q", cmd)
	if timeout != "" {
		h += `, "timeout": ` + timeout
	}
	return h + extra + `}`
}

// goodManaged is a managed installation that holds.
var goodManaged = managedOnly + "\n" + tomlHook(suggestedMatcher, goodCommand, "30")

// readmeHooks is the README's hooks.json, with absolute paths.
var readmeHooks = jsonHooks(preToolUse, suggestedMatcher, command(goodCommand, "30", ""))

// install writes files into a fresh installation, as hosttest.Install does, and
// fills in {{TRUST FILE G H}}, the [hooks.state] table that trusts the
// spawngate hook at group G, handler H of FILE (relative to the base) as
// written there, and {{TRUST-PROJECT}}, the [projects] entry that trusts
// proj.
func install(t *testing.T, files map[string]string) string {
	t.Helper()
	base := hosttest.NewInstallation(t)
	hosttest.Fill(t, base, files, "{{TRUST-PROJECT}}", fmt.Sprintf("[projects.%q]\ntrust_level = \"trusted\"\n", filepath.Join(base, "proj")))
	var trusting []string
	for name, text := range files {
		if strings.Contains(text, "{{TRUST ") {
			trusting = append(trusting, filepath.Join(base, name))
		}
	}
	// Trust is filled in once every file is written: it is the hash of
	// the hook as another file holds it.
	for _, p := range trusting {
		data, err := os.ReadFile(p)
		must(t, err)
		text := string(data)
		for {
			i := strings.Index(text, "{{TRUST ")
			if i < 0 {
				break
			}
			j := strings.Index(text[i:], "}}")
			var file string
			var g, h int
			if _, err := fmt.Sscanf(text[i+len("{{TRUST "):i+j], "%s %d %d", &file, &g, &h); err != nil {
				t.Fatalf("bad trust placeholder %q: %v", text[i:i+j+2], err)
			}
			text = text[:i] + trustTable(t, base, file, g, h) + text[i+j+2:]
		}
		must(t, os.WriteFile(p, []byte(text), 0o644))
	}
	return base
}

// trustTable is the [hooks.state] table that trusts the PreToolUse hook at
// group g, handler h of a file, with the hash computed from the file.
func trustTable(t *testing.T, base, file string, g, h int) string {
	t.Helper()
	d := &checkup{states: map[string]hookState{}}
	data, err := os.ReadFile(filepath.Join(base, file))
	must(t, err)
	// A file may trust its own hooks: the placeholders are not part of
	// the hook.
	data = regexp.MustCompile(`\{\{TRUST [^}]*\}\}`).ReplaceAll(data, nil)
	doc := &configDoc{File: &doctor.File{Path: filepath.Join(base, file), TOML: strings.HasSuffix(file, ".toml"), Data: data}}
	if doc.TOML {
		d.parseTOML(doc)
	} else {
		d.parseJSON(doc)
	}
	if doc.Tree == nil {
		t.Fatalf("trust: cannot read %s:\n%s", file, show(&doctor.Diagnosis{Findings: d.Findings}))
	}
	table, _ := doc.Tree["hooks"].(map[string]any)
	d.readHooks(hookSource{doc, "/hooks", table})
	for _, hk := range d.hooks {
		if hk.group == g && hk.handler == h {
			return fmt.Sprintf("[hooks.state.%q]\ntrusted_hash = %q\n", hk.key, hk.hash())
		}
	}
	t.Fatalf("trust: no spawngate hook at %s %d %d", file, g, h)
	return ""
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// diagnose runs the doctor on an installation: the project is proj unless
// given, CODEX_HOME unset unless codexHome names a folder under the base.
func diagnose(t *testing.T, base, project, codexHome string) *doctor.Diagnosis {
	t.Helper()
	if project == "" {
		project = "proj"
	}
	getenv := func(string) string { return "" }
	if codexHome != "" {
		getenv = func(k string) string {
			if k == "CODEX_HOME" {
				return filepath.Join(base, codexHome)
			}
			return ""
		}
	}
	o := hosttest.DoctorOptions(base, Name)
	o.Project, o.Getenv = filepath.Join(base, project), getenv
	d, err := Adapter{}.Doctor(context.Background(), o)
	if err != nil {
		t.Fatalf("Doctor: %v", err)
	}
	return d
}

// brief is a finding as the table states it: its ID, the file relative
// to the base, and the pointer, with the base written {{BASE}}.
func brief(base string, f doctor.Finding) string {
	rel, _ := filepath.Rel(base, f.File)
	return f.ID + " " + filepath.ToSlash(rel) + " " + strings.ReplaceAll(f.Pointer, doctor.EscapePointer(base), "{{BASE}}")
}

func show(d *doctor.Diagnosis) string {
	var b strings.Builder
	for _, f := range d.Findings {
		fmt.Fprintf(&b, "  %s:%d %s %s: %s; fix: %s\n", f.File, f.Line, f.ID, f.Pointer, f.Problem, f.Fix)
	}
	return b.String()
}

// stateKey is the pointer of a hook's [hooks.state] table in user
// config, as brief writes it.
func stateKey(file string, g, h int) string {
	return "/hooks/state/" + doctor.EscapePointer("{{BASE}}/"+file) + fmt.Sprintf(":pre_tool_use:%d:%d", g, h)
}

func TestDoctor(t *testing.T) {
	const (
		h0   = "/hooks/PreToolUse/0/hooks/0"
		m0   = "/hooks/PreToolUse/0/matcher"
		cmd0 = h0 + "/command"
	)
	absent := "hook.absent " + reqTOML + " /hooks/PreToolUse"
	trustUserJSON := "{{TRUST " + userJSON + " 0 0}}"
	for _, tc := range []struct {
		name      string
		files     map[string]string
		project   string // the folder sessions start in, under the base; "" is proj
		codexHome string // CODEX_HOME under the base; "" leaves it unset
		want      []string
		// problem, when set, must be in the problem of the finding it
		// names by its brief (the first finding when the brief is "").
		problem, of string
	}{{
		name:  "managed-holds",
		files: map[string]string{reqTOML: goodManaged},
	}, {
		name:  "managed-inline-holds",
		files: map[string]string{reqTOML: managedOnly + "\n[hooks]\nPreToolUse = [{matcher = '" + suggestedMatcher + "', hooks = [{type = \"command\", command = \"" + goodCommand + "\", timeout = 30}]}]\n"},
	}, {
		name:  "managed-in-system-hooks-json-holds",
		files: map[string]string{reqTOML: managedOnly, sysJSON: readmeHooks},
	}, {
		name:  "managed-in-system-config-holds",
		files: map[string]string{reqTOML: managedOnly, sysTOML: tomlHook(suggestedMatcher, goodCommand, "30")},
	}, {
		name:  "managed-holds-despite-project-and-user-turning-hooks-off",
		files: map[string]string{reqTOML: goodManaged, userTOML: "{{TRUST-PROJECT}}\n[features]\nhooks = false\n", projTOML: "[features]\nhooks = false\n"},
	}, {
		name:    "nothing-at-all",
		want:    []string{absent},
		problem: "no PreToolUse hook in any file Codex reads here runs spawngate",
	}, {
		name:  "other-hooks-only",
		files: map[string]string{userJSON: jsonHooks(preToolUse, "", command("/usr/bin/true", "", ""))},
		want:  []string{absent},
	}, {
		name:  "user-hook-untrusted",
		files: map[string]string{userJSON: readmeHooks},
		want: []string{absent, "hook.unmanaged " + userJSON + " " + h0,
			"hook.untrusted " + userTOML + " " + stateKey(userJSON, 0, 0)},
		problem: "is not trusted: this file stores no trusted_hash for it",
		of:      "hook.untrusted " + userTOML + " " + stateKey(userJSON, 0, 0),
	}, {
		name:    "user-hook-trusted",
		files:   map[string]string{userJSON: readmeHooks, userTOML: trustUserJSON},
		want:    []string{"hook.unmanaged " + userJSON + " " + h0},
		problem: "the spawngate hook is in user config, which is not managed",
	}, {
		name:  "user-hook-in-config-toml-trusted",
		files: map[string]string{userTOML: tomlHook(suggestedMatcher, goodCommand, "30") + "\n{{TRUST " + userTOML + " 0 0}}"},
		want:  []string{"hook.unmanaged " + userTOML + " " + h0},
	}, {
		name: "user-hook-changed-since-trusted",
		files: map[string]string{userJSON: jsonHooks(preToolUse, suggestedMatcher, command(goodCommand, "31", "")),
			userTOML: fmt.Sprintf("[hooks.state.\"{{BASE}}/%s:pre_tool_use:0:0\"]\ntrusted_hash = \"sha256:0000\"\n", userJSON)},
		want: []string{absent, "hook.unmanaged " + userJSON + " " + h0,
			"hook.untrusted " + userTOML + " " + stateKey(userJSON, 0, 0)},
		problem: "has changed since it was trusted (its trusted_hash here is sha256:0000",
		of:      "hook.untrusted " + userTOML + " " + stateKey(userJSON, 0, 0),
	}, {
		name: "trust-written-in-project-config-does-not-count",
		files: map[string]string{userJSON: readmeHooks, userTOML: "{{TRUST-PROJECT}}",
			projTOML: trustUserJSON},
		want: []string{absent, "hook.unmanaged " + userJSON + " " + h0,
			"hook.untrusted " + userTOML + " " + stateKey(userJSON, 0, 0)},
	}, {
		name:  "hook-disabled-in-its-state",
		files: map[string]string{userJSON: readmeHooks, userTOML: trustUserJSON + "enabled = false\n"},
		want: []string{absent,
			"hook.disabled " + userTOML + " " + stateKey(userJSON, 0, 0) + "/enabled"},
		problem: "is disabled",
		of:      absent,
	}, {
		name:    "project-hook-in-untrusted-project",
		files:   map[string]string{projJSON: readmeHooks},
		want:    []string{absent},
		problem: "is not loaded: the project is not trusted (no [projects.",
	}, {
		name:    "project-hook-in-project-marked-untrusted",
		files:   map[string]string{projJSON: readmeHooks, userTOML: "[projects.\"{{PROJECT}}\"]\ntrust_level = \"untrusted\"\n"},
		want:    []string{absent},
		problem: `the project is trusted only as "untrusted"`,
	}, {
		name:    "project-hook-trusted",
		files:   map[string]string{projJSON: readmeHooks, userTOML: "{{TRUST-PROJECT}}\n{{TRUST " + projJSON + " 0 0}}"},
		want:    []string{"hook.unmanaged " + projJSON + " " + h0},
		problem: "sessions outside this project do not read it",
	}, {
		name: "project-hook-read-from-a-subfolder",
		files: map[string]string{"proj/.git/": "", "proj/pkg/": "", projJSON: readmeHooks,
			userTOML: "{{TRUST-PROJECT}}\n{{TRUST " + projJSON + " 0 0}}"},
		project: "proj/pkg",
		want:    []string{"hook.unmanaged " + projJSON + " " + h0},
	}, {
		name: "project-root-above-the-git-root-is-not-read",
		files: map[string]string{"proj/pkg/.git/": "", projJSON: readmeHooks,
			userTOML: "{{TRUST-PROJECT}}\n{{TRUST " + projJSON + " 0 0}}"},
		project: "proj/pkg",
		want:    []string{absent},
	}, {
		name: "project-subfolder-trusted-on-its-own",
		files: map[string]string{"proj/.git/": "", "proj/pkg/.codex/hooks.json": readmeHooks,
			userTOML: "[projects.\"{{PROJECT}}/pkg\"]\ntrust_level = \"trusted\"\n{{TRUST proj/pkg/.codex/hooks.json 0 0}}"},
		project: "proj/pkg",
		want:    []string{"hook.unmanaged proj/pkg/.codex/hooks.json " + h0},
	}, {
		name: "codex-home-from-the-environment",
		files: map[string]string{userJSON: readmeHooks, userTOML: trustUserJSON,
			"elsewhere/hooks.json": readmeHooks, "elsewhere/config.toml": "{{TRUST elsewhere/hooks.json 0 0}}"},
		codexHome: "elsewhere",
		want:      []string{"hook.unmanaged elsewhere/hooks.json " + h0},
	}, {
		name:    "project-that-is-codex-home-is-read-once",
		files:   map[string]string{userJSON: readmeHooks, userTOML: trustUserJSON},
		project: "home",
		want:    []string{"hook.unmanaged " + userJSON + " " + h0},
	}, {
		name: "project-turns-hooks-off",
		files: map[string]string{reqTOML: "allow_managed_hooks_only = true\n\n" + tomlHook(suggestedMatcher, goodCommand, "30"),
			userTOML: "{{TRUST-PROJECT}}", projTOML: "[features]\nhooks = false\n"},
		want: []string{absent, "hook.disabled " + projTOML + " /features/hooks",
			"features.unpinned " + reqTOML + " /features/hooks"},
		problem: "[features] hooks = false in project config turns off every hook",
		of:      "hook.disabled " + projTOML + " /features/hooks",
	}, {
		name: "untrusted-project-cannot-turn-hooks-off",
		files: map[string]string{reqTOML: "allow_managed_hooks_only = true\n\n" + tomlHook(suggestedMatcher, goodCommand, "30"),
			projTOML: "[features]\nhooks = false\n"},
		want: []string{"features.unpinned " + reqTOML + " /features/hooks"},
	}, {
		name:  "user-turns-hooks-off-by-the-old-name",
		files: map[string]string{userJSON: readmeHooks, userTOML: trustUserJSON + "\n[features]\ncodex_hooks = false\n"},
		want: []string{absent, "hook.disabled " + userTOML + " /features/codex_hooks",
			"hook.unmanaged " + userJSON + " " + h0},
	}, {
		name: "a-later-layer-turns-hooks-back-on",
		files: map[string]string{reqTOML: "allow_managed_hooks_only = true\n\n" + tomlHook(suggestedMatcher, goodCommand, "30"),
			sysTOML: "[features]\nhooks = false\n", userTOML: "features.hooks = true\n"},
		want: []string{"features.unpinned " + reqTOML + " /features/hooks"},
	}, {
		name:  "requirements-turn-hooks-off",
		files: map[string]string{reqTOML: "allow_managed_hooks_only = true\n[features]\nhooks = false\n\n" + tomlHook(suggestedMatcher, goodCommand, "30")},
		want:  []string{absent, "hook.disabled " + reqTOML + " /features/hooks"},
	}, {
		name:    "allow-managed-hooks-only-drops-the-user-hook",
		files:   map[string]string{reqTOML: managedOnly, userJSON: readmeHooks, userTOML: trustUserJSON},
		want:    []string{absent},
		problem: "is dropped by allow_managed_hooks_only = true in",
	}, {
		name:  "managed-hook-not-alone",
		files: map[string]string{reqTOML: "[features]\nhooks = true\n\n" + tomlHook(suggestedMatcher, goodCommand, "30")},
		want:  []string{"hooks.unrestricted " + reqTOML + " /allow_managed_hooks_only"},
	}, {
		name:    "matcher-misses-v2",
		files:   map[string]string{reqTOML: managedOnly + "\n" + tomlHook(`^(spawn_agent|Agent)$`, goodCommand, "30")},
		want:    []string{"hook.matcher " + reqTOML + " " + m0},
		problem: "does not select collaborationspawn_agent, spawn_agent under another tool_namespace (a project's [features.multi_agent_v2] tool_namespace = \"crew\" makes it crewspawn_agent) or multi_agent_v1resume_agent, under which Codex starts sub-agents: those spawns are never judged (collaborationspawn_agent is multi_agent_v2's spawn tool, which [features] multi_agent_v2 = true in any trusted project's",
	}, {
		name: "matcher-misses-v2-that-a-trusted-project-turns-on",
		files: map[string]string{reqTOML: managedOnly + "\n" + tomlHook(`^(spawn_agent|Agent)$`, goodCommand, "30"),
			userTOML: "{{TRUST-PROJECT}}", projTOML: "[features]\nmulti_agent_v2 = true\n"},
		want:    []string{"hook.matcher " + reqTOML + " " + m0},
		problem: "and [features] multi_agent_v2 = true in {{BASE}}/proj/.codex/config.toml:2 turns it on)",
	}, {
		name:  "matcher-misses-v2-that-requirements-keep-off",
		files: map[string]string{reqTOML: managedOnly + "multi_agent_v2 = false\n\n" + tomlHook(`^(spawn_agent|Agent|multi_agent_v1resume_agent)$`, goodCommand, "30")},
	}, {
		// Go's regexp reads \Q...\E as a literal; Rust's regex, Codex's,
		// does not compile it, and Codex skips the group.
		name:    "matcher-rust-does-not-read",
		files:   map[string]string{reqTOML: managedOnly + "\n" + tomlHook(`^(\QAgent\E|.*spawn_agent|.*resume_agent)$`, goodCommand, "30")},
		want:    []string{"hook.absent " + reqTOML + " /hooks/PreToolUse", "hook.matcher " + reqTOML + " " + m0},
		problem: "is in a group whose matcher Codex cannot compile",
	}, {
		name:  "matcher-readme",
		files: map[string]string{reqTOML: managedOnly + "\n" + tomlHook(`^(Agent|.*spawn_agent|.*resume_agent)$`, goodCommand, "30")},
	}, {
		name:    "matcher-exact-name",
		files:   map[string]string{reqTOML: managedOnly + "\n" + tomlHook("spawn_agent", goodCommand, "30")},
		want:    []string{"hook.matcher " + reqTOML + " " + m0},
		problem: `matcher = 'spawn_agent' does not select collaborationspawn_agent`,
	}, {
		name:    "matcher-Agent-alone-selects-v1-only",
		files:   map[string]string{reqTOML: managedOnly + "\n" + tomlHook("Agent", goodCommand, "30")},
		want:    []string{"hook.matcher " + reqTOML + " " + m0},
		problem: `matcher = 'Agent' does not select collaborationspawn_agent, spawn_agent under another tool_namespace`,
	}, {
		name:    "matcher-of-another-tool",
		files:   map[string]string{reqTOML: managedOnly + "\n" + tomlHook("Bash", goodCommand, "30")},
		want:    []string{"hook.matcher " + reqTOML + " " + m0},
		problem: "does not select spawn_agent, collaborationspawn_agent, spawn_agent under another tool_namespace",
	}, {
		// A project's tool_namespace renames the v2 tool: an exact list
		// misses it.
		name:    "matcher-exact-list",
		files:   map[string]string{reqTOML: managedOnly + "\n" + tomlHook("Agent|collaborationspawn_agent", goodCommand, "30")},
		want:    []string{"hook.matcher " + reqTOML + " " + m0},
		problem: "does not select spawn_agent under another tool_namespace",
	}, {
		name:  "matcher-regex-unanchored",
		files: map[string]string{reqTOML: managedOnly + "\n" + tomlHook("(spawn|resume)_agent$", goodCommand, "30")},
	}, {
		name:  "matcher-star",
		files: map[string]string{reqTOML: managedOnly + "\n" + tomlHook("*", goodCommand, "30")},
	}, {
		name:  "matcher-empty",
		files: map[string]string{reqTOML: managedOnly + "\n" + tomlHook("", goodCommand, "30")},
	}, {
		name:  "matcher-omitted",
		files: map[string]string{reqTOML: managedOnly + "\n" + tomlHook("-", goodCommand, "30")},
	}, {
		name:    "matcher-does-not-compile",
		files:   map[string]string{reqTOML: managedOnly + "\n" + tomlHook("(spawn_agent", goodCommand, "30")},
		want:    []string{absent, "hook.matcher " + reqTOML + " " + m0},
		problem: "Codex skips a group whose matcher does not compile",
		of:      "hook.matcher " + reqTOML + " " + m0,
	}, {
		name: "matchers-of-two-hooks-together-cover",
		files: map[string]string{reqTOML: managedOnly + "\n" + tomlHook("Agent", goodCommand, "30") +
			"\n" + tomlHook("^.+(spawn|resume)_agent$", goodCommand, "30")},
	}, {
		name:    "command-found-on-PATH",
		files:   map[string]string{reqTOML: managedOnly + "\n" + tomlHook("*", "spawngate hook codex --policy {{POLICY}} --timeout 20s", "30")},
		want:    []string{"hook.command " + reqTOML + " " + cmd0},
		problem: `the command runs "spawngate", which is looked for when the hook runs`,
	}, {
		name:    "command-missing",
		files:   map[string]string{reqTOML: managedOnly + "\n" + tomlHook("*", "{{BASE}}/nowhere/spawngate hook codex --policy {{POLICY}} --timeout 20s", "30")},
		want:    []string{"hook.command " + reqTOML + " " + cmd0},
		problem: "does not exist",
	}, {
		name: "command-not-executable",
		files: map[string]string{reqTOML: managedOnly + "\n" + tomlHook("*", "{{BASE}}/other/spawngate hook codex --policy {{POLICY}} --timeout 20s", "30"),
			"other/spawngate": "#!/bin/sh\n"},
		want:    []string{"hook.command " + reqTOML + " " + cmd0},
		problem: "is not executable",
	}, {
		name: "command-is-a-folder",
		files: map[string]string{reqTOML: managedOnly + "\n" + tomlHook("*", "{{BASE}}/other/spawngate hook codex --policy {{POLICY}} --timeout 20s", "30"),
			"other/spawngate/": ""},
		want:    []string{"hook.command " + reqTOML + " " + cmd0},
		problem: "is a folder",
	}, {
		name:    "command-answers-for-claude-code",
		files:   map[string]string{reqTOML: managedOnly + "\n" + tomlHook("*", "{{BIN}} hook claude-code --policy {{POLICY}}", "30")},
		want:    []string{"hook.command " + reqTOML + " " + cmd0},
		problem: `the command runs "spawngate hook claude-code", not spawngate hook codex`,
	}, {
		name:    "command-or-true",
		files:   map[string]string{reqTOML: managedOnly + "\n" + tomlHook("*", goodCommand+" || true", "30")},
		want:    []string{"hook.command " + reqTOML + " " + cmd0},
		problem: `(it holds "||")`,
	}, {
		name:    "command-through-a-variable",
		files:   map[string]string{reqTOML: managedOnly + "\n" + tomlHook("*", "$SPAWNGATE hook codex --policy {{POLICY}}", "30")},
		want:    []string{"hook.command " + reqTOML + " " + cmd0},
		problem: "uses $SPAWNGATE, which doctor cannot know",
	}, {
		name:    "command-through-a-wrapper",
		files:   map[string]string{reqTOML: managedOnly + "\n" + tomlHook("*", "/bin/sh -c 'spawngate hook codex'", "30")},
		want:    []string{"hook.command " + reqTOML + " " + cmd0},
		problem: `does not run it directly (it runs "/bin/sh")`,
	}, {
		name: "command-in-home-through-HOME-and-tilde",
		files: map[string]string{reqTOML: managedOnly + "\n" + tomlHook("*", `"$HOME/bin/spawngate" hook codex --policy ~/policy.yaml --timeout 20s`, "30"),
			"home/bin/spawngate": "", "home/policy.yaml": "allowed_tools: [Read]\n"},
		// The binary and the policy lie in the home folder, which the
		// session writes.
		want: []string{"hook.command " + reqTOML + " " + cmd0, "hook.writable " + reqTOML + " " + cmd0, "hook.writable " + reqTOML + " " + cmd0},
		// written without the executable bit by install
		problem: "/home/bin/spawngate is not executable",
	}, {
		name: "command-inside-the-project",
		files: map[string]string{reqTOML: managedOnly + "\n" + tomlHook("*", "{{PROJECT}}/tools/spawngate hook codex --policy {{POLICY}} --timeout 20s", "30"),
			"proj/tools/spawngate": ""},
		want: []string{"hook.command " + reqTOML + " " + cmd0, "hook.writable " + reqTOML + " " + cmd0},
	}, {
		name:    "timeout-equal-to-spawngate's",
		files:   map[string]string{reqTOML: managedOnly + "\n" + tomlHook("*", goodCommand, "20")},
		want:    []string{"hook.timeout " + reqTOML + " " + h0 + "/timeout"},
		problem: "timeout = 20 is not above spawngate's own --timeout of 20s",
	}, {
		name:    "timeout-zero-is-one-second",
		files:   map[string]string{reqTOML: managedOnly + "\n" + tomlHook("*", goodCommand, "0")},
		want:    []string{"hook.timeout " + reqTOML + " " + h0 + "/timeout"},
		problem: "timeout = 0 is not above",
	}, {
		name:  "timeout-unset-is-600-seconds",
		files: map[string]string{reqTOML: managedOnly + "\n" + tomlHook("*", "{{BIN}} hook codex --policy {{POLICY}} --timeout 9m59s", "")},
	}, {
		name:    "timeout-unset-against-10-minutes",
		files:   map[string]string{reqTOML: managedOnly + "\n" + tomlHook("*", "{{BIN}} hook codex --policy {{POLICY}} --timeout 10m", "")},
		want:    []string{"hook.timeout " + reqTOML + " " + h0},
		problem: "no timeout (Codex's default, 600 s)",
	}, {
		name:    "async-hook",
		files:   map[string]string{reqTOML: managedOnly + "\n" + tomlHook("*", goodCommand, "30") + "async = true\n"},
		want:    []string{"hook.async " + reqTOML + " " + h0 + "/async"},
		problem: "async = true: Codex does not wait for the spawngate hook's answer",
	}, {
		name:    "policy-missing",
		files:   map[string]string{reqTOML: managedOnly + "\n" + tomlHook("*", "{{BIN}} hook codex --policy {{BASE}}/nowhere.yaml --timeout 20s", "30")},
		want:    []string{"hook.policy " + reqTOML + " " + cmd0},
		problem: "every spawn would be refused",
	}, {
		name:    "policy-relative",
		files:   map[string]string{reqTOML: managedOnly + "\n" + tomlHook("*", "{{BIN}} hook codex --policy policy.yaml --timeout 20s", "30"), "proj/policy.yaml": "x: 1\n"},
		want:    []string{"hook.policy " + reqTOML + " " + cmd0, "hook.writable " + reqTOML + " " + cmd0},
		problem: `--policy "policy.yaml" is a relative path`,
	}, {
		name: "policy-inside-the-project",
		files: map[string]string{reqTOML: managedOnly + "\n" + tomlHook("*", "{{BIN}} hook codex --policy {{PROJECT}}/.codex/policy.yaml --timeout 20s", "30"),
			"proj/.codex/policy.yaml": "x: 1\n"},
		want: []string{"hook.writable " + reqTOML + " " + cmd0},
	}, {
		name:    "spawngate-on-another-event",
		files:   map[string]string{reqTOML: managedOnly, sysJSON: jsonHooks("SubagentStart", "-", command(goodCommand, "30", ""))},
		want:    []string{absent, "hook.event " + sysJSON + " /hooks/SubagentStart/0/hooks/0"},
		problem: "spawngate runs on SubagentStart, which does not stop a spawn",
		of:      "hook.event " + sysJSON + " /hooks/SubagentStart/0/hooks/0",
	}, {
		name:    "hooks-json-not-json",
		files:   map[string]string{reqTOML: managedOnly, sysJSON: strings.Replace(readmeHooks, "]}", "],}", 1)},
		want:    []string{absent, "settings.invalid " + sysJSON + " "},
		problem: "does not parse as JSON (line",
		of:      "settings.invalid " + sysJSON + " ",
	}, {
		name: "hooks-json-with-an-http-hook-is-dropped-whole",
		files: map[string]string{reqTOML: managedOnly, sysJSON: jsonHooks(preToolUse, suggestedMatcher,
			command(goodCommand, "30", ""), `{"type": "http", "url": "http://127.0.0.1:8321/v1/hooks/codex"}`)},
		want:    []string{absent, "settings.invalid " + sysJSON + " /hooks/PreToolUse/0/hooks/1/type"},
		problem: `hooks.PreToolUse[0].hooks[1].type is "http", not one of command, mcp_tool, prompt or agent: Codex drops every hook in the file`,
		of:      "settings.invalid " + sysJSON + " /hooks/PreToolUse/0/hooks/1/type",
	}, {
		name:  "hooks-json-timeout-not-a-whole-number",
		files: map[string]string{reqTOML: managedOnly, sysJSON: jsonHooks(preToolUse, suggestedMatcher, command(goodCommand, "30.5", ""))},
		want:  []string{absent, "settings.invalid " + sysJSON + " /hooks/PreToolUse/0/hooks/0/timeout"},
	}, {
		name:  "hooks-json-with-an-unknown-top-level-key",
		files: map[string]string{reqTOML: managedOnly, sysJSON: strings.Replace(readmeHooks, "{", `{"version": 1,`, 1)},
		want:  []string{absent, "settings.invalid " + sysJSON + " /version"},
	}, {
		name: "hooks-json-unknown-fields-and-events-are-read",
		files: map[string]string{reqTOML: managedOnly, sysJSON: strings.Replace(
			jsonHooks(preToolUse, suggestedMatcher, command(goodCommand, "30", `, "args": ["x"], "statusMessage": null`)),
			`"hooks": {`, `"hooks": {"Notification": 3, `, 1)},
	}, {
		name:  "broken-hooks-json-without-spawngate-is-not-ours",
		files: map[string]string{reqTOML: goodManaged, userJSON: "{"},
	}, {
		name:    "user-config-not-toml",
		files:   map[string]string{reqTOML: goodManaged, userTOML: "[features\nhooks = true\n"},
		want:    []string{"settings.invalid " + userTOML + " "},
		problem: "Codex does not start with it",
	}, {
		name:  "requirements-not-toml",
		files: map[string]string{reqTOML: "allow_managed_hooks_only = \n"},
		want:  []string{absent, "settings.invalid " + reqTOML + " "},
	}, {
		name:  "toml-hook-timeout-a-string",
		files: map[string]string{reqTOML: managedOnly + "\n" + tomlHook("*", goodCommand, `"30"`)},
		want:  []string{absent, "settings.invalid " + reqTOML + " /hooks/PreToolUse/0/hooks/0/timeout"},
	}, {
		name:  "hook-state-not-a-table",
		files: map[string]string{reqTOML: goodManaged, userTOML: "[hooks.state]\nx = 1\n"},
		want:  []string{"settings.invalid " + userTOML + " /hooks/state/x"},
	}, {
		name:  "allow-managed-hooks-only-not-a-boolean",
		files: map[string]string{reqTOML: "allow_managed_hooks_only = \"true\"\n[features]\nhooks = true\n\n" + tomlHook(suggestedMatcher, goodCommand, "30")},
		want: []string{"settings.invalid " + reqTOML + " /allow_managed_hooks_only",
			"hooks.unrestricted " + reqTOML + " /allow_managed_hooks_only"},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			base := install(t, tc.files)
			d := diagnose(t, base, tc.project, tc.codexHome)
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
			if tc.problem == "" {
				return
			}
			problem := strings.ReplaceAll(tc.problem, "{{BASE}}", base)
			for _, f := range d.Findings {
				if tc.of == "" || brief(base, f) == tc.of {
					if !strings.Contains(f.Problem, problem) {
						t.Errorf("problem %q does not say %q", f.Problem, problem)
					}
					return
				}
			}
			t.Errorf("no finding %q", tc.of)
		})
	}
}

// TestDoctorPlaces holds the lines of what is reported, in a TOML file
// of arrays of tables, an inline one and a hooks.json, and the gate
// that holds at its handler.
func TestDoctorPlaces(t *testing.T) {
	base := install(t, map[string]string{reqTOML: goodManaged})
	d := diagnose(t, base, "", "")
	want := doctor.Place{File: filepath.Join(base, reqTOML), Line: 9, Pointer: "/hooks/PreToolUse/0/hooks/0"}
	if !d.Holds() || !slices.Equal(d.Gates, []doctor.Place{want}) {
		t.Fatalf("gates: %+v, want %+v\n%s", d.Gates, want, show(d))
	}

	second := "allow_managed_hooks_only = true\n" + // 1
		"[hooks]\n" + // 2
		"PreToolUse = [\n" + // 3
		"  {matcher = 'Agent', hooks = [{type = \"command\", command = \"" + goodCommand + "\", timeout = 30}]},\n" + // 4
		"  {matcher = 'Bash', hooks = [\n" + // 5
		"    {type = \"command\", command = \"spawngate hook codex --policy {{POLICY}}\", timeout = 20},\n" + // 6
		"  ]},\n" + // 7
		"]\n"
	base = install(t, map[string]string{reqTOML: second, userJSON: readmeHooks})
	d = diagnose(t, base, "", "")
	var got []string
	for _, f := range d.Findings {
		rel, _ := filepath.Rel(base, f.File)
		got = append(got, fmt.Sprintf("%s:%d %s", filepath.ToSlash(rel), f.Line, f.ID))
	}
	wantFindings := []string{
		reqTOML + ":0 features.unpinned",
		reqTOML + ":4 hook.matcher",
		reqTOML + ":5 hook.matcher",
		reqTOML + ":6 hook.command",
		reqTOML + ":6 hook.timeout",
	}
	if !slices.Equal(got, wantFindings) {
		t.Fatalf("findings in order: got %q, want %q\n%s", got, wantFindings, show(d))
	}

	base = install(t, map[string]string{userJSON: jsonHooks(preToolUse, "Agent", command(goodCommand, "30", "")), userTOML: "# trust\n\n{{TRUST " + userJSON + " 0 0}}"})
	d = diagnose(t, base, "", "")
	got = got[:0]
	for _, f := range d.Findings {
		rel, _ := filepath.Rel(base, f.File)
		got = append(got, fmt.Sprintf("%s:%d %s", filepath.ToSlash(rel), f.Line, f.ID))
	}
	wantFindings = []string{userJSON + ":4 hook.matcher", userJSON + ":5 hook.unmanaged"}
	if !slices.Equal(got, wantFindings) {
		t.Fatalf("findings in order: got %q, want %q\n%s", got, wantFindings, show(d))
	}
}

// TestDoctorCannotEvaluate: a file Codex reads that exists and cannot be
// read is an error, never a finding or a pass.
func TestDoctorCannotEvaluate(t *testing.T) {
	for _, tc := range []string{reqTOML, sysJSON, userTOML, userJSON, projJSON} {
		t.Run(strings.ReplaceAll(tc, "/", "-"), func(t *testing.T) {
			base := install(t, map[string]string{reqTOML: goodManaged, userTOML: "{{TRUST-PROJECT}}"})
			must(t, os.RemoveAll(filepath.Join(base, tc)))
			must(t, os.MkdirAll(filepath.Join(base, tc), 0o755))
			_, err := Adapter{}.Doctor(context.Background(), hosttest.DoctorOptions(base, Name))
			var de *doctor.Error
			if !errors.As(err, &de) {
				t.Fatalf("got %v, want a *doctor.Error", err)
			}
		})
	}
	// A project's hooks.json of any size: doctor reads no more than
	// doctor.MaxConfigBytes of it.
	t.Run("too-large", func(t *testing.T) {
		base := install(t, map[string]string{reqTOML: goodManaged, userTOML: "{{TRUST-PROJECT}}"})
		must(t, os.MkdirAll(filepath.Dir(filepath.Join(base, projJSON)), 0o755))
		big := `{"hooks": {}, "x": "` + strings.Repeat("x", doctor.MaxConfigBytes) + `"}`
		must(t, os.WriteFile(filepath.Join(base, projJSON), []byte(big), 0o644))
		_, err := Adapter{}.Doctor(context.Background(), hosttest.DoctorOptions(base, Name))
		var de *doctor.Error
		if !errors.As(err, &de) || !strings.Contains(de.Msg, "larger than") {
			t.Fatalf("got %v, want a *doctor.Error saying it is too large", err)
		}
	})
}

// TestTrustHash holds the hash against what Codex 0.171.0's app server
// answered (hooks/list currentHash) for the same hooks.
func TestTrustHash(t *testing.T) {
	str := func(s string) *string { return &s }
	for _, tc := range []struct {
		matcher, status *string
		command         string
		timeout         int64
		async           bool
		want            string
	}{
		{str(`^(spawn_agent|collaborationspawn_agent|collaboration\.spawn_agent|Agent)$`), str("Checking the sub-agent with spawngate"), "/usr/local/bin/spawngate hook codex --policy /etc/spawngate/codex.yaml --timeout 20s", 30, false,
			"sha256:31621082799f49f759c40a1a53e2da0a379fe447f7fe4a5ff1a0584bc00c51e2"},
		{str("^(spawn_agent|Agent)$"), nil, "/usr/local/bin/spawngate hook codex --policy /etc/p.yaml", 600, false,
			"sha256:d94f00c32ce78fcd613546dd9566984682cd9334428a3d05fe5c2312ea188a79"},
		{nil, nil, "proj", 600, false, "sha256:26146c8ea75a5586021ce7a458bd539bb3369ba8d3742c0a23d4a93d9369f5ae"},
		{nil, nil, "z", 600, false, "sha256:558b98a7bd06d94ba543ba81dec81d40988d04456b9c364b07098b6f22f5a089"},
		{str(""), str("hi"), "x y", 30, false, "sha256:20921ee4a0e77ab7900516089b862216ca28d2fdf9ffb2c6d2148075be500cea"},
		{str("a"), str("s<&>é"), "/t", 30, false, "sha256:289c107fe374e09ff2b92aba3eae28d2d5e10ac0c0e4774734791ce524c2dc14"},
		{str("*"), nil, "/a", 1, true, "sha256:ab9f071eded91c46238a77c8fdb51442fc6cad557de42fab64f558fb32681174"},
		{str(""), str(""), "x \"q\" \\ y\n\tz\x01\u2028é", 600, false, "sha256:846261c10ac84d44cb187955cab3b3c12c1e9f5b57c74d0bf581bce4f95e8b56"},
	} {
		if got := trustHash(preToolUse, tc.matcher, tc.command, tc.timeout, tc.async, tc.status, nil); got != tc.want {
			t.Errorf("trustHash(%q) = %s, want %s", tc.command, got, tc.want)
		}
	}
	// additionalContextLimit is part of the hash (hooks/list, 0.171.0, for
	// this hook with "additionalContextLimit": 4096).
	limit := uint64(4096)
	const want = "sha256:05878af6ec50e2a1d00ae241921826fb8a43f00af85915b44294502bc0126249"
	if got := trustHash(preToolUse, str("^(Agent|.*spawn_agent|.*resume_agent)$"), "/usr/local/bin/spawngate hook codex --policy /etc/spawngate/codex.yaml --timeout 20s", 30, false, nil, &limit); got != want {
		t.Errorf("with additionalContextLimit: %s, want %s", got, want)
	}
}

func TestMatcherSelects(t *testing.T) {
	str := func(s string) *string { return &s }
	for _, tc := range []struct {
		matcher *string
		names   []string
		want    bool
	}{
		{nil, []string{"spawn_agent"}, true},
		{str(""), []string{"collaborationspawn_agent"}, true},
		{str("*"), []string{"collaborationspawn_agent"}, true},
		{str("spawn_agent"), []string{"spawn_agent"}, true},
		{str("spawn_agent"), []string{"collaborationspawn_agent"}, false}, // a name is exact
		{str("Agent"), []string{"spawn_agent", "Agent"}, true},            // the alias
		{str("Agent"), []string{"collaborationspawn_agent"}, false},
		{str("Bash|spawn_agent"), []string{"spawn_agent"}, true},
		{str("Bash, spawn_agent"), []string{"spawn_agent"}, false}, // a regular expression, which has a space
		{str("spawn_agent$"), []string{"collaborationspawn_agent"}, true},
		{str(`^collaboration\.spawn_agent$`), []string{"collaborationspawn_agent"}, false},
		{str(suggestedMatcher), []string{"collaborationspawn_agent"}, true},
		{str("("), []string{"spawn_agent"}, false},
	} {
		if got := matcherSelects(tc.matcher, tc.names); got != tc.want {
			t.Errorf("matcherSelects(%s, %q) = %v, want %v", quoteMatcher(nil, tc.matcher), tc.names, got, tc.want)
		}
	}
}

func TestTOMLLinesByPointer(t *testing.T) {
	doc := "a = 1\n" + // 1
		"[features]\n" + // 2
		"hooks = false\n" + // 3
		"[[hooks.PreToolUse]]\n" + // 4
		"matcher = 'x'\n" + // 5
		"[[hooks.PreToolUse.hooks]]\n" + // 6
		"command = 'c'\n" + // 7
		"[[hooks.PreToolUse]]\n" + // 8
		"[[hooks.PreToolUse.hooks]]\n" + // 9
		"[[hooks.PreToolUse.hooks]]\n" + // 10
		"timeout = 3\n" + // 11
		"[hooks.state.\"/a/b:pre_tool_use:0:0\"]\n" + // 12
		"trusted_hash = 'h'\n" + // 13
		"[x]\n" + // 14
		"y = [{z = 1},\n" + // 15
		"  {w = 2}]\n" // 16
	got := tomlLinesByPointer([]byte(doc))
	for ptr, line := range map[string]int{
		"/a": 1, "/features": 2, "/features/hooks": 3,
		"/hooks/PreToolUse": 4, "/hooks/PreToolUse/0": 4, "/hooks/PreToolUse/0/matcher": 5,
		"/hooks/PreToolUse/0/hooks/0": 6, "/hooks/PreToolUse/0/hooks/0/command": 7,
		"/hooks/PreToolUse/1": 8, "/hooks/PreToolUse/1/hooks/0": 9, "/hooks/PreToolUse/1/hooks/1": 10,
		"/hooks/PreToolUse/1/hooks/1/timeout":               11,
		"/hooks/state/~1a~1b:pre_tool_use:0:0":              12,
		"/hooks/state/~1a~1b:pre_tool_use:0:0/trusted_hash": 13,
		"/x/y/0/z": 15, "/x/y/1": 16, "/x/y/1/w": 16,
	} {
		if got[ptr] != line {
			t.Errorf("line of %s = %d, want %d", ptr, got[ptr], line)
		}
	}
}

// FuzzDoctorTOML: any config.toml Codex reads, doctor reads without
// panicking: its lines, its hooks, its hook states and its features.
func FuzzDoctorTOML(f *testing.F) {
	for _, s := range []string{goodManaged, tomlHook(suggestedMatcher, goodCommand, "30") + "async = true\n",
		"[hooks]\nPreToolUse = [{hooks = [{type = 'command', command = 'spawngate'}]}]\n[hooks.state.'a']\nenabled = false\n",
		"features.hooks = false\n[x]\ny = [{z = [1, {w = 2}]}]\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d := &checkup{states: map[string]hookState{}}
		doc := &configDoc{File: &doctor.File{Path: "/c/config.toml", TOML: true, Data: []byte(s)}, layer: userLayer}
		d.Files = append(d.Files, doc.File)
		d.parseTOML(doc)
		if doc.Tree == nil {
			return
		}
		d.user = doc
		d.configs = []*configDoc{doc}
		table, _ := doc.Tree["hooks"].(map[string]any)
		d.sources = []hookSource{{doc, "/hooks", table}}
		d.collect()
		diag := d.judge(context.Background())
		d.Finish(diag)
	})
}
