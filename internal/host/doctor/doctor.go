// Package doctor is what every host's doctor shares: the Doctor
// interface and its findings; one model of a configuration file (File) and
// of a hook entry in it (Entry), the hook the host runs on a spawn; and
// the checks that do not depend on the host: that an entry's command runs
// spawngate hook HOST directly from files the session cannot change, that
// the host waits for its answer, that its matchers together select every
// spawn tool, that its keys leave no spawn unjudged. A host's doctor reads
// its own layers and switches and words its own fixes; what this package
// checks, it checks the same way for every host.
package doctor

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
	"time"

	"github.com/spawngate/spawngate/internal/agent"
	"github.com/spawngate/spawngate/internal/host"
)

// Doctor is a host whose installation spawngate can inspect: it reads the
// host's own configuration the way the host does and reports every way
// that configuration lets a sub-agent start without spawngate's hook
// judging it. It reads files and runs nothing.
type Doctor interface {
	Doctor(ctx context.Context, o Options) (*Diagnosis, error)
	// DoctorHelp is what spawngate doctor -h says of the host: the files
	// it reads, what it reports, and what it cannot see; a paragraph
	// wrapped to 72 columns, its first line shorter by the host's name.
	DoctorHelp() string
}

// Backstopper is a doctor that can also write a backstop: a file of
// rules the host applies itself, without running spawngate, that refuses
// what the operator's policy refuses when the hook does not run. Its
// doctor then checks the installation holds that file, as written for
// what the host would load now.
type Backstopper interface {
	Doctor
	// WriteBackstop writes the backstop for the installation o reads to
	// file, and says in one line what it holds; an error is a file it
	// must read and cannot (*Error), or a gate that cannot judge.
	WriteBackstop(ctx context.Context, o Options, file string) (string, error)
}

// Options say which installation a doctor reads.
type Options struct {
	// Project is the folder sessions start in: the host reads project
	// settings from there, and only there.
	Project string
	// Home is the user's home directory.
	Home string
	// Root stands in for /: the machine-wide paths (/etc/...) and every
	// absolute path a hook command names outside Project and Home (its
	// binary, its policy, checks and bundle) are looked for under it, so
	// that a staged installation or a test can be checked (Machine); ""
	// or "/" is the real root.
	Root string
	// Getenv reads the environment of the user who runs the host, for a
	// host that finds its folders there (Codex's CODEX_HOME); nil reads
	// nothing, as if every variable were unset.
	Getenv func(key string) string
	// ReadHook reads the arguments of a spawngate hook command (what
	// follows "spawngate hook HOST") the way that command reads them,
	// relative file names against dir, and builds the gate they ask for.
	// An error is what the hook would say before exiting 2 on every
	// call. It is the front end's, so that a doctor never reimplements the
	// hook's flags or the policy reader; nil skips the check. It reads
	// the absolute files the command names where Machine puts them (under
	// Root), and names them in HookLine as the host sees them.
	ReadHook func(ctx context.Context, host string, args []string, dir string) (HookLine, error)
	// Owners are who may own the spawngate binary and what its gate is
	// read from; nil is root alone (OperatorOnly), with the project and
	// home folders the session's. A test stands its own user in for root.
	Owners *host.Owners
}

// OwnersFor are the owners a doctor holds the hook's files to, with dirs
// (the project and home folders) as the session's.
func (o Options) OwnersFor(dirs ...string) host.Owners {
	if o.Owners != nil {
		w := *o.Owners
		w.Dirs = append(slices.Clone(w.Dirs), dirs...)
		return w
	}
	return host.OperatorOnly(dirs...)
}

// HookLine is what a spawngate hook's command line sets, as the hook
// itself reads it.
type HookLine struct {
	// Timeout is the longest the hook takes to judge a spawn (--timeout,
	// or its default).
	Timeout time.Duration
	// Policy is the operator policy file as the command line names it, ""
	// when a bundle carries the policy.
	Policy string
	// Files are the files and folders the hook's gate is read from (the
	// policy, the bundle and its key, the folders of checks), absolute,
	// as the host sees them (Machine.OnDisk is where they lie here).
	Files []string
	// ByHand are the flags given that are for trying payloads by hand
	// (--agents-dir, --transcript): the hook then judges what they name,
	// not what the host runs.
	ByHand []string
	// Judge judges one translated child as this hook's gate does, for a
	// doctor that writes down ahead of time what the hook would decide (a
	// host's static backstop): refused says whether the gate refuses it,
	// and why (its first reason). nil when the gate could not be built.
	Judge func(ctx context.Context, child agent.Translation) (refused bool, why string, err error)
	// Budget is the token budget the hook grants a spawn whose definition
	// states none (--budget-tokens, else the policy's budget_cap_tokens):
	// a child translated for Judge must be given it, as the hook gives it,
	// or it is judged without one. "" when the gate could not be built.
	Budget json.Number
}

