package judge

import (
	"errors"
	"slices"

	"github.com/spawngate/spawngate/internal/document"
	"github.com/spawngate/spawngate/internal/report"
)

// Wording is how a front end names what its user can do about an error.
// An Error says which limit was reached and which document failed; a
// Wording adds the front end's names for them (the command line's flags),
// and phrases every error of the pipeline on one line the same way for
// every front end that shares it (the command line and the server it
// starts). The zero Wording names no front end: its line is Error's.
type Wording struct {
	// Setting spells a setting its user gives, named as Options and
	// document.Limits name it in kebab case: a limit ("max-values",
	// "timeout"), or what gave a document ("policy", "bundle",
	// "bundle-verification-key", "checks"). The command line's spells a
	// flag: "--max-values". Nil names a limit as it is and a document by
	// its file alone.
	Setting func(name string) string
	// WriteBuiltins says how to write this version's built-in modules, for
	// a module that claims a built-in package and may be a copy from
	// another version (Error.Builtin): "spawngate rules --write-rego DIR";
	// "" says nothing of it.
	WriteBuiltins string
}

// Problem phrases why a document could not be judged: the whole line
// ("plan.json:3:5: /plan/0: nested deeper than 64 levels (limit
// --max-depth)"), and its parts for a report that shows the place apart.
// An error that is not an *Error is an internal error.
func (w Wording) Problem(err error) (string, *report.Problem) {
	var e *Error
	if !errors.As(err, &e) {
		msg := "internal error: " + document.OneLine(err.Error())
		return msg, &report.Problem{Msg: msg}
	}
	msg := w.message(e)
	return e.Where() + msg, &report.Problem{Line: e.Line, Column: e.Column, Pointer: document.ShowPointer(e.Pointer), Msg: msg}
}

// Line is Problem's line alone.
func (w Wording) Line(err error) string {
	line, _ := w.Problem(err)
	return line
}

// Each is every problem behind err, one line each as Line phrases it, when
// there is more than one (a document that breaks its schema in several
// places); nil otherwise.
func (w Wording) Each(err error) []string {
	var e *Error
	if !errors.As(err, &e) || len(e.More) == 0 {
		return nil
	}
	first := *e
	first.More = nil
	lines := []string{w.Line(&first)}
	for _, m := range e.More {
		lines = append(lines, w.Line(m))
	}
	return lines
}

// Gate phrases why a gate could not be built from opts and the policy
// file (New's error): its line, and each problem on a line of its own when
// there are several (nil otherwise). Each line begins with the setting
// that gave the document it is about, as Setting spells it ("--policy
// p.yaml: ..."), unless no setting names it or the gate itself failed.
func (w Wording) Gate(err error, opts Options, policy string) (string, []string) {
	line, each := w.Line(err), w.Each(err)
	var e *Error
	if w.Setting == nil || !errors.As(err, &e) || e.Kind == Internal {
		return line, each
	}
	name := settingOf(e.Source, policy, opts)
	if name == "" {
		return line, each
	}
	prefix := w.Setting(name) + " "
	for i := range each {
		each[i] = prefix + each[i]
	}
	return prefix + line, each
}

// message is the line without its place: the message, how to act on it
// when the Wording says, the limit, and how many more problems there are.
func (w Wording) message(e *Error) string {
	msg := e.Msg
	if e.Builtin && w.WriteBuiltins != "" {
		msg += " (a copy from another spawngate version? write this version's with " + w.WriteBuiltins + ")"
	}
	if e.Limit != "" {
		msg += " (limit " + w.setting(e.Limit) + ")"
	}
	return msg + document.MoreProblems(len(e.More))
}

func (w Wording) setting(name string) string {
	if w.Setting == nil {
		return name
	}
	return w.Setting(name)
}

// settingOf names the setting that gave source, a document a gate could
// not be built with: "policy" (the policy file), "bundle",
// "bundle-verification-key" or "checks"; "" for a document no setting
// names (a module inside a folder of checks, which the line names itself).
func settingOf(source, policy string, opts Options) string {
	switch {
	case source == "":
		return ""
	case source == policy:
		return "policy"
	case source == opts.Bundle:
		return "bundle"
	case opts.BundleKey != nil && source == opts.BundleKey.File:
		return "bundle-verification-key"
	case slices.Contains(opts.Checks, source):
		return "checks"
	}
	return ""
}
