package claudecode

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
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

// What the doctor knows of Claude Code's settings is what Claude Code
// 2.1.332 was seen to do (and its code says):
//
//   - Four layers: managed (/etc/claude-code/managed-settings.json, then
//     each managed-settings.d/*.json in name order, merged), user
//     (~/.claude/settings.json), project (.claude/settings.json) and
//     local (.claude/settings.local.json). Project and local are read
//     from the folder the session starts in, never from a folder above.
//   - "disableAllHooks": true in managed settings turns off every hook; in
//     any other layer it turns off the user's and the project's hooks,
//     never a managed one. "allowManagedHooksOnly": true counts in
//     managed settings only, and drops the user's and the project's hooks.
//   - A file that does not parse is ignored whole.
//   - A hook that cannot run (exit 127), that outlives its "timeout"
//     (600 s unless set), or an http hook whose server is down or answers
//     other than 2xx, lets the tool call through.
//
// The doctor reports each way those rules let a spawn start without
// spawngate hook claude-code judging it. It reads files and runs nothing.

// doctorPaths are where Claude Code reads settings: managed ones under
// the root, user ones under the home folder, project ones under the
// folder a session starts in.
var doctorPaths = struct{ managed, dropIns, user, project, local string }{
	managed: filepath.Join("etc", "claude-code", "managed-settings.json"),
	dropIns: filepath.Join("etc", "claude-code", "managed-settings.d"),
	user:    filepath.Join(".claude", "settings.json"),
	project: filepath.Join(".claude", "settings.json"),
	local:   filepath.Join(".claude", "settings.local.json"),
}

// hostDefaultTimeout is how long Claude Code waits for a hook that sets no
// "timeout".
const hostDefaultTimeout = 600 * time.Second

// suggestedHook is the hook the fixes propose, as the README wires it.
const suggestedHook = `{"matcher": "Agent|Task|Skill|Workflow", "hooks": [` + suggestedHandler + `]}`

// suggestedHandler is the README's handler: spawngate without a shell,
// failing closed.
const suggestedHandler = `{"type": "command", "command": "/usr/local/bin/spawngate", "args": ["hook", "claude-code", "--policy", "/etc/spawngate/claude-code.yaml", "--timeout", "20s"], "timeout": 30, "onFailure": "block"}`

// suggestedExpansionHook is the same hook on UserPromptExpansion, which
// takes no matcher.
const suggestedExpansionHook = `{"hooks": [` + suggestedHandler + `]}`

// settingsLayer is one of Claude Code's layers of settings files.
type settingsLayer int

const (
	managedLayer settingsLayer = iota
	userLayer
	projectLayer
	localLayer
)

func (l settingsLayer) String() string {
	return [...]string{"managed settings", "user settings", "project settings", "local project settings"}[l]
}

// settingsDoc is one settings file as Claude Code reads it.
type settingsDoc struct {
	*doctor.File // Tree nil when the file is ignored
	layer        settingsLayer
	// shapes are settings written in a shape Claude Code does not read.
	shapes []doctor.Finding
}

// hookSwitch is a boolean setting that turns hooks off, and the file
// whose value holds.
type hookSwitch struct {
	on  bool
	doc *settingsDoc
}

// gateHook is a PreToolUse handler that runs spawngate (or means to).
type gateHook struct {
	doctor.Entry // Event is PreToolUse or UserPromptExpansion
	doc          *settingsDoc
	kind         string // command or http
	url          string
}

// matcher is the handler's matcher, "" for none (which selects every
// call, as "*" does).
func (h *gateHook) matcher() string { return matcherOf(&h.Entry) }

func matcherOf(e *doctor.Entry) string {
	if e.Matcher == nil {
		return ""
	}
	return *e.Matcher
}

var _ doctor.Doctor = Adapter{}

// doctor is one run: what it read and what it found.
type checkup struct {
	doctor.Run
	project string // absolute: what CLAUDE_PROJECT_DIR is to a hook
	home    string // absolute: what HOME and ~ are to a hook; "" for none
	docs    []*settingsDoc
	hooks   []*gateHook // every spawngate handler, running or not
}

