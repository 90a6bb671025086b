package gemini

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spawngate/spawngate/internal/document"
	"github.com/spawngate/spawngate/internal/host"
	"github.com/spawngate/spawngate/internal/host/doctor"
)

// What the doctor knows of Gemini CLI's hooks is what Gemini CLI 0.61.0
// was seen to do, run headless against a scripted model, and what its
// bundle says (settings.ts, hookRegistry, hookPlanner, hookRunner,
// policy/config, policy/toml-loader, policy-engine):
//
//   - Settings come in four files, merged: system defaults
//     (GEMINI_CLI_SYSTEM_DEFAULTS_PATH, else system-defaults.json beside
//     the system file) < the user's ~/.gemini/settings.json (GEMINI_CLI_HOME
//     replaces ~) < the project's .gemini/settings.json (trusted folders
//     only) < system settings (GEMINI_CLI_SYSTEM_SETTINGS_PATH, else
//     /etc/gemini-cli/settings.json). Each is JSON with comments; one that
//     does not parse stops Gemini CLI from starting. The two system files
//     are skipped, with a warning, unless they and every folder above
//     them are root's and writable by root alone.
//   - hooks.BeforeTool lists concatenate across the files; a group is
//     {"matcher", "sequential", "hooks": [handlers]}, a handler
//     {"type": "command", "command", "name", "timeout", "env"}; one with
//     another type or no command is dropped. The matcher is an
//     unanchored JavaScript regular expression ("" and "*" select every
//     tool; one that does not compile must equal the tool's name).
//   - hooksConfig.enabled is the last file's that sets it (true unless
//     one does); hooksConfig.disabled is the union of every file's, and
//     names a hook by its "name", or its command when it has none.
//   - The command runs with bash -c, $GEMINI_PROJECT_DIR, $GEMINI_CWD and
//     $CLAUDE_PROJECT_DIR replaced by the project folder; "timeout" is in
//     milliseconds, 60000 unless set; a hook that times out, exits 1,
//     exits 2 silently or is killed lets the spawn through.
//
// It cannot be made proof against the session: a trusted project's
// hooksConfig.disabled naming the hook, GEMINI_CLI_SYSTEM_SETTINGS_PATH
// in the user's environment and --acp each take the hook away. The
// policy engine's backstop (backstop.go) is what held against all three.

// doctorPaths are where Gemini CLI reads its machine-wide files, under
// the root.
var doctorPaths = struct{ system, defaults, policies string }{
	system:   filepath.Join("etc", "gemini-cli", "settings.json"),
	defaults: "system-defaults.json", // beside the system file
	policies: filepath.Join("etc", "gemini-cli", "policies"),
}

// userSettings and projectSettings are the user's and the project's
// settings files, under their folders.
var (
	userSettings    = filepath.Join(".gemini", "settings.json")
	projectSettings = filepath.Join(".gemini", "settings.json")
)

// hostDefaultTimeout is how long Gemini CLI waits for a hook that sets no
// "timeout" (DEFAULT_HOOK_TIMEOUT, 60000 ms).
const hostDefaultTimeout = 60 * time.Second

// suggestedHandler is the documented hook, and suggestedSystem the system
// settings that hold it.
const (
	suggestedHandler = `{"type": "command", "command": "/usr/local/bin/spawngate hook gemini --policy /etc/spawngate/gemini.yaml --timeout 20s", "timeout": 30000}`
	suggestedGroup   = `{"matcher": "invoke_agent", "hooks": [` + suggestedHandler + `]}`
	suggestedSystem  = `{"hooksConfig": {"enabled": true}, "hooks": {"BeforeTool": [` + suggestedGroup + `]}}`
)

// settingsLayer is one of Gemini CLI's settings files, in merge order.
type settingsLayer int

const (
	defaultsLayer settingsLayer = iota
	userLayer
	projectLayer
	systemLayer
)

func (l settingsLayer) String() string {
	return [...]string{"system defaults", "user settings", "project settings", "system settings"}[l]
}

