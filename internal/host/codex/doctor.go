package codex

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/pelletier/go-toml/v2"
	"github.com/pelletier/go-toml/v2/unstable"

	"github.com/spawngate/spawngate/internal/host"
	"github.com/spawngate/spawngate/internal/plan"
)

// What the doctor knows of Codex's configuration is what Codex CLI 0.171.0
// was seen to do (by hand against the binary, and internal/e2e/codex) and
// what its source says:
//
//   - Config layers, lowest first: /etc/codex/config.toml (system), then
//     $CODEX_HOME/config.toml (user; CODEX_HOME, with its symbolic links
//     resolved, or ~/.codex), then one project layer for each folder from
//     the project root (the nearest folder at or above the session's that
//     holds .git, or one of project_root_markers) down to the session's
//     folder that has a .codex folder. A project layer is read only when
//     trusted: [projects."DIR"] trust_level = "trusted" in user config,
//     for its own folder, else the project root's. A .codex that is
//     CODEX_HOME is not a project layer. /etc/codex/requirements.toml is
//     what an admin enforces: managed hooks under [hooks],
//     allow_managed_hooks_only, and [features] values no layer changes.
//   - Each layer's hooks are those of hooks.json beside its config.toml and
//     those of its config.toml's [hooks]. Codex drops a whole hooks.json
//     that it cannot read as hooks (it warns only in its app server); a
//     config.toml that does not parse, or whose [hooks] does not, stops
//     Codex from starting.
//   - A hook of the system layer or of requirements is managed and runs as
//     written. Any other runs only once trusted: [hooks.state."FILE:EVENT:
//     GROUP:HANDLER"] trusted_hash in user config (and nowhere else) equal
//     to the hook's hash (trustHash). One not trusted, or changed since,
//     is skipped without a warning; enabled = false there skips it too.
//     allow_managed_hooks_only = true in requirements drops every hook
//     that is not managed. --dangerously-bypass-hook-trust on Codex's
//     command line runs untrusted hooks; no configuration key does.
//   - [features] hooks = false (or its old name codex_hooks) in any
//     layer, the last one winning, turns off every hook, managed ones
//     too, unless requirements sets the feature. multi_agent_v2 = true,
//     from a trusted project as well, adds the spawn tool a payload names
//     collaborationspawn_agent, which the Agent alias does not select.
//   - Codex skips a group whose matcher does not compile. A matcher of
//     letters, digits, _ and | lists exact names; "", "*" or none selects
//     every tool; anything else is an unanchored regular expression.
//   - Codex runs a command hook with $SHELL -lc in the session's folder,
//     waits "timeout" seconds (600 unless set, at least 1), and lets the
//     tool call through when the hook cannot run, fails or times out. It
//     does not wait for an "async": true hook (its source).
//
// The doctor reports each way those rules let a spawn start without
// spawngate hook codex judging it. It reads files and runs nothing.

// doctorPaths are where Codex reads its machine-wide files, under the
// root.
var doctorPaths = struct{ requirements, system string }{
	requirements: filepath.Join("etc", "codex", "requirements.toml"),
	system:       filepath.Join("etc", "codex"),
}

const (
	configName = "config.toml"
	hooksName  = "hooks.json"
	dotCodex   = ".codex"
	// hostDefaultTimeout is how many seconds Codex waits for a hook that
	// sets no "timeout".
	hostDefaultTimeout = 600
	preToolUse         = "PreToolUse"
)

// suggestedMatcher is the README's matcher: every spawn tool, and Agent.
const suggestedMatcher = `^(Agent|.*spawn_agent|.*resume_agent)$`

// suggestedHook is the hook the fixes propose, as a line of
// requirements.toml's [hooks] table.
const suggestedHook = `PreToolUse = [{matcher = '` + suggestedMatcher + `', hooks = [{type = "command", command = "/usr/local/bin/spawngate hook codex --policy /etc/spawngate/codex.yaml --timeout 20s", timeout = 30}]}]`

// hookEvents are the events Codex 0.171.0 reads in a hooks table. It
// ignores any other key, and drops the whole table when the value of one
// of these is not what it reads.
var hookEvents = []string{
	"PreToolUse", "PermissionRequest", "PostToolUse", "PreCompact", "PostCompact", "SessionStart",
	"SessionEnd", "UserPromptSubmit", "Stop", "SubagentStart", "SubagentStop", "Interrupt",
}

// configLayer is one of Codex's layers of configuration.
type configLayer int

const (
	requirementsLayer configLayer = iota
	systemLayer
	userLayer
	projectLayer
)

func (l configLayer) String() string {
	return [...]string{"managed requirements", "system config", "user config", "project config"}[l]
}

// managed tells whether Codex runs the layer's hooks without trust.
func (l configLayer) managed() bool { return l == requirementsLayer || l == systemLayer }

// configDoc is one file Codex reads, as it reads it.
type configDoc struct {
	path  string
	layer configLayer
	toml  bool
	data  []byte
	tree  map[string]any // nil when the file is absent or not read
	lines map[string]int // a TOML file's keys and tables, by JSON pointer
}

// gateHook is a command hook that runs spawngate (or means to).
type gateHook struct {
	doc            *configDoc
	event          string
	group, handler int
	ptr            string // the handler
	matcherPtr     string // the group's matcher, or the group when it has none
	matcher        *string
	matcherErr     error // Codex skips the group: its matcher does not compile
	command        string
	timeout        int64 // seconds, as Codex waits
	timeoutSet     bool
	timeoutRaw     uint64 // as written
	async          bool
	status         *string
	contextLimit   *uint64 // additionalContextLimit, part of the trust hash
	key            string  // the hook's name in [hooks.state]
}

func (h *gateHook) place() host.Place { return host.Place{File: h.doc.path, Pointer: h.ptr} }

// hookState is a hook's [hooks.state."KEY"] table in user config.
type hookState struct {
	enabled    *bool
	trusted    string
	hasTrusted bool
}

// featureValue is a feature as the layers set it.
type featureValue struct {
	name   string // as the layer writes it
	on     bool
	doc    *configDoc // nil: Codex's default
	ptr    string
	pinned bool // requirements set it
}

var _ host.Doctor = Adapter{}

// doctor is one run: what it read and what it found.
type doctor struct {
	o         host.DoctorOptions
	project   string // absolute: the folder sessions start in
	home      string // absolute: what HOME and ~ are to a hook; "" for none
	codexHome string // absolute; "" when neither CODEX_HOME nor a home is known
	req       *configDoc
	user      *configDoc   // $CODEX_HOME/config.toml, nil when absent
	configs   []*configDoc // each layer's config.toml that Codex reads, lowest first
	sources   []hookSource // each hooks table Codex reads, in its order
	docs      []*configDoc
	// off says why a spawngate hook Codex never loads does not run, once
	// a file.
	off      []string
	states   map[string]hookState
	findings []host.Finding
	hooks    []*gateHook // spawngate hooks on PreToolUse, as loaded
	others   []*gateHook // spawngate hooks on any other event
	jsonPos  map[string]map[string]plan.Position
	// trusted are the project .codex folders Codex loads, root first.
	trusted []string
}

