package copilot

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/spawngate/spawngate/internal/document"
	"github.com/spawngate/spawngate/internal/host"
	"github.com/spawngate/spawngate/internal/host/doctor"
)

// What the doctor knows of Copilot CLI's hooks is what Copilot CLI 1.0.102
// was seen to do, run headless against a scripted model with each setting
// in turn (its debug log names every hook file it skips, and why):
//
//   - Hooks come from three layers. Machine policy: each *.json file of
//     /etc/github-copilot/policy.d (not its subfolders), read only when it
//     is a file (not a link) that root owns and root alone can write, and
//     dropped whole when any part of it does not fit the format (no
//     "version": 1, a key beside version and hooks, Claude Code's nested
//     form, one malformed hook). Nothing turns a policy hook off. User:
//     hooks in $COPILOT_HOME/settings.json (comments and trailing commas
//     allowed) and in every *.json under $COPILOT_HOME/hooks; COPILOT_HOME
//     (relative to the session's folder when relative) replaces
//     ~/.copilot. Repository, in a folder the user trusts, and only the
//     folder the session starts in (never one above it):
//     .github/hooks/**/*.json, and hooks in .github/copilot/settings.json,
//     .github/copilot/settings.local.json, .claude/settings.json and
//     .claude/settings.local.json (strict JSON).
//   - A hook file is {"version": 1, "hooks": {EVENT: [...]}}; version may
//     be left out, any other version drops the file, as does an event
//     whose value is not a list; unknown events and keys are ignored.
//     preToolUse and Claude Code's PreToolUse both run on a spawn; an
//     entry is a handler or a group {"matcher", "hooks": [handlers]}, a
//     handler's own matcher replacing its group's. A handler runs "bash"
//     (or "command") with /bin/bash --norc --noprofile -c, which reads the
//     file BASH_ENV names first, or "exec" with "args" and no shell; "env"
//     sets variables for it, BASH_ENV too. A malformed handler (no
//     command, both, a timeout that is not a positive number, an empty
//     matcher, a matcher that does not compile, "*" among them) is
//     skipped alone.
//   - A matcher is a regular expression that must match the whole tool
//     name, case counting: the spawn tool is task, and Agent too on
//     PascalCase PreToolUse only; no matcher selects every tool.
//   - "timeoutSec" (or "timeout"; timeoutSec wins) is how long Copilot
//     waits, 30 s unless set; a hook that outlives it lets the call
//     through, as does exit 0 without the flat deny.
//   - "disableAllHooks": true turns off the hooks of the file it is in;
//     in a repository's settings file it turns off every user and
//     repository hook. /etc/github-copilot/managed-settings.json (read,
//     as a policy file is, only when it is a file root owns and alone can
//     write, and whole when it parses; unknown keys are ignored) holds no
//     hooks: "allowManagedHooksOnly": true, or
//     "strictPluginOnlyCustomization" locking hooks, drops every user and
//     repository hook. Without allowManagedHooksOnly those run beside the
//     policy hook on the same call, and one answering with modifiedArgs
//     changes the spawn spawngate allowed.
//
// The doctor reports each way those rules let a spawn start without
// spawngate hook copilot judging it. It reads files and runs nothing.
// What no file shows is not its to see: a session started with --agent
// NAME runs that definition with no task call, and dynamic workflows
// (which 1.0.102 refuses to run) start theirs from an extension's code;
// server-managed settings of an organization; trust given on the command
// line (--trust-folder); the environment Copilot CLI is started with.

// doctorPaths are where Copilot CLI reads its machine-wide files, under
// the root.
var doctorPaths = struct{ policyDir, managed string }{
	policyDir: filepath.Join("etc", "github-copilot", "policy.d"),
	managed:   filepath.Join("etc", "github-copilot", "managed-settings.json"),
}

// The user's and the repository's files, relative to their folders.
var (
	userSettingsName  = "settings.json"
	userHooksDir      = "hooks"
	repoHooksDir      = filepath.Join(".github", "hooks")
	repoSettingsFiles = []string{
		filepath.Join(".github", "copilot", "settings.json"),
		filepath.Join(".github", "copilot", "settings.local.json"),
		filepath.Join(".claude", "settings.json"),
		filepath.Join(".claude", "settings.local.json"),
	}
)

// hostDefaultTimeout is how long Copilot CLI waits for a hook that sets no
// timeoutSec (observed: "Hook command timed out after 30 seconds").
const hostDefaultTimeout = 30 * time.Second

// suggestedHandler is the documented hook, and suggestedFile the policy
// file that holds it.
const (
	suggestedHandler = `{"type": "command", "bash": "/usr/local/bin/spawngate hook copilot --policy /etc/spawngate/copilot.yaml --timeout 20s", "timeoutSec": 30, "matcher": "task"}`
	suggestedFile    = `{"version": 1, "hooks": {"preToolUse": [` + suggestedHandler + `]}}`
	suggestedName    = "spawngate.json"
)

