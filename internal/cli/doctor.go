package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/spawngate/spawngate/internal/agent"
	"github.com/spawngate/spawngate/internal/host"
	"github.com/spawngate/spawngate/internal/host/doctor"
	"github.com/spawngate/spawngate/internal/hosts"
	"github.com/spawngate/spawngate/internal/report"
)

// doctorFor is the doctor of the host named, when that host has one.
func doctorFor(name string) (doctor.Doctor, bool) {
	a, ok := hosts.Lookup(name)
	if !ok {
		return nil, false
	}
	d, ok := a.(doctor.Doctor)
	return d, ok
}

// doctorHostNames are the hosts that have a doctor, in hosts' order.
func doctorHostNames() []string {
	var names []string
	for _, a := range hosts.All {
		if _, ok := a.(doctor.Doctor); ok {
			names = append(names, a.Name())
		}
	}
	return names
}

// backstopHostNames are the hosts whose doctor writes a backstop.
func backstopHostNames() []string {
	var names []string
	for _, name := range doctorHostNames() {
		if d, _ := doctorFor(name); d != nil {
			if _, ok := d.(doctor.Backstopper); ok {
				names = append(names, name)
			}
		}
	}
	return names
}

// doctorOptions are the flags of spawngate doctor HOST.
type doctorOptions struct {
	host                string
	project, home, root string
	owner               string
	format              doctorFormat
	// backstop is the file --write-backstop writes before doctor reads
	// the installation, "" for none.
	backstop string
}

// doctorFormat is one way to write a diagnosis. Every format says the
// same; the exit code comes from the diagnosis, never from the format.
type doctorFormat struct {
	Name, Help string
	Render     func(w io.Writer, hostName string, d *doctor.Diagnosis)
}

// doctorFormats are doctor's formats, the first the default; the table
// also feeds --help.
var doctorFormats = []doctorFormat{
	{"text", "one line per finding, FILE:LINE: problem; fix: ..., then the verdict", writeDoctorText},
	{"json", "one JSON document on stdout, also on errors", writeDoctorJSON},
}

// runDoctor is spawngate doctor HOST: it reads the host's settings the
// way the host does and reports every way they let a spawn start without
// spawngate judging it. 0: nothing does; 1: at least one finding; 2: it
// could not evaluate (usage, a settings file it cannot read).
func runDoctor(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	opts, err := parseDoctor(args, stdout)
	if errors.Is(err, flag.ErrHelp) {
		return exitPass
	}
	fail := func(msg, see string) int {
		fmt.Fprintf(stderr, "spawngate: %s%s\n", report.Clean(oneLine(msg)), see)
		if opts != nil && opts.format.Name == "json" {
			writeDoctorJSONError(stdout, opts.host, msg)
		}
		return exitError
	}
	if err != nil {
		return fail(err.Error(), " (see spawngate doctor -h)")
	}
	d, _ := doctorFor(opts.host)
	uid, err := ownerUID(opts.owner)
	if err != nil {
		return fail(err.Error(), " (see spawngate doctor -h)")
	}
	o := doctor.Options{
		Project: opts.project, Home: opts.home, Root: opts.root, Getenv: os.Getenv,
		Owners: &host.Owners{Trusted: []int{0, uid}, Session: -1},
	}
	o.ReadHook = hookLineReader(o.Machine())
	if opts.backstop != "" {
		// What was written goes to stderr: stdout is the diagnosis alone,
		// one JSON document under --format json.
		said, err := d.(doctor.Backstopper).WriteBackstop(ctx, o, opts.backstop)
		if err != nil {
			return fail("--write-backstop: "+err.Error(), "")
		}
		fmt.Fprintf(stderr, "spawngate: %s\n", report.Clean(oneLine(said)))
	}
	diag, err := d.Doctor(ctx, o)
	if err != nil {
		var de *doctor.Error
		if !errors.As(err, &de) {
			return fail("internal error: "+err.Error(), "")
		}
		return fail(err.Error(), "")
	}
	opts.format.Render(stdout, opts.host, diag)
	if diag.Holds() {
		return exitPass
	}
	return exitBlock
}

