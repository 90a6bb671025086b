package spawngate

import (
	"slices"
	"strconv"

	"github.com/spawngate/spawngate/internal/report"
)

// Verdict is the outcome of a child or a plan.
type Verdict string

// The verdicts: Pass and Block for a judged plan and its children, and
// NotJudged for the Result that comes back with an error.
const (
	// Pass: the child may be dispatched; for a plan, every child may.
	Pass Verdict = "pass"
	// Block: the child is refused; for a plan, at least one child is, or
	// the plan as a whole is (Result.Violations, Result.Exceptions).
	Block Verdict = "block"
	// NotJudged: the plan could not be judged; an *Error says why. It is
	// written "error", as the command's reports write it.
	NotJudged Verdict = "error"
)

// Result is the outcome of one plan: its verdict, the policies that judged
// it, each child's verdict with every reason (or the count of those past
// the listing bound), and the reasons that refuse the plan as a whole. It
// is one result of the JSON report spawngate check --format json prints,
// and json.Marshal writes it the same way.
//
// A Result is the caller's own: changing it changes nothing in the gate.
type Result struct {
	// Source is the document's name, as given to Check; "plan.json" for
	// CheckPlan, "spawn" for Hook.
	Source string `json:"source"`
	// Verdict is Pass when every child passes and nothing refuses the plan
	// as a whole, Block when something refuses, NotJudged beside an error.
	Verdict Verdict `json:"verdict"`
	// Error is why the plan could not be judged, on one line (the
	// returned error's Error()), when Verdict is NotJudged; "" otherwise.
	Error string `json:"error,omitempty"`
	// Problems lists every problem behind Error, one line each, when the
	// document breaks its schema in more than one place; nil otherwise.
	Problems []string `json:"problems,omitempty"`
	// Policies names the policies that judged the plan: "operator", and
	// "plan" when the plan carries its own.
	Policies []string `json:"policies,omitempty"`
	// PolicyInPlan tells that the operator policy was this plan file's
	// own policy block, taken as the operator's (spawngate check
	// --policy-in-plan); the block then applied once, as the operator's.
	PolicyInPlan bool `json:"policy_in_plan,omitempty"`
	// Children are the plan's children in document order, then their
	// descendants in pre-order (see Child.Pointer); empty when the plan
	// was not judged.
	Children []Child `json:"children"`
	// Violations are the reasons the plan as a whole is refused (too many
	// children, too large a total budget), at pointers such as /plan; nil
	// when there are none. They block the plan, not any one child.
	Violations []Violation `json:"violations,omitempty"`
	// Exceptions are the operator policy's exceptions that did not apply
	// as written: expired, or matching nothing in this plan.
	Exceptions []ExceptionNote `json:"exceptions,omitempty"`
}

// PlanRefusals is how many reasons refuse the plan as a whole rather than
// any one child: its Violations that no exception lets through, and its
// Exceptions notes that block.
func (r Result) PlanRefusals() int {
	n := 0
	for _, v := range r.Violations {
		if v.Blocks() {
			n++
		}
	}
	for _, e := range r.Exceptions {
		if e.Blocks {
			n++
		}
	}
	return n
}

// Child is the outcome of one child of a plan.
type Child struct {
	// Index is the child's place in the plan, from 0: child i of a plan is
	// /plan/i. A nested plan's descendants come after the plan's own
	// children, in pre-order, and carry their Pointer.
	Index int `json:"index"`
	// Pointer is where a descendant is in the document, such as
	// /plan/0/children/1; "" for the plan's own children.
	Pointer string `json:"pointer,omitempty"`
	// Role is the child's role as the plan writes it.
	Role string `json:"role"`
	// Verdict is Pass when no listed or unlisted violation blocks the
	// child, Block otherwise.
	Verdict Verdict `json:"verdict"`
	// Violations are the reasons listed for the child, in report order
	// (by Path, then Rule, then Message).
	Violations []Violation `json:"violations"`
	// Unlisted counts the child's violations that are not listed because
	// the result reached the most it lists (WithMaxListed); the verdict
	// counts them all.
	Unlisted int `json:"unlisted,omitempty"`
}

// Name is how a report names the child: its index for one of the plan's
// own children ("0"), its pointer for a descendant ("/plan/0/children/1").
func (c Child) Name() string {
	if c.Pointer != "" {
		return c.Pointer
	}
	return strconv.Itoa(c.Index)
}

// Refusals is how many violations the child has, listed or not.
func (c Child) Refusals() int { return len(c.Violations) + c.Unlisted }

// Violation is one reason a child (or the plan as a whole) is refused.
type Violation struct {
	// Rule is the ID of the check that refuses, such as "tools.allowlist"
	// (spawngate rules lists them).
	Rule string `json:"rule"`
	// Severity is the rule's: critical, high, medium or low.
	Severity string `json:"severity"`
	// Message says why, in one sentence, naming the value and the policy.
	Message string `json:"message"`
	// Path is a JSON pointer to the value refused, in the plan document,
	// such as /plan/0/paths/1 (for Hook, in the plan the spawn was
	// translated into).
	Path string `json:"path"`
	// Line and Column place the value in the plan's file, 1-based; 0 when
	// not known, and for Hook, whose HookAnswer.Reason names the agent
	// definition's lines instead.
	Line   int `json:"line,omitempty"`
	Column int `json:"column,omitempty"`
	// Policies names the policies whose settings refuse, for the checks
	// that depend on them ("operator", "plan"); nil for the checks that do
	// not (a missing tools list is refused whatever the policy says).
	Policies []string `json:"policies,omitempty"`
	// Excepted is the operator's exception that lets the child through
	// despite the violation; nil when none applies. An excepted violation
	// is listed and blocks nothing.
	Excepted *Exception `json:"excepted,omitempty"`
}