// Doctor implements doctor.Doctor: it reads Claude Code's settings layers
// exactly as Claude Code does and reports every way the installation lets
// a spawn through. An error is a file it must read and cannot.
func (Adapter) Doctor(ctx context.Context, o doctor.Options) (*doctor.Diagnosis, error) {
	run, err := doctor.NewRun(o)
	if err != nil {
		return nil, err
	}
	d := &checkup{Run: run, project: run.Project, home: run.Home}
	if err := d.read(); err != nil {
		return nil, err
	}
	for _, doc := range d.docs {
		d.collect(doc)
	}
	diag := d.judge(ctx)
	d.Finish(diag)
	return diag, nil
}

func (d *checkup) managedPath() string { return d.Options.Path(doctorPaths.managed) }
func (d *checkup) localPath() string   { return filepath.Join(d.Options.Project, doctorPaths.local) }

// read reads every layer in the order Claude Code merges them, the
// managed drop-ins after the managed file, in name order.
func (d *checkup) read() error {
	type layerFile struct {
		path  string
		layer settingsLayer
	}
	files := []layerFile{{d.managedPath(), managedLayer}}
	dropIns := d.Options.Path(doctorPaths.dropIns)
	entries, err := os.ReadDir(dropIns)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return &doctor.Error{File: dropIns, Msg: "cannot be read: " + host.Cause(err)}
	}
	for _, e := range entries { // ReadDir sorts by name
		p := filepath.Join(dropIns, e.Name())
		if info, err := os.Stat(p); strings.HasSuffix(e.Name(), ".json") && (err != nil || !info.IsDir()) {
			files = append(files, layerFile{p, managedLayer})
		}
	}
	if d.Options.Home != "" {
		files = append(files, layerFile{filepath.Join(d.Options.Home, doctorPaths.user), userLayer})
	}
	files = append(files, layerFile{filepath.Join(d.Options.Project, doctorPaths.project), projectLayer}, layerFile{d.localPath(), localLayer})
	for _, f := range files {
		doc, err := d.readDoc(f.path, f.layer)
		if err != nil {
			return err
		}
		if doc != nil {
			d.docs = append(d.docs, doc)
		}
	}
	return nil
}

// readDoc reads one settings file: nil for one that does not exist, a
// finding (and no settings) for one that does not parse, which Claude
// Code ignores whole.
func (d *checkup) readDoc(path string, layer settingsLayer) (*settingsDoc, error) {
	data, found, err := doctor.ReadConfig(path)
	if !found || err != nil {
		return nil, err
	}
	doc := &settingsDoc{File: &doctor.File{Path: path, Data: data}, layer: layer}
	d.Files = append(d.Files, doc.File)
	if len(bytes.TrimSpace(data)) == 0 {
		doc.Tree = map[string]any{}
		return doc, nil
	}
	v, line, problem := doctor.DecodeJSON(data)
	if problem != "" {
		d.Findings = append(d.Findings, doctor.Finding{ID: "settings.invalid", File: path, Line: line,
			Problem: "does not parse as JSON (" + problem + "): Claude Code ignores the whole file" + lostWith(layer),
			Fix:     "make it valid JSON"})
		return doc, nil
	}
	obj, ok := v.(map[string]any)
	if !ok {
		d.Findings = append(d.Findings, doctor.Finding{ID: "settings.invalid", File: path, Line: 1,
			Problem: "is not a JSON object: Claude Code ignores the whole file" + lostWith(layer),
			Fix:     "make the file one JSON object: {\"hooks\": {...}}"})
		return doc, nil
	}
	doc.Tree = obj
	return doc, nil
}

// lostWith says what an ignored file takes with it.
func lostWith(l settingsLayer) string {
	if l == managedLayer {
		return ", a managed hook and allowManagedHooksOnly with it"
	}
	return ""
}

// shape notes a setting written in a shape Claude Code does not read.
func (d *checkup) shape(doc *settingsDoc, ptr, what, fix string) {
	doc.shapes = append(doc.shapes, doctor.Finding{ID: "settings.invalid", File: doc.Path, Pointer: ptr,
		Problem: fmt.Sprintf("%s is %s, which Claude Code does not read: it may ignore this setting, or the whole file", doctor.SettingName(ptr), what),
		Fix:     fix})
}

// shapeFix is the fix for a hook written in a shape Claude Code does not
// read.
const shapeFix = "write the hook as Claude Code reads it: " + suggestedHook + " in hooks.PreToolUse"