// managed says whether only root can write the layer's file (Gemini CLI
// skips a system file it could not trust).
func (l settingsLayer) managed() bool { return l == defaultsLayer || l == systemLayer }

// settingsDoc is one settings file as Gemini CLI reads it.
type settingsDoc struct {
	*doctor.File // Tree nil when Gemini CLI does not read the file
	layer        settingsLayer
}

// gateHook is a BeforeTool handler that runs spawngate, or means to.
type gateHook struct {
	doctor.Entry
	doc *settingsDoc
	// name is what hooksConfig.disabled names it by: its "name", else
	// its command.
	name string
}

var _ doctor.Doctor = Adapter{}

// checkup is one run of the doctor.
type checkup struct {
	doctor.Run
	project, home string // absolute; home is GEMINI_CLI_HOME when set
	docs          []*settingsDoc
	hooks         []*gateHook
	// enabled is the hooksConfig.enabled that holds, and the file that
	// sets it (nil for Gemini CLI's default, true).
	enabled   bool
	enabledBy *settingsDoc
	// systemEnabled says the system file itself sets enabled: true.
	systemEnabled bool
}

// Doctor implements doctor.Doctor: it reads Gemini CLI's settings as
// Gemini CLI does and reports every way the installation lets a spawn
// through that a file can close; what no file can close is in the
// diagnosis's notes. An error is a file it must read and cannot.
func (Adapter) Doctor(ctx context.Context, o doctor.Options) (*doctor.Diagnosis, error) {
	d, err := newCheckup(o)
	if err != nil {
		return nil, err
	}
	diag := d.judge(ctx)
	d.checkBackstop(ctx, diag)
	diag.Notes = notes
	d.Finish(diag)
	return diag, nil
}

// notes are the ways round the hook that no file closes, said on every
// run.
var notes = []string{
	"a project's .gemini/settings.json, in a folder the user trusts, can list the hook's name (or, for a hook with none, its command) in hooksConfig.disabled, which turns even a system hook off: the backstop still refuses by name what the policy refuses",
	"GEMINI_CLI_SYSTEM_SETTINGS_PATH in the environment Gemini CLI starts in replaces /etc/gemini-cli/settings.json, and the hook with it: the backstop in /etc/gemini-cli/policies is read all the same",
	"a session started with --acp (an IDE's Agent Client Protocol) runs no hook at all, and under --approval-mode yolo applies no policy rule either: nothing closes it",
	"in a folder the user has not trusted an interactive session runs no hook from any settings file (headless sessions refuse to start there)",
	"the backstop is static: it names agents, it does not read their definitions, so a definition changed after it was written runs under the old name's decision until doctor reports it stale and it is written again",
}

// newCheckup reads every settings file Gemini CLI reads, in merge order.
func newCheckup(o doctor.Options) (*checkup, error) {
	run, err := doctor.NewRun(o)
	if err != nil {
		return nil, err
	}
	d := &checkup{Run: run, project: run.Project, home: run.Home, enabled: true}
	if h := d.getenv("GEMINI_CLI_HOME"); h != "" && filepath.IsAbs(h) {
		d.home = filepath.Clean(h)
	}
	files := []struct {
		path  string
		layer settingsLayer
	}{{d.defaultsPath(), defaultsLayer}}
	if d.home != "" {
		files = append(files, struct {
			path  string
			layer settingsLayer
		}{filepath.Join(d.home, userSettings), userLayer})
	}
	if d.home != d.project {
		// Gemini CLI reads no project settings in the home folder itself.
		files = append(files, struct {
			path  string
			layer settingsLayer
		}{filepath.Join(d.project, projectSettings), projectLayer})
	}
	files = append(files, struct {
		path  string
		layer settingsLayer
	}{d.systemPath(), systemLayer})
	for _, f := range files {
		if err := d.read(f.path, f.layer); err != nil {
			return nil, err
		}
	}
	return d, nil
}

func (d *checkup) getenv(k string) string {
	if d.Options.Getenv == nil {
		return ""
	}
	return d.Options.Getenv(k)
}

