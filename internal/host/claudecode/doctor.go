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
	"strconv"
	"strings"
	"time"

	"github.com/spawngate/spawngate/internal/host"
	"github.com/spawngate/spawngate/internal/plan"
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
	path  string
	layer settingsLayer
	data  []byte
	obj   map[string]any // nil when the file is absent or ignored
	// shapes are settings written in a shape Claude Code does not read.
	shapes []host.Finding
}

// hookSwitch is a boolean setting that turns hooks off, and the file
// whose value holds.
type hookSwitch struct {
	on  bool
	doc *settingsDoc
}

// gateHook is a PreToolUse handler that runs spawngate (or means to).
type gateHook struct {
	event      string // PreToolUse or UserPromptExpansion
	doc        *settingsDoc
	ptr        string // the handler
	matcherPtr string // the group's matcher, or the group when it has none
	matcher    string
	kind       string // command or http
	command    string
	args       []string
	exec       bool // args given: no shell
	url        string
	timeout    time.Duration  // 0: not set
	obj        map[string]any // the handler as written
}

func (h *gateHook) place() host.Place { return host.Place{File: h.doc.path, Pointer: h.ptr} }

var _ host.Doctor = Adapter{}

// doctor is one run: what it read and what it found.
type doctor struct {
	o        host.DoctorOptions
	project  string // absolute: what CLAUDE_PROJECT_DIR is to a hook
	home     string // absolute: what HOME and ~ are to a hook; "" for none
	docs     []*settingsDoc
	findings []host.Finding
	hooks    []*gateHook // every spawngate handler, running or not
}

// Doctor implements host.Doctor: it reads Claude Code's settings layers
// exactly as Claude Code does and reports every way the installation lets
// a spawn through. An error is a file it must read and cannot.
func (Adapter) Doctor(ctx context.Context, o host.DoctorOptions) (*host.Diagnosis, error) {
	project, err := filepath.Abs(o.Project)
	if err != nil {
		return nil, &host.DoctorError{File: o.Project, Msg: err.Error()}
	}
	d := &doctor{o: o, project: project}
	if o.Home != "" {
		if d.home, err = filepath.Abs(o.Home); err != nil {
			return nil, &host.DoctorError{File: o.Home, Msg: err.Error()}
		}
	}
	if err := d.read(); err != nil {
		return nil, err
	}
	for _, doc := range d.docs {
		d.collect(doc)
	}
	diag := d.judge(ctx)
	d.locate(diag)
	diag.Sort()
	return diag, nil
}

func (d *doctor) rootPath(rel string) string {
	root := d.o.Root
	if root == "" {
		root = string(filepath.Separator)
	}
	return filepath.Join(root, rel)
}

func (d *doctor) managedPath() string { return d.rootPath(doctorPaths.managed) }
func (d *doctor) localPath() string   { return filepath.Join(d.o.Project, doctorPaths.local) }

// read reads every layer in the order Claude Code merges them, the
// managed drop-ins after the managed file, in name order.
func (d *doctor) read() error {
	type layerFile struct {
		path  string
		layer settingsLayer
	}
	files := []layerFile{{d.managedPath(), managedLayer}}
	dropIns := d.rootPath(doctorPaths.dropIns)
	entries, err := os.ReadDir(dropIns)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return &host.DoctorError{File: dropIns, Msg: "cannot be read: " + host.Cause(err)}
	}
	for _, e := range entries { // ReadDir sorts by name
		p := filepath.Join(dropIns, e.Name())
		if info, err := os.Stat(p); strings.HasSuffix(e.Name(), ".json") && (err != nil || !info.IsDir()) {
			files = append(files, layerFile{p, managedLayer})
		}
	}
	if d.o.Home != "" {
		files = append(files, layerFile{filepath.Join(d.o.Home, doctorPaths.user), userLayer})
	}
	files = append(files, layerFile{filepath.Join(d.o.Project, doctorPaths.project), projectLayer}, layerFile{d.localPath(), localLayer})
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
func (d *doctor) readDoc(path string, layer settingsLayer) (*settingsDoc, error) {
	data, found, err := host.ReadConfig(path)
	if !found || err != nil {
		return nil, err
	}
	doc := &settingsDoc{path: path, layer: layer, data: data}
	if len(bytes.TrimSpace(data)) == 0 {
		doc.obj = map[string]any{}
		return doc, nil
	}
	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		f := host.Finding{ID: "settings.invalid", File: path,
			Problem: "does not parse as JSON (" + plan.OneLine(err.Error()) + "): Claude Code ignores the whole file" + lostWith(layer),
			Fix:     "make it valid JSON"}
		var syn *json.SyntaxError
		if errors.As(err, &syn) {
			line, col := lineCol(data, syn.Offset)
			f.Line = line
			f.Problem = fmt.Sprintf("does not parse as JSON (line %d, column %d: %s): Claude Code ignores the whole file%s", line, col, plan.OneLine(err.Error()), lostWith(layer))
		}
		d.findings = append(d.findings, f)
		return doc, nil
	}
	obj, ok := v.(map[string]any)
	if !ok {
		d.findings = append(d.findings, host.Finding{ID: "settings.invalid", File: path, Line: 1,
			Problem: "is not a JSON object: Claude Code ignores the whole file" + lostWith(layer),
			Fix:     "make the file one JSON object: {\"hooks\": {...}}"})
		return doc, nil
	}
	doc.obj = obj
	return doc, nil
}