// hookLayer is one of the layers Copilot CLI reads hooks from.
type hookLayer int

const (
	policyLayer hookLayer = iota
	userLayer
	repoLayer
)

func (l hookLayer) String() string {
	return [...]string{"machine policy", "user config", "repository config"}[l]
}

// configDoc is one file Copilot CLI reads hooks from, as it reads it.
type configDoc struct {
	*doctor.File // Tree nil when the file does not parse
	layer        hookLayer
	// settings says the file is a settings file, whose "hooks" key holds
	// hooks; else it is a hook file.
	settings bool
	// off is the file's own "disableAllHooks": true.
	off bool
}

// gateHook is a handler that runs spawngate, or means to.
type gateHook struct {
	doctor.Entry
	doc *configDoc
	// url is an http hook's address, "" for a command.
	url string
	// matcherErr says why the matcher cannot be read as Copilot CLI
	// reads it.
	matcherErr error
	// timeoutKey is the key the timeout is written under (timeoutSec,
	// timeout), timeoutSec when none is.
	timeoutKey string
}

var _ doctor.Doctor = Adapter{}

// checkup is one run of the doctor: what it read and what it found.
type checkup struct {
	doctor.Run
	project string // absolute: the folder sessions start in
	home    string // absolute: what HOME and ~ are to a hook; "" for none
	userDir string // COPILOT_HOME or ~/.copilot, absolute; "" when unknown
	// managed is managed-settings.json, nil when there is none; its Tree
	// is nil when Copilot CLI rejects it.
	managed *doctor.File
	// only and locked are allowManagedHooksOnly and a
	// strictPluginOnlyCustomization that locks hooks, as managed settings
	// set them.
	only, locked bool
	docs         []*configDoc
	// repoOff are the repository settings files with "disableAllHooks":
	// true.
	repoOff []*configDoc
	hooks   []*gateHook // spawngate handlers on preToolUse or PreToolUse
	others  []*gateHook // spawngate handlers on any other event
	// off says why a spawngate hook does not run, once a file.
	off []string
}

// Doctor implements doctor.Doctor: it reads Copilot CLI's hook files as
// Copilot CLI does and reports every way the installation lets a spawn
// through. An error is a file it must read and cannot.
func (Adapter) Doctor(ctx context.Context, o doctor.Options) (*doctor.Diagnosis, error) {
	run, err := doctor.NewRun(o)
	if err != nil {
		return nil, err
	}
	d := &checkup{Run: run, project: run.Project, home: run.Home}
	d.userDir = d.findUserDir()
	if err := d.read(); err != nil {
		return nil, err
	}
	diag := d.judge(ctx)
	d.Finish(diag)
	return diag, nil
}

func (d *checkup) managedPath() string { return d.Options.Path(doctorPaths.managed) }
func (d *checkup) policyPath() string {
	return filepath.Join(d.Options.Path(doctorPaths.policyDir), suggestedName)
}

// findUserDir is the user's Copilot folder as Copilot CLI takes it:
// COPILOT_HOME, relative to the session's folder when relative (observed),
// else ~/.copilot.
func (d *checkup) findUserDir() string {
	return userDir(host.Env{Getenv: d.getenv, Home: d.home}, d.project)
}

// read reads every file Copilot CLI reads hooks and their switches from:
// managed settings, machine policy, the user's files, the repository's.
func (d *checkup) read() error {
	if err := d.readManaged(); err != nil {
		return err
	}
	if err := d.readPolicies(); err != nil {
		return err
	}
	if d.userDir != "" {
		if err := d.readFile(filepath.Join(d.userDir, userSettingsName), userLayer, true); err != nil {
			return err
		}
		if err := d.readHookDir(filepath.Join(d.userDir, userHooksDir), userLayer); err != nil {
			return err
		}
	}
	if err := d.readHookDir(filepath.Join(d.project, repoHooksDir), repoLayer); err != nil {
		return err
	}
	for _, name := range repoSettingsFiles {
		if err := d.readFile(filepath.Join(d.project, name), repoLayer, true); err != nil {
			return err
		}
	}
	return nil
}

// rootOnly says why Copilot CLI skips a machine file that is not a file
// root owns and root alone can write (it checks policy files and managed
// settings so), "" when it reads it. Options.Owners stand in for root.
func (d *checkup) rootOnly(fi fs.FileInfo) string {
	owners := d.Options.OwnersFor()
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		return "is a symbolic link"
	case !fi.Mode().IsRegular():
		return "is not a file"
	case fi.Mode().Perm()&0o022 != 0:
		return fmt.Sprintf("can be written by its group or every user (mode %04o)", fi.Mode().Perm())
	case !owners.Trusts(fi):
		return "is not owned by root"
	}
	return ""
}

