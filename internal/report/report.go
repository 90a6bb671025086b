// Package report holds the result of a gate run, independent of how it is
// shown: the model every front end fills and every renderer (package
// render) reads. The verdict, and so the exit code, is computed from the
// results alone; no renderer can change it. The package depends on no
// renderer, so the engine that fills it links none.
package report

import (
	"slices"
	"strconv"
	"strings"

	"github.com/spawngate/spawngate/internal/jsonpointer"
)

// Verdict is the outcome of a child, a plan or a whole run.
type Verdict string

const (
	// Pass: every child may be dispatched.
	Pass Verdict = "pass"
	// Block: at least one child is refused, and nothing errored.
	Block Verdict = "block"
	// NotJudged: the gate could not evaluate.
	NotJudged Verdict = "error"
)

// Report is the outcome of one run over one or more plans.
type Report struct {
	Verdict Verdict `json:"verdict"`
	// Error is why the run as a whole could not evaluate (a bad flag, an
	// invalid operator policy), or "".
	Error string `json:"error,omitempty"`
	// Problems lists every problem behind Error, one line each, when there
	// is more than one (an operator policy that breaks its schema in three
	// places); nil otherwise.
	Problems []string `json:"problems,omitempty"`
	// Note says why a run that found nothing to judge passes: only where
	// the user asked for that (spawngate agents --allow-none), never by
	// default, since nothing to check is otherwise an error. "" otherwise.
	Note    string   `json:"note,omitempty"`
	Results []Result `json:"results"`
	// Rules describes every rule a violation may cite, built-in and the
	// operator's own, by ID, for the formats that list rules apart
	// (SARIF). Front ends fill it; it is not part of the JSON report.
	Rules []Rule `json:"-"`
}

// Rule is one rule a violation may cite, as its check's METADATA
// declares it.
type Rule struct {
	ID          string
	Severity    string // critical, high, medium or low
	Title       string
	Description string
	// Custom tells an operator's own rule (--checks, a bundle) from a
	// built-in one; File is the module that declares it, as it was named.
	Custom bool
	File   string
}

// DefaultMaxListed is how many violations a report lists unless told
// otherwise. A report of millions of violations helps no one and costs
// gigabytes; the counts stay exact whatever is listed.
const DefaultMaxListed = 10000

// Result is the outcome of one plan.
type Result struct {
	Source  string  `json:"source"`
	Verdict Verdict `json:"verdict"`
	// Error is why this plan could not be evaluated, on one line as the
	// front end says it, or "".
	Error string `json:"error,omitempty"`
	// Problem is the same in parts, for renderers that show the place
	// apart from the message; nil when there is no error.
	Problem *Problem `json:"-"`
	// Problems lists every problem behind Error, one line each, when there
	// is more than one; nil otherwise.
	Problems []string `json:"problems,omitempty"`
	// Policies names the policies that applied: "operator", "plan".
	Policies []string `json:"policies,omitempty"`
	// PolicyInPlan tells that the operator policy is this plan file's own
	// policy block, which its user said is the operator's (check
	// --policy-in-plan); the block then applies once, as the operator's.
	PolicyInPlan bool    `json:"policy_in_plan,omitempty"`
	Children     []Child `json:"children"`
	// Violations are the reasons the plan as a whole is refused (too many
	// children, too large a total budget), at pointers such as /plan; nil
	// when there are none. They block the plan, not any one child.
	Violations []Violation `json:"violations,omitempty"`
	// Exceptions are the operator policy's exceptions that did not apply
	// as written: expired, or matching nothing in this plan.
	Exceptions []ExceptionNote `json:"exceptions,omitempty"`
	// Text is the document as it was read (the plan file, or the agent
	// definition), for the formats that show it with each violation at its
	// line and column (HTML). Front ends fill it only when such a format
	// is asked for; nil otherwise. It is not part of the JSON report.
	Text []byte `json:"-"`
}