// collect reads a file's PreToolUse handlers that run spawngate. What
// is written in a shape Claude Code does not read is reported when it
// could cost the file a spawngate hook (the file names spawngate) or
// managed settings their allowManagedHooksOnly: Claude Code may ignore
// the whole file for it.
func (d *checkup) collect(doc *settingsDoc) {
	if doc.Tree == nil {
		return
	}
	d.collectHooks(doc)
	for _, key := range []string{"disableAllHooks", "allowManagedHooksOnly"} {
		if v, ok := doc.Tree[key]; ok {
			if _, ok := v.(bool); !ok {
				d.shape(doc, "/"+key, "not true or false", "write true or false")
			}
		}
	}
	if bytes.Contains(bytes.ToLower(doc.Data), []byte("spawngate")) || doc.layer == managedLayer && doc.Tree["allowManagedHooksOnly"] == true {
		d.Findings = append(d.Findings, doc.shapes...)
	}
}

func (d *checkup) collectHooks(doc *settingsDoc) {
	raw, ok := doc.Tree["hooks"]
	if !ok {
		return
	}
	hooks, ok := raw.(map[string]any)
	if !ok {
		d.shape(doc, "/hooks", "not an object", shapeFix)
		return
	}
	for _, event := range (Adapter{}).Events() {
		d.collectEvent(doc, hooks, event)
	}
}

// collectEvent reads the handlers of one hook event that run spawngate.
func (d *checkup) collectEvent(doc *settingsDoc, hooks map[string]any, event string) {
	raw, ok := hooks[event]
	if !ok {
		return
	}
	groups, ok := raw.([]any)
	if !ok {
		d.shape(doc, "/hooks/"+event, "not a list", shapeFix)
		return
	}
	for i, g := range groups {
		gptr := fmt.Sprintf("/hooks/%s/%d", event, i)
		group, ok := g.(map[string]any)
		if !ok {
			d.shape(doc, gptr, "not an object", shapeFix)
			continue
		}
		var matcher *string
		matcherPtr := gptr
		if m, ok := group["matcher"]; ok {
			s, ok := m.(string)
			if !ok {
				d.shape(doc, gptr+"/matcher", "not a string", shapeFix)
				continue
			}
			matcher, matcherPtr = &s, gptr+"/matcher"
		}
		handlers, ok := group["hooks"].([]any)
		if !ok {
			d.shape(doc, gptr+"/hooks", "not a list", shapeFix)
			continue
		}
		for j, raw := range handlers {
			hptr := fmt.Sprintf("%s/hooks/%d", gptr, j)
			if h := d.handler(doc, hptr, raw); h != nil {
				h.Event, h.Matcher, h.MatcherPointer = event, matcher, matcherPtr
				d.hooks = append(d.hooks, h)
			}
		}
	}
}

// handler reads one handler, and keeps it when it runs spawngate or
// means to: a command that names spawngate, an http hook whose address is
// spawngate serve's.
func (d *checkup) handler(doc *settingsDoc, ptr string, raw any) *gateHook {
	obj, ok := raw.(map[string]any)
	if !ok {
		d.shape(doc, ptr, "not an object", shapeFix)
		return nil
	}
	h := &gateHook{doc: doc, Entry: doctor.Entry{File: doc.File, Pointer: ptr, Layer: doc.layer.String(), Managed: doc.layer == managedLayer,
		CommandKey: "command", Timeout: hostDefaultTimeout, Keys: obj}}
	h.kind, _ = obj["type"].(string)
	if t, ok := obj["timeout"]; ok {
		// A timeout Claude Code cannot read is left out: the hook is
		// judged as waited for as long as when none is set.
		if n, err := asNumber(t); err == nil && n > 0 {
			h.Timeout, h.TimeoutSet = time.Duration(n*float64(time.Second)), true
		} else {
			d.shape(doc, ptr+"/timeout", "not a positive number of seconds", `set "timeout" to a number of seconds above spawngate's --timeout, such as 30`)
		}
	}
	switch h.kind {
	case "command":
		cmd, ok := obj["command"].(string)
		if !ok {
			d.shape(doc, ptr+"/command", "not a string", shapeFix)
			return nil
		}
		h.Command = cmd
		if a, ok := obj["args"]; ok {
			list, ok := a.([]any)
			if !ok {
				d.shape(doc, ptr+"/args", "not a list of strings", shapeFix)
				return nil
			}
			h.Exec = true
			for _, s := range list {
				s, ok := s.(string)
				if !ok {
					d.shape(doc, ptr+"/args", "not a list of strings", shapeFix)
					return nil
				}
				h.Args = append(h.Args, s)
			}
		}
		if !strings.Contains(strings.ToLower(cmd+" "+strings.Join(h.Args, " ")), "spawngate") {
			return nil
		}
	case "http":
		u, ok := obj["url"].(string)
		if !ok {
			d.shape(doc, ptr+"/url", "not a string", shapeFix)
			return nil
		}
		h.url = u
		if !servesHooks(u) {
			return nil
		}
	default:
		return nil
	}
	return h
}