// hookSource is one hooks table: a hooks.json, a config.toml's [hooks],
// requirements' [hooks].
type hookSource struct {
	doc   *configDoc
	base  string // the pointer of the table
	table map[string]any
}

// Doctor implements host.Doctor: it reads Codex's configuration as Codex
// does and reports every way the installation lets a spawn through. An
// error is a file it must read and cannot.
func (Adapter) Doctor(ctx context.Context, o host.DoctorOptions) (*host.Diagnosis, error) {
	project, err := filepath.Abs(o.Project)
	if err != nil {
		return nil, &host.DoctorError{File: o.Project, Msg: err.Error()}
	}
	d := &doctor{o: o, project: project, states: map[string]hookState{}, jsonPos: map[string]map[string]plan.Position{}}
	if o.Home != "" {
		if d.home, err = filepath.Abs(o.Home); err != nil {
			return nil, &host.DoctorError{File: o.Home, Msg: err.Error()}
		}
	}
	d.codexHome = d.findCodexHome()
	if err := d.read(); err != nil {
		return nil, err
	}
	d.collect()
	diag := d.judge(ctx)
	d.locate(diag)
	diag.Sort()
	return diag, nil
}

// findCodexHome is CODEX_HOME as Codex takes it: the variable with its
// symbolic links resolved, else ~/.codex as it is.
func (d *doctor) findCodexHome() string {
	if d.o.Getenv != nil {
		if v := d.o.Getenv("CODEX_HOME"); v != "" {
			abs, err := filepath.Abs(v)
			if err != nil {
				return v
			}
			if real, err := filepath.EvalSymlinks(abs); err == nil {
				return real
			}
			return abs
		}
	}
	if d.home == "" {
		return ""
	}
	return filepath.Join(d.home, dotCodex)
}

func (d *doctor) rootPath(rel string) string {
	root := d.o.Root
	if root == "" {
		root = string(filepath.Separator)
	}
	return filepath.Join(root, rel)
}

func (d *doctor) requirementsPath() string { return d.rootPath(doctorPaths.requirements) }

// userConfigPath is where hook trust is stored, and where the fixes for it
// go.
func (d *doctor) userConfigPath() string {
	if d.codexHome == "" {
		return filepath.Join("~", dotCodex, configName)
	}
	return filepath.Join(d.codexHome, configName)
}

// read reads every file in the order Codex layers them.
func (d *doctor) read() error {
	var err error
	if d.req, err = d.readDoc(d.requirementsPath(), requirementsLayer); err != nil {
		return err
	}
	if err := d.readLayer(d.rootPath(doctorPaths.system), systemLayer); err != nil {
		return err
	}
	if d.codexHome != "" {
		if err := d.readLayer(d.codexHome, userLayer); err != nil {
			return err
		}
	}
	return d.readProjects()
}

// readLayer reads a layer's folder: its config.toml, and hooks.json
// beside it.
func (d *doctor) readLayer(dir string, layer configLayer) error {
	cfg, err := d.readDoc(filepath.Join(dir, configName), layer)
	if err != nil {
		return err
	}
	hooks, err := d.readDoc(filepath.Join(dir, hooksName), layer)
	if err != nil {
		return err
	}
	if cfg != nil && cfg.tree != nil {
		d.configs = append(d.configs, cfg)
		if layer == userLayer {
			d.user = cfg
		}
	}
	// Codex reads hooks.json before config.toml's [hooks].
	for _, doc := range []*configDoc{hooks, cfg} {
		if doc == nil || doc.tree == nil {
			continue
		}
		if doc.toml {
			if t, ok := doc.tree["hooks"].(map[string]any); ok {
				d.sources = append(d.sources, hookSource{doc, "/hooks", t})
			}
			continue
		}
		t, _ := doc.tree["hooks"].(map[string]any)
		d.sources = append(d.sources, hookSource{doc, "/hooks", t})
	}
	return nil
}

// readProjects reads the project layers of a session started in the
// project folder: each .codex from the project root down, when trusted.
func (d *doctor) readProjects() error {
	root, repo := d.projectRoot()
	var dirs []string
	for dir := d.project; ; dir = filepath.Dir(dir) {
		dirs = append(dirs, dir)
		if dir == root || dir == filepath.Dir(dir) {
			break
		}
	}
	slices.Reverse(dirs)
	trust := d.projectTrust()
	for _, dir := range dirs {
		dot := filepath.Join(dir, dotCodex)
		if info, err := os.Stat(dot); err != nil || !info.IsDir() {
			continue
		}
		if d.codexHome != "" && (dot == d.codexHome || sameFile(dot, d.codexHome)) {
			continue
		}
		level, key := trustFor(trust, dir, root, repo)
		if level == "trusted" {
			d.trusted = append(d.trusted, dot)
			if err := d.readLayer(dot, projectLayer); err != nil {
				return err
			}
			continue
		}
		why := fmt.Sprintf(`the project is not trusted (no [projects.%q] trust_level = "trusted" in %s)`, key, d.userConfigPath())
		if level != "" {
			why = fmt.Sprintf(`the project is trusted only as %q ([projects.%q] in %s)`, level, key, d.userConfigPath())
		}
		for _, name := range []string{hooksName, configName} {
			if namesSpawngate(filepath.Join(dot, name)) {
				d.off = append(d.off, fmt.Sprintf("the one in %s is not loaded: %s", filepath.Join(dot, name), why))
			}
		}
	}
	return nil
}

// projectRoot is the project root Codex finds from the project folder:
// the nearest folder at or above it that holds one of the root markers
// (.git unless project_root_markers says otherwise; none makes the folder
// its own root), and the nearest holding .git, whose trust a folder
// without its own entry takes.
func (d *doctor) projectRoot() (root, repo string) {
	markers := []string{".git"}
	for _, cfg := range d.configs {
		if list, ok := cfg.tree["project_root_markers"].([]any); ok {
			markers = markers[:0:0]
			for _, m := range list {
				if s, ok := m.(string); ok {
					markers = append(markers, s)
				}
			}
		}
	}
	root = d.project
	if len(markers) > 0 {
	walk:
		for dir := d.project; ; dir = filepath.Dir(dir) {
			for _, m := range markers {
				if _, err := os.Stat(filepath.Join(dir, m)); err == nil {
					root = dir
					break walk
				}
			}
			if dir == filepath.Dir(dir) {
				break
			}
		}
	}
	for dir := d.project; ; dir = filepath.Dir(dir) {
		if _, err := os.Stat(filepath.Join(dir, ".git")); err == nil {
			return root, dir
		}
		if dir == filepath.Dir(dir) {
			return root, ""
		}
	}
}

