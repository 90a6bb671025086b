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

	"github.com/spawngate/spawngate/internal/document"
	"github.com/spawngate/spawngate/internal/host"
	"github.com/spawngate/spawngate/internal/host/doctor"
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
	*doctor.File // Tree nil when Codex does not read it
	layer        configLayer
}

// gateHook is a command hook that runs spawngate (or means to).
type gateHook struct {
	doctor.Entry
	doc            *configDoc
	group, handler int
	matcherErr     error // Codex skips the group: its matcher does not compile
	seconds        int64 // the timeout, in seconds, as Codex waits
	async          bool
	status         *string
	contextLimit   *uint64 // additionalContextLimit, part of the trust hash
	key            string  // the hook's name in [hooks.state]
}

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

var _ doctor.Doctor = Adapter{}

// doctor is one run: what it read and what it found.
type checkup struct {
	doctor.Run
	project   string // absolute: the folder sessions start in
	home      string // absolute: what HOME and ~ are to a hook; "" for none
	codexHome string // absolute; "" when neither CODEX_HOME nor a home is known
	req       *configDoc
	user      *configDoc   // $CODEX_HOME/config.toml, nil when absent
	configs   []*configDoc // each layer's config.toml that Codex reads, lowest first
	sources   []hookSource // each hooks table Codex reads, in its order
	// off says why a spawngate hook Codex never loads does not run, once
	// a file.
	off    []string
	states map[string]hookState
	hooks  []*gateHook // spawngate hooks on PreToolUse, as loaded
	others []*gateHook // spawngate hooks on any other event
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

// Doctor implements doctor.Doctor: it reads Codex's configuration as Codex
// does and reports every way the installation lets a spawn through. An
// error is a file it must read and cannot.
func (Adapter) Doctor(ctx context.Context, o doctor.Options) (*doctor.Diagnosis, error) {
	run, err := doctor.NewRun(o)
	if err != nil {
		return nil, err
	}
	d := &checkup{Run: run, project: run.Project, home: run.Home, states: map[string]hookState{}}
	d.codexHome = d.findCodexHome()
	if err := d.read(); err != nil {
		return nil, err
	}
	d.collect()
	diag := d.judge(ctx)
	d.Finish(diag)
	return diag, nil
}

// findCodexHome is CODEX_HOME as Codex takes it: the variable with its
// symbolic links resolved, else ~/.codex as it is.
func (d *checkup) findCodexHome() string {
	if d.Options.Getenv != nil {
		if v := d.Options.Getenv("CODEX_HOME"); v != "" {
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

func (d *checkup) requirementsPath() string { return d.Options.Path(doctorPaths.requirements) }

// userConfigPath is where hook trust is stored, and where the fixes for it
// go.
func (d *checkup) userConfigPath() string {
	if d.codexHome == "" {
		return filepath.Join("~", dotCodex, configName)
	}
	return filepath.Join(d.codexHome, configName)
}

// read reads every file in the order Codex layers them.
func (d *checkup) read() error {
	var err error
	if d.req, err = d.readDoc(d.requirementsPath(), requirementsLayer); err != nil {
		return err
	}
	if err := d.readLayer(d.Options.Path(doctorPaths.system), systemLayer); err != nil {
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
func (d *checkup) readLayer(dir string, layer configLayer) error {
	cfg, err := d.readDoc(filepath.Join(dir, configName), layer)
	if err != nil {
		return err
	}
	hooks, err := d.readDoc(filepath.Join(dir, hooksName), layer)
	if err != nil {
		return err
	}
	if cfg != nil && cfg.Tree != nil {
		d.configs = append(d.configs, cfg)
		if layer == userLayer {
			d.user = cfg
		}
	}
	// Codex reads hooks.json before config.toml's [hooks].
	for _, doc := range []*configDoc{hooks, cfg} {
		if doc == nil || doc.Tree == nil {
			continue
		}
		if doc.TOML {
			if t, ok := doc.Tree["hooks"].(map[string]any); ok {
				d.sources = append(d.sources, hookSource{doc, "/hooks", t})
			}
			continue
		}
		t, _ := doc.Tree["hooks"].(map[string]any)
		d.sources = append(d.sources, hookSource{doc, "/hooks", t})
	}
	return nil
}

// readProjects reads the project layers of a session started in the
// project folder: each .codex from the project root down, when trusted.
func (d *checkup) readProjects() error {
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
			if doctor.FileNamesSpawngate(filepath.Join(dot, name)) {
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
func (d *checkup) projectRoot() (root, repo string) {
	markers := []string{".git"}
	for _, cfg := range d.configs {
		if list, ok := cfg.Tree["project_root_markers"].([]any); ok {
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
func (d *checkup) projectTrust() map[string]string {
	trust := map[string]string{}
	for _, cfg := range d.configs {
		projects, _ := cfg.Tree["projects"].(map[string]any)
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

// readDoc reads one file: nil for one that does not exist; a finding (and
// no tree) for one Codex cannot read.
func (d *checkup) readDoc(path string, layer configLayer) (*configDoc, error) {
	data, found, err := doctor.ReadConfig(path)
	if !found || err != nil {
		return nil, err
	}
	doc := &configDoc{File: &doctor.File{Path: path, Data: data, TOML: strings.HasSuffix(path, ".toml")}, layer: layer}
	d.Files = append(d.Files, doc.File)
	if doc.TOML {
		d.parseTOML(doc)
	} else {
		d.parseJSON(doc)
	}
	return doc, nil
}

// parseTOML reads a config.toml or requirements.toml. One that does not
// parse stops Codex from starting.
func (d *checkup) parseTOML(doc *configDoc) {
	var tree map[string]any
	if err := toml.Unmarshal(doc.Data, &tree); err != nil {
		f := doctor.Finding{ID: "settings.invalid", File: doc.Path,
			Problem: "does not parse as TOML (" + document.OneLine(tomlMessage(err)) + "): Codex does not start with it, and doctor cannot read what it sets",
			Fix:     "make it valid TOML"}
		var de *toml.DecodeError
		if errors.As(err, &de) {
			line, col := de.Position()
			f.Line = line
			f.Problem = fmt.Sprintf("does not parse as TOML (line %d, column %d: %s): Codex does not start with it, and doctor cannot read what it sets", line, col, document.OneLine(tomlMessage(err)))
		}
		d.Findings = append(d.Findings, f)
		return
	}
	if tree == nil {
		tree = map[string]any{}
	}
	doc.Tree = normalizeTOML(tree).(map[string]any)
	doc.TOMLLines = tomlLinesByPointer(doc.Data)
}

// parseJSON reads a hooks.json. Codex drops one it cannot read, and its
// hooks with it: a finding when it names spawngate.
func (d *checkup) parseJSON(doc *configDoc) {
	v, line, problem := doctor.DecodeJSON(doc.Data)
	names := doc.NamesSpawngate()
	if problem != "" {
		if names {
			d.Findings = append(d.Findings, doctor.Finding{ID: "settings.invalid", File: doc.Path, Line: line,
				Problem: "does not parse as JSON (" + problem + "): Codex drops every hook in it, the spawngate hook too",
				Fix:     "make it valid JSON"})
		}
		return
	}
	obj, ok := v.(map[string]any)
	if !ok {
		if names {
			d.Findings = append(d.Findings, doctor.Finding{ID: "settings.invalid", File: doc.Path, Line: 1,
				Problem: "is not a JSON object: Codex reads no hook in it, the spawngate hook neither",
				Fix:     `make the file one JSON object: {"hooks": {"PreToolUse": [...]}}`})
		}
		return
	}
	for key := range obj {
		if key != "hooks" && key != "description" {
			if names {
				d.shape(doc, "/"+doctor.EscapePointer(key), "a key Codex does not allow here (only hooks and description)", "remove it")
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
	doc.Tree = obj
}

// shape reports a setting written in a shape Codex does not read.
func (d *checkup) shape(doc *configDoc, ptr, what, fix string) {
	consequence := "Codex drops every hook in the file, the spawngate hook too"
	if doc.TOML {
		consequence = "Codex does not start with it"
	}
	d.Findings = append(d.Findings, doctor.Finding{ID: "settings.invalid", File: doc.Path, Pointer: ptr,
		Problem: fmt.Sprintf("%s is %s: %s", doctor.SettingName(ptr), what, consequence),
		Fix:     fix})
}

// shapeFix is the fix for a hook written in a shape Codex does not read.
func shapeFix(doc *configDoc) string {
	if doc.TOML {
		return "write the hook as Codex reads it, under [hooks]: " + suggestedHook
	}
	return `write the hook as Codex reads it: {"hooks": {"PreToolUse": [{"matcher": "` + strings.ReplaceAll(suggestedMatcher, `\`, `\\`) +
		`", "hooks": [{"type": "command", "command": "/usr/local/bin/spawngate hook codex --policy /etc/spawngate/codex.yaml --timeout 20s", "timeout": 30}]}]}}`
}

// collect reads requirements, every hooks table, and the trust states,
// in Codex's order.
func (d *checkup) collect() {
	if d.req != nil && d.req.Tree != nil {
		if v, ok := d.req.Tree["allow_managed_hooks_only"]; ok {
			if _, ok := v.(bool); !ok {
				d.shape(d.req, "/allow_managed_hooks_only", "not true or false", "write true or false")
			}
		}
		if t, ok := d.req.Tree["hooks"]; ok {
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
			if s.doc.NamesSpawngate() {
				d.off = append(d.off, fmt.Sprintf("the one in %s is dropped by allow_managed_hooks_only = true in %s", s.doc.Path, d.req.Path))
			}
			continue
		}
		d.readHooks(s)
	}
}

// checkFeatureShapes reports a feature doctor reads set to something
// else than true or false.
func (d *checkup) checkFeatureShapes(doc *configDoc) {
	features, ok := doc.Tree["features"]
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

func (d *checkup) managedOnly() bool {
	return d.req != nil && d.req.Tree != nil && d.req.Tree["allow_managed_hooks_only"] == true
}

// readStates reads [hooks.state] of user config, the only place Codex
// reads hook trust from.
func (d *checkup) readStates() {
	if d.user == nil {
		return
	}
	hooks, _ := d.user.Tree["hooks"].(map[string]any)
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
		ptr := "/hooks/state/" + doctor.EscapePointer(key)
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
func (d *checkup) readHooks(s hookSource) {
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
					if h == nil || !strings.Contains(strings.ToLower(h.Command), "spawngate") {
						continue
					}
					h.doc, h.group, h.handler = s.doc, g, i
					h.File, h.Layer, h.Managed = s.doc.File, s.doc.layer.String(), s.doc.layer.managed()
					h.Event, h.Pointer = event, hptr
					h.Matcher, h.MatcherPointer = matcher, matcherPtr
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
		if s.doc.TOML || s.doc.NamesSpawngate() {
			d.shape(s.doc, bad.ptr, bad.what, shapeFix(s.doc))
		}
		return
	}
	for _, h := range found {
		if h.Event == preToolUse {
			d.hooks = append(d.hooks, h)
		} else {
			d.others = append(d.others, h)
		}
	}
}

// keyPath is the file a hook's [hooks.state] key names: requirements'
// hooks are named by the requirements file.
func keyPath(doc *configDoc) string { return doc.Path }

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
	h := &gateHook{seconds: hostDefaultTimeout}
	h.Keys, h.CommandKey = obj, "command"
	cmd, ok := obj["command"].(string)
	if !ok {
		return nil, &shapeError{ptr + "/command", "missing or not a string"}
	}
	h.Command = cmd
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
		h.seconds, h.TimeoutSet = max(int64(u), 1), true
	}
	h.Timeout = time.Duration(h.seconds) * time.Second
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
	if strings.TrimSpace(h.Command) == "" {
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
func (d *checkup) feature(def bool, names ...string) featureValue {
	get := func(doc *configDoc) (featureValue, bool) {
		features, _ := doc.Tree["features"].(map[string]any)
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
	if d.req != nil && d.req.Tree != nil {
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
	return trustHash(h.Event, h.Matcher, h.Command, h.seconds, h.async, h.status, h.contextLimit)
}

// judge applies Codex's switches and checks every spawngate hook it
// loads.
func (d *checkup) judge(ctx context.Context) *doctor.Diagnosis {
	diag := &doctor.Diagnosis{}
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
		d.Findings = append(d.Findings, doctor.Finding{ID: "hook.disabled", File: hooksOn.doc.Path, Pointer: hooksOn.ptr,
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
			addOff(fmt.Sprintf("the one in %s is in a group whose matcher Codex cannot compile", h.doc.Path))
			d.Findings = append(d.Findings, doctor.Finding{ID: "hook.matcher", File: h.doc.Path, Pointer: h.MatcherPointer,
				Problem: fmt.Sprintf("%s %s cannot be checked: Codex reads it with Rust's regex crate, and %s; Codex skips a group whose matcher does not compile, spawngate's hook with it (and a managed one stops Codex from starting)", matcherName(h.doc), quoteMatcher(h.doc, h.Matcher), document.OneLine(h.matcherErr.Error())),
				Fix:     "list the tools instead: " + setMatcher(h.doc, suggestedMatcher)})
			continue
		case !h.doc.layer.managed() && st.enabled != nil && !*st.enabled:
			addOff(fmt.Sprintf("the one in %s is disabled", h.doc.Path))
			d.Findings = append(d.Findings, doctor.Finding{ID: "hook.disabled", File: d.userConfigPath(), Pointer: "/hooks/state/" + doctor.EscapePointer(h.key) + "/enabled",
				Problem: fmt.Sprintf("enabled = false in [hooks.state.%q] turns off the spawngate hook in %s", h.key, h.doc.Path),
				Fix:     "remove it"})
			continue
		}
		candidates = append(candidates, h)
		switch {
		case !hooksOn.on:
			addOff(fmt.Sprintf("the one in %s is turned off by [features] %s = false in %s", h.doc.Path, hooksOn.name, hooksOn.doc.Path))
		case !h.doc.layer.managed() && !(st.hasTrusted && st.trusted == h.hash()):
			addOff(fmt.Sprintf("the one in %s is not trusted", h.doc.Path))
		default:
			diag.Gates = append(diag.Gates, h.Place())
		}
		if !h.doc.layer.managed() {
			d.checkTrust(h, st)
		}
	}
	for _, h := range d.others {
		d.Findings = append(d.Findings, doctor.Finding{ID: "hook.event", File: h.doc.Path, Pointer: h.Pointer,
			Problem: fmt.Sprintf("spawngate runs on %s, which does not stop a spawn: only a PreToolUse hook can refuse one", h.Event),
			Fix:     "move it to PreToolUse"})
		addOff(fmt.Sprintf("the one in %s runs on %s", h.doc.Path, h.Event))
	}
	if len(diag.Gates) == 0 {
		problem := "no PreToolUse hook in any file Codex reads here runs spawngate: every sub-agent starts unjudged"
		if len(off) > 0 {
			problem = "no PreToolUse hook that runs spawngate is in effect (" + strings.Join(off, "; ") + "): every sub-agent starts unjudged"
		}
		d.Findings = append(d.Findings, doctor.Finding{ID: "hook.absent", File: d.requirementsPath(), Pointer: "/hooks/PreToolUse",
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
		d.Findings = append(d.Findings, doctor.Finding{ID: "hook.unmanaged", File: h.doc.Path, Pointer: h.Pointer,
			Problem: problem,
			Fix:     fmt.Sprintf("move it under [hooks] in %s, with allow_managed_hooks_only = true and [features] hooks = true there", d.requirementsPath())})
	}
	if managedGate {
		if !d.managedOnly() {
			d.Findings = append(d.Findings, doctor.Finding{ID: "hooks.unrestricted", File: d.requirementsPath(), Pointer: "/allow_managed_hooks_only",
				Problem: "allow_managed_hooks_only is not true in requirements: PreToolUse hooks that user and project config add, which a session or a repository can write, run beside the spawngate hook, and one that answers with updatedInput rewrites the spawn after spawngate judged it",
				Fix:     "set allow_managed_hooks_only = true here"})
		}
		if !hooksOn.pinned {
			d.Findings = append(d.Findings, doctor.Finding{ID: "features.unpinned", File: d.requirementsPath(), Pointer: "/features/hooks",
				Problem: "requirements do not set [features] hooks, so [features] hooks = false in user config or in any trusted project's .codex/config.toml (a repository can ship one), or --disable hooks, turns off every hook, the managed spawngate hook too",
				Fix:     "add [features] hooks = true here"})
		}
	}
	d.checkMatchers(candidates)
	for _, h := range candidates {
		if h.async {
			d.Findings = append(d.Findings, doctor.Finding{ID: "hook.async", File: h.doc.Path, Pointer: h.Pointer + "/async",
				Problem: fmt.Sprintf("%s true: Codex does not wait for the spawngate hook's answer, so it cannot refuse a spawn", h.doc.Key("async")),
				Fix:     fmt.Sprintf("remove %s true", h.doc.Key("async"))})
		}
		d.checkCommand(ctx, h)
	}
	return diag
}

// checkTrust reports a hook that is not managed and not trusted as it is
// written now: Codex skips it without a word.
func (d *checkup) checkTrust(h *gateHook, st hookState) {
	hash := h.hash()
	if st.hasTrusted && st.trusted == hash {
		return
	}
	where := "the spawngate hook in " + h.doc.Place(h.Pointer)
	problem := fmt.Sprintf(`%s is not trusted: this file stores no trusted_hash for it ([hooks.state.%q]), and Codex skips an untrusted hook without a warning, so every spawn starts unjudged (only a codex started with --dangerously-bypass-hook-trust runs it, and doctor cannot see command lines)`, where, h.key)
	if st.hasTrusted {
		problem = fmt.Sprintf(`%s has changed since it was trusted (its trusted_hash here is %s, its hash is now %s): Codex skips it without a warning, so every spawn starts unjudged`, where, st.trusted, hash)
	}
	d.Findings = append(d.Findings, doctor.Finding{ID: "hook.untrusted", File: d.userConfigPath(), Pointer: "/hooks/state/" + doctor.EscapePointer(h.key),
		Problem: problem,
		Fix:     fmt.Sprintf(`review it in Codex's /hooks, or store its hash here (for automation, when the machine is provisioned): [hooks.state.%q] trusted_hash = %q; any change to the hook changes its hash`, h.key, hash)})
}

// checkMatchers reports each spawn tool no loaded spawngate hook
// selects, at every hook that misses it.
func (d *checkup) checkMatchers(hooks []*gateHook) {
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
			if matcherSelects(h.Matcher, t.names) {
				covered[t.name] = true
			}
		}
	}
	for _, h := range hooks {
		var missed []string
		for _, t := range tools {
			if !covered[t.name] && !matcherSelects(h.Matcher, t.names) {
				missed = append(missed, t.name)
			}
		}
		if len(missed) == 0 {
			continue
		}
		problem := fmt.Sprintf("%s %s does not select %s, under which Codex starts sub-agents: those spawns are never judged", matcherName(h.doc), quoteMatcher(h.doc, h.Matcher), doctor.OrList(missed))
		if slices.Contains(missed, v2Tool) {
			if v2.on {
				problem += fmt.Sprintf(" (%s is multi_agent_v2's spawn tool, and [features] multi_agent_v2 = true in %s turns it on)", v2Tool, v2.doc.Place(v2.ptr))
			} else {
				problem += fmt.Sprintf(" (%s is multi_agent_v2's spawn tool, which [features] multi_agent_v2 = true in any trusted project's .codex/config.toml, or --enable multi_agent_v2, turns on)", v2Tool)
			}
		}
		d.Findings = append(d.Findings, doctor.Finding{ID: "hook.matcher", File: h.doc.Path, Pointer: h.MatcherPointer,
			Problem: problem,
			Fix:     setMatcher(h.doc, suggestMatcher(h.Matcher, tools))})
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

// matcherName and setMatcher write the matcher the way the file does.
func matcherName(doc *configDoc) string { return doc.Key("matcher") }

func quoteMatcher(doc *configDoc, m *string) string {
	switch {
	case m == nil:
		return "(none)"
	case doc != nil && doc.TOML && !strings.ContainsAny(*m, "'\n"):
		return "'" + *m + "'" // a TOML literal string, as such a matcher is written
	}
	return strconv.Quote(*m)
}

func setMatcher(doc *configDoc, m string) string {
	if doc.TOML {
		return "set matcher = " + quoteMatcher(doc, &m)
	}
	return fmt.Sprintf(`set "matcher": %s`, strconv.Quote(m))
}

// checkCommand checks a command hook that runs spawngate: that the
// program is the one meant, that it runs as spawngate hook codex, that it
// can start, and that Codex waits for its answer.
func (d *checkup) checkCommand(ctx context.Context, h *gateHook) {
	d.CheckEntry(ctx, &h.Entry, doctor.Command{Host: Name, Title: "Codex", Project: d.project, Home: d.home,
		Vars: map[string]string{"HOME": d.home}, TimeoutKey: "timeout", Owners: d.Options.OwnersFor(d.project, d.home, d.codexHome),
		LookedFor: "on the PATH of a login shell, or from the session's folder", PolicyFrom: "the session's folder", Policy: "/etc/spawngate/codex.yaml",
		Directly: "run spawngate directly: /usr/local/bin/spawngate hook codex --policy FILE", ReadHook: d.Options.ReadHook})
}

// DoctorHelp implements doctor.Doctor.
func (Adapter) DoctorHelp() string {
	return `/etc/codex/requirements.toml, /etc/codex/config.toml and
hooks.json, $CODEX_HOME/config.toml and hooks.json (CODEX_HOME defaults to
the home folder's .codex), and the .codex folders of a trusted project,
from its root down to the folder sessions start in. It reports: no such
hook; a hook that is not trusted, or changed since (Codex skips it without
a warning), or disabled; hooks turned off by [features] hooks = false; a
hook that is not managed, or not alone (allow_managed_hooks_only), or that
any layer can turn off (no [features] hooks = true in requirements); a
matcher that misses spawn_agent or collaborationspawn_agent (the spawn
tool of multi_agent_v2, which a project can turn on); an async hook; a
hook on another event than PreToolUse. It cannot see Codex's command
line: --dangerously-bypass-hook-trust (which runs untrusted hooks:
automation should store the hooks' trust instead), --enable, --disable,
-c and --profile.`
}