// readManaged reads managed-settings.json: its switches, when Copilot
// CLI accepts it.
func (d *checkup) readManaged() error {
	path := d.managedPath()
	data, found, err := doctor.ReadConfig(path)
	if !found || err != nil {
		return err
	}
	d.managed = &doctor.File{Path: path, Data: data}
	d.Files = append(d.Files, d.managed)
	const lost = `Copilot CLI rejects the whole file, "allowManagedHooksOnly" with it`
	if fi, err := os.Lstat(path); err == nil {
		if why := d.rootOnly(fi); why != "" {
			d.Findings = append(d.Findings, doctor.Finding{ID: "settings.invalid", File: path,
				Problem: why + ": " + lost + " (it reads managed settings only from a file root owns and alone can write)",
				Fix:     "make it a file owned by root and writable by root alone: chown root:root, chmod 644"})
			return nil
		}
	}
	v, line, problem := doctor.DecodeJSON(data)
	if problem != "" {
		d.Findings = append(d.Findings, doctor.Finding{ID: "settings.invalid", File: path, Line: line,
			Problem: "does not parse as JSON (" + problem + "): " + lost,
			Fix:     "make it valid JSON, with no comments"})
		return nil
	}
	obj, ok := v.(map[string]any)
	if !ok {
		d.Findings = append(d.Findings, doctor.Finding{ID: "settings.invalid", File: path, Line: 1,
			Problem: "is not a JSON object: " + lost,
			Fix:     `make the file one JSON object: {"allowManagedHooksOnly": true}`})
		return nil
	}
	d.managed.Tree = obj
	switch v, set := obj["allowManagedHooksOnly"]; {
	case v == true:
		d.only = true
	case set && v != false:
		d.Add(path, "settings.invalid", "/allowManagedHooksOnly",
			fmt.Sprintf(`"allowManagedHooksOnly": %s is not true or false: doctor cannot tell what Copilot CLI makes of it`, doctor.ShowJSON(v)),
			"write true")
	}
	switch v := obj["strictPluginOnlyCustomization"].(type) {
	case bool:
		d.locked = v
	case []any:
		d.locked = slices.Contains(v, any("hooks"))
	}
	return nil
}

// readPolicies reads policy.d: its *.json files in name order, each
// only when Copilot CLI would. A file it skips is reported when it names
// spawngate.
func (d *checkup) readPolicies() error {
	dir := d.Options.Path(doctorPaths.policyDir)
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return &doctor.Error{File: dir, Msg: "cannot be read: " + host.Cause(err)}
	}
	for _, e := range entries { // ReadDir sorts by name
		path := filepath.Join(dir, e.Name())
		if e.IsDir() {
			continue // subfolders are not read
		}
		fi, err := e.Info()
		if err != nil {
			return &doctor.Error{File: path, Msg: "cannot be read: " + host.Cause(err)}
		}
		if !strings.HasSuffix(e.Name(), ".json") {
			if fi.Mode().IsRegular() && doctor.FileNamesSpawngate(path) {
				d.Add(path, "settings.invalid", "", "is not read: Copilot CLI reads only the *.json files of "+dir+", so the spawngate hook here never runs",
					"name it "+suggestedName)
			}
			continue
		}
		if why := d.rootOnly(fi); why != "" {
			if doctor.FileNamesSpawngate(path) {
				d.Add(path, "settings.invalid", "", why+": Copilot CLI skips such a policy file, the spawngate hook in it too (it reads only files root owns and alone can write)",
					"make it a file owned by root and writable by root alone: chown root:root, chmod 644")
			}
			continue
		}
		if err := d.readFile(path, policyLayer, false); err != nil {
			return err
		}
	}
	return nil
}

// readHookDir reads every *.json file under a hooks folder, subfolders
// too, in name order.
func (d *checkup) readHookDir(dir string, layer hookLayer) error {
	// With a trailing separator the folder is followed when it is a link
	// (~/.copilot/hooks kept with dotfiles), and paths still name it.
	err := filepath.WalkDir(dir+string(filepath.Separator), func(path string, e fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return err
		case e.IsDir() || !strings.HasSuffix(e.Name(), ".json"):
			return nil
		}
		return d.readFile(path, layer, false)
	})
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	var de *doctor.Error
	if err != nil && !errors.As(err, &de) {
		return &doctor.Error{File: dir, Msg: "cannot be read: " + host.Cause(err)}
	}
	return err
}

