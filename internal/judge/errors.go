package judge

import (
	"context"
	"errors"

	"github.com/spawngate/spawngate/internal/document"
	"github.com/spawngate/spawngate/internal/engine"
)

// ErrorKind is what kept a document from being judged.
type ErrorKind int

const (
	// Document: the document cannot be judged as written (it is missing,
	// unreadable, does not parse, or breaks the schema outside the
	// children), or the machine cannot resolve what it names.
	Document ErrorKind = iota + 1
	// Limit: the document goes over a limit; Error.Limit names it.
	Limit
	// Timeout: the deadline passed; Error.Limit is "timeout".
	Timeout
	// Interrupted: the caller's context ended (a signal, a shutdown).
	Interrupted
	// NoPolicy: neither an operator policy nor the plan's own applies.
	NoPolicy
	// Internal: the gate itself failed (a bug, or checks that give a
	// result it cannot read).
	Internal
	// Option: what the caller asked a gate to be built with cannot build
	// one (the Go API's options); Error.Source names the option.
	Option
)

func (k ErrorKind) String() string {
	switch k {
	case Document:
		return "document"
	case Limit:
		return "limit"
	case Timeout:
		return "timeout"
	case Interrupted:
		return "interrupted"
	case NoPolicy:
		return "no-policy"
	case Internal:
		return "internal"
	case Option:
		return "option"
	}
	return "unknown"
}

// Error is why a document could not be judged, in parts, so that every
// front end can say it its own way and none parses a message back.
type Error struct {
	Kind    ErrorKind
	Source  string // the document: a file name as given, or <stdin>
	Line    int    // 1-based; 0 when not known
	Column  int    // 1-based; 0 when not known
	Pointer string // JSON pointer into the document; "" when none applies
	// Limit names the limit that was reached ("max-values", "timeout"), as
	// document.Limits names it in kebab case, for Kind Limit and Timeout.
	Limit string
	Msg   string // one line, without the source, position or limit
	// Builtin tells that the document is a module that claims a package of
	// the built-in modules, perhaps a copy of them from another spawngate
	// version: a front end may say how to write this version's
	// (Wording.WriteBuiltins).
	Builtin bool
	// More are the document's other problems (document.Error's More), each an
	// Error of its own: Error counts them, a front end may list each.
	More []*Error
}

// Error is the problem on one line, without naming any flag, as the zero
// Wording says it: "plan.json:3:5: /plan/0: nested deeper than 64 levels
// (limit max-depth)".
func (e *Error) Error() string { return e.Where() + Wording{}.message(e) }

// Where is the place part of the line: "plan.json:3:5: /plan/0: ", or ""
// without a source.
func (e *Error) Where() string { return document.Where(e.Source, e.Line, e.Column, e.Pointer) }

// AsError turns whatever stopped a front end's work into an *Error about
// source: a reading error keeps its parts, a deadline or cancellation is a
// Timeout or Interrupted, anything unknown is Internal.
func AsError(source string, err error) *Error {
	var je *Error
	if errors.As(err, &je) {
		return je
	}
	var pe *document.Error
	if errors.As(err, &pe) {
		kind := Document
		if pe.Limit != "" {
			kind = Limit
		}
		e := &Error{Kind: kind, Source: pe.Source, Line: pe.Line, Column: pe.Column, Pointer: pe.Pointer, Limit: pe.Limit, Msg: document.OneLine(pe.Msg)}
		for _, m := range pe.More {
			e.More = append(e.More, AsError(source, m))
		}
		return e
	}
	var me *engine.ModuleError
	if errors.As(err, &me) {
		// One of the operator's modules: the document is the .rego file.
		return &Error{Kind: Document, Source: me.File, Line: me.Line, Msg: document.OneLine(me.Msg), Builtin: me.Builtin}
	}
	var re *engine.ResolveError
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return &Error{Kind: Timeout, Source: source, Msg: "timed out", Limit: "timeout"}
	case errors.Is(err, context.Canceled):
		return &Error{Kind: Interrupted, Source: source, Msg: "interrupted"}
	case errors.Is(err, engine.ErrNoPolicy):
		return &Error{Kind: NoPolicy, Source: source, Msg: "no policy applies"}
	case errors.As(err, &re):
		return &Error{Kind: Document, Source: source, Msg: document.OneLine(re.Error())}
	}
	return &Error{Kind: Internal, Source: source, Msg: "internal error: " + document.OneLine(err.Error())}
}