// Finding is one way an installation fails: a spawn it lets through
// unjudged, or a hook that cannot run. A finding always names the file to
// change and how.
type Finding struct {
	// ID names the kind of finding (hook.absent, hook.matcher ...), stable
	// for machines.
	ID string `json:"id"`
	// File is the file to change: the one at fault, or where the fix goes.
	File string `json:"file"`
	// Line is where in File, 0 when the finding is about the whole file
	// or a file that does not exist.
	Line int `json:"line,omitempty"`
	// Pointer is the JSON pointer of the setting at fault, "" for none.
	Pointer string `json:"pointer,omitempty"`
	// Problem says what fails and how a spawn gets through; Fix says what
	// to change.
	Problem string `json:"problem"`
	Fix     string `json:"fix"`
}

// Place is where a setting is written.
type Place struct {
	File    string `json:"file"`
	Line    int    `json:"line,omitempty"`
	Pointer string `json:"pointer,omitempty"`
}

// Diagnosis is what a doctor found. The installation holds when there is
// no finding.
type Diagnosis struct {
	Findings []Finding
	// Gates are the spawngate hooks the host runs on a spawn, in the order
	// of the files that hold them (and any file that stands behind them,
	// such as a backstop of rules the host applies itself).
	Gates []Place
	// Notes are what the installation cannot close whatever its files
	// say (a command-line switch of the host's, its environment), each a
	// sentence: a host whose best installation still leaves a way round
	// the hook says so on every run, passing or not, so that a pass is
	// never read as more than the files can hold.
	Notes []string
}

// Holds tells whether every spawn goes through spawngate.
func (d *Diagnosis) Holds() bool { return len(d.Findings) == 0 && len(d.Gates) > 0 }

// Sort puts the findings in one order, whatever order the files were read
// in: by file, place and kind.
func (d *Diagnosis) Sort() {
	slices.SortStableFunc(d.Findings, func(a, b Finding) int {
		return cmp.Or(cmp.Compare(a.File, b.File), cmp.Compare(a.Line, b.Line),
			cmp.Compare(a.Pointer, b.Pointer), cmp.Compare(a.ID, b.ID), cmp.Compare(a.Problem, b.Problem))
	})
}

// Error is a file a doctor must read and cannot (it exists and is
// not readable, or is not a file): the installation cannot be judged.
type Error struct {
	File string
	Msg  string
}

func (e *Error) Error() string { return e.File + ": " + e.Msg }

// MaxConfigBytes bounds each configuration file a doctor reads. The
// settings and hook files of every host are a few kilobytes; a file far
// larger is not one an operator wrote, and reading it whole would let a
// project make doctor hold as much memory as the file is long.
const MaxConfigBytes = 4 << 20

// ReadConfig reads one of a host's configuration files for a doctor:
// found is false, with no error, for a file that does not exist (the host
// reads none there); one that exists and is not a file, cannot be read, or
// is larger than MaxConfigBytes is a *Error: the installation
// cannot be judged.
func ReadConfig(path string) (data []byte, found bool, err error) {
	info, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, &Error{File: path, Msg: "cannot be read: " + host.Cause(err)}
	}
	if !info.Mode().IsRegular() {
		return nil, false, &Error{File: path, Msg: "is not a file"}
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, false, &Error{File: path, Msg: "cannot be read: " + host.Cause(err)}
	}
	defer f.Close()
	// Read through a limit, not by the size Stat gave: the file may grow
	// between the two.
	data, err = io.ReadAll(io.LimitReader(f, MaxConfigBytes+1))
	switch {
	case err != nil:
		return nil, false, &Error{File: path, Msg: "cannot be read: " + host.Cause(err)}
	case len(data) > MaxConfigBytes:
		return nil, false, &Error{File: path, Msg: fmt.Sprintf("is larger than %d bytes, more than any configuration file doctor reads: it cannot tell what the host makes of it", MaxConfigBytes)}
	}
	return data, true, nil
}