// readFile reads one file Copilot CLI reads hooks from, and the hooks in
// it: nothing for one that does not exist; a finding, when it names
// spawngate, for one Copilot CLI drops. settings says it is a settings
// file; a user's settings file may hold comments and trailing commas.
func (d *checkup) readFile(path string, layer hookLayer, settings bool) error {
	data, found, err := doctor.ReadConfig(path)
	if !found || err != nil {
		return err
	}
	if settings && layer == userLayer {
		data = doctor.StripJSONC(data)
	}
	doc := &configDoc{File: &doctor.File{Path: path, Data: data}, layer: layer, settings: settings}
	d.Files = append(d.Files, doc.File)
	d.docs = append(d.docs, doc)
	v, line, problem := doctor.DecodeJSON(data)
	if problem != "" {
		if doc.NamesSpawngate() {
			d.Findings = append(d.Findings, doctor.Finding{ID: "settings.invalid", File: path, Line: line,
				Problem: "does not parse as JSON (" + problem + "): Copilot CLI " + doc.drops(),
				Fix:     "make it valid JSON" + map[bool]string{true: "", false: ", with no comments and no trailing commas"}[settings && layer == userLayer]})
		}
		return nil
	}
	doc.Tree, _ = v.(map[string]any)
	if doc.Tree == nil {
		doc.shape("", "is not a JSON object", d)
		return nil
	}
	d.collect(doc)
	return nil
}

// drops says what Copilot CLI does with a file it cannot read.
func (doc *configDoc) drops() string {
	switch {
	case doc.layer == policyLayer:
		return "skips the whole policy file, the spawngate hook in it too"
	case doc.settings:
		return "reads no hook of the file, the spawngate hook neither"
	}
	return "drops every hook in the file, the spawngate hook too"
}

// shape reports, when the file names spawngate, a setting written in a
// shape for which Copilot CLI drops the whole file: the setting at ptr is
// what, or, with no ptr, the file is what the problem says.
func (doc *configDoc) shape(ptr, what string, d *checkup) {
	if !doc.NamesSpawngate() {
		return
	}
	problem := what
	if ptr != "" {
		problem = doctor.SettingName(ptr) + " is " + what
	}
	d.Add(doc.Path, "settings.invalid", ptr, problem+": Copilot CLI "+doc.drops(), doc.shapeFix())
}

// shapeFix is the fix for a hook file written in a shape Copilot CLI does
// not read.
func (doc *configDoc) shapeFix() string {
	if doc.settings {
		return `write the hooks as Copilot CLI reads them: "hooks": {"preToolUse": [` + suggestedHandler + `]}`
	}
	return "write the file as Copilot CLI reads it: " + suggestedFile
}

// collect reads a file's switches and its hooks, as Copilot CLI does.
func (d *checkup) collect(doc *configDoc) {
	obj := doc.Tree
	if !doc.settings {
		version, set := obj["version"]
		switch n, _ := version.(json.Number); {
		case set && n != "1":
			doc.shape("/version", doctor.ShowJSON(version)+", not 1", d)
			return
		case !set && doc.layer == policyLayer:
			doc.shape("", `has no "version": 1, which a policy file must have`, d)
			return
		}
	}
	if doc.layer == policyLayer {
		for k := range obj {
			if k != "version" && k != "hooks" {
				doc.shape("/"+doctor.EscapePointer(k), "a key a policy file may not hold (only version and hooks)", d)
				return
			}
		}
	}
	if v, set := obj["disableAllHooks"]; set && doc.layer != policyLayer {
		if _, ok := v.(bool); !ok && !doc.settings {
			doc.shape("/disableAllHooks", "not true or false", d)
			return
		}
		doc.off = v == true
		if v == true && doc.settings && doc.layer == repoLayer {
			d.repoOff = append(d.repoOff, doc)
		}
	}
	raw, set := obj["hooks"]
	if !set {
		return
	}
	table, ok := raw.(map[string]any)
	if !ok {
		doc.shape("/hooks", "not an object", d)
		return
	}
	found, skipped, bad := readHooks(doc, table)
	if bad == nil && doc.layer == policyLayer && len(skipped) > 0 {
		bad = &skipped[0] // one malformed hook drops a policy file
	}
	if bad != nil {
		doc.shape(bad.ptr, bad.what, d)
		return
	}
	for _, s := range skipped {
		if s.spawngate {
			id := "settings.invalid"
			if strings.HasSuffix(s.ptr, "/matcher") {
				id = "hook.matcher"
			}
			d.Add(doc.Path, id, s.ptr, fmt.Sprintf("%s is %s: Copilot CLI skips this hook, and the spawns it would judge start unjudged", doctor.SettingName(s.ptr), s.what),
				"write it as the documented hook: "+suggestedHandler)
		}
	}
	for _, h := range found {
		if h.Event == preToolUse || h.Event == pascalPreToolUse {
			d.hooks = append(d.hooks, h)
		} else {
			d.others = append(d.others, h)
		}
	}
}

// shapeError is a value Copilot CLI does not read: at ptr, what it is,
// and whether the hook it is part of names spawngate.
type shapeError struct {
	ptr, what string
	spawngate bool
}

