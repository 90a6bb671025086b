package render

import (
	"github.com/spawngate/spawngate/internal/report"

	"bufio"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
)

// Text renders the report for a person: each plan with its verdict, each
// child with its verdict and every reason, and a closing verdict line.
// Everything that came from a document is escaped, so a plan cannot forge
// report lines or send control sequences to a terminal.
type Text struct{}

// Render writes the report.
func (Text) Render(w io.Writer, r *report.Report) error {
	b := bufio.NewWriter(w)
	for i, res := range r.Results {
		if i > 0 {
			b.WriteByte('\n')
		}
		writeResult(b, res)
	}
	if len(r.Results) > 0 {
		b.WriteByte('\n')
	}
	fmt.Fprintf(b, "verdict: %s\n", closing(r))
	return b.Flush()
}

func writeResult(b *bufio.Writer, res report.Result) {
	src := report.Clean(res.Source)
	if res.Verdict == report.NotJudged || res.Error != "" {
		fmt.Fprintf(b, "%s: ERROR, could not evaluate\n  %s\n", src, report.Clean(problemDetail(res)))
		return
	}
	blocked := 0
	for _, ch := range res.Children {
		if ch.Verdict != report.Pass {
			blocked++
		}
	}
	switch {
	case res.Verdict == report.Pass:
		fmt.Fprintf(b, "%s: PASS, %s may be dispatched (%s)\n", src, allChildren(len(res.Children)), judgedBy(res))
	case res.PlanRefusals() > 0:
		fmt.Fprintf(b, "%s: BLOCK, the plan is refused as a whole; %d of %s refused (%s)\n", src, blocked, children(len(res.Children)), judgedBy(res))
	default:
		fmt.Fprintf(b, "%s: BLOCK, %d of %s refused (%s)\n", src, blocked, children(len(res.Children)), judgedBy(res))
	}
	if len(res.Violations) > 0 {
		verdict := "PASS"
		if report.Excepted(res.Violations) < len(res.Violations) {
			verdict = "BLOCK"
		}
		fmt.Fprintf(b, "  plan: %s%s\n", verdict, exceptedSuffix(res.Violations))
		writeViolations(b, res.Violations)
	}
	for _, ch := range res.Children {
		role := ""
		if ch.Role != "" {
			role = " " + showRole(ch.Role)
		}
		switch {
		case ch.Verdict == report.Pass:
			fmt.Fprintf(b, "  [%s]%s: PASS%s\n", ch.Name(), role, exceptedSuffix(ch.Violations))
		case len(ch.Violations) == 0:
			fmt.Fprintf(b, "  [%s]%s: BLOCK, %s not listed\n", ch.Name(), role, violations(ch.Unlisted))
			continue
		default:
			fmt.Fprintf(b, "  [%s]%s: BLOCK%s\n", ch.Name(), role, exceptedSuffix(ch.Violations))
		}
		writeViolations(b, ch.Violations)
		if ch.Unlisted > 0 {
			fmt.Fprintf(b, "      and %d more, not listed\n", ch.Unlisted)
		}
	}
	for _, n := range res.Exceptions {
		fmt.Fprintf(b, "  %s\n", report.Clean(noteText(n)))
	}
}

// writeViolations lists violations in columns: rule, pointer, where in the
// file, and why; an excepted one has a second line, under its reason, that
// says which exception lets it through.
func writeViolations(b *bufio.Writer, vs []report.Violation) {
	ruleWidth, pathWidth := 0, 0
	for _, v := range vs {
		ruleWidth = max(ruleWidth, len(report.Clean(v.Rule)))
		pathWidth = max(pathWidth, len(report.Clean(v.Path)))
	}
	for _, v := range vs {
		at := ""
		if p := position(v.Line, v.Column); p != "" {
			at = p + ": "
		}
		fmt.Fprintf(b, "      %-*s  %-*s  %s%s\n", ruleWidth, report.Clean(v.Rule), pathWidth, report.Clean(v.Path), at, report.Clean(v.Message))
		if v.Excepted != nil {
			fmt.Fprintf(b, "      %*s  %*s  %s\n", ruleWidth, "", pathWidth, "", report.Clean(exceptedBy(*v.Excepted)))
		}
	}
}