// projectTrust is the [projects] table of system and user config, user
// entries over system ones: trust level by folder.
func (d *doctor) projectTrust() map[string]string {
	trust := map[string]string{}
	for _, cfg := range d.configs {
		projects, _ := cfg.tree["projects"].(map[string]any)
		for key, v := range projects {
			if p, ok := v.(map[string]any); ok {
				if level, ok := p["trust_level"].(string); ok {
					trust[key] = level
				}
			}
		}
	}
	return trust
}

// trustFor is the trust level of a project layer's folder, as Codex
// decides it: the folder's own entry, else the project root's, else the
// repository root's; and the key it was found under, or the one to add.
func trustFor(trust map[string]string, dir, root, repo string) (level, key string) {
	for _, p := range []string{dir, root, repo} {
		if p == "" {
			continue
		}
		for _, k := range trustKeys(p) {
			if l, ok := trust[k]; ok {
				return l, k
			}
		}
	}
	if repo != "" {
		return "", trustKeys(repo)[0]
	}
	return "", trustKeys(root)[0]
}

// trustKeys are the keys Codex looks a folder up by: its path with
// symbolic links resolved, then as written.
func trustKeys(path string) []string {
	real, err := filepath.EvalSymlinks(path)
	if err != nil || real == path {
		return []string{path}
	}
	return []string{real, path}
}

func sameFile(a, b string) bool {
	ia, err1 := os.Stat(a)
	ib, err2 := os.Stat(b)
	return err1 == nil && err2 == nil && os.SameFile(ia, ib)
}

// namesSpawngate tells whether a file mentions spawngate; a file that
// cannot be read, or is larger than a doctor reads, does not.
func namesSpawngate(path string) bool {
	data, found, err := host.ReadConfig(path)
	return found && err == nil && bytes.Contains(bytes.ToLower(data), []byte("spawngate"))
}

// readDoc reads one file: nil for one that does not exist; a finding (and
// no tree) for one Codex cannot read.
func (d *doctor) readDoc(path string, layer configLayer) (*configDoc, error) {
	data, found, err := host.ReadConfig(path)
	if !found || err != nil {
		return nil, err
	}
	doc := &configDoc{path: path, layer: layer, toml: strings.HasSuffix(path, ".toml"), data: data}
	d.docs = append(d.docs, doc)
	if doc.toml {
		d.parseTOML(doc)
	} else {
		d.parseJSON(doc)
	}
	return doc, nil
}

// parseTOML reads a config.toml or requirements.toml. One that does not
// parse stops Codex from starting.
func (d *doctor) parseTOML(doc *configDoc) {
	var tree map[string]any
	if err := toml.Unmarshal(doc.data, &tree); err != nil {
		f := host.Finding{ID: "settings.invalid", File: doc.path,
			Problem: "does not parse as TOML (" + plan.OneLine(tomlMessage(err)) + "): Codex does not start with it, and doctor cannot read what it sets",
			Fix:     "make it valid TOML"}
		var de *toml.DecodeError
		if errors.As(err, &de) {
			line, col := de.Position()
			f.Line = line
			f.Problem = fmt.Sprintf("does not parse as TOML (line %d, column %d: %s): Codex does not start with it, and doctor cannot read what it sets", line, col, plan.OneLine(tomlMessage(err)))
		}
		d.findings = append(d.findings, f)
		return
	}
	if tree == nil {
		tree = map[string]any{}
	}
	doc.tree = normalizeTOML(tree).(map[string]any)
	doc.lines = tomlLinesByPointer(doc.data)
}

// parseJSON reads a hooks.json. Codex drops one it cannot read, and its
// hooks with it: a finding when it names spawngate.
func (d *doctor) parseJSON(doc *configDoc) {
	dec := json.NewDecoder(bytes.NewReader(doc.data))
	dec.UseNumber()
	var v any
	err := dec.Decode(&v)
	if err == nil && dec.More() {
		err = errors.New("more than one JSON value")
	}
	names := bytes.Contains(bytes.ToLower(doc.data), []byte("spawngate"))
	if err != nil {
		if names {
			f := host.Finding{ID: "settings.invalid", File: doc.path,
				Problem: "does not parse as JSON (" + plan.OneLine(err.Error()) + "): Codex drops every hook in it, the spawngate hook too",
				Fix:     "make it valid JSON"}
			var syn *json.SyntaxError
			if errors.As(err, &syn) {
				line, col := lineCol(doc.data, syn.Offset)
				f.Line = line
				f.Problem = fmt.Sprintf("does not parse as JSON (line %d, column %d: %s): Codex drops every hook in it, the spawngate hook too", line, col, plan.OneLine(err.Error()))
			}
			d.findings = append(d.findings, f)
		}
		return
	}
	obj, ok := v.(map[string]any)
	if !ok {
		if names {
			d.findings = append(d.findings, host.Finding{ID: "settings.invalid", File: doc.path, Line: 1,
				Problem: "is not a JSON object: Codex reads no hook in it, the spawngate hook neither",
				Fix:     `make the file one JSON object: {"hooks": {"PreToolUse": [...]}}`})
		}
		return
	}
	for key := range obj {
		if key != "hooks" && key != "description" {
			if names {
				d.shape(doc, "/"+escapePointer(key), "a key Codex does not allow here (only hooks and description)", "remove it")
			}
			return
		}
	}
	if h, ok := obj["hooks"]; ok {
		if _, ok := h.(map[string]any); !ok {
			if names {
				d.shape(doc, "/hooks", "not an object", shapeFix(doc))
			}
			return
		}
	}
	doc.tree = obj
}

// shape reports a setting written in a shape Codex does not read.
func (d *doctor) shape(doc *configDoc, ptr, what, fix string) {
	consequence := "Codex drops every hook in the file, the spawngate hook too"
	if doc.toml {
		consequence = "Codex does not start with it"
	}
	d.findings = append(d.findings, host.Finding{ID: "settings.invalid", File: doc.path, Pointer: ptr,
		Problem: fmt.Sprintf("%s is %s: %s", settingName(ptr), what, consequence),
		Fix:     fix})
}