func parseDoctor(args []string, help io.Writer) (*doctorOptions, error) {
	opts := &doctorOptions{format: doctorFormats[0], root: string(filepath.Separator)}
	if len(args) == 1 && (args[0] == "-h" || args[0] == "-help" || args[0] == "--help") {
		printDoctorHelp(help, nil)
		return nil, flag.ErrHelp
	}
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		// The format is read all the same, so that a usage error is JSON
		// when JSON was asked for.
		c := newDoctorCommand(opts)
		c.parse(args, io.Discard)
		return opts, &usageError{"doctor needs the host it inspects: spawngate doctor " + strings.Join(doctorHostNames(), "|")}
	}
	opts.host = args[0]
	c := newDoctorCommand(opts)
	rest, err := c.parse(args[1:], help)
	if errors.Is(err, flag.ErrHelp) {
		return nil, err
	}
	if err != nil {
		return opts, err
	}
	if _, ok := doctorFor(opts.host); !ok {
		what, names := "unknown host", choose(opts.host, doctorHostNames())
		if _, known := hosts.Lookup(opts.host); known {
			what, names = "no doctor yet for host", "choose "+orList(doctorHostNames(), "or")
		}
		return opts, &usageError{fmt.Sprintf("doctor: %s %q: %s", what, opts.host, names)}
	}
	if len(rest) > 0 {
		return opts, &usageError{fmt.Sprintf("doctor takes no arguments but the host, only flags (got %q)", rest[0])}
	}
	if d, _ := doctorFor(opts.host); opts.backstop != "" {
		if _, ok := d.(doctor.Backstopper); !ok {
			names := backstopHostNames()
			writes := "writes"
			if len(names) > 1 {
				writes = "write"
			}
			return opts, &usageError{fmt.Sprintf("--write-backstop: host %s has no backstop (only %s %s one)", opts.host, orList(names, "and"), writes)}
		}
	}
	if opts.project == "" {
		wd, err := os.Getwd()
		if err != nil {
			return opts, &usageError{"the current folder cannot be found (" + err.Error() + "): give --project DIR"}
		}
		opts.project = wd
	}
	if opts.home == "" {
		opts.home = os.Getenv("HOME")
		if opts.home == "" {
			return opts, &usageError{"HOME is not set: give --home DIR, the home folder of the user who runs the host"}
		}
	}
	for _, f := range []struct{ flag, dir string }{{"--project", opts.project}, {"--home", opts.home}, {"--root", opts.root}} {
		if info, err := os.Stat(f.dir); err != nil || !info.IsDir() {
			return opts, &usageError{fmt.Sprintf("%s %q: not a folder", f.flag, f.dir)}
		}
	}
	return opts, nil
}

func newDoctorCommand(opts *doctorOptions) *command {
	c := newCommand("spawngate doctor", printDoctorHelp)
	c.fs.Var(fileFlag{&opts.project, "the folder sessions start in"}, "project", "the `DIR` sessions start in, whose project settings are read (default: the current folder)")
	c.fs.Var(fileFlag{&opts.home, "the user's home folder"}, "home", "the home `DIR` of the user who runs the host, whose own settings are read (default: $HOME)")
	c.fs.Var(fileFlag{&opts.root, "the folder standing in for /"}, "root", "the `DIR` that stands in for / in the machine-wide paths (/etc/...)")
	c.fs.StringVar(&opts.owner, "owner", "root", "the `USER` (a name or a uid) who installs spawngate: its binary, its policy, checks and bundle, and every folder above them must be this user's or root's, and writable by their owner alone")
	c.fs.Var(doctorFormatFlag{&opts.format}, "format", "output `format`: "+doctorFormatHelp())
	if hosts := backstopHostNames(); len(hosts) > 0 {
		c.fs.Var(fileFlag{&opts.backstop, "the backstop file to write"}, "write-backstop", "write the host's backstop to `FILE` ("+strings.Join(hosts, ", ")+" only: rules the host applies itself, refusing by name what the policy refuses, for when the hook does not run), then check the installation as usual; without it doctor writes nothing")
	}
	return c
}

// ownerUID reads --owner: a uid, or a user's name looked up on this
// machine.
func ownerUID(owner string) (int, error) {
	if n, err := strconv.Atoi(owner); err == nil && n >= 0 {
		return n, nil
	}
	u, err := user.Lookup(owner)
	if err != nil {
		return 0, fmt.Errorf("--owner %q: no such user on this machine", owner)
	}
	return strconv.Atoi(u.Uid)
}