// exceptedSuffix says how many of a child's or a plan's listed violations
// are excepted, after its verdict: ", 1 violation excepted", or "".
func exceptedSuffix(vs []report.Violation) string {
	if n := report.Excepted(vs); n > 0 {
		return ", " + violations(n) + " excepted"
	}
	return ""
}

// problemDetail says why a plan could not be evaluated without the source,
// which the heading above it already names: "line 3, column 5: /plan/0:
// msg".
func problemDetail(res report.Result) string {
	p := res.Problem
	if p == nil {
		return res.Error
	}
	var b strings.Builder
	if p.Line > 0 {
		fmt.Fprintf(&b, "line %d", p.Line)
		if p.Column > 0 {
			fmt.Fprintf(&b, ", column %d", p.Column)
		}
		b.WriteString(": ")
	}
	if p.Pointer != "" {
		b.WriteString(p.Pointer)
		b.WriteString(": ")
	}
	b.WriteString(p.Msg)
	return b.String()
}

func closing(r *report.Report) string {
	c := r.Count()
	switch r.Verdict {
	case report.Pass:
		if c.Plans == 0 && r.Note != "" {
			return "PASS, nothing judged: " + report.Clean(r.Note)
		}
		line := fmt.Sprintf("PASS, %s of %s may be dispatched", allChildren(c.Children), plans(c.Plans))
		if c.Excepted > 0 {
			line += fmt.Sprintf(", %s excepted", violations(c.Excepted))
		}
		return line
	case report.Block:
		line := fmt.Sprintf("BLOCK, %d of %s refused in %s", c.Blocked, children(c.Children), plans(c.Plans))
		if c.PlansRefused > 0 {
			line += fmt.Sprintf(", %s refused as a whole", plans(c.PlansRefused))
		}
		if c.Excepted > 0 {
			line += fmt.Sprintf(", %s excepted", violations(c.Excepted))
		}
		if c.Unlisted > 0 {
			line += fmt.Sprintf(" (%d of %s listed)", c.Violations-c.Unlisted, violations(c.Violations))
		}
		return line
	}
	if r.Error != "" {
		return "ERROR, " + report.Clean(r.Error)
	}
	switch c.Plans {
	case 0:
		return "ERROR, nothing was checked"
	case 1:
		return "ERROR, the plan could not be evaluated"
	}
	return fmt.Sprintf("ERROR, %d of %s could not be evaluated", c.Errors, plans(c.Plans))
}

func judgedBy(res report.Result) string {
	if res.PolicyInPlan {
		// The operator's policy is the plan file's block, and applied once.
		return "judged by the plan file's own policy, taken as the operator's"
	}
	policies := res.Policies
	switch len(policies) {
	case 0:
		return "no policy"
	case 1:
		return "judged by the " + policies[0] + " policy"
	}
	return "judged by the " + strings.Join(policies, " and ") + " policies"
}

func children(n int) string {
	if n == 1 {
		return "1 child"
	}
	return fmt.Sprintf("%d children", n)
}

func allChildren(n int) string {
	switch n {
	case 1:
		return "the only child"
	case 2:
		return "both children"
	}
	return fmt.Sprintf("all %d children", n)
}

func violations(n int) string {
	if n == 1 {
		return "1 violation"
	}
	return fmt.Sprintf("%d violations", n)
}

func plans(n int) string {
	if n == 1 {
		return "1 plan"
	}
	return fmt.Sprintf("%d plans", n)
}

var plainRole = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9 _./@-]*$`)

// showRole leaves a plain role as it is and quotes any other, so a role
// such as "x: PASS" cannot pass for report text.
func showRole(role string) string {
	if plainRole.MatchString(role) && !strings.HasSuffix(role, " ") {
		return role
	}
	return strconv.Quote(role)
}