// readHooks reads a hooks object as Copilot CLI does: the spawngate
// handlers in it, the handlers it skips, or what drops the whole object
// (an event whose value is not a list).
func readHooks(doc *configDoc, table map[string]any) (found []*gateHook, skipped []shapeError, bad *shapeError) {
	// take reads one handler at ptr; in a group, under the group's
	// matcher (nil for none) written at matcherPtr.
	take := func(event string, raw any, ptr string, inGroup bool, matcher *string, matcherPtr string) {
		obj, ok := raw.(map[string]any)
		if !ok {
			skipped = append(skipped, shapeError{ptr, "not an object", mentions(raw)})
			return
		}
		if _, group := obj["hooks"]; group && inGroup {
			skipped = append(skipped, shapeError{ptr + "/hooks", "a group nested in a group, more than one level deep", mentions(raw)})
			return
		}
		switch h, bad := readHandler(doc, obj, ptr, matcher, matcherPtr); {
		case bad != nil:
			skipped = append(skipped, *bad)
		case h != nil:
			h.Event = event
			found = append(found, h)
		}
	}
	for _, event := range slices.Sorted(maps.Keys(table)) {
		eptr := "/hooks/" + doctor.EscapePointer(event)
		list, ok := table[event].([]any)
		if !ok {
			return nil, nil, &shapeError{ptr: eptr, what: "not a list"}
		}
		for i, raw := range list {
			ptr := fmt.Sprintf("%s/%d", eptr, i)
			group, _ := raw.(map[string]any)
			inner, nested := group["hooks"]
			if !nested {
				take(event, raw, ptr, false, nil, "")
				continue
			}
			var matcher *string
			if m, set := group["matcher"]; set {
				s, _ := m.(string)
				matcher = &s
			}
			handlers, ok := inner.([]any)
			switch {
			case doc.layer == policyLayer:
				skipped = append(skipped, shapeError{ptr, "a group of hooks (Claude Code's nested form), which a policy file may not hold", mentions(raw)})
				continue
			case matcher != nil && *matcher == "":
				skipped = append(skipped, shapeError{ptr + "/matcher", "not a matcher (a regular expression that is not empty)", mentions(raw)})
				continue
			case !ok:
				skipped = append(skipped, shapeError{ptr + "/hooks", "not a list", mentions(raw)})
				continue
			}
			for j, h := range handlers {
				take(event, h, fmt.Sprintf("%s/hooks/%d", ptr, j), true, matcher, ptr+"/matcher")
			}
		}
	}
	return found, skipped, nil
}

// mentions tells whether a value names spawngate anywhere.
func mentions(v any) bool { return strings.Contains(strings.ToLower(doctor.ShowJSON(v)), "spawngate") }

// readHandler reads one handler as Copilot CLI does: nil for one that is
// not a command or http hook naming spawngate; a shapeError for one it
// skips. groupMatcher is its group's matcher, written at groupPtr.
func readHandler(doc *configDoc, obj map[string]any, ptr string, groupMatcher *string, groupPtr string) (*gateHook, *shapeError) {
	bad := func(key, what string) *shapeError {
		p := ptr
		if key != "" {
			p += "/" + key
		}
		return &shapeError{p, what, mentions(obj)}
	}
	h := &gateHook{doc: doc, timeoutKey: "timeoutSec", Entry: doctor.Entry{File: doc.File, Pointer: ptr, Layer: doc.layer.String(),
		Managed: doc.layer == policyLayer, Timeout: hostDefaultTimeout, Keys: obj, Matcher: groupMatcher, MatcherPointer: groupPtr}}
	if groupMatcher == nil {
		h.MatcherPointer = ptr
	}
	kind := "command"
	if t, set := obj["type"]; set {
		s, ok := t.(string)
		if !ok {
			return nil, bad("type", "not a string")
		}
		kind = s
	}
	switch kind {
	case "command":
		if bad := h.readCommand(obj, bad); bad != nil {
			return nil, bad
		}
		if h.CommandKey == "" {
			return nil, nil // PowerShell alone
		}
	case "http":
		u, ok := obj["url"].(string)
		if !ok {
			return nil, bad("url", "missing or not a string")
		}
		h.url, h.CommandKey = u, "url"
	case "prompt":
		return nil, nil
	default:
		return nil, bad("type", fmt.Sprintf("%q, not command, http or prompt", kind))
	}
	for _, k := range []string{"timeout", "timeoutSec"} { // timeoutSec wins
		v, set := obj[k]
		if !set {
			continue
		}
		n, ok := v.(json.Number)
		secs, err := n.Float64()
		if !ok || err != nil || secs <= 0 {
			return nil, bad(k, "not a positive number of seconds")
		}
		h.Timeout, h.TimeoutSet, h.timeoutKey = time.Duration(secs*float64(time.Second)), true, k
	}
	if m, set := obj["matcher"]; set {
		s, ok := m.(string)
		if !ok || s == "" {
			return nil, bad("matcher", "not a matcher (a regular expression that is not empty)")
		}
		h.Matcher, h.MatcherPointer = &s, ptr+"/matcher"
	}
	if h.Matcher != nil {
		_, h.matcherErr = anchored(*h.Matcher)
	}
	if !mentions(obj) {
		return nil, nil
	}
	return h, nil
}