// asNumber reads a number of a JSON file.
func asNumber(v any) (float64, error) {
	n, ok := v.(json.Number)
	if !ok {
		return 0, errors.New("not a number")
	}
	return n.Float64()
}

// servesHooks tells whether an address is spawngate serve's hook
// endpoint, or names spawngate.
func servesHooks(raw string) bool {
	if strings.Contains(strings.ToLower(raw), "spawngate") {
		return true
	}
	u, err := url.Parse(raw)
	return err == nil && strings.Contains(u.Path, "/v1/hooks/")
}

// judge applies Claude Code's switches and checks every spawngate hook
// that runs.
func (d *checkup) judge(ctx context.Context) *doctor.Diagnosis {
	var managedOff, managedOnly hookSwitch // the last managed file that sets each wins
	var lowerOff []*settingsDoc
	for _, doc := range d.docs {
		if doc.Tree == nil {
			continue
		}
		off, offSet := doc.Tree["disableAllHooks"].(bool)
		only, onlySet := doc.Tree["allowManagedHooksOnly"].(bool)
		switch {
		case doc.layer == managedLayer:
			if offSet {
				managedOff = hookSwitch{off, doc}
			}
			if onlySet {
				managedOnly = hookSwitch{only, doc}
			}
		case off:
			lowerOff = append(lowerOff, doc)
		}
	}
	// offBy is what turns a hook off, "" when it runs.
	offBy := func(h *gateHook) string {
		switch {
		case managedOff.on:
			return fmt.Sprintf(`"disableAllHooks": true in %s`, managedOff.doc.Path)
		case h.doc.layer == managedLayer:
			return ""
		case managedOnly.on:
			return fmt.Sprintf(`"allowManagedHooksOnly": true in %s`, managedOnly.doc.Path)
		case len(lowerOff) > 0:
			return fmt.Sprintf(`"disableAllHooks": true in %s`, lowerOff[0].Path)
		}
		return ""
	}
	diag := &doctor.Diagnosis{}
	var running []*gateHook
	var off []string // "the one in FILE is turned off by ...", once a file
	for _, h := range d.hooks {
		if by := offBy(h); by != "" {
			if why := fmt.Sprintf("the one in %s is turned off by %s", h.doc.Path, by); !slices.Contains(off, why) {
				off = append(off, why)
			}
			continue
		}
		running = append(running, h)
		diag.Gates = append(diag.Gates, h.Place())
	}

	if managedOff.on && len(d.hooks) > 0 {
		d.Findings = append(d.Findings, doctor.Finding{ID: "hook.disabled", File: managedOff.doc.Path, Pointer: "/disableAllHooks",
			Problem: `"disableAllHooks": true in managed settings turns off every hook, spawngate's too`,
			Fix:     `remove it`})
	}
	if !managedOff.on && !managedOnly.on {
		var turnedOff []string
		for _, h := range d.hooks {
			if h.doc.layer != managedLayer && !slices.Contains(turnedOff, h.doc.Path) {
				turnedOff = append(turnedOff, h.doc.Path)
			}
		}
		for _, doc := range lowerOff {
			if len(turnedOff) == 0 {
				break
			}
			d.Findings = append(d.Findings, doctor.Finding{ID: "hook.disabled", File: doc.Path, Pointer: "/disableAllHooks",
				Problem: fmt.Sprintf(`"disableAllHooks": true in %s turns off the spawngate hook in %s`, doc.layer, strings.Join(turnedOff, " and ")),
				Fix:     fmt.Sprintf(`remove it, and move the hook to %s with "allowManagedHooksOnly": true, which no other settings can turn off`, d.managedPath())})
		}
	}
	var tools, expansions []*gateHook
	for _, h := range running {
		if h.Event == Expansion {
			expansions = append(expansions, h)
		} else {
			tools = append(tools, h)
		}
	}
	if len(expansions) == 0 {
		d.Findings = append(d.Findings, doctor.Finding{ID: "hook.absent", File: d.managedPath(), Pointer: "/hooks/" + Expansion,
			Problem: "no UserPromptExpansion hook runs spawngate: a prompt's /command that names a skill with context: fork starts its sub-agent with no tool call, unjudged",
			Fix:     fmt.Sprintf(`add %s to hooks.%s here`, suggestedExpansionHook, Expansion)})
	}
	if len(tools) == 0 {
		problem := "no PreToolUse hook in any settings Claude Code reads here runs spawngate: every sub-agent starts unjudged"
		if len(off) > 0 {
			problem = "no PreToolUse hook that runs spawngate is in effect (" + strings.Join(off, "; ") + "): every sub-agent starts unjudged"
		}
		d.Findings = append(d.Findings, doctor.Finding{ID: "hook.absent", File: d.managedPath(), Pointer: "/hooks/PreToolUse",
			Problem: problem,
			Fix:     fmt.Sprintf(`add %s to hooks.PreToolUse here, and "allowManagedHooksOnly": true`, suggestedHook)})
		return diag
	}

	managedGate := false
	for _, h := range running {
		if h.doc.layer == managedLayer {
			managedGate = true
			continue
		}
		problem := fmt.Sprintf(`the spawngate hook is in %s, which a session can turn off: "disableAllHooks": true in %s (a file the model can write in a bypassPermissions session) drops it`, h.doc.layer, d.localPath())
		if h.doc.layer != userLayer {
			problem += ", and a session started in a subfolder does not read it"
		}
		d.Findings = append(d.Findings, doctor.Finding{ID: "hook.unmanaged", File: h.doc.Path, Pointer: h.Pointer,
			Problem: problem,
			Fix:     fmt.Sprintf(`move it to %s and set "allowManagedHooksOnly": true there`, d.managedPath())})
	}
	if managedGate && !managedOnly.on {
		file := d.managedPath()
		if managedOnly.doc != nil {
			file = managedOnly.doc.Path
		}
		d.Findings = append(d.Findings, doctor.Finding{ID: "hooks.unrestricted", File: file, Pointer: "/allowManagedHooksOnly",
			Problem: `"allowManagedHooksOnly" is not true in managed settings: PreToolUse hooks that user and project settings add, which a session can write, run beside the spawngate hook`,
			Fix:     `set "allowManagedHooksOnly": true here`})
	}

	d.checkMatchers(tools)
	for _, h := range expansions {
		if h.matcher() != "" && h.matcher() != "*" {
			d.Findings = append(d.Findings, doctor.Finding{ID: "hook.matcher", File: h.doc.Path, Pointer: h.MatcherPointer,
				Problem: fmt.Sprintf(`"matcher": %q selects only some /commands (a UserPromptExpansion matcher is matched against the command's name): the others start their sub-agents unjudged`, h.matcher()),
				Fix:     `leave the matcher out`})
		}
	}
	for _, h := range running {
		switch h.kind {
		case "http":
			d.Findings = append(d.Findings, doctor.Finding{ID: "hook.http", File: h.doc.Path, Pointer: h.Pointer + "/url",
				Problem: fmt.Sprintf("an http hook sends spawns to %s: when that server is down, or answers other than 2xx, Claude Code lets the spawn through", h.url),
				Fix:     `use the command hook, which blocks when it cannot run: {"type": "command", "command": "/usr/local/bin/spawngate hook claude-code --policy FILE"}`})
		case "command":
			d.checkCommand(ctx, h)
		}
	}
	return diag
}

