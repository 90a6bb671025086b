// Package report holds the result of a gate run, independent of how it is
// shown, and the renderers that show it. The verdict, and so the exit code,
// is computed from the results alone; no renderer can change it.
package report

import (
	"fmt"
	"io"
	"sort"
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
	// Error: the gate could not evaluate.
	Error Verdict = "error"
)

// Exit codes of spawngate, one per verdict.
const (
	ExitPass  = 0
	ExitBlock = 1
	ExitError = 2
)

// ExitCode is the process exit code for the verdict. Anything that is not
// a known verdict is an error: it never exits 0.
func (v Verdict) ExitCode() int {
	switch v {
	case Pass:
		return ExitPass
	case Block:
		return ExitBlock
	}
	return ExitError
}

// Report is the outcome of one run over one or more plans.
type Report struct {
	Verdict Verdict `json:"verdict"`
	// Error is why the run as a whole could not evaluate (a bad flag, an
	// invalid operator policy), or "".
	Error   string   `json:"error,omitempty"`
	Results []Result `json:"results"`
}

// Result is the outcome of one plan.
type Result struct {
	Source  string  `json:"source"`
	Verdict Verdict `json:"verdict"`
	// Error is why this plan could not be evaluated, or "".
	Error string `json:"error,omitempty"`
	// Policies names the policies that applied: "operator", "plan".
	Policies []string `json:"policies,omitempty"`
	Children []Child  `json:"children"`
}

// Child is the outcome of one child of a plan.
type Child struct {
	Index      int         `json:"index"`
	Role       string      `json:"role"`
	Verdict    Verdict     `json:"verdict"`
	Violations []Violation `json:"violations"`
}

// Violation is one reason a child is refused.
type Violation struct {
	Rule     string `json:"rule"`
	Severity string `json:"severity"`
	Message  string `json:"message"`
	// Path is a JSON pointer into the plan document, such as
	// /plan/0/paths/1.
	Path string `json:"path"`
}

// Failed is the result of a plan that could not be evaluated.
func Failed(source string, err error) Result {
	return Result{Source: source, Verdict: Error, Error: err.Error(), Children: []Child{}}
}

// Finish settles the verdict of the run from its results: error if the run
// or any plan errored or there is nothing to report, else block if any
// plan blocked, else pass.
func (r *Report) Finish() {
	r.Verdict = Pass
	if r.Error != "" || len(r.Results) == 0 {
		r.Verdict = Error
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
			r.Verdict = Error
			return
		}
	}
}

// Renderer writes a report in one format.
type Renderer interface {
	Render(w io.Writer, r *Report) error
}

// Format is one output format of spawngate check.
type Format struct {
	Name     string
	Help     string
	Renderer Renderer
}

// Formats lists every output format; the first is the default. It feeds the
// --format flag and its help.
var Formats = []Format{
	{Name: "text", Help: "a report for a person: each child, its verdict and every reason", Renderer: Text{}},
	{Name: "json", Help: "one JSON document on stdout, also on errors", Renderer: JSON{}},
}

// FormatNamed finds a format by name.
func FormatNamed(name string) (Format, error) {
	names := make([]string, len(Formats))
	for i, f := range Formats {
		if f.Name == name {
			return f, nil
		}
		names[i] = f.Name
	}
	return Format{}, fmt.Errorf("not a format: choose %s", strings.Join(names, " or "))
}

// Counts sums up a report: plans, children, and children by verdict.
type Counts struct {
	Plans, Errors, Children, Passed, Blocked int
}

// Count sums up the report.
func (r *Report) Count() Counts {
	var c Counts
	for _, res := range r.Results {
		c.Plans++
		if res.Verdict == Error {
			c.Errors++
			continue
		}
		for _, ch := range res.Children {
			c.Children++
			if ch.Verdict == Pass {
				c.Passed++
			} else {
				c.Blocked++
			}
		}
	}
	return c
}

// SortViolations puts violations in report order: by path (numbers by
// value), then rule.
func SortViolations(vs []Violation) {
	sort.SliceStable(vs, func(i, j int) bool {
		if c := jsonpointer.Compare(vs[i].Path, vs[j].Path); c != 0 {
			return c < 0
		}
		if vs[i].Rule != vs[j].Rule {
			return vs[i].Rule < vs[j].Rule
		}
		return vs[i].Message < vs[j].Message
	})
}
