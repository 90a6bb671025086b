package doctor

import (
	"cmp"
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"time"
)

// Entry is one hook handler a host runs that runs spawngate, or means to:
// where it is written, in which layer, what selects the calls it sees,
// what it runs and how long the host waits for it.
type Entry struct {
	File *File
	// Pointer is the handler's JSON pointer in File.
	Pointer string
	// Layer is how the host names the layer the file belongs to (managed
	// settings, user config ...); Managed says whether the session can
	// write it (false) or only the machine's operator (true).
	Layer   string
	Managed bool
	// Event is the hook event the handler is written under.
	Event string
	// Matcher is the matcher that selects the tool calls the handler
	// sees, nil for none; MatcherPointer is where it is written (the
	// handler's group, or the handler itself, when it has none).
	Matcher        *string
	MatcherPointer string
	// Command is the command as written; Args the arguments given apart
	// from it (Exec true), which the host runs without a shell.
	Command string
	Args    []string
	Exec    bool
	// CommandKey is the key Command is written under (command, bash).
	CommandKey string
	// Timeout is how long the host waits for the handler: the one
	// written (TimeoutSet), else the host's default.
	Timeout    time.Duration
	TimeoutSet bool
	// Keys are the handler's keys and values as written.
	Keys map[string]any
}

// Place is where the handler is written.
func (e *Entry) Place() Place { return Place{File: e.File.Path, Pointer: e.Pointer} }

// Run is one doctor's run: the files it read and what it found.
type Run struct {
	Options Options
	// Project and Home are the options' folders, absolute (Home "" when
	// none is given).
	Project, Home string
	Files         []*File
	Findings      []Finding
}

// NewRun starts a run of a doctor with the options' folders made
// absolute; an error is a folder that cannot be.
func NewRun(o Options) (Run, error) {
	project, home, err := o.Dirs()
	return Run{Options: o, Project: project, Home: home}, err
}

// Add records a finding about a setting of a file.
func (r *Run) Add(file, id, ptr, problem, fix string) {
	r.Findings = append(r.Findings, Finding{ID: id, File: file, Pointer: ptr, Problem: problem, Fix: fix})
}

// Path is a machine-wide path (etc/...) under the root the options give.
func (o Options) Path(rel string) string {
	root := cmp.Or(o.Root, string(filepath.Separator))
	return filepath.Join(root, rel)
}

// Dirs are the project and home folders of the options, absolute (home
// "" when none is given): what a hook's variables and ~ are.
func (o Options) Dirs() (project, home string, err error) {
	if project, err = filepath.Abs(o.Project); err != nil {
		return "", "", &Error{File: o.Project, Msg: err.Error()}
	}
	if o.Home != "" {
		if home, err = filepath.Abs(o.Home); err != nil {
			return "", "", &Error{File: o.Home, Msg: err.Error()}
		}
	}
	return project, home, nil
}

// Finish gives each finding and gate of diag the line its pointer is
// written on, and sorts them.
func (r *Run) Finish(diag *Diagnosis) {
	byPath := map[string]*File{}
	ptrs := map[*File][]string{}
	for _, f := range r.Files {
		byPath[f.Path] = f
	}
	for _, f := range r.Findings {
		if file := byPath[f.File]; file != nil && f.Pointer != "" && !file.TOML {
			ptrs[file] = append(ptrs[file], f.Pointer)
		}
	}
	for _, g := range diag.Gates {
		if file := byPath[g.File]; file != nil && !file.TOML {
			ptrs[file] = append(ptrs[file], g.Pointer)
		}
	}
	for file, p := range ptrs {
		if file.Tree != nil {
			file.locate(p) // one pass a file
		}
	}
	for i, f := range r.Findings {
		if line := byPath[f.File].Line(f.Pointer); f.Pointer != "" && line > 0 {
			r.Findings[i].Line = line
		}
	}
	for i, g := range diag.Gates {
		diag.Gates[i].Line = byPath[g.File].Line(g.Pointer)
	}
	diag.Findings = r.Findings
	diag.Sort()
}

// Tool is a tool a spawngate hook's matchers must select together: its
// name in findings, and every name under which a matcher selects it.
type Tool struct {
	Name  string
	Names []string
}