// spawnTools are the tools a spawngate hook's matcher must match: every
// one under which Claude Code starts a sub-agent, but Task, the name of
// Agent before v2.1.63, which no payload names any more.
func spawnTools() []string {
	return slices.DeleteFunc(Adapter{}.SpawnTools(), func(t string) bool { return t == "Task" })
}

// exactMatcher is a matcher Claude Code reads as tool names, not as a
// regular expression.
var exactMatcher = regexp.MustCompile(`^[A-Za-z0-9_\- ,|]+$`)

// matcherMatches tells whether a matcher selects a tool, as Claude Code
// matches: "" and "*" select every tool; a matcher of only letters,
// digits, _ - space , | is a list of exact names; anything else is an
// unanchored JavaScript regular expression, read here only when it is
// written in the syntax JavaScript and Go read alike
// (host.PortableMatcher), and otherwise an error.
func matcherMatches(matcher, tool string) (bool, error) {
	switch {
	case matcher == "" || matcher == "*":
		return true, nil
	case exactMatcher.MatchString(matcher):
		return slices.Contains(exactNames(matcher), tool), nil
	}
	re, err := host.PortableMatcher(matcher)
	if err != nil {
		return false, err
	}
	return re.MatchString(tool), nil
}

func exactNames(matcher string) []string {
	var names []string
	for _, n := range strings.FieldsFunc(matcher, func(r rune) bool { return r == '|' || r == ',' }) {
		if n = strings.TrimSpace(n); n != "" {
			names = append(names, n)
		}
	}
	return names
}