// Child is the outcome of one child of a plan.
type Child struct {
	// Index is the child's place in the plan, from 0: child i of a plan is
	// /plan/i. A nested plan's descendants come after the plan's own
	// children, in pre-order, and carry their Pointer.
	Index int `json:"index"`
	// Pointer is where a descendant is in the document, such as
	// /plan/0/children/1; "" for the plan's own children.
	Pointer string  `json:"pointer,omitempty"`
	Role    string  `json:"role"`
	Verdict Verdict `json:"verdict"`
	// Violations are the reasons listed for the child, in report order.
	Violations []Violation `json:"violations"`
	// Unlisted counts the child's violations that are not listed because
	// the report reached the most it lists; the verdict counts them all.
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

// ViolationCount is how many violations the child has, listed or not.
func (c Child) ViolationCount() int { return len(c.Violations) + c.Unlisted }

// Violation is one reason a child is refused.
type Violation struct {
	Rule     string `json:"rule"`
	Severity string `json:"severity"`
	Message  string `json:"message"`
	// Path is a JSON pointer into the plan document, such as
	// /plan/0/paths/1.
	Path string `json:"path"`
	// Line and Column place the value the violation points at in its
	// file (the plan's, or an agent definition's), 1-based; 0 when not
	// known.
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

// Exception is one entry of the operator policy's exceptions, as a report
// names it.
type Exception struct {
	// Index is the entry's place in the policy's exceptions list, from 0;
	// Pointer is the same as a JSON pointer into the policy.
	Index   int    `json:"index"`
	Pointer string `json:"pointer"`
	Rule    string `json:"rule"`
	Reason  string `json:"reason"`
	Expires string `json:"expires"` // YYYY-MM-DD, the last day it applies
}

// The statuses of an exception that did not apply as written.
const (
	// Expired: its expiry date has passed; it excepts nothing, and what
	// it would have excepted blocks.
	ExceptionExpired = "expired"
	// Unused: it matched no violation of the plan.
	ExceptionUnused = "unused"
)

// ExceptionNote reports an exception that did not apply as written.
type ExceptionNote struct {
	Exception
	Status string `json:"status"`
	// Blocks tells whether the note refuses the plan: an unused exception
	// does under --strict-exceptions.
	Blocks bool `json:"blocks,omitempty"`
}

// Problem is why a plan could not be evaluated, in parts: where in the
// document, and the message as the front end says it.
type Problem struct {
	Line    int    // 1-based; 0 when not known
	Column  int    // 1-based; 0 when not known
	Pointer string // JSON pointer into the document; "" when none applies
	Msg     string
}

// Failed is the result of a plan that could not be evaluated: line is the
// whole error on one line, problem its parts.
func Failed(source, line string, problem *Problem) Result {
	return Result{Source: source, Verdict: NotJudged, Error: line, Problem: problem, Children: []Child{}}
}

// Finish settles the verdict of the run from its results: error if the run
// or any plan errored or there is nothing to report (but a Note, which the
// user asked for), else block if any plan blocked, else pass.
func (r *Report) Finish() {
	r.Verdict = Pass
	if r.Error == "" && len(r.Results) == 0 && r.Note != "" {
		return
	}
	if r.Error != "" || len(r.Results) == 0 {
		r.Verdict = NotJudged
		return
	}
	for _, res := range r.Results {
		switch res.Verdict {
		case Pass:
		case Block:
			if r.Verdict == Pass {
				r.Verdict = Block
			}
		default:
			r.Verdict = NotJudged
			return
		}
	}
}

// Counts sums up a report: plans, children, children by verdict, and
// violations, listed or not.
type Counts struct {
	Plans, Errors, Children, Passed, Blocked int
	// Violations counts the children's violations, listed or not, excepted
	// or not; Unlisted those of them not listed.
	Violations, Unlisted int
	// Excepted counts the listed violations, of children and of plans as a
	// whole, that an exception lets through: they refuse nothing.
	Excepted int
	// PlansRefused counts the plans refused as a whole (see
	// Result.PlanRefusals), whatever their children's verdicts.
	PlansRefused int
}

// Count sums up the report.
func (r *Report) Count() Counts {
	var c Counts
	for _, res := range r.Results {
		c.Plans++
		if res.Verdict == NotJudged {
			c.Errors++
			continue
		}
		if res.PlanRefusals() > 0 {
			c.PlansRefused++
		}
		c.Excepted += Excepted(res.Violations)
		for _, ch := range res.Children {
			c.Children++
			c.Violations += ch.ViolationCount()
			c.Unlisted += ch.Unlisted
			c.Excepted += Excepted(ch.Violations)
			if ch.Verdict == Pass {
				c.Passed++
			} else {
				c.Blocked++
			}
		}
	}
	return c
}

// PlanRefusals is how many reasons refuse the plan as a whole rather than
// any one child: its plan-level violations that no exception lets through,
// and its exception notes that block.
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

// Excepted counts the violations an exception lets through.
func Excepted(vs []Violation) int {
	n := 0
	for _, v := range vs {
		if !v.Blocks() {
			n++
		}
	}
	return n
}

// SortViolations puts violations in report order: by path (numbers by
// value), then rule, then message. Violations equal in all three are equal
// in everything, so the order is the same whatever the input order.
func SortViolations(vs []Violation) {
	slices.SortFunc(vs, func(a, b Violation) int {
		if c := jsonpointer.Compare(a.Path, b.Path); c != 0 {
			return c
		}
		if c := strings.Compare(a.Rule, b.Rule); c != 0 {
			return c
		}
		return strings.Compare(a.Message, b.Message)
	})
}

// Trim keeps the report's listing within limit violations in all, in report
// order: the first violations stay listed, and each child's later ones are
// counted as unlisted. Verdicts and counts do not change.
func (r *Report) Trim(limit int) {
	left := limit
	for i := range r.Results {
		left = r.Results[i].Trim(left)
	}
}

// Trim keeps the result's listing within limit violations and returns how
// many more may be listed after it.
func (r *Result) Trim(limit int) int {
	left := max(limit, 0)
	for j := range r.Children {
		c := &r.Children[j]
		if len(c.Violations) > left {
			c.Unlisted += len(c.Violations) - left
			c.Violations = c.Violations[:left:left]
		}
		left -= len(c.Violations)
	}
	return left
}