// Blocks tells whether the violation refuses: it does unless an exception
// applies.
func (v Violation) Blocks() bool { return v.Excepted == nil }

// Exception is one entry of the operator policy's exceptions list, as a
// result names it.
type Exception struct {
	// Index is the entry's place in the policy's exceptions list, from 0;
	// Pointer is the same as a JSON pointer into the policy
	// (/exceptions/0).
	Index   int    `json:"index"`
	Pointer string `json:"pointer"`
	// Rule is the rule ID the exception lets through.
	Rule string `json:"rule"`
	// Reason is why, as the operator wrote it.
	Reason string `json:"reason"`
	// Expires is the last day the exception applies, YYYY-MM-DD.
	Expires string `json:"expires"`
}

// The statuses of an exception that did not apply as written.
const (
	// ExceptionExpired: its expiry date has passed; it excepts nothing,
	// and what it would have excepted blocks.
	ExceptionExpired = "expired"
	// ExceptionUnused: it matched no violation of the plan.
	ExceptionUnused = "unused"
)

// ExceptionNote reports an exception that did not apply as written.
type ExceptionNote struct {
	// Exception is the entry the note is about.
	Exception
	// Status is ExceptionExpired or ExceptionUnused.
	Status string `json:"status"`
	// Blocks tells whether the note refuses the plan: an unused exception
	// does under WithStrictExceptions.
	Blocks bool `json:"blocks,omitempty"`
}

// resultOf is the caller's copy of a result the gate made. Nothing in it
// is shared with the gate: the gate keeps what it found for children it
// will see again, and a caller that edits its Result must not edit the
// gate's memory. It allocates a handful of blocks, not one per violation.
func resultOf(r report.Result) Result {
	out := Result{
		Source:       r.Source,
		Verdict:      Verdict(r.Verdict),
		Error:        r.Error,
		Problems:     slices.Clone(r.Problems),
		PolicyInPlan: r.PolicyInPlan,
	}
	// Count first, so that every violation, exception and policy name
	// lands in one block of its kind.
	var nv, ne, np int
	count := func(vs []report.Violation) {
		nv += len(vs)
		for _, v := range vs {
			np += len(v.Policies)
			if v.Excepted != nil {
				ne++
			}
		}
	}
	count(r.Violations)
	for _, c := range r.Children {
		count(c.Violations)
	}
	np += len(r.Policies)
	b := blocks{
		violations: make([]Violation, 0, nv),
		exceptions: make([]Exception, 0, ne),
		names:      make([]string, 0, np),
	}
	out.Policies = b.copyStrings(r.Policies)
	out.Violations = b.copyViolations(r.Violations)
	if r.Children != nil {
		out.Children = make([]Child, len(r.Children))
		for i, c := range r.Children {
			out.Children[i] = Child{Index: c.Index, Pointer: c.Pointer, Role: c.Role, Verdict: Verdict(c.Verdict), Violations: b.copyViolations(c.Violations), Unlisted: c.Unlisted}
		}
	}
	if r.Exceptions != nil {
		out.Exceptions = make([]ExceptionNote, len(r.Exceptions))
		for i, n := range r.Exceptions {
			out.Exceptions[i] = ExceptionNote{Exception: Exception(n.Exception), Status: n.Status, Blocks: n.Blocks}
		}
	}
	return out
}

// blocks hands out slices of a few preallocated blocks, each capped at its
// length so that a caller's append cannot run into its neighbour.
type blocks struct {
	violations []Violation
	exceptions []Exception
	names      []string
}

// copyStrings copies s into the names block; nil stays nil, and empty empty.
func (b *blocks) copyStrings(s []string) []string {
	if s == nil {
		return nil
	}
	at := len(b.names)
	b.names = append(b.names, s...)
	return b.names[at:len(b.names):len(b.names)]
}

// copyViolations copies vs into the violations block; nil stays nil, and
// empty empty (the JSON report writes a child's empty list as []).
func (b *blocks) copyViolations(vs []report.Violation) []Violation {
	if vs == nil {
		return nil
	}
	at := len(b.violations)
	for _, v := range vs {
		w := Violation{Rule: v.Rule, Severity: v.Severity, Message: v.Message, Path: v.Path, Line: v.Line, Column: v.Column, Policies: b.copyStrings(v.Policies)}
		if v.Excepted != nil {
			b.exceptions = append(b.exceptions, Exception(*v.Excepted))
			w.Excepted = &b.exceptions[len(b.exceptions)-1]
		}
		b.violations = append(b.violations, w)
	}
	return b.violations[at:len(b.violations):len(b.violations)]
}