// checkMatchers reports each spawn tool no running spawngate hook
// matches, at every hook that misses it. A matcher that cannot be read
// is reported once, and selects nothing.
func (d *checkup) checkMatchers(running []*gateHook) {
	tools := spawnTools()
	var readable []*doctor.Entry
	var hooks []*gateHook
	reported := map[string]bool{}
	for _, h := range running {
		if _, err := matcherMatches(h.matcher(), tools[0]); err != nil {
			if key := h.doc.Path + "\x00" + h.MatcherPointer; !reported[key] {
				reported[key] = true
				d.Add(h.doc.Path, "hook.matcher", h.MatcherPointer,
					fmt.Sprintf(`"matcher": %q cannot be checked: Claude Code reads it as a JavaScript regular expression, and %s, so whether it selects %s is not known (a pattern JavaScript does not compile selects nothing)`, h.matcher(), document.OneLine(err.Error()), strings.Join(tools, ", ")),
					fmt.Sprintf(`list the tools instead: "matcher": %q`, suggestMatcher("")))
			}
			continue
		}
		readable, hooks = append(readable, &h.Entry), append(hooks, h)
	}
	var want []doctor.Tool
	for _, t := range tools {
		want = append(want, doctor.Tool{Name: t, Names: []string{t}})
	}
	missed := doctor.Uncovered(readable, want, func(e *doctor.Entry, names []string) bool {
		ok, _ := matcherMatches(matcherOf(e), names[0])
		return ok
	})
	for i, h := range hooks {
		if len(missed[i]) > 0 {
			d.Add(h.doc.Path, "hook.matcher", h.MatcherPointer,
				fmt.Sprintf(`"matcher": %q does not select %s, under which Claude Code also starts sub-agents: those spawns are never judged`, h.matcher(), doctor.OrList(missed[i])),
				fmt.Sprintf(`set "matcher": %q`, suggestMatcher(h.matcher())))
		}
	}
}

// suggestMatcher is a matcher that selects every spawn tool: the exact
// list given with the missing names added, else the README's.
func suggestMatcher(matcher string) string {
	names := Adapter{}.SpawnTools()
	if matcher != "" && matcher != "*" && exactMatcher.MatchString(matcher) {
		names = exactNames(matcher)
		for _, t := range spawnTools() {
			if !slices.Contains(names, t) {
				names = append(names, t)
			}
		}
	}
	return strings.Join(names, "|")
}