// readCommand reads what a command handler runs: a shell command (bash,
// or its alias command) or an executable and its arguments (exec, args),
// never both.
func (h *gateHook) readCommand(obj map[string]any, bad func(key, what string) *shapeError) *shapeError {
	for _, k := range []string{"bash", "command"} {
		if v, set := obj[k]; set && h.CommandKey == "" {
			s, ok := v.(string)
			if !ok {
				return bad(k, "not a string")
			}
			h.Command, h.CommandKey = s, k
		}
	}
	exec, set := obj["exec"]
	switch {
	case set && h.CommandKey != "":
		return bad("", "a hook with both exec and a shell command ("+h.CommandKey+")")
	case set:
		s, ok := exec.(string)
		if !ok {
			return bad("exec", "not a string")
		}
		h.Command, h.CommandKey, h.Exec = s, "exec", true
		if a, set := obj["args"]; set {
			list, ok := a.([]any)
			if !ok {
				return bad("args", "not a list of strings")
			}
			for _, w := range list {
				s, ok := w.(string)
				if !ok {
					return bad("args", "not a list of strings")
				}
				h.Args = append(h.Args, s)
			}
		}
	case h.CommandKey == "":
		if _, ps := obj["powershell"]; !ps {
			return bad("", "a hook with no command (bash, command or exec)")
		}
		// A PowerShell hook alone: it does not run on Linux or macOS.
	}
	return nil
}

// anchored compiles a matcher as Copilot CLI matches it, against the
// whole tool name; a pattern is read only when it is written in the
// syntax every engine reads alike (host.PortableMatcher).
func anchored(matcher string) (*regexp.Regexp, error) {
	if _, err := host.PortableMatcher(matcher); err != nil {
		return nil, err
	}
	return regexp.Compile("^(?:" + matcher + ")$")
}

// judge applies Copilot CLI's switches and checks every spawngate hook
// that runs.
func (d *checkup) judge(ctx context.Context) *doctor.Diagnosis {
	diag := &doctor.Diagnosis{}
	// managedSwitch is what keeps user and repository hooks out, "" when
	// nothing does.
	managedSwitch := ""
	switch {
	case d.only:
		managedSwitch = fmt.Sprintf(`"allowManagedHooksOnly": true in %s`, d.managed.Path)
	case d.locked:
		managedSwitch = fmt.Sprintf(`"strictPluginOnlyCustomization", which locks hooks, in %s`, d.managed.Path)
	}
	offBy := func(h *gateHook) string {
		switch {
		case h.doc.off:
			return `"disableAllHooks": true in the same file`
		case h.doc.layer == policyLayer:
			return ""
		case managedSwitch != "":
			return managedSwitch
		case len(d.repoOff) > 0:
			return fmt.Sprintf(`"disableAllHooks": true in %s`, d.repoOff[0].Path)
		}
		return ""
	}
	var running []*gateHook
	selfOff := map[*configDoc]bool{}
	repoSwitched := false
	for _, h := range d.hooks {
		by := offBy(h)
		if by == "" {
			running = append(running, h)
			diag.Gates = append(diag.Gates, h.Place())
			continue
		}
		if why := fmt.Sprintf("the one in %s is turned off by %s", h.doc.Path, by); !slices.Contains(d.off, why) {
			d.off = append(d.off, why)
		}
		switch {
		case h.doc.off:
			selfOff[h.doc] = true
		case managedSwitch == "":
			repoSwitched = true
		}
	}
	for _, doc := range d.docs {
		if selfOff[doc] {
			d.Add(doc.Path, "hook.disabled", "/disableAllHooks", `"disableAllHooks": true turns off every hook in this file, the spawngate hook too`, "remove it")
		}
	}
	if repoSwitched {
		for _, doc := range d.repoOff {
			d.Add(doc.Path, "hook.disabled", "/disableAllHooks",
				`"disableAllHooks": true in a repository's settings turns off every user and repository hook of a session started here, in a folder the user trusts: the spawngate hook too`,
				fmt.Sprintf(`remove it, and move the hook to %s, owned by root, which no repository or user setting turns off`, d.policyPath()))
		}
	}
	for _, h := range d.others {
		d.Add(h.doc.Path, "hook.event", h.Pointer,
			fmt.Sprintf("spawngate runs on %s, which does not stop a spawn: only a preToolUse hook can refuse one", h.Event),
			"move it to preToolUse")
	}
	if len(running) == 0 {
		problem := "no preToolUse hook in any file Copilot CLI reads here runs spawngate: every sub-agent starts unjudged"
		if len(d.off) > 0 {
			problem = "no preToolUse hook that runs spawngate is in effect (" + strings.Join(d.off, "; ") + "): every sub-agent starts unjudged"
		}
		d.Add(d.policyPath(), "hook.absent", "/hooks/preToolUse", problem,
			fmt.Sprintf(`write %s here, owned by root and writable by root alone, and set "allowManagedHooksOnly": true in %s`, suggestedFile, d.managedPath()))
		return diag
	}
	policyGate := false
	for _, h := range running {
		if h.doc.layer == policyLayer {
			policyGate = true
			continue
		}
		d.Add(h.doc.Path, "hook.unmanaged", h.Pointer, unmanagedProblem(h.doc.layer),
			fmt.Sprintf(`move it to %s, owned by root, and set "allowManagedHooksOnly": true in %s`, d.policyPath(), d.managedPath()))
	}
	if policyGate && !d.only {
		problem := `managed settings do not set "allowManagedHooksOnly": true: user and repository preToolUse hooks, which a session can write, run beside the spawngate hook on the same call, and one that answers with modifiedArgs changes the spawn after spawngate judged it (Copilot CLI 1.0.102 then starts the agent that hook names)`
		if d.locked {
			problem = `managed settings lock hooks with "strictPluginOnlyCustomization" but do not set "allowManagedHooksOnly": true: hooks of plugins a user enables still run beside the spawngate hook on the same call, and one that answers with modifiedArgs changes the spawn after spawngate judged it`
		}
		d.Add(d.managedPath(), "hooks.unrestricted", "/allowManagedHooksOnly", problem, `set "allowManagedHooksOnly": true here`)
	}
	d.checkPolicyFolders(running)
	d.checkMatchers(running)
	for _, h := range running {
		if h.url != "" {
			d.Add(h.doc.Path, "hook.http", h.Pointer+"/url",
				fmt.Sprintf("an http hook sends spawns to %s: doctor does not check one (whether its server runs and answers in time, and whether Copilot CLI accepts the address: its code refuses a plain http:// address for preToolUse unless the environment allows it)", h.url),
				"use the command hook: "+suggestedHandler)
			continue
		}
		d.checkCommand(ctx, h)
	}
	return diag
}