// systemPath is the system settings file Gemini CLI reads:
// GEMINI_CLI_SYSTEM_SETTINGS_PATH, else /etc/gemini-cli/settings.json.
func (d *checkup) systemPath() string {
	if p := d.getenv("GEMINI_CLI_SYSTEM_SETTINGS_PATH"); p != "" {
		return d.abs(p)
	}
	return d.Options.Path(doctorPaths.system)
}

// defaultsPath is the system defaults file: GEMINI_CLI_SYSTEM_DEFAULTS_PATH,
// else system-defaults.json beside the system file.
func (d *checkup) defaultsPath() string {
	if p := d.getenv("GEMINI_CLI_SYSTEM_DEFAULTS_PATH"); p != "" {
		return d.abs(p)
	}
	return filepath.Join(filepath.Dir(d.systemPath()), doctorPaths.defaults)
}

// abs is a path from the environment, relative to the folder Gemini CLI
// starts in.
func (d *checkup) abs(p string) string {
	if filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	return filepath.Join(d.project, p)
}

// read reads one settings file: nothing for one that does not exist; a
// finding, when it names spawngate, for one Gemini CLI does not read.
func (d *checkup) read(path string, layer settingsLayer) error {
	data, found, err := doctor.ReadConfig(path)
	if !found || err != nil {
		return err
	}
	doc := &settingsDoc{File: &doctor.File{Path: path, Data: doctor.StripJSONC(data)}, layer: layer}
	d.Files = append(d.Files, doc.File)
	d.docs = append(d.docs, doc)
	if layer.managed() {
		if why := d.insecure(path); why != "" {
			d.Add(path, "settings.invalid", "", why+": Gemini CLI skips the "+layer.String()+" file (\"Security Warning: Skipping\"), and every hook and switch in it",
				"keep the file, and every folder above it, owned by root and writable by root alone: chown root:root, chmod 644 the file, chmod 755 the folders")
			return nil
		}
	}
	v, line, problem := doctor.DecodeJSON(doc.Data)
	if problem == "" {
		if doc.Tree, _ = v.(map[string]any); doc.Tree == nil {
			problem, line = "it is not a JSON object", 1
		}
	}
	if problem != "" {
		doc.Tree = nil
		if doc.NamesSpawngate() || layer == systemLayer {
			d.Findings = append(d.Findings, doctor.Finding{ID: "settings.invalid", File: path, Line: line,
				Problem: "does not parse as JSON (" + problem + "): Gemini CLI refuses to start with it, and doctor cannot tell what it sets",
				Fix:     "make it valid JSON (comments are allowed, trailing commas are not)"})
		}
		return nil
	}
	d.collect(doc)
	return nil
}

// insecure says why Gemini CLI skips a system file, "" when it reads it:
// the file and every folder above it (up to the root the options give)
// must be root's and writable by root alone. Options.Owners stand in for
// root.
func (d *checkup) insecure(path string) string {
	owners := d.Options.OwnersFor()
	top := filepath.Clean(d.Options.Path("."))
	for p := path; ; p = filepath.Dir(p) {
		fi, err := os.Stat(p)
		if err != nil {
			return p + " cannot be looked at (" + host.Cause(err) + ")"
		}
		what := "its folder " + p
		if p == path {
			what = "it"
		}
		switch {
		case fi.Mode().Perm()&0o022 != 0:
			return fmt.Sprintf("%s can be written by its group or every user (mode %04o)", what, fi.Mode().Perm())
		case !owners.Trusts(fi):
			return what + " is not owned by root"
		}
		if p == top || p == filepath.Dir(p) || !strings.HasPrefix(path, top) && p == string(filepath.Separator) {
			return ""
		}
	}
}