// checkCommand checks a command hook that runs spawngate: its keys,
// that the program is the one meant, that it runs as spawngate hook
// claude-code without a shell, that it can start, and that Claude Code
// waits for its answer.
func (d *checkup) checkCommand(ctx context.Context, h *gateHook) {
	const directly = `run spawngate directly, without a shell: "command": "/usr/local/bin/spawngate", "args": ["hook", "claude-code", "--policy", FILE]`
	d.CheckKeys(&h.Entry, handlerKeys, func(k string) (string, string) {
		return fmt.Sprintf("%q is not a key Claude Code 2.1.332 reads in a command hook: it drops it, and a later version may read it as something that weakens the hook", k), "remove it"
	})
	if _, set := h.Keys["onFailure"]; !set {
		d.Add(h.doc.Path, "hook.handler", h.Pointer, `the hook sets no "onFailure", and Claude Code's default, "continue", lets a spawn through when the hook cannot start (a missing binary), times out or crashes`,
			`set "onFailure": "block"`)
	}
	c := doctor.Command{Host: Name, Title: "Claude Code", Project: d.project, Owners: d.Options.OwnersFor(d.project, d.home),
		Vars: map[string]string{"CLAUDE_PROJECT_DIR": d.project, "HOME": d.home}, Home: d.home, TimeoutKey: "timeout",
		LookedFor: "on PATH, or from the folder it runs in", PolicyFrom: "the folder the hook runs in", Policy: "/etc/spawngate/claude-code.yaml",
		Directly: directly, ReadHook: d.Options.ReadHook}
	if h.Exec {
		// Without a shell nothing is expanded but the project folder,
		// which Claude Code fills in itself.
		for _, w := range append([]string{h.Command}, h.Args...) {
			c.Words = append(c.Words, expandProjectDir(w, d.project))
		}
	} else {
		d.Add(h.doc.Path, "hook.command", h.Pointer+"/command", `the command runs through a shell: CLAUDE_CODE_SHELL_PREFIX in the user's settings "env" (~/.claude/settings.json, which a session can write) hands the whole command to another program, and BASH_ENV there runs a script first; either can end the hook before spawngate answers, and Claude Code then lets the spawn through`,
			`give the program and its arguments apart, which runs no shell: `+directly)
	}
	d.CheckEntry(ctx, &h.Entry, c)
}

// handlerKeys are the keys of a command handler Claude Code 2.1.332
// reads (its settings schema, read off the client), with what doctor asks
// of those whose value can leave a spawn unjudged. A key the client does
// not read is dropped by this version, and may be read by the next: it is
// a finding too.
var handlerKeys = map[string]doctor.Key{
	"type": {}, "command": {}, "args": {}, "timeout": {}, "statusMessage": {},
	// once acts on a skill's hooks only; holdsTools on one plugin's;
	// cloud and the rewake texts on cloud sessions and asyncRewake.
	"once": {}, "holdsTools": {}, "cloud": {}, "rewakeMessage": {}, "rewakeSummary": {},
	"onFailure": {Check: func(v any) (string, string) {
		if v == "block" {
			return "", ""
		}
		return fmt.Sprintf(`"onFailure": %s lets a spawn through when the hook cannot start (a missing binary), times out or crashes`, doctor.ShowJSON(v)),
			`set "onFailure": "block"`
	}},
	"async":       {Check: noWait("async")},
	"asyncRewake": {Check: noWait("asyncRewake")},
	"if": {Check: func(v any) (string, string) {
		return fmt.Sprintf(`"if": %s makes the hook run only for calls that match a permission rule, and Claude Code matches an Agent(...) rule against no call (the Agent tool has no input matcher): the spawns it leaves out, or all of them, start unjudged`, doctor.ShowJSON(v)),
			"remove it"
	}},
	"shell": {Check: func(v any) (string, string) {
		if v == "bash" {
			return "", ""
		}
		return fmt.Sprintf(`"shell": %s runs the hook in another shell, which need not be installed: a hook that cannot start lets the spawn through`, doctor.ShowJSON(v)),
			"remove it"
	}},
}

// noWait is the check of a key that, unless false, makes Claude Code
// start the hook without waiting for it.
func noWait(k string) func(v any) (string, string) {
	return func(v any) (string, string) {
		if v == false {
			return "", ""
		}
		return fmt.Sprintf(`"%s": %s makes Claude Code start the hook and not wait for it: the child starts while spawngate judges, and a refusal comes too late`, k, doctor.ShowJSON(v)),
			"remove it"
	}
}

// expandProjectDir fills in the project folder where a command names it.
func expandProjectDir(s, project string) string {
	return strings.NewReplacer("${CLAUDE_PROJECT_DIR}", project, "$CLAUDE_PROJECT_DIR", project).Replace(s)
}

// DoctorHelp implements doctor.Doctor.
func (Adapter) DoctorHelp() string {
	return `managed settings (/etc/claude-code/managed-settings.json and
managed-settings.d/), ~/.claude/settings.json, and the
.claude/settings.json and .claude/settings.local.json of the folder
sessions start in (not of a folder above it). It reports: no such hook; a
hook that project settings can turn off (disableAllHooks), or that is not
alone (allowManagedHooksOnly); a matcher that misses Agent, Skill or
Workflow; an http hook. It cannot see Claude Code's --settings.`
}