// lostWith says what an ignored file takes with it.
func lostWith(l settingsLayer) string {
	if l == managedLayer {
		return ", a managed hook and allowManagedHooksOnly with it"
	}
	return ""
}

// lineCol turns a byte offset into a 1-based line and column (in
// characters).
func lineCol(data []byte, offset int64) (int, int) {
	if offset > int64(len(data)) {
		offset = int64(len(data))
	}
	before := data[:offset]
	line := bytes.Count(before, []byte{'\n'}) + 1
	col := len([]rune(string(before[bytes.LastIndexByte(before, '\n')+1:])))
	if col == 0 {
		col = 1
	}
	return line, col
}

// shape notes a setting written in a shape Claude Code does not read.
func (d *doctor) shape(doc *settingsDoc, ptr, what, fix string) {
	doc.shapes = append(doc.shapes, host.Finding{ID: "settings.invalid", File: doc.path, Pointer: ptr,
		Problem: fmt.Sprintf("%s is %s, which Claude Code does not read: it may ignore this setting, or the whole file", settingName(ptr), what),
		Fix:     fix})
}

// shapeFix is the fix for a hook written in a shape Claude Code does not
// read.
const shapeFix = "write the hook as Claude Code reads it: " + suggestedHook + " in hooks.PreToolUse"