// collect reads a file's hook switches and its spawngate handlers.
func (d *checkup) collect(doc *settingsDoc) {
	if cfg, ok := doc.Tree["hooksConfig"].(map[string]any); ok {
		if on, ok := cfg["enabled"].(bool); ok {
			d.enabled, d.enabledBy = on, doc
			if doc.layer == systemLayer {
				d.systemEnabled = on
			}
		}
	}
	hooks, ok := doc.Tree["hooks"].(map[string]any)
	if !ok {
		return
	}
	groups, ok := hooks[event].([]any)
	if !ok {
		return
	}
	for i, g := range groups {
		gptr := fmt.Sprintf("/hooks/%s/%d", event, i)
		group, ok := g.(map[string]any)
		handlers, listed := group["hooks"].([]any)
		if !ok || !listed {
			if mentions(g) {
				d.Add(doc.Path, "settings.invalid", gptr, doctor.SettingName(gptr)+" is not a group with a list of hooks: Gemini CLI drops it, the spawngate hook in it too",
					"write it as "+suggestedGroup)
			}
			continue
		}
		var matcher *string
		if m, ok := group["matcher"].(string); ok {
			matcher = &m
		}
		for j, raw := range handlers {
			hptr := fmt.Sprintf("%s/hooks/%d", gptr, j)
			if h := d.handler(doc, raw, hptr); h != nil {
				h.Matcher, h.MatcherPointer = matcher, gptr+"/matcher"
				if matcher == nil {
					h.MatcherPointer = gptr
				}
				d.hooks = append(d.hooks, h)
			}
		}
	}
}

// handler reads one handler, and keeps it when it runs spawngate.
func (d *checkup) handler(doc *settingsDoc, raw any, ptr string) *gateHook {
	obj, ok := raw.(map[string]any)
	if !ok || !mentions(raw) {
		return nil
	}
	cmd, _ := obj["command"].(string)
	if obj["type"] != "command" || cmd == "" {
		d.Add(doc.Path, "settings.invalid", ptr, doctor.SettingName(ptr)+` has no "type": "command" with a command: Gemini CLI drops the handler, and the spawns it would judge start unjudged`,
			"write it as "+suggestedHandler)
		return nil
	}
	h := &gateHook{doc: doc, name: cmd, Entry: doctor.Entry{File: doc.File, Pointer: ptr, Layer: doc.layer.String(), Managed: doc.layer.managed(),
		Event: event, Command: cmd, CommandKey: "command", Timeout: hostDefaultTimeout, Keys: obj}}
	if n, ok := obj["name"].(string); ok && n != "" {
		h.name = n
	}
	if t, set := obj["timeout"]; set {
		n, ok := t.(json.Number)
		ms, err := n.Float64()
		if !ok || err != nil || ms <= 0 {
			d.Add(doc.Path, "hook.timeout", ptr+"/timeout", `"timeout": `+doctor.ShowJSON(t)+` is not a positive number of milliseconds: doctor cannot tell how long Gemini CLI waits, and a hook that times out lets the spawn through`,
				`set "timeout": 30000`)
		} else {
			h.Timeout, h.TimeoutSet = time.Duration(ms*float64(time.Millisecond)), true
		}
	}
	return h
}

// mentions tells whether a value names spawngate anywhere.
func mentions(v any) bool { return strings.Contains(strings.ToLower(doctor.ShowJSON(v)), "spawngate") }

// disabledBy lists where hooksConfig.disabled names a hook: the union of
// every file's lists.
func (d *checkup) disabledBy(name string) []doctor.Place {
	var at []doctor.Place
	for _, doc := range d.docs {
		cfg, _ := doc.Tree["hooksConfig"].(map[string]any)
		list, _ := cfg["disabled"].([]any)
		for i, v := range list {
			if v == name {
				at = append(at, doctor.Place{File: doc.Path, Pointer: fmt.Sprintf("/hooksConfig/disabled/%d", i)})
			}
		}
	}
	return at
}