// unmanagedProblem says how a session gets past a spawngate hook written
// in a user's or a repository's file.
func unmanagedProblem(l hookLayer) string {
	const off = `"disableAllHooks": true in a trusted repository's .github/copilot/settings.json, settings.local.json or .claude/settings.json (a repository can ship one; a session can write one) turns it off, and "disabledHooks" in the user's settings.json can name it`
	if l == userLayer {
		return "the spawngate hook is in user config, which a session can change or turn off: " + off + ", and a session started with COPILOT_HOME set elsewhere does not read it"
	}
	return "the spawngate hook is in repository config, which a session can change or turn off: " + off + ", and a session started in a subfolder, or in a folder the user does not trust, does not read it"
}

// checkPolicyFolders reports the policy files of running hooks that a
// session could delete or replace: Copilot CLI checks the file, not the
// folders above it.
func (d *checkup) checkPolicyFolders(running []*gateHook) {
	owners := d.Options.OwnersFor(d.project, d.home, d.userDir)
	var done []string
	for _, h := range running {
		if h.doc.layer != policyLayer || slices.Contains(done, h.doc.Path) {
			continue
		}
		done = append(done, h.doc.Path)
		if err := owners.Check(h.doc.Path); err != nil {
			d.Add(h.doc.Path, "hook.writable", "", document.OneLine(err.Error())+": the model can delete the policy file, or put another in its place, and the spawngate hook with it",
				"keep policy.d, and every folder above it, owned by root and writable by root alone")
		}
	}
}

// matchTools are the tools a spawngate hook's matchers must select
// together, each with the names it has in a payload: task, named Agent
// in the PascalCase one. run_dynamic_workflow is not among them: 1.0.102
// refuses every dynamic workflow itself ("Agent workflows are not
// available for this session"), so a matcher that misses it lets nothing
// start; the adapter refuses one that a hook does see.
func matchTools() []doctor.Tool {
	var tools []doctor.Tool
	for _, t := range (Adapter{}).SpawnTools() {
		switch t {
		case agentTool, workflowTool:
		case taskTool:
			tools = append(tools, doctor.Tool{Name: t, Names: []string{t, agentTool}})
		default:
			tools = append(tools, doctor.Tool{Name: t, Names: []string{t}})
		}
	}
	return tools
}

// selects tells whether a hook's matcher selects a tool under one of its
// names, as Copilot CLI matches: Agent is a tool's name only on
// PascalCase PreToolUse.
func selects(e *doctor.Entry, names []string) bool {
	if e.Matcher == nil {
		return true
	}
	re, err := anchored(*e.Matcher)
	if err != nil {
		return false
	}
	for _, n := range names {
		if (n != agentTool || e.Event == pascalPreToolUse) && re.MatchString(n) {
			return true
		}
	}
	return false
}

