package spawngate

import (
	"errors"

	"github.com/spawngate/spawngate/internal/judge"
)

// ErrorKind is what kept a plan from being judged, or a gate from being
// built. Each kind is also an error value to test with errors.Is:
//
//	if errors.Is(err, spawngate.ErrTimeout) { ... }
//
// An ErrorKind is only ever a target of errors.Is: every error the API
// returns is an *Error.
type ErrorKind int

// The kinds of Error. Every one of them means: refuse the spawn.
const (
	// ErrDocument: a document cannot be judged as written (the plan, the
	// hook payload, the operator policy, an agent definition, a check's
	// module): it is missing, unreadable, does not parse, or breaks its
	// schema outside the children; or the machine cannot resolve a path
	// it names (WithResolvePaths). Source, Line, Column and Pointer say
	// where.
	ErrDocument ErrorKind = iota + 1
	// ErrLimit: a document goes over one of the Limits; Error.Limit names
	// it in kebab case ("max-depth" for Limits.MaxDepth).
	ErrLimit
	// ErrTimeout: judging took longer than WithTimeout, or the caller's
	// context deadline passed; Error.Limit is "timeout".
	ErrTimeout
	// ErrInterrupted: the caller's context was cancelled.
	ErrInterrupted
	// ErrNoPolicy: New was given no operator policy, nor a bundle that
	// carries one (see New).
	ErrNoPolicy
	// ErrInternal: the gate itself failed (a bug, a Gate that New did not
	// build, or checks that give a result the gate cannot read).
	ErrInternal
	// ErrOption: New or Hook was given an option it cannot build or judge
	// with (a timeout that is not positive, a second policy, a nil
	// option), and Error.Source names the option; or a function was given
	// a nil context, and Error.Source names the function ("Check").
	ErrOption
)

// String is the kind as the command's messages name it: "document",
// "limit", "timeout", "interrupted", "no-policy", "internal", "option";
// "unknown" for any other value.
func (k ErrorKind) String() string {
	switch k {
	case ErrDocument:
		return "document"
	case ErrLimit:
		return "limit"
	case ErrTimeout:
		return "timeout"
	case ErrInterrupted:
		return "interrupted"
	case ErrNoPolicy:
		return "no-policy"
	case ErrInternal:
		return "internal"
	case ErrOption:
		return "option"
	}
	return "unknown"
}

// Error is the kind's name, as String: an ErrorKind is an error so that
// errors.Is can test for it.
func (k ErrorKind) Error() string { return k.String() }

// Error is why a plan could not be judged, or a gate not built, in parts,
// so that a caller can say it its own way without parsing the message.
// Every error the API returns is an *Error; read it with errors.As, or
// test its kind with errors.Is.
type Error struct {
	// Kind is what went wrong; errors.Is(err, kind) tests it too.
	Kind ErrorKind
	// Source is the document the error is about, as given ("plan.json",
	// a policy or bundle path, "hook payload"), or for
	// ErrOption the option ("WithTimeout", or "New" for a nil option).
	Source string
	// Line and Column place the error in Source, 1-based; 0 when not
	// known.
	Line   int
	Column int
	// Pointer is a JSON pointer to the value at fault in Source, such as
	// /plan/0/tools; "" when none applies.
	Pointer string
	// Limit names the limit that was reached, in kebab case
	// ("max-values" for Limits.MaxValues, "timeout"), for ErrLimit and
	// ErrTimeout; "" otherwise.
	Limit string
	// Msg is the problem on one line, without Source, the position or
	// the limit.
	Msg string
	// More are the document's other problems, when it breaks its schema
	// in more than one place, each an Error of its own; Error() counts
	// them.
	More []*Error
	// Builtin tells that Source is a module of the operator's checks
	// that claims a package of the built-in modules: perhaps a copy of
	// them from another spawngate version, which `spawngate rules
	// --write-rego DIR` writes anew for this one.
	Builtin bool
}

// Error is the problem on one line:
// "plan.json:3:5: /plan/0: nested deeper than 64 levels (limit max-depth)".
func (e *Error) Error() string { return e.internal().Error() }

// Where is the place part of Error(): "plan.json:3:5: /plan/0: ", or ""
// when neither Source nor Pointer is known.
func (e *Error) Where() string { return e.internal().Where() }

// Is tells errors.Is that e is of the kind target, when target is an
// ErrorKind.
func (e *Error) Is(target error) bool {
	k, ok := target.(ErrorKind)
	return ok && e != nil && k == e.Kind
}

// internal is e as the pipeline writes it, so that both say it in the
// same words.
func (e *Error) internal() *judge.Error {
	je := &judge.Error{Kind: judge.ErrorKind(e.Kind), Source: e.Source, Line: e.Line, Column: e.Column, Pointer: e.Pointer, Limit: e.Limit, Msg: e.Msg, Builtin: e.Builtin}
	for _, m := range e.More {
		je.More = append(je.More, m.internal())
	}
	return je
}

// errorOf is the caller's *Error for err, which stopped a decision about
// source (see judge.AsError); an *Error stays as it is. The kinds are
// numbered as judge.Kind is, so a conversion keeps the kind
// (TestErrorKindsAreThePipelines holds them together).
func errorOf(source string, err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return fromJudge(judge.AsError(source, err))
}

// fromJudge is the caller's copy of a judge error, its other problems
// included.
func fromJudge(je *judge.Error) *Error {
	e := &Error{Kind: ErrorKind(je.Kind), Source: je.Source, Line: je.Line, Column: je.Column, Pointer: je.Pointer, Limit: je.Limit, Msg: je.Msg, Builtin: je.Builtin}
	for _, m := range je.More {
		e.More = append(e.More, fromJudge(m))
	}
	return e
}