// judge applies Gemini CLI's switches and checks every spawngate hook
// that runs.
func (d *checkup) judge(ctx context.Context) *doctor.Diagnosis {
	diag := &doctor.Diagnosis{}
	var running []*gateHook
	var off []string
	for _, h := range d.hooks {
		switch at := d.disabledBy(h.name); {
		case !d.enabled:
			off = append(off, fmt.Sprintf("the one in %s is turned off by \"hooksConfig\": {\"enabled\": false} in %s", h.doc.Path, d.enabledBy.Path))
		case len(at) > 0:
			off = append(off, fmt.Sprintf("the one in %s is turned off by hooksConfig.disabled in %s", h.doc.Path, at[0].File))
			for _, p := range at {
				d.Add(p.File, "hook.disabled", p.Pointer,
					fmt.Sprintf("hooksConfig.disabled names the spawngate hook (%q): Gemini CLI turns it off, a system hook too, and every sub-agent starts unjudged", h.name),
					"remove it; a trusted project can write it again, which no file prevents: keep the backstop in "+d.Options.Path(doctorPaths.policies))
			}
		default:
			running = append(running, h)
			diag.Gates = append(diag.Gates, h.Place())
		}
	}
	if !d.enabled {
		d.Add(d.enabledBy.Path, "hook.disabled", "/hooksConfig/enabled",
			fmt.Sprintf(`"hooksConfig": {"enabled": false} in %s is the last word on hooks: Gemini CLI runs none, the spawngate hook neither`, d.enabledBy.layer),
			fmt.Sprintf(`remove it, and set "hooksConfig": {"enabled": true} in %s, which no other settings file overrides`, d.systemPath()))
	} else if !d.systemEnabled && len(d.hooks) > 0 {
		d.Add(d.systemPath(), "hook.disabled", "/hooksConfig/enabled",
			`system settings do not set "hooksConfig": {"enabled": true}: "enabled": false in a project's or the user's settings (which a session can write) turns every hook off, the spawngate hook too`,
			`set "hooksConfig": {"enabled": true} here`)
	}
	if len(running) == 0 {
		problem := "no BeforeTool hook in any settings file Gemini CLI reads here runs spawngate: every sub-agent starts unjudged"
		if len(off) > 0 {
			problem = "no BeforeTool hook that runs spawngate is in effect (" + strings.Join(off, "; ") + "): every sub-agent starts unjudged"
		}
		d.Add(d.Options.Path(doctorPaths.system), "hook.absent", "/hooks/"+event, problem,
			"write "+suggestedSystem+" here, owned by root and writable by root alone")
		return diag
	}
	for _, h := range running {
		if !h.Managed {
			d.Add(h.doc.Path, "hook.unmanaged", h.Pointer,
				fmt.Sprintf(`the spawngate hook is in %s, which a session can change or turn off ("hooksConfig": {"enabled": false} in a trusted project's settings)`, h.doc.layer),
				fmt.Sprintf(`move it to %s, owned by root, with "hooksConfig": {"enabled": true}`, d.Options.Path(doctorPaths.system)))
		}
	}
	d.checkMatchers(running)
	for _, h := range running {
		d.checkCommand(ctx, h)
	}
	return diag
}

// selects tells whether a hook's matcher selects invoke_agent, as Gemini
// CLI matches: "" and "*" select every tool; else an unanchored
// regular expression, or, when it does not compile, the tool's exact
// name.
func selects(e *doctor.Entry, names []string) bool {
	m := ""
	if e.Matcher != nil {
		m = strings.TrimSpace(*e.Matcher)
	}
	if m == "" || m == "*" {
		return true
	}
	re, err := host.PortableMatcher(m)
	for _, n := range names {
		if err != nil && m == n || err == nil && re.MatchString(n) {
			return true
		}
	}
	return false
}