// Uncovered lists, for each entry, the tools it does not select that no
// other entry selects either: the spawns under those tools start
// unjudged. selects reads a matcher as the host does.
func Uncovered(entries []*Entry, tools []Tool, selects func(e *Entry, names []string) bool) [][]string {
	covered := map[string]bool{}
	for _, e := range entries {
		for _, t := range tools {
			if selects(e, t.Names) {
				covered[t.Name] = true
			}
		}
	}
	missed := make([][]string, len(entries))
	for i, e := range entries {
		for _, t := range tools {
			if !covered[t.Name] && !selects(e, t.Names) {
				missed[i] = append(missed[i], t.Name)
			}
		}
	}
	return missed
}

// Key is what a doctor asks of one key of a hook handler: Check returns
// why its value lets a spawn through, and the fix, or "" when it does
// not. A nil Check is a key no value of which weakens the hook.
type Key struct {
	ID    string // the finding's ID, hook.handler when ""
	Check func(v any) (problem, fix string)
}

// CheckKeys checks each key of an entry against the keys the host reads
// (known): a key the host does not read is a finding too (unknown says
// why, or is "" to let such keys be), as the next version may read it as
// something that weakens the hook. Findings come in the keys' order.
func (r *Run) CheckKeys(e *Entry, known map[string]Key, unknown func(k string) (problem, fix string)) {
	keys := make([]string, 0, len(e.Keys))
	for k := range e.Keys {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		rule, ok := known[k]
		ptr := e.Pointer + "/" + EscapePointer(k)
		switch {
		case !ok && unknown != nil:
			if problem, fix := unknown(k); problem != "" {
				r.Add(e.File.Path, "hook.handler", ptr, problem, fix)
			}
		case ok && rule.Check != nil:
			if problem, fix := rule.Check(e.Keys[k]); problem != "" {
				r.Add(e.File.Path, cmp.Or(rule.ID, "hook.handler"), ptr, problem, fix)
			}
		}
	}
}

// Seconds writes a duration as a count of seconds: 2.5.
func Seconds(t time.Duration) string { return strconv.FormatFloat(t.Seconds(), 'f', -1, 64) }

// wholeUnits rounds a duration up to whole units (seconds, milliseconds).
func wholeUnits(t, unit time.Duration) int64 { return int64((t + unit - 1) / unit) }

// CheckEntry checks a command entry that runs spawngate: the command (as
// CheckCommand does; c.Words are the words when the host runs them
// without a shell, else the command is split as its shell would, with
// c.Vars and c.Home), and that the host waits for spawngate's answer
// longer than spawngate's own --timeout (c.TimeoutKey names the key,
// whose value counts c.TimeoutUnit; e.Timeout is what the host waits,
// written or its default).
func (r *Run) CheckEntry(ctx context.Context, e *Entry, c Command) {
	cmdPtr := e.Pointer + "/" + e.CommandKey
	add := func(id, problem, fix string) { r.Add(e.File.Path, id, cmdPtr, problem, fix) }
	if c.Words == nil {
		words, op, err := ShellWords(e.Command, c.Vars, c.Home)
		switch {
		case err != nil:
			add("hook.command", fmt.Sprintf("the command %s, so what it runs is not known until the hook runs", err), c.Directly)
			return
		case op != "":
			add("hook.command", fmt.Sprintf("the command is more than one simple command (it holds %q): its exit status need not be spawngate's, and a refusal can be lost", op), c.Directly)
		}
		c.Words = words
	}
	if c.Machine.Root == "" {
		c.Machine = Machine{Root: r.Options.Root, Own: []string{r.Project, r.Home}}
	}
	line, ok := CheckCommand(ctx, c, add)
	if !ok || line.Timeout <= 0 || e.Timeout > line.Timeout {
		return
	}
	key := e.File.Key(c.TimeoutKey)
	ptr, what := e.Pointer+"/"+c.TimeoutKey, key+" "+ShowJSON(e.Keys[c.TimeoutKey])
	if !e.TimeoutSet {
		name := strconv.Quote(c.TimeoutKey)
		if e.File.TOML {
			name = c.TimeoutKey
		}
		ptr, what = e.Pointer, fmt.Sprintf("no %s (%s's default, %s s)", name, c.Title, Seconds(e.Timeout))
	}
	unit := cmp.Or(c.TimeoutUnit, time.Second)
	need, margin := wholeUnits(line.Timeout, unit), wholeUnits(10*time.Second, unit)
	r.Add(e.File.Path, "hook.timeout", ptr,
		fmt.Sprintf("%s is not above spawngate's own --timeout of %s: %s can stop the hook before spawngate answers, and a hook that times out lets the spawn through", what, line.Timeout, c.Title),
		fmt.Sprintf("set %s %d or more (such as %d), or give spawngate a lower --timeout", key, need+1, need+margin))
}