// hookLineReader is doctor.Options.ReadHook for the installation m
// places: a spawngate hook's command line read by the hook's own flag
// parser, and its gate built by the reader check and the hook use,
// relative files read against dir and absolute ones where m puts them
// (under --root), named as the host sees them.
func hookLineReader(m doctor.Machine) func(ctx context.Context, hostName string, args []string, dir string) (doctor.HookLine, error) {
	return func(ctx context.Context, hostName string, args []string, dir string) (doctor.HookLine, error) {
		line, err := readHookLine(ctx, hostName, args, dir, m)
		if err != nil {
			err = errors.New(m.ShownIn(err.Error()))
		}
		return line, err
	}
}

func readHookLine(ctx context.Context, hostName string, args []string, dir string, m doctor.Machine) (doctor.HookLine, error) {
	adapter, ok := hosts.Lookup(hostName)
	if !ok {
		return doctor.HookLine{}, fmt.Errorf("spawngate hook has no host %q", hostName)
	}
	opts, err := parseHook(adapter, args, io.Discard)
	if errors.Is(err, flag.ErrHelp) {
		return doctor.HookLine{}, errors.New("-h: the hook prints its help and exits 2")
	}
	if err != nil {
		return doctor.HookLine{}, err
	}
	line := doctor.HookLine{Timeout: opts.gate.Timeout, Policy: opts.policy}
	if len(opts.agentDirs) > 0 {
		line.ByHand = append(line.ByHand, "--agents-dir")
	}
	if opts.transcript != "" {
		line.ByHand = append(line.ByHand, "--transcript")
	}
	abs := func(p string) string {
		if p == "" || filepath.IsAbs(p) {
			return m.OnDisk(p)
		}
		return filepath.Join(dir, p)
	}
	opts.policy, opts.gate.Bundle = abs(opts.policy), abs(opts.gate.Bundle)
	for i, c := range opts.gate.Checks {
		opts.gate.Checks[i] = abs(c)
	}
	if opts.gate.BundleKey != nil {
		opts.gate.BundleKey.File = abs(opts.gate.BundleKey.File)
	}
	g, err := newGate(ctx, "hook", opts.gate, opts.policy)
	if err != nil {
		return line, err // a hook that cannot start is a finding already
	}
	for _, f := range g.OnDisk() {
		line.Files = append(line.Files, m.Shown(f))
	}
	line.Budget = g.Budget(json.Number(opts.budget))
	line.Judge = func(ctx context.Context, child agent.Translation) (bool, string, error) {
		res, err := g.JudgeSpawn(ctx, "agent definition", child.Plan(), 1)
		if err != nil {
			return false, "", err
		}
		if res.Verdict == report.Pass {
			return false, "", nil
		}
		why := res.Error
		for _, c := range res.Children {
			if len(c.Violations) > 0 && why == "" {
				why = c.Violations[0].Message
			}
		}
		for _, v := range res.Violations {
			if why == "" {
				why = v.Message
			}
		}
		return true, why, nil
	}
	return line, nil
}

// writeDoctorText writes one line per finding, the file first, then the
// verdict; an installation that holds is one line naming its hooks.
func writeDoctorText(w io.Writer, hostName string, d *doctor.Diagnosis) {
	if d.Holds() {
		var gates []string
		for _, g := range d.Gates {
			gates = append(gates, filePlace(g.File, g.Line))
		}
		if len(d.Notes) == 0 {
			fmt.Fprintf(w, "verdict: PASS, the installation holds: every spawn goes through spawngate hook %s, in %s\n",
				report.Clean(hostName), strings.Join(gates, " and "))
			return
		}
		fmt.Fprintf(w, "verdict: PASS, the installation holds as far as files can hold it: every spawn goes through spawngate hook %s, in %s, but for the ways round it below, which no file closes\n",
			report.Clean(hostName), strings.Join(gates, " and "))
		writeDoctorNotes(w, d.Notes)
		return
	}
	files := map[string]bool{}
	for _, f := range d.Findings {
		files[f.File] = true
		fmt.Fprintf(w, "%s: %s; fix: %s\n", filePlace(f.File, f.Line), report.Clean(oneLine(f.Problem)), report.Clean(oneLine(f.Fix)))
	}
	fmt.Fprintf(w, "\nverdict: FAIL, %s in %s\n", plural(len(d.Findings), "finding", "findings"), plural(len(files), "file", "files"))
	writeDoctorNotes(w, d.Notes)
}