// checkMatchers reports a hook whose matcher misses invoke_agent, when
// no other running hook selects it; a matcher that cannot be read is
// reported, and selects nothing.
func (d *checkup) checkMatchers(running []*gateHook) {
	var readable []*doctor.Entry
	var hooks []*gateHook
	for _, h := range running {
		if h.Matcher != nil {
			if _, err := host.PortableMatcher(strings.TrimSpace(*h.Matcher)); err != nil && !isNotRegexp(err) {
				d.Add(h.doc.Path, "hook.matcher", h.MatcherPointer,
					fmt.Sprintf(`"matcher": %q cannot be checked: Gemini CLI reads it as a JavaScript regular expression, and %s`, *h.Matcher, document.OneLine(err.Error())),
					`set "matcher": "invoke_agent"`)
				continue
			}
		}
		readable, hooks = append(readable, &h.Entry), append(hooks, h)
	}
	tools := []doctor.Tool{{Name: spawnTool, Names: []string{spawnTool}}}
	for i, missed := range doctor.Uncovered(readable, tools, selects) {
		if len(missed) > 0 {
			d.Add(hooks[i].doc.Path, "hook.matcher", hooks[i].MatcherPointer,
				fmt.Sprintf(`"matcher": %q does not select %s, the tool every sub-agent starts under: those spawns are never judged`, *hooks[i].Matcher, spawnTool),
				`set "matcher": "invoke_agent"`)
		}
	}
}

// isNotRegexp tells whether a matcher is not a regular expression at all,
// which Gemini CLI then compares with the tool's name.
func isNotRegexp(err error) bool {
	var e *host.NotRegexpError
	return errors.As(err, &e)
}

// checkCommand checks a command hook that runs spawngate: what it sets
// in the hook's environment, the command, and that Gemini CLI waits for
// its answer.
func (d *checkup) checkCommand(ctx context.Context, h *gateHook) {
	d.CheckKeys(&h.Entry, handlerKeys, nil)
	d.CheckEntry(ctx, &h.Entry, d.command())
}

// command is how the doctor kit checks a spawngate command of Gemini
// CLI's.
func (d *checkup) command() doctor.Command {
	return doctor.Command{Host: Name, Title: "Gemini CLI", Project: d.project, Home: d.home,
		Vars:       map[string]string{"HOME": d.home, "GEMINI_PROJECT_DIR": d.project, "GEMINI_CWD": d.project, "CLAUDE_PROJECT_DIR": d.project},
		TimeoutKey: "timeout", TimeoutUnit: time.Millisecond,
		Owners:    d.Options.OwnersFor(d.project, d.home),
		LookedFor: "on the PATH Gemini CLI was started with", PolicyFrom: "the project folder, where the hook runs",
		Policy: "/etc/spawngate/gemini.yaml", Directly: `run spawngate directly: "command": "/usr/local/bin/spawngate hook gemini --policy FILE"`,
		ReadHook: d.Options.ReadHook}
}

// handlerKeys are what doctor asks of a command handler's keys.
var handlerKeys = map[string]doctor.Key{
	"env": {ID: "hook.command", Check: func(v any) (string, string) {
		if m, ok := v.(map[string]any); ok && len(m) == 0 {
			return "", ""
		}
		return fmt.Sprintf(`"env": %s sets variables for the hook: one set there can change what runs (BASH_ENV makes bash run a script first, LD_PRELOAD loads a library into spawngate), and doctor cannot tell which are harmless`, doctor.ShowJSON(v)),
			"remove it"
	}},
}

// DoctorHelp implements doctor.Doctor.
func (Adapter) DoctorHelp() string {
	return `/etc/gemini-cli/settings.json (or
GEMINI_CLI_SYSTEM_SETTINGS_PATH), system-defaults.json beside it,
~/.gemini/settings.json and the project's .gemini/settings.json, and the
backstop in /etc/gemini-cli/policies/spawngate.toml. It reports: no
BeforeTool hook; one a session can turn off (no "hooksConfig":
{"enabled": true} in system settings, hooksConfig.disabled naming it); a
system file Gemini CLI skips (not root's alone); a matcher that misses
invoke_agent; a timeout, in milliseconds, not above --timeout; a backstop
missing or stale (--write-backstop writes it). Notes say what no file
closes: hooksConfig.disabled in a trusted project, the environment's
GEMINI_CLI_SYSTEM_SETTINGS_PATH, --acp.`
}