// checkMatchers reports each spawn tool no running spawngate hook
// selects, at every hook that misses it. A matcher that cannot be read is
// reported once, and selects nothing.
func (d *checkup) checkMatchers(running []*gateHook) {
	var readable []*doctor.Entry
	var hooks []*gateHook
	var reported []string
	for _, h := range running {
		if h.matcherErr == nil {
			readable, hooks = append(readable, &h.Entry), append(hooks, h)
			continue
		}
		if key := h.doc.Path + "#" + h.MatcherPointer; !slices.Contains(reported, key) {
			reported = append(reported, key)
			why := document.OneLine(h.matcherErr.Error())
			problem := fmt.Sprintf(`"matcher": %q cannot be checked: Copilot CLI reads it as a regular expression that must match the whole tool name, and %s; it skips a hook whose matcher does not compile`, *h.Matcher, why)
			var notRegexp *host.NotRegexpError
			if errors.As(h.matcherErr, &notRegexp) {
				problem = fmt.Sprintf(`"matcher": %q is not a regular expression (%s): Copilot CLI skips the hook, and the spawns it would judge start unjudged`, *h.Matcher, notRegexp.Msg)
			}
			d.Add(h.doc.Path, "hook.matcher", h.MatcherPointer, problem, `set "matcher": "task"`)
		}
	}
	missed := doctor.Uncovered(readable, matchTools(), selects)
	for i, h := range hooks {
		if len(missed[i]) == 0 {
			continue
		}
		what := "(none)"
		if h.Matcher != nil {
			what = fmt.Sprintf("%q", *h.Matcher)
		}
		d.Add(h.doc.Path, "hook.matcher", h.MatcherPointer,
			fmt.Sprintf(`"matcher": %s on %s does not select %s, under which Copilot CLI starts sub-agents (a matcher must match the whole tool name, case counting, and on preToolUse the tool is task: Agent is its name on PascalCase PreToolUse only): those spawns are never judged`, what, h.Event, doctor.OrList(missed[i])),
			`set "matcher": "task"`)
	}
}

// checkCommand checks a command hook that runs spawngate: what it sets
// in the hook's environment, that the program is the one meant, that it
// runs as spawngate hook copilot, that it can start, and that Copilot CLI
// waits for its answer.
func (d *checkup) checkCommand(ctx context.Context, h *gateHook) {
	if env, ok := h.Keys["env"].(map[string]any); ok && len(env) > 0 {
		names := make([]string, 0, len(env))
		for k := range env {
			names = append(names, k)
		}
		slices.Sort(names)
		d.Add(h.doc.Path, "hook.handler", h.Pointer+"/env",
			fmt.Sprintf(`"env" sets %s for the hook: a variable set there can change what runs (BASH_ENV makes bash run a script before the command, LD_PRELOAD loads a library into spawngate), and doctor cannot tell which are harmless`, strings.Join(names, ", ")),
			"remove it")
	}
	if bashEnv := d.getenv("BASH_ENV"); bashEnv != "" && !h.Exec {
		d.Add(h.doc.Path, "hook.command", h.Pointer+"/"+h.CommandKey,
			fmt.Sprintf(`BASH_ENV is set (to %s) in the environment doctor was given: Copilot CLI runs the command with /bin/bash --norc --noprofile -c, which runs that file first, in a session started there; it can end the hook before spawngate answers, and an exit 0 lets the spawn through`, bashEnv),
			"unset BASH_ENV where Copilot CLI is started, or give the program and its arguments apart, which runs no shell: "+`"exec": "/usr/local/bin/spawngate", "args": ["hook", "copilot", "--policy", FILE]`)
	}
	c := doctor.Command{Host: Name, Title: "Copilot CLI", Project: d.project, Home: d.home, TimeoutKey: h.timeoutKey,
		Vars:      map[string]string{"HOME": d.home, "COPILOT_PROJECT_DIR": d.project, "CLAUDE_PROJECT_DIR": d.project, "COPILOT_HOOK_DIR": filepath.Dir(h.doc.Path)},
		Owners:    d.Options.OwnersFor(d.project, d.home, d.userDir),
		LookedFor: "on the PATH Copilot CLI was started with", PolicyFrom: "the folder the hook runs in (the repository's root, unless the hook sets cwd)",
		Policy: "/etc/spawngate/copilot.yaml", Directly: `run spawngate directly: "bash": "/usr/local/bin/spawngate hook copilot --policy FILE"`,
		ReadHook: d.Options.ReadHook}
	if h.Exec {
		c.Words = append([]string{h.Command}, h.Args...)
	}
	d.CheckEntry(ctx, &h.Entry, c)
}

func (d *checkup) getenv(k string) string {
	if d.Options.Getenv == nil {
		return ""
	}
	return d.Options.Getenv(k)
}