// shapeFix is the fix for a hook written in a shape Codex does not read.
func shapeFix(doc *configDoc) string {
	if doc.toml {
		return "write the hook as Codex reads it, under [hooks]: " + suggestedHook
	}
	return `write the hook as Codex reads it: {"hooks": {"PreToolUse": [{"matcher": "` + strings.ReplaceAll(suggestedMatcher, `\`, `\\`) +
		`", "hooks": [{"type": "command", "command": "/usr/local/bin/spawngate hook codex --policy /etc/spawngate/codex.yaml --timeout 20s", "timeout": 30}]}]}}`
}

// collect reads requirements, every hooks table, and the trust states,
// in Codex's order.
func (d *doctor) collect() {
	if d.req != nil && d.req.tree != nil {
		if v, ok := d.req.tree["allow_managed_hooks_only"]; ok {
			if _, ok := v.(bool); !ok {
				d.shape(d.req, "/allow_managed_hooks_only", "not true or false", "write true or false")
			}
		}
		if t, ok := d.req.tree["hooks"]; ok {
			if table, ok := t.(map[string]any); ok {
				d.sources = slices.Insert(d.sources, 0, hookSource{d.req, "/hooks", table})
			} else {
				d.shape(d.req, "/hooks", "not a table", shapeFix(d.req))
			}
		}
		d.checkFeatureShapes(d.req)
	}
	for _, cfg := range d.configs {
		d.checkFeatureShapes(cfg)
	}
	d.readStates()
	managedOnly := d.managedOnly()
	for _, s := range d.sources {
		if managedOnly && !s.doc.layer.managed() {
			if bytes.Contains(bytes.ToLower(s.doc.data), []byte("spawngate")) {
				d.off = append(d.off, fmt.Sprintf("the one in %s is dropped by allow_managed_hooks_only = true in %s", s.doc.path, d.req.path))
			}
			continue
		}
		d.readHooks(s)
	}
}

// checkFeatureShapes reports a feature doctor reads set to something
// else than true or false.
func (d *doctor) checkFeatureShapes(doc *configDoc) {
	features, ok := doc.tree["features"]
	if !ok {
		return
	}
	table, ok := features.(map[string]any)
	if !ok {
		d.shape(doc, "/features", "not a table", "write [features] as a table of true or false")
		return
	}
	for _, name := range []string{"hooks", "codex_hooks", "multi_agent_v2"} {
		if v, ok := table[name]; ok {
			if t, isTable := v.(map[string]any); isTable && name == "multi_agent_v2" {
				// The table form: enabled, and the tool namespace.
				if e, set := t["enabled"]; set {
					if _, ok := e.(bool); !ok {
						d.shape(doc, "/features/"+name+"/enabled", "not true or false", "write true or false")
					}
				}
				continue
			}
			if _, ok := v.(bool); !ok {
				d.shape(doc, "/features/"+name, "not true or false", "write true or false")
			}
		}
	}
}

func (d *doctor) managedOnly() bool {
	return d.req != nil && d.req.tree != nil && d.req.tree["allow_managed_hooks_only"] == true
}

// readStates reads [hooks.state] of user config, the only place Codex
// reads hook trust from.
func (d *doctor) readStates() {
	if d.user == nil {
		return
	}
	hooks, _ := d.user.tree["hooks"].(map[string]any)
	raw, ok := hooks["state"]
	if !ok {
		return
	}
	states, ok := raw.(map[string]any)
	if !ok {
		d.shape(d.user, "/hooks/state", "not a table", `write one [hooks.state."KEY"] table per hook`)
		return
	}
	for key, v := range states {
		ptr := "/hooks/state/" + escapePointer(key)
		t, ok := v.(map[string]any)
		if !ok {
			d.shape(d.user, ptr, "not a table", `write trusted_hash = "sha256:..." under it`)
			continue
		}
		var st hookState
		if e, ok := t["enabled"]; ok {
			b, ok := e.(bool)
			if !ok {
				d.shape(d.user, ptr+"/enabled", "not true or false", "write true or false")
				continue
			}
			st.enabled = &b
		}
		if h, ok := t["trusted_hash"]; ok {
			s, ok := h.(string)
			if !ok {
				d.shape(d.user, ptr+"/trusted_hash", "not a string", `write trusted_hash = "sha256:..."`)
				continue
			}
			st.trusted, st.hasTrusted = s, true
		}
		d.states[strings.TrimSpace(key)] = st
	}
}

// shapeError is the first value of a hooks table Codex does not read.
type shapeError struct{ ptr, what string }

// readHooks reads one hooks table as Codex deserializes it: the first
// value it does not read drops the table (a hooks.json's hooks; a
// config.toml, and Codex with it). It keeps the command hooks that name
// spawngate.
func (d *doctor) readHooks(s hookSource) {
	var found []*gateHook
	bad := func() *shapeError {
		for _, event := range hookEvents {
			raw, ok := s.table[event]
			if !ok {
				continue
			}
			eptr := s.base + "/" + event
			groups, ok := raw.([]any)
			if !ok {
				return &shapeError{eptr, "not a list"}
			}
			for g, rawGroup := range groups {
				gptr := fmt.Sprintf("%s/%d", eptr, g)
				group, ok := rawGroup.(map[string]any)
				if !ok {
					return &shapeError{gptr, "not an object"}
				}
				var matcher *string
				matcherPtr := gptr
				if m, ok := group["matcher"]; ok && m != nil {
					s, ok := m.(string)
					if !ok {
						return &shapeError{gptr + "/matcher", "not a string"}
					}
					matcher, matcherPtr = &s, gptr+"/matcher"
				}
				handlers := []any{}
				if h, ok := group["hooks"]; ok {
					if handlers, ok = h.([]any); !ok {
						return &shapeError{gptr + "/hooks", "not a list"}
					}
				}
				for i, raw := range handlers {
					hptr := fmt.Sprintf("%s/hooks/%d", gptr, i)
					h, bad := readHandler(raw, hptr)
					if bad != nil {
						return bad
					}
					if h == nil || !strings.Contains(strings.ToLower(h.command), "spawngate") {
						continue
					}
					h.doc, h.event, h.group, h.handler, h.ptr = s.doc, event, g, i, hptr
					h.matcher, h.matcherPtr = matcher, matcherPtr
					if event == preToolUse {
						h.matcherErr = compileMatcher(matcher)
					}
					h.key = fmt.Sprintf("%s:%s:%d:%d", keyPath(s.doc), eventLabel(event), g, i)
					found = append(found, h)
				}
			}
		}
		return nil
	}()
	if bad != nil {
		if s.doc.toml || bytes.Contains(bytes.ToLower(s.doc.data), []byte("spawngate")) {
			d.shape(s.doc, bad.ptr, bad.what, shapeFix(s.doc))
		}
		return
	}
	for _, h := range found {
		if h.event == preToolUse {
			d.hooks = append(d.hooks, h)
		} else {
			d.others = append(d.others, h)
		}
	}
}

// keyPath is the file a hook's [hooks.state] key names: requirements'
// hooks are named by the requirements file.
func keyPath(doc *configDoc) string { return doc.path }

// readHandler reads one handler as Codex does: nil for one that is not a
// command; a shapeError for one Codex refuses.
func readHandler(raw any, ptr string) (*gateHook, *shapeError) {
	obj, ok := raw.(map[string]any)
	if !ok {
		return nil, &shapeError{ptr, "not an object"}
	}
	t, ok := obj["type"]
	if !ok {
		return nil, &shapeError{ptr, "a handler without a type"}
	}
	kind, _ := t.(string)
	switch kind {
	case "prompt", "agent":
		return nil, nil // read, and skipped with a warning
	case "mcp_tool":
		for _, k := range []string{"server", "tool"} {
			if _, ok := obj[k].(string); !ok {
				return nil, &shapeError{ptr + "/" + k, "missing or not a string"}
			}
		}
		return nil, nil
	case "command":
	default:
		return nil, &shapeError{ptr + "/type", fmt.Sprintf("%s, not one of command, mcp_tool, prompt or agent", describe(t))}
	}
	h := &gateHook{timeout: hostDefaultTimeout}
	cmd, ok := obj["command"].(string)
	if !ok {
		return nil, &shapeError{ptr + "/command", "missing or not a string"}
	}
	h.command = cmd
	for _, k := range []string{"commandWindows", "command_windows", "statusMessage"} {
		if v, ok := obj[k]; ok && v != nil {
			s, ok := v.(string)
			if !ok {
				return nil, &shapeError{ptr + "/" + k, "not a string"}
			}
			if k == "statusMessage" {
				h.status = &s
			}
		}
	}
	if v, ok := obj["timeout"]; ok && v != nil {
		n, ok := v.(json.Number)
		u, err := strconv.ParseUint(string(n), 10, 64)
		if !ok || err != nil || u > 1<<62 {
			return nil, &shapeError{ptr + "/timeout", "not a whole number of seconds"}
		}
		h.timeout, h.timeoutSet, h.timeoutRaw = max(int64(u), 1), true, u
	}
	if v, ok := obj["async"]; ok {
		b, ok := v.(bool)
		if !ok {
			return nil, &shapeError{ptr + "/async", "not true or false"}
		}
		h.async = b
	}
	for _, k := range []string{"additionalContextLimit", "additional_context_limit"} {
		if v, ok := obj[k]; ok && v != nil {
			n, ok := v.(json.Number)
			u, err := strconv.ParseUint(string(n), 10, 64)
			if !ok || err != nil {
				return nil, &shapeError{ptr + "/" + k, "not a whole number"}
			}
			h.contextLimit = &u
		}
	}
	if strings.TrimSpace(h.command) == "" {
		return nil, nil // skipped with a warning
	}
	return h, nil
}

func describe(v any) string {
	if s, ok := v.(string); ok {
		return strconv.Quote(s)
	}
	return "not a string"
}

// eventLabel is an event's name in a hook's key: PreToolUse is
// pre_tool_use.
func eventLabel(event string) string {
	var b strings.Builder
	for i, r := range event {
		if 'A' <= r && r <= 'Z' {
			if i > 0 {
				b.WriteByte('_')
			}
			r += 'a' - 'A'
		}
		b.WriteRune(r)
	}
	return b.String()
}

// exactMatcher is a matcher Codex reads as a list of tool names.
var exactMatcher = regexp.MustCompile(`^[A-Za-z0-9_|]+$`)

// compileMatcher says why Codex may skip a group for its matcher, or
// select other tools than doctor reads, nil when it reads it as doctor
// does: Codex compiles it with Rust's regex crate, which reads some
// patterns Go's regexp accepts as errors (\Q...\E, octal escapes) or
// otherwise (\<, nested classes), so only the syntax both read alike is
// checked (host.PortableMatcher).
func compileMatcher(m *string) error {
	if m == nil || *m == "" || *m == "*" || exactMatcher.MatchString(*m) {
		return nil
	}
	_, err := host.PortableMatcher(*m)
	return err
}

// matcherSelects tells whether a matcher selects a tool under any of its
// names, as Codex matches.
func matcherSelects(m *string, names []string) bool {
	switch {
	case m == nil || *m == "" || *m == "*":
		return true
	case exactMatcher.MatchString(*m):
		for _, n := range names {
			if slices.Contains(strings.Split(*m, "|"), n) {
				return true
			}
		}
		return false
	}
	re, err := host.PortableMatcher(*m)
	if err != nil {
		return false
	}
	return slices.ContainsFunc(names, re.MatchString)
}

// matchTool is a tool a spawngate hook's matcher must select, with every
// name that selects it.
type matchTool struct {
	name  string
	names []string
}

// spawnToolsToMatch are the spawn tools of SpawnTools that a payload
// names: Agent is only spawn_agent's matcher alias, and no payload names
// collaboration.spawn_agent (Codex runs a namespace and a tool's name
// together without a dot: collaborationspawn_agent).
func spawnToolsToMatch() []matchTool {
	var tools []matchTool
	for _, t := range (Adapter{}).SpawnTools() {
		switch t {
		case "Agent", "collaboration.spawn_agent":
		case "spawn_agent":
			tools = append(tools, matchTool{t, []string{t, "Agent"}})
		case v2Tool:
			// [features.multi_agent_v2] tool_namespace, which a trusted
			// project can set, renames the namespace: the matcher must
			// select spawn_agent in any namespace too.
			tools = append(tools, matchTool{t, []string{t}}, matchTool{nsTool, []string{"anynamespacespawn_agent"}})
		default:
			tools = append(tools, matchTool{t, []string{t}})
		}
	}
	return tools
}

// v2Tool is the spawn tool multi_agent_v2 adds; nsTool stands for it
// under a tool_namespace of a project's choosing.
const (
	v2Tool = "collaborationspawn_agent"
	nsTool = "spawn_agent under another tool_namespace (a project's [features.multi_agent_v2] tool_namespace = \"crew\" makes it crewspawn_agent)"
)

// feature is a feature's value as Codex settles it: requirements, else
// the last layer that sets it (names are the feature's name and its old
// ones), else the default.
func (d *doctor) feature(def bool, names ...string) featureValue {
	get := func(doc *configDoc) (featureValue, bool) {
		features, _ := doc.tree["features"].(map[string]any)
		for _, n := range names {
			if b, ok := features[n].(bool); ok {
				return featureValue{name: n, on: b, doc: doc, ptr: "/features/" + n}, true
			}
			if t, ok := features[n].(map[string]any); ok {
				if b, ok := t["enabled"].(bool); ok {
					return featureValue{name: n, on: b, doc: doc, ptr: "/features/" + n + "/enabled"}, true
				}
			}
		}
		return featureValue{}, false
	}
	if d.req != nil && d.req.tree != nil {
		if v, ok := get(d.req); ok {
			v.pinned = true
			return v
		}
	}
	v := featureValue{name: names[0], on: def}
	for _, cfg := range d.configs {
		if set, ok := get(cfg); ok {
			v = set
		}
	}
	return v
}

// trustHash is the hash Codex 0.171.0 keeps as a hook's trusted_hash
// (hooks/list's currentHash): sha256 of the compact JSON, keys sorted, of
// the hook's event label and its group holding only this handler, as
// Codex normalises it (timeout set, async written, absent fields left
// out; additionalContextLimit counts too). serde_json writes strings
// with fewer escapes than Go's encoder, so they are written here.
func trustHash(event string, matcher *string, command string, timeout int64, async bool, status *string, contextLimit *uint64) string {
	var b bytes.Buffer
	b.WriteString(`{"event_name":`)
	writeJSONString(&b, eventLabel(event))
	b.WriteString(`,"hooks":[{`)
	if contextLimit != nil {
		b.WriteString(`"additionalContextLimit":` + strconv.FormatUint(*contextLimit, 10) + `,`)
	}
	b.WriteString(`"async":` + strconv.FormatBool(async) + `,"command":`)
	writeJSONString(&b, command)
	if status != nil {
		b.WriteString(`,"statusMessage":`)
		writeJSONString(&b, *status)
	}
	b.WriteString(`,"timeout":` + strconv.FormatInt(timeout, 10) + `,"type":"command"}]`)
	if matcher != nil {
		b.WriteString(`,"matcher":`)
		writeJSONString(&b, *matcher)
	}
	b.WriteByte('}')
	return fmt.Sprintf("sha256:%x", sha256.Sum256(b.Bytes()))
}

// writeJSONString writes s as serde_json does: only the quote, the
// backslash and control characters escaped.
func writeJSONString(b *bytes.Buffer, s string) {
	const hex = "0123456789abcdef"
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch c {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\b':
			b.WriteString(`\b`)
		case '\f':
			b.WriteString(`\f`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		default:
			if c < 0x20 {
				b.WriteString(`\u00`)
				b.WriteByte(hex[c>>4])
				b.WriteByte(hex[c&0xf])
				continue
			}
			b.WriteByte(c)
		}
	}
	b.WriteByte('"')
}

func (h *gateHook) hash() string {
	return trustHash(h.event, h.matcher, h.command, h.timeout, h.async, h.status, h.contextLimit)
}

// judge applies Codex's switches and checks every spawngate hook it
// loads.
func (d *doctor) judge(ctx context.Context) *host.Diagnosis {
	diag := &host.Diagnosis{}
	hooksOn := d.feature(true, "hooks", "codex_hooks")
	off := slices.Clone(d.off)
	addOff := func(why string) {
		if !slices.Contains(off, why) {
			off = append(off, why)
		}
	}
	if !hooksOn.on && len(d.hooks)+len(d.others) > 0 {
		fix := fmt.Sprintf("remove it, and set [features] hooks = true in %s, which no layer can change", d.requirementsPath())
		if hooksOn.pinned {
			fix = "set it to true"
		}
		d.findings = append(d.findings, host.Finding{ID: "hook.disabled", File: hooksOn.doc.path, Pointer: hooksOn.ptr,
			Problem: fmt.Sprintf("[features] %s = false in %s turns off every hook, spawngate's too", hooksOn.name, hooksOn.doc.layer),
			Fix:     fix})
	}
	// candidates are the hooks Codex loads and would run once trusted:
	// their matcher, command and timeout are checked, trusted or not.
	var candidates []*gateHook
	for _, h := range d.hooks {
		st := d.states[h.key]
		switch {
		case h.matcherErr != nil:
			addOff(fmt.Sprintf("the one in %s is in a group whose matcher Codex cannot compile", h.doc.path))
			d.findings = append(d.findings, host.Finding{ID: "hook.matcher", File: h.doc.path, Pointer: h.matcherPtr,
				Problem: fmt.Sprintf("%s %s cannot be checked: Codex reads it with Rust's regex crate, and %s; Codex skips a group whose matcher does not compile, spawngate's hook with it (and a managed one stops Codex from starting)", matcherName(h.doc), quoteMatcher(h.doc, h.matcher), plan.OneLine(h.matcherErr.Error())),
				Fix:     "list the tools instead: " + setMatcher(h.doc, suggestedMatcher)})
			continue
		case !h.doc.layer.managed() && st.enabled != nil && !*st.enabled:
			addOff(fmt.Sprintf("the one in %s is disabled", h.doc.path))
			d.findings = append(d.findings, host.Finding{ID: "hook.disabled", File: d.userConfigPath(), Pointer: "/hooks/state/" + escapePointer(h.key) + "/enabled",
				Problem: fmt.Sprintf("enabled = false in [hooks.state.%q] turns off the spawngate hook in %s", h.key, h.doc.path),
				Fix:     "remove it"})
			continue
		}
		candidates = append(candidates, h)
		switch {
		case !hooksOn.on:
			addOff(fmt.Sprintf("the one in %s is turned off by [features] %s = false in %s", h.doc.path, hooksOn.name, hooksOn.doc.path))
		case !h.doc.layer.managed() && !(st.hasTrusted && st.trusted == h.hash()):
			addOff(fmt.Sprintf("the one in %s is not trusted", h.doc.path))
		default:
			diag.Gates = append(diag.Gates, h.place())
		}
		if !h.doc.layer.managed() {
			d.checkTrust(h, st)
		}
	}
	for _, h := range d.others {
		d.findings = append(d.findings, host.Finding{ID: "hook.event", File: h.doc.path, Pointer: h.ptr,
			Problem: fmt.Sprintf("spawngate runs on %s, which does not stop a spawn: only a PreToolUse hook can refuse one", h.event),
			Fix:     "move it to PreToolUse"})
		addOff(fmt.Sprintf("the one in %s runs on %s", h.doc.path, h.event))
	}
	if len(diag.Gates) == 0 {
		problem := "no PreToolUse hook in any file Codex reads here runs spawngate: every sub-agent starts unjudged"
		if len(off) > 0 {
			problem = "no PreToolUse hook that runs spawngate is in effect (" + strings.Join(off, "; ") + "): every sub-agent starts unjudged"
		}
		d.findings = append(d.findings, host.Finding{ID: "hook.absent", File: d.requirementsPath(), Pointer: "/hooks/PreToolUse",
			Problem: problem,
			Fix:     fmt.Sprintf("add %s under [hooks] here, with allow_managed_hooks_only = true and [features] hooks = true", suggestedHook)})
	}
	if len(candidates) == 0 {
		return diag
	}

	managedGate := false
	for _, h := range candidates {
		if h.doc.layer.managed() {
			managedGate = true
			continue
		}
		problem := fmt.Sprintf("the spawngate hook is in %s, which is not managed: it runs only while the trusted_hash stored for it in %s matches, and Codex skips it without a warning once the hook or its trust changes (a session that can write %s can change both); [features] hooks = false in a trusted project's .codex/config.toml (a repository can ship one) turns it off",
			h.doc.layer, d.userConfigPath(), filepath.Dir(d.userConfigPath()))
		if h.doc.layer == projectLayer {
			problem += "; and sessions outside this project do not read it"
		}
		d.findings = append(d.findings, host.Finding{ID: "hook.unmanaged", File: h.doc.path, Pointer: h.ptr,
			Problem: problem,
			Fix:     fmt.Sprintf("move it under [hooks] in %s, with allow_managed_hooks_only = true and [features] hooks = true there", d.requirementsPath())})
	}
	if managedGate {
		if !d.managedOnly() {
			d.findings = append(d.findings, host.Finding{ID: "hooks.unrestricted", File: d.requirementsPath(), Pointer: "/allow_managed_hooks_only",
				Problem: "allow_managed_hooks_only is not true in requirements: PreToolUse hooks that user and project config add, which a session or a repository can write, run beside the spawngate hook, and one that answers with updatedInput rewrites the spawn after spawngate judged it",
				Fix:     "set allow_managed_hooks_only = true here"})
		}
		if !hooksOn.pinned {
			d.findings = append(d.findings, host.Finding{ID: "features.unpinned", File: d.requirementsPath(), Pointer: "/features/hooks",
				Problem: "requirements do not set [features] hooks, so [features] hooks = false in user config or in any trusted project's .codex/config.toml (a repository can ship one), or --disable hooks, turns off every hook, the managed spawngate hook too",
				Fix:     "add [features] hooks = true here"})
		}
	}
	d.checkMatchers(candidates)
	for _, h := range candidates {
		if h.async {
			d.findings = append(d.findings, host.Finding{ID: "hook.async", File: h.doc.path, Pointer: h.ptr + "/async",
				Problem: fmt.Sprintf("%s true: Codex does not wait for the spawngate hook's answer, so it cannot refuse a spawn", keyIn(h.doc, "async")),
				Fix:     fmt.Sprintf("remove %s true", keyIn(h.doc, "async"))})
		}
		d.checkCommand(ctx, h)
	}
	return diag
}

// checkTrust reports a hook that is not managed and not trusted as it is
// written now: Codex skips it without a word.
func (d *doctor) checkTrust(h *gateHook, st hookState) {
	hash := h.hash()
	if st.hasTrusted && st.trusted == hash {
		return
	}
	where := "the spawngate hook in " + d.placeOf(h.doc, h.ptr)
	problem := fmt.Sprintf(`%s is not trusted: this file stores no trusted_hash for it ([hooks.state.%q]), and Codex skips an untrusted hook without a warning, so every spawn starts unjudged (only a codex started with --dangerously-bypass-hook-trust runs it, and doctor cannot see command lines)`, where, h.key)
	if st.hasTrusted {
		problem = fmt.Sprintf(`%s has changed since it was trusted (its trusted_hash here is %s, its hash is now %s): Codex skips it without a warning, so every spawn starts unjudged`, where, st.trusted, hash)
	}
	d.findings = append(d.findings, host.Finding{ID: "hook.untrusted", File: d.userConfigPath(), Pointer: "/hooks/state/" + escapePointer(h.key),
		Problem: problem,
		Fix:     fmt.Sprintf(`review it in Codex's /hooks, or store its hash here (for automation, when the machine is provisioned): [hooks.state.%q] trusted_hash = %q; any change to the hook changes its hash`, h.key, hash)})
}

// checkMatchers reports each spawn tool no loaded spawngate hook
// selects, at every hook that misses it.
func (d *doctor) checkMatchers(hooks []*gateHook) {
	v2 := d.feature(false, "multi_agent_v2")
	var tools []matchTool
	for _, t := range spawnToolsToMatch() {
		if (t.name == v2Tool || t.name == nsTool) && v2.pinned && !v2.on {
			continue // requirements keep multi_agent_v2 off
		}
		tools = append(tools, t)
	}
	covered := map[string]bool{}
	for _, h := range hooks {
		for _, t := range tools {
			if matcherSelects(h.matcher, t.names) {
				covered[t.name] = true
			}
		}
	}
	for _, h := range hooks {
		var missed []string
		for _, t := range tools {
			if !covered[t.name] && !matcherSelects(h.matcher, t.names) {
				missed = append(missed, t.name)
			}
		}
		if len(missed) == 0 {
			continue
		}
		problem := fmt.Sprintf("%s %s does not select %s, under which Codex starts sub-agents: those spawns are never judged", matcherName(h.doc), quoteMatcher(h.doc, h.matcher), orList(missed))
		if slices.Contains(missed, v2Tool) {
			if v2.on {
				problem += fmt.Sprintf(" (%s is multi_agent_v2's spawn tool, and [features] multi_agent_v2 = true in %s turns it on)", v2Tool, d.placeOf(v2.doc, v2.ptr))
			} else {
				problem += fmt.Sprintf(" (%s is multi_agent_v2's spawn tool, which [features] multi_agent_v2 = true in any trusted project's .codex/config.toml, or --enable multi_agent_v2, turns on)", v2Tool)
			}
		}
		d.findings = append(d.findings, host.Finding{ID: "hook.matcher", File: h.doc.path, Pointer: h.matcherPtr,
			Problem: problem,
			Fix:     setMatcher(h.doc, suggestMatcher(h.matcher, tools))})
	}
}

// suggestMatcher is a matcher that selects every spawn tool: the exact
// list given with the missing names added, else the README's.
func suggestMatcher(m *string, tools []matchTool) string {
	if m == nil || !exactMatcher.MatchString(*m) {
		return suggestedMatcher
	}
	names := strings.Split(*m, "|")
	for _, t := range tools {
		if !matcherSelects(m, t.names) {
			names = append(names, t.name)
		}
	}
	return strings.Join(names, "|")
}

// keyIn writes a handler's key and its separator the way the file does:
// timeout = in TOML, "timeout": in JSON.
func keyIn(doc *configDoc, key string) string {
	if doc.toml {
		return key + " ="
	}
	return `"` + key + `":`
}

// matcherName and setMatcher write the matcher the way the file does.
func matcherName(doc *configDoc) string { return keyIn(doc, "matcher") }

func quoteMatcher(doc *configDoc, m *string) string {
	switch {
	case m == nil:
		return "(none)"
	case doc != nil && doc.toml && !strings.ContainsAny(*m, "'\n"):
		return "'" + *m + "'" // a TOML literal string, as such a matcher is written
	}
	return strconv.Quote(*m)
}

func setMatcher(doc *configDoc, m string) string {
	if doc.toml {
		return "set matcher = " + quoteMatcher(doc, &m)
	}
	return fmt.Sprintf(`set "matcher": %s`, strconv.Quote(m))
}

func orList(s []string) string {
	if len(s) == 1 {
		return s[0]
	}
	return strings.Join(s[:len(s)-1], ", ") + " or " + s[len(s)-1]
}

// checkCommand checks a command hook that runs spawngate: that the
// program is the one meant, that it runs as spawngate hook codex, that it
// can start, and that Codex waits for its answer.
func (d *doctor) checkCommand(ctx context.Context, h *gateHook) {
	cmdPtr := h.ptr + "/command"
	add := func(id, ptr, problem, fix string) {
		d.findings = append(d.findings, host.Finding{ID: id, File: h.doc.path, Pointer: ptr, Problem: problem, Fix: fix})
	}
	const directly = "run spawngate directly: /usr/local/bin/spawngate hook codex --policy FILE"
	vars := map[string]string{"HOME": d.home}
	words, op, err := host.ShellWords(h.command, vars, d.home)
	switch {
	case err != nil:
		add("hook.command", cmdPtr, fmt.Sprintf("the command %s, so what it runs is not known until the hook runs", err), directly)
		return
	case op != "":
		add("hook.command", cmdPtr, fmt.Sprintf("the command is more than one simple command (it holds %q): its exit status need not be spawngate's, and a refusal can be lost", op), directly)
	}
	line, ok := host.CheckCommand(ctx, host.HookCommand{Host: Name, Title: "Codex", Words: words, Project: d.project, Owners: d.o.OwnersFor(d.project, d.home, d.codexHome),
		LookedFor: "on the PATH of a login shell, or from the session's folder", PolicyFrom: "the session's folder", Policy: "/etc/spawngate/codex.yaml",
		Directly: directly, ReadHook: d.o.ReadHook}, func(id, problem, fix string) { add(id, cmdPtr, problem, fix) })
	if !ok {
		return
	}
	if line.Timeout > 0 && time.Duration(h.timeout)*time.Second <= line.Timeout {
		ptr, what := h.ptr+"/timeout", fmt.Sprintf("%s %d", keyIn(h.doc, "timeout"), h.timeoutRaw)
		if !h.timeoutSet {
			ptr, what = h.ptr, fmt.Sprintf("no timeout (Codex's default, %d s)", h.timeout)
		}
		need := int64((line.Timeout + time.Second - 1) / time.Second)
		add("hook.timeout", ptr, fmt.Sprintf("%s is not above spawngate's own --timeout of %s: Codex can stop the hook before spawngate answers, and a hook that times out lets the spawn through", what, line.Timeout),
			fmt.Sprintf("set %s %d or more (such as %d), or give spawngate a lower --timeout", keyIn(h.doc, "timeout"), need+1, need+10))
	}
}

// lineCol turns a byte offset into a 1-based line and column (in
// characters).
func lineCol(data []byte, offset int64) (int, int) {
	if offset > int64(len(data)) {
		offset = int64(len(data))
	}
	before := data[:offset]
	line := bytes.Count(before, []byte{'\n'}) + 1
	col := max(len([]rune(string(before[bytes.LastIndexByte(before, '\n')+1:]))), 1)
	return line, col
}

// settingName writes a pointer as a person names the setting:
// /hooks/PreToolUse/0/matcher is hooks.PreToolUse[0].matcher.
func settingName(ptr string) string {
	var b strings.Builder
	for _, seg := range strings.Split(strings.TrimPrefix(ptr, "/"), "/") {
		seg = strings.NewReplacer("~1", "/", "~0", "~").Replace(seg)
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

// escapePointer escapes one segment of a JSON pointer.
func escapePointer(s string) string {
	return strings.NewReplacer("~", "~0", "/", "~1").Replace(s)
}

// tomlLinesByPointer records the line of each key and table of a TOML
// document by its JSON pointer: [[hooks.PreToolUse]] twice holds
// /hooks/PreToolUse/0 and /hooks/PreToolUse/1, an inline table's keys
// their own lines.
func tomlLinesByPointer(data []byte) map[string]int {
	lines := map[string]int{}
	arrays := map[string]int{} // an array of tables: its elements so far
	p := unstable.Parser{}
	p.Reset(data)
	record := func(ptr string, r *unstable.Range) {
		if r == nil {
			return
		}
		if _, seen := lines[ptr]; !seen {
			lines[ptr] = p.Shape(*r).Start.Line
		}
	}
	var value func(ptr string, n *unstable.Node, r *unstable.Range)
	value = func(ptr string, n *unstable.Node, r *unstable.Range) {
		switch n.Kind {
		case unstable.Array:
			it := n.Children()
			for i := 0; it.Next(); i++ {
				c := it.Node()
				cr := r
				if c.Kind == unstable.InlineTable {
					raw := c.Raw
					cr = &raw
				}
				record(fmt.Sprintf("%s/%d", ptr, i), cr)
				value(fmt.Sprintf("%s/%d", ptr, i), c, cr)
			}
		case unstable.InlineTable:
			it := n.Children()
			for it.Next() {
				kv := it.Node()
				if kv.Kind != unstable.KeyValue {
					continue
				}
				parts, kr := keyParts(kv.Key())
				cptr := ptr + pointerOf(parts)
				record(cptr, kr)
				value(cptr, kv.Value(), kr)
			}
		}
	}
	table := ""
	for p.NextExpression() {
		e := p.Expression()
		switch e.Kind {
		case unstable.Table, unstable.ArrayTable:
			parts, r := keyParts(e.Key())
			ptr := ""
			for i, part := range parts {
				ptr += "/" + escapePointer(part)
				if n, ok := arrays[ptr]; ok && i < len(parts)-1 {
					ptr += "/" + strconv.Itoa(n-1)
				}
			}
			if e.Kind == unstable.ArrayTable {
				record(ptr, r)
				n := arrays[ptr]
				arrays[ptr] = n + 1
				ptr += "/" + strconv.Itoa(n)
			}
			record(ptr, r)
			table = ptr
		case unstable.KeyValue:
			parts, r := keyParts(e.Key())
			ptr := table + pointerOf(parts)
			record(ptr, r)
			value(ptr, e.Value(), r)
		}
	}
	return lines
}

func pointerOf(parts []string) string {
	var b strings.Builder
	for _, p := range parts {
		b.WriteString("/" + escapePointer(p))
	}
	return b.String()
}

// lineOf is the line a pointer's setting is written on in a file doctor
// read, 0 when it is not there.
func (d *doctor) lineOf(file, ptr string) int {
	for _, doc := range d.docs {
		if doc.path != file || doc.tree == nil {
			continue
		}
		if doc.toml {
			return doc.lines[ptr]
		}
		pos, ok := d.jsonPos[file]
		if !ok {
			pos = map[string]plan.Position{}
			d.jsonPos[file] = pos
		}
		if p, ok := pos[ptr]; ok {
			return p.Line
		}
		found, err := plan.Locate(context.Background(), file, doc.data, plan.DefaultLimits, []string{ptr})
		if err != nil {
			return 0
		}
		pos[ptr] = found[ptr]
		return found[ptr].Line
	}
	return 0
}

// placeOf writes where a setting is: FILE:LINE.
func (d *doctor) placeOf(doc *configDoc, ptr string) string {
	if line := d.lineOf(doc.path, ptr); line > 0 {
		return fmt.Sprintf("%s:%d", doc.path, line)
	}
	return doc.path
}

// locate gives each finding and gate the line its pointer is written on.
func (d *doctor) locate(diag *host.Diagnosis) {
	for i, f := range d.findings {
		if f.Pointer != "" {
			if line := d.lineOf(f.File, f.Pointer); line > 0 {
				d.findings[i].Line = line
			}
		}
	}
	for i, g := range diag.Gates {
		diag.Gates[i].Line = d.lineOf(g.File, g.Pointer)
	}
	diag.Findings = d.findings
}
