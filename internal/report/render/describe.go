package render

import (
	"github.com/spawngate/spawngate/internal/report"

	"fmt"
	"strconv"
)

// The phrases below are shared by every format that speaks to a person, so
// a finding reads the same in a terminal, a code scanning alert, a test
// report and an annotation. None of them is escaped: each format escapes
// for where it writes.

// position says where a value is in its file: "line 4, column 5", "line
// 4", or "" when the line is not known.
func position(line, column int) string {
	switch {
	case line <= 0:
		return ""
	case column <= 0:
		return "line " + strconv.Itoa(line)
	}
	return fmt.Sprintf("line %d, column %d", line, column)
}

// subject names a child so that a finding reads alone: "child 0
// (home-cleaner)". A role that is not plain is quoted (see showRole).
func subject(c report.Child) string {
	if c.Role == "" {
		return "child " + c.Name()
	}
	return fmt.Sprintf("child %s (%s)", c.Name(), showRole(c.Role))
}

// planSubject names the plan as a whole in the same place.
const planSubject = "the plan"

// finding is a violation's message with whom and which value it concerns:
// "child 0 (home-cleaner) at /plan/0/paths/0: path ...".
func finding(who string, v report.Violation) string {
	return who + " at " + v.Path + ": " + v.Message
}

// exceptedBy says which exception lets a violation through, until when,
// and why: "excepted by exception 0 until 2027-01-31: one-off migration".
func exceptedBy(e report.Exception) string {
	s := "excepted by exception " + strconv.Itoa(e.Index)
	if e.Expires != "" {
		s += " until " + e.Expires
	}
	if e.Reason != "" {
		s += ": " + e.Reason
	}
	return s
}

// noteText says what became of an exception that did not apply as
// written: "exception 2 (tools.write, until 2025-12-31): expired, it
// excepts nothing".
func noteText(n report.ExceptionNote) string {
	s := "exception " + strconv.Itoa(n.Index) + " (" + n.Rule
	if n.Expires != "" {
		s += ", until " + n.Expires
	}
	s += "): "
	switch n.Status {
	case report.ExceptionExpired:
		s += "expired, it excepts nothing"
	case report.ExceptionUnused:
		s += "unused, it matched nothing in this plan"
	default:
		s += n.Status
	}
	if n.Blocks {
		s += "; this refuses the plan"
	}
	return s
}

// unlistedText says how many of a child's violations a report does not
// list.
func unlistedText(c report.Child) string {
	more := "more "
	if len(c.Violations) == 0 {
		more = ""
	}
	return fmt.Sprintf("%s: %d %s, not listed", subject(c), c.Unlisted, more+plural(c.Unlisted, "violation"))
}

func plural(n int, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}