// settingName writes a pointer as a person names the setting:
// /hooks/PreToolUse/0/matcher is hooks.PreToolUse[0].matcher.
func settingName(ptr string) string {
	var b strings.Builder
	for _, seg := range strings.Split(strings.TrimPrefix(ptr, "/"), "/") {
		if _, err := strconv.Atoi(seg); err == nil {
			b.WriteString("[" + seg + "]")
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(seg)
	}
	return b.String()
}

// collect reads a file's PreToolUse handlers that run spawngate. What
// is written in a shape Claude Code does not read is reported when it
// could cost the file a spawngate hook (the file names spawngate) or
// managed settings their allowManagedHooksOnly: Claude Code may ignore
// the whole file for it.
func (d *doctor) collect(doc *settingsDoc) {
	if doc.obj == nil {
		return
	}
	d.collectHooks(doc)
	for _, key := range []string{"disableAllHooks", "allowManagedHooksOnly"} {
		if v, ok := doc.obj[key]; ok {
			if _, ok := v.(bool); !ok {
				d.shape(doc, "/"+key, "not true or false", "write true or false")
			}
		}
	}
	if bytes.Contains(bytes.ToLower(doc.data), []byte("spawngate")) || doc.layer == managedLayer && doc.obj["allowManagedHooksOnly"] == true {
		d.findings = append(d.findings, doc.shapes...)
	}
}

func (d *doctor) collectHooks(doc *settingsDoc) {
	raw, ok := doc.obj["hooks"]
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
func (d *doctor) collectEvent(doc *settingsDoc, hooks map[string]any, event string) {
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
		matcher, matcherPtr := "", gptr
		if m, ok := group["matcher"]; ok {
			s, ok := m.(string)
			if !ok {
				d.shape(doc, gptr+"/matcher", "not a string", shapeFix)
				continue
			}
			matcher, matcherPtr = s, gptr+"/matcher"
		}
		handlers, ok := group["hooks"].([]any)
		if !ok {
			d.shape(doc, gptr+"/hooks", "not a list", shapeFix)
			continue
		}
		for j, raw := range handlers {
			hptr := fmt.Sprintf("%s/hooks/%d", gptr, j)
			if h := d.handler(doc, hptr, raw); h != nil {
				h.event, h.matcher, h.matcherPtr = event, matcher, matcherPtr
				d.hooks = append(d.hooks, h)
			}
		}
	}
}

// handler reads one handler, and keeps it when it runs spawngate or
// means to: a command that names spawngate, an http hook whose address is
// spawngate serve's.
func (d *doctor) handler(doc *settingsDoc, ptr string, raw any) *gateHook {
	obj, ok := raw.(map[string]any)
	if !ok {
		d.shape(doc, ptr, "not an object", shapeFix)
		return nil
	}
	h := &gateHook{doc: doc, ptr: ptr, obj: obj}
	h.kind, _ = obj["type"].(string)
	if t, ok := obj["timeout"]; ok {
		// A timeout Claude Code cannot read is left out: the hook is
		// judged as waited for as long as when none is set.
		if n, ok := t.(float64); ok && n > 0 {
			h.timeout = time.Duration(n * float64(time.Second))
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
		h.command = cmd
		if a, ok := obj["args"]; ok {
			list, ok := a.([]any)
			if !ok {
				d.shape(doc, ptr+"/args", "not a list of strings", shapeFix)
				return nil
			}
			h.exec = true
			for _, s := range list {
				s, ok := s.(string)
				if !ok {
					d.shape(doc, ptr+"/args", "not a list of strings", shapeFix)
					return nil
				}
				h.args = append(h.args, s)
			}
		}
		if !strings.Contains(strings.ToLower(cmd+" "+strings.Join(h.args, " ")), "spawngate") {
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
func (d *doctor) judge(ctx context.Context) *host.Diagnosis {
	var managedOff, managedOnly hookSwitch // the last managed file that sets each wins
	var lowerOff []*settingsDoc
	for _, doc := range d.docs {
		if doc.obj == nil {
			continue
		}
		off, offSet := doc.obj["disableAllHooks"].(bool)
		only, onlySet := doc.obj["allowManagedHooksOnly"].(bool)
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
			return fmt.Sprintf(`"disableAllHooks": true in %s`, managedOff.doc.path)
		case h.doc.layer == managedLayer:
			return ""
		case managedOnly.on:
			return fmt.Sprintf(`"allowManagedHooksOnly": true in %s`, managedOnly.doc.path)
		case len(lowerOff) > 0:
			return fmt.Sprintf(`"disableAllHooks": true in %s`, lowerOff[0].path)
		}
		return ""
	}
	diag := &host.Diagnosis{}
	var running []*gateHook
	var off []string // "the one in FILE is turned off by ...", once a file
	for _, h := range d.hooks {
		if by := offBy(h); by != "" {
			if why := fmt.Sprintf("the one in %s is turned off by %s", h.doc.path, by); !slices.Contains(off, why) {
				off = append(off, why)
			}
			continue
		}
		running = append(running, h)
		diag.Gates = append(diag.Gates, h.place())
	}

	if managedOff.on && len(d.hooks) > 0 {
		d.findings = append(d.findings, host.Finding{ID: "hook.disabled", File: managedOff.doc.path, Pointer: "/disableAllHooks",
			Problem: `"disableAllHooks": true in managed settings turns off every hook, spawngate's too`,
			Fix:     `remove it`})
	}
	if !managedOff.on && !managedOnly.on {
		var turnedOff []string
		for _, h := range d.hooks {
			if h.doc.layer != managedLayer && !slices.Contains(turnedOff, h.doc.path) {
				turnedOff = append(turnedOff, h.doc.path)
			}
		}
		for _, doc := range lowerOff {
			if len(turnedOff) == 0 {
				break
			}
			d.findings = append(d.findings, host.Finding{ID: "hook.disabled", File: doc.path, Pointer: "/disableAllHooks",
				Problem: fmt.Sprintf(`"disableAllHooks": true in %s turns off the spawngate hook in %s`, doc.layer, strings.Join(turnedOff, " and ")),
				Fix:     fmt.Sprintf(`remove it, and move the hook to %s with "allowManagedHooksOnly": true, which no other settings can turn off`, d.managedPath())})
		}
	}
	var tools, expansions []*gateHook
	for _, h := range running {
		if h.event == Expansion {
			expansions = append(expansions, h)
		} else {
			tools = append(tools, h)
		}
	}
	if len(expansions) == 0 {
		d.findings = append(d.findings, host.Finding{ID: "hook.absent", File: d.managedPath(), Pointer: "/hooks/" + Expansion,
			Problem: "no UserPromptExpansion hook runs spawngate: a prompt's /command that names a skill with context: fork starts its sub-agent with no tool call, unjudged",
			Fix:     fmt.Sprintf(`add %s to hooks.%s here`, suggestedExpansionHook, Expansion)})
	}
	if len(tools) == 0 {
		problem := "no PreToolUse hook in any settings Claude Code reads here runs spawngate: every sub-agent starts unjudged"
		if len(off) > 0 {
			problem = "no PreToolUse hook that runs spawngate is in effect (" + strings.Join(off, "; ") + "): every sub-agent starts unjudged"
		}
		d.findings = append(d.findings, host.Finding{ID: "hook.absent", File: d.managedPath(), Pointer: "/hooks/PreToolUse",
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
		d.findings = append(d.findings, host.Finding{ID: "hook.unmanaged", File: h.doc.path, Pointer: h.ptr,
			Problem: problem,
			Fix:     fmt.Sprintf(`move it to %s and set "allowManagedHooksOnly": true there`, d.managedPath())})
	}
	if managedGate && !managedOnly.on {
		file := d.managedPath()
		if managedOnly.doc != nil {
			file = managedOnly.doc.path
		}
		d.findings = append(d.findings, host.Finding{ID: "hooks.unrestricted", File: file, Pointer: "/allowManagedHooksOnly",
			Problem: `"allowManagedHooksOnly" is not true in managed settings: PreToolUse hooks that user and project settings add, which a session can write, run beside the spawngate hook`,
			Fix:     `set "allowManagedHooksOnly": true here`})
	}

	d.checkMatchers(tools)
	for _, h := range expansions {
		if h.matcher != "" && h.matcher != "*" {
			d.findings = append(d.findings, host.Finding{ID: "hook.matcher", File: h.doc.path, Pointer: h.matcherPtr,
				Problem: fmt.Sprintf(`"matcher": %q selects only some /commands (a UserPromptExpansion matcher is matched against the command's name): the others start their sub-agents unjudged`, h.matcher),
				Fix:     `leave the matcher out`})
		}
	}
	for _, h := range running {
		switch h.kind {
		case "http":
			d.findings = append(d.findings, host.Finding{ID: "hook.http", File: h.doc.path, Pointer: h.ptr + "/url",
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
// matches, at every hook that misses it.
func (d *doctor) checkMatchers(running []*gateHook) {
	tools := spawnTools()
	covered := map[string]bool{}
	misses := make([][]string, len(running))
	reported := map[string]bool{}
	for i, h := range running {
		for _, t := range tools {
			ok, err := matcherMatches(h.matcher, t)
			if err != nil {
				key := h.doc.path + "\x00" + h.matcherPtr
				if !reported[key] {
					reported[key] = true
					d.findings = append(d.findings, host.Finding{ID: "hook.matcher", File: h.doc.path, Pointer: h.matcherPtr,
						Problem: fmt.Sprintf(`"matcher": %q cannot be checked: Claude Code reads it as a JavaScript regular expression, and %s, so whether it selects %s is not known (a pattern JavaScript does not compile selects nothing)`, h.matcher, plan.OneLine(err.Error()), strings.Join(tools, ", ")),
						Fix:     fmt.Sprintf(`list the tools instead: "matcher": %q`, suggestMatcher(""))})
				}
				misses[i] = nil
				break
			}
			if ok {
				covered[t] = true
			} else {
				misses[i] = append(misses[i], t)
			}
		}
	}
	for i, h := range running {
		var missed []string
		for _, t := range misses[i] {
			if !covered[t] {
				missed = append(missed, t)
			}
		}
		if len(missed) == 0 {
			continue
		}
		d.findings = append(d.findings, host.Finding{ID: "hook.matcher", File: h.doc.path, Pointer: h.matcherPtr,
			Problem: fmt.Sprintf(`"matcher": %q does not select %s, under which Claude Code also starts sub-agents: those spawns are never judged`, h.matcher, orList(missed)),
			Fix:     fmt.Sprintf(`set "matcher": %q`, suggestMatcher(h.matcher))})
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

func orList(s []string) string {
	if len(s) == 1 {
		return s[0]
	}
	return strings.Join(s[:len(s)-1], ", ") + " or " + s[len(s)-1]
}

// checkCommand checks a command hook that runs spawngate: that the
// program is the one meant, that it runs as spawngate hook claude-code,
// that it can start, and that Claude Code waits for its answer.
func (d *doctor) checkCommand(ctx context.Context, h *gateHook) {
	cmdPtr := h.ptr + "/command"
	add := func(id, ptr, problem, fix string) {
		d.findings = append(d.findings, host.Finding{ID: id, File: h.doc.path, Pointer: ptr, Problem: problem, Fix: fix})
	}
	const directly = `run spawngate directly, without a shell: "command": "/usr/local/bin/spawngate", "args": ["hook", "claude-code", "--policy", FILE]`
	d.checkHandler(h, add)
	var words []string
	if !h.exec {
		add("hook.command", cmdPtr, `the command runs through a shell: CLAUDE_CODE_SHELL_PREFIX in the user's settings "env" (~/.claude/settings.json, which a session can write) hands the whole command to another program, and BASH_ENV there runs a script first; either can end the hook before spawngate answers, and Claude Code then lets the spawn through`,
			`give the program and its arguments apart, which runs no shell: `+directly)
	}
	if h.exec {
		// Without a shell nothing is expanded but the project folder,
		// which Claude Code fills in itself.
		for _, w := range append([]string{h.command}, h.args...) {
			words = append(words, expandProjectDir(w, d.project))
		}
	} else {
		var op string
		var err error
		words, op, err = host.ShellWords(h.command, map[string]string{"CLAUDE_PROJECT_DIR": d.project, "HOME": d.home}, d.home)
		switch {
		case err != nil:
			add("hook.command", cmdPtr, fmt.Sprintf("the command %s, so what it runs is not known until the hook runs", err), directly)
			return
		case op != "":
			add("hook.command", cmdPtr, fmt.Sprintf("the command is more than one simple command (it holds %q): its exit status need not be spawngate's, and a refusal can be lost", op), directly)
		}
	}
	line, ok := host.CheckCommand(ctx, host.HookCommand{Host: Name, Title: "Claude Code", Words: words, Project: d.project, Owners: d.o.OwnersFor(d.project, d.home),
		LookedFor: "on PATH, or from the folder it runs in", PolicyFrom: "the folder the hook runs in", Policy: "/etc/spawngate/claude-code.yaml",
		Directly: directly, ReadHook: d.o.ReadHook}, func(id, problem, fix string) { add(id, cmdPtr, problem, fix) })
	if !ok {
		return
	}
	if line.Timeout > 0 {
		wait, set := h.timeout, h.timeout > 0
		if !set {
			wait = hostDefaultTimeout
		}
		if wait <= line.Timeout {
			ptr, what := h.ptr+"/timeout", fmt.Sprintf(`"timeout": %s`, seconds(wait))
			if !set {
				ptr, what = h.ptr, fmt.Sprintf("no \"timeout\" (Claude Code's default, %s s)", seconds(wait))
			}
			add("hook.timeout", ptr, fmt.Sprintf("%s is not above spawngate's own --timeout of %s: Claude Code can stop the hook before spawngate answers, and a hook that times out lets the spawn through", what, line.Timeout),
				fmt.Sprintf(`set "timeout" above %s (such as %s), or give spawngate a lower --timeout`, seconds(line.Timeout), seconds(line.Timeout+10*time.Second)))
		}
	}
}

// handlerKeys are the keys of a command handler Claude Code 2.1.332
// reads (its settings schema, read off the client), and whether a value
// can leave a spawn unjudged: "" for a key that never does, else what
// doctor asks of it. A key the client does not read is dropped by this
// version, and may be read by the next: it is a finding too.
var handlerKeys = map[string]string{
	"type": "", "command": "", "args": "", "timeout": "", "statusMessage": "",
	// once acts on a skill's hooks only; holdsTools on one plugin's;
	// cloud and the rewake texts on cloud sessions and asyncRewake.
	"once": "", "holdsTools": "", "cloud": "", "rewakeMessage": "", "rewakeSummary": "",
	"onFailure":   "block",
	"async":       "false",
	"asyncRewake": "false",
	"if":          "none",
	"shell":       "bash",
}

// checkHandler reports the keys of a spawngate command handler that let a
// spawn through unjudged, or that this version of Claude Code does not
// read.
func (d *doctor) checkHandler(h *gateHook, add func(id, ptr, problem, fix string)) {
	keys := make([]string, 0, len(h.obj))
	for k := range h.obj {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		v := h.obj[k]
		ptr := h.ptr + "/" + k
		want, known := handlerKeys[k]
		switch {
		case !known:
			add("hook.handler", ptr, fmt.Sprintf("%q is not a key Claude Code 2.1.332 reads in a command hook: it drops it, and a later version may read it as something that weakens the hook", k),
				"remove it")
		case k == "async" && v != false, k == "asyncRewake" && v != false:
			add("hook.handler", ptr, fmt.Sprintf(`"%s": %s makes Claude Code start the hook and not wait for it: the child starts while spawngate judges, and a refusal comes too late`, k, showJSON(v)),
				"remove it")
		case k == "if":
			add("hook.handler", ptr, fmt.Sprintf(`"if": %s makes the hook run only for calls that match a permission rule, and Claude Code matches an Agent(...) rule against no call (the Agent tool has no input matcher): the spawns it leaves out, or all of them, start unjudged`, showJSON(v)),
				"remove it")
		case k == "shell" && v != "bash":
			add("hook.handler", ptr, fmt.Sprintf(`"shell": %s runs the hook in another shell, which need not be installed: a hook that cannot start lets the spawn through`, showJSON(v)),
				"remove it")
		case k == "onFailure" && v != want:
			add("hook.handler", ptr, fmt.Sprintf(`"onFailure": %s lets a spawn through when the hook cannot start (a missing binary), times out or crashes`, showJSON(v)),
				`set "onFailure": "block"`)
		}
	}
	if _, set := h.obj["onFailure"]; !set {
		add("hook.handler", h.ptr, `the hook sets no "onFailure", and Claude Code's default, "continue", lets a spawn through when the hook cannot start (a missing binary), times out or crashes`,
			`set "onFailure": "block"`)
	}
}

// showJSON writes a setting's value as it is written in the file.
func showJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// seconds writes a duration as Claude Code's "timeout" counts it.
func seconds(t time.Duration) string { return strconv.FormatFloat(t.Seconds(), 'f', -1, 64) }

// expandProjectDir fills in the project folder where a command names it.
func expandProjectDir(s, project string) string {
	return strings.NewReplacer("${CLAUDE_PROJECT_DIR}", project, "$CLAUDE_PROJECT_DIR", project).Replace(s)
}

// locate gives each finding and gate the line its pointer is written on.
func (d *doctor) locate(diag *host.Diagnosis) {
	data := map[string][]byte{}
	for _, doc := range d.docs {
		if doc.obj != nil {
			data[doc.path] = doc.data
		}
	}
	lines := func(file string, ptrs []string) map[string]plan.Position {
		if data[file] == nil || len(ptrs) == 0 {
			return nil
		}
		pos, err := plan.Locate(context.Background(), file, data[file], plan.DefaultLimits, ptrs)
		if err != nil {
			return nil
		}
		return pos
	}
	byFile := map[string][]string{}
	for _, f := range d.findings {
		if f.Pointer != "" {
			byFile[f.File] = append(byFile[f.File], f.Pointer)
		}
	}
	for _, g := range diag.Gates {
		byFile[g.File] = append(byFile[g.File], g.Pointer)
	}
	pos := map[string]map[string]plan.Position{}
	for file, ptrs := range byFile {
		pos[file] = lines(file, ptrs)
	}
	for i, f := range d.findings {
		if p, ok := pos[f.File][f.Pointer]; ok && f.Pointer != "" {
			d.findings[i].Line = p.Line
		}
	}
	for i, g := range diag.Gates {
		if p, ok := pos[g.File][g.Pointer]; ok {
			diag.Gates[i].Line = p.Line
		}
	}
	diag.Findings = d.findings
}