// writeDoctorNotes writes what no file of the installation closes, one
// line each, after the verdict.
func writeDoctorNotes(w io.Writer, notes []string) {
	for _, n := range notes {
		fmt.Fprintf(w, "note: %s\n", report.Clean(oneLine(n)))
	}
}

func filePlace(file string, line int) string {
	if line > 0 {
		return fmt.Sprintf("%s:%d", report.Clean(file), line)
	}
	return report.Clean(file)
}

type doctorJSON struct {
	Host     string           `json:"host"`
	Verdict  string           `json:"verdict"`
	Error    string           `json:"error,omitempty"`
	Findings []doctor.Finding `json:"findings"`
	Gates    []doctor.Place   `json:"gates"`
	Notes    []string         `json:"notes,omitempty"`
}

// writeDoctorJSON writes doctor's one JSON document: the verdict (pass,
// fail), the findings and the hooks that gate.
func writeDoctorJSON(w io.Writer, hostName string, d *doctor.Diagnosis) {
	doc := doctorJSON{Host: hostName, Verdict: "fail", Findings: d.Findings, Gates: d.Gates, Notes: d.Notes}
	if d.Holds() {
		doc.Verdict = "pass"
	}
	encodeDoctorJSON(w, doc)
}

func writeDoctorJSONError(w io.Writer, hostName, msg string) {
	encodeDoctorJSON(w, doctorJSON{Host: hostName, Verdict: "error", Error: msg})
}

func encodeDoctorJSON(w io.Writer, doc doctorJSON) {
	if doc.Findings == nil {
		doc.Findings = []doctor.Finding{}
	}
	if doc.Gates == nil {
		doc.Gates = []doctor.Place{}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.Encode(doc)
}

// doctorFormatFlag is doctor's --format, chosen from doctorFormats.
type doctorFormatFlag struct{ value *doctorFormat }

func (f doctorFormatFlag) String() string {
	if f.value == nil {
		return doctorFormats[0].Name
	}
	return f.value.Name
}

func (f doctorFormatFlag) Set(s string) error {
	var names []string
	for _, format := range doctorFormats {
		if format.Name == s {
			*f.value = format
			return nil
		}
		names = append(names, format.Name)
	}
	return fmt.Errorf("not a format: choose %s", strings.Join(names, " or "))
}

func doctorFormatHelp() string {
	parts := make([]string, len(doctorFormats))
	for i, f := range doctorFormats {
		parts[i] = f.Name + " (" + f.Help + ")"
	}
	return strings.Join(parts, "; ")
}

func printDoctorHelp(w io.Writer, fs *flag.FlagSet) {
	backstop := ""
	if len(backstopHostNames()) > 0 {
		backstop = " [--write-backstop FILE]"
	}
	fmt.Fprintf(w, `Usage: spawngate doctor %s [--project DIR] [--home DIR] [--root DIR] [--format text|json]%s

Reads the host's own settings files the way the host does and reports
every way they let a sub-agent start without spawngate hook HOST judging
it, one line per finding with the file and the fix.

`, strings.Join(doctorHostNames(), "|"), backstop)
	for _, name := range doctorHostNames() {
		d, _ := doctorFor(name)
		fmt.Fprintf(w, "%s: %s\n\n", name, d.DoctorHelp())
	}
	fmt.Fprint(w, `For every host: a command that may not run or may not be spawngate; a
timeout that ends the hook before spawngate answers; a policy that does
not load, so that every spawn would be refused; a settings file the host
does not read.

It reads files and runs nothing: what is given on a host's command line
is not a file it can see (each host's paragraph names what).

Exit codes: 0 nothing lets a spawn through; 1 at least one finding; 2 it
could not evaluate (a usage error, a settings file it cannot read).

Flags:
`)
	if fs == nil {
		fs = newDoctorCommand(&doctorOptions{root: string(filepath.Separator), format: doctorFormats[0]}).fs
	}
	printFlags(w, fs)
	fmt.Fprint(w, "\nExamples:\n")
	for _, name := range doctorHostNames() {
		fmt.Fprintf(w, "  spawngate doctor %s --project ~/src/repo\n", name)
	}
	fmt.Fprintf(w, "  spawngate doctor %s --format json\n", doctorHostNames()[0])
}
