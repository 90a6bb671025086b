package document

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Error is a document the gate cannot evaluate. Its message is one line that
// names the source and, where they are known, the line and column and the
// JSON pointer of the problem.
type Error struct {
	Source  string // file name as given, or <stdin>
	Line    int    // 1-based; 0 when not known
	Column  int    // 1-based; 0 when not known
	Pointer string // JSON pointer into the document; "" when none applies
	Msg     string
	// Limit names the limit the document went over, as Limits names it in
	// kebab case ("max-values" for MaxValues), or "" when it broke no
	// limit. The front end says how to raise it.
	Limit string
	// More are the document's other problems, each as an Error of its own
	// (a policy that breaks its schema in three places): Error counts them
	// on its one line, and a front end that can may list each.
	More []*Error
}

func (e *Error) Error() string {
	var b strings.Builder
	if e.Source == "" {
		b.WriteString(": ") // the place of a document without a name
	}
	b.WriteString(Where(e.Source, e.Line, e.Column, e.Pointer))
	b.WriteString(OneLine(e.Msg))
	if e.Limit != "" {
		b.WriteString(" (limit ")
		b.WriteString(e.Limit)
		b.WriteString(")")
	}
	b.WriteString(MoreProblems(len(e.More)))
	return b.String()
}

// Where is how every error names its place, ahead of its message:
// "plan.json:3:5: /plan/0: ". The line and column are 1-based and left out
// when 0 (a column without its line too); the source and the pointer are
// left out when "", and the pointer is shown as ShowPointer shows it.
func Where(source string, line, column int, pointer string) string {
	var b strings.Builder
	if source != "" {
		b.WriteString(source)
		if line > 0 {
			b.WriteString(":" + strconv.Itoa(line))
			if column > 0 {
				b.WriteString(":" + strconv.Itoa(column))
			}
		}
		b.WriteString(": ")
	}
	if pointer != "" {
		b.WriteString(ShowPointer(pointer))
		b.WriteString(": ")
	}
	return b.String()
}

// MoreProblems is how a one-line error counts the problems it does not
// show: " (and 2 more problems)", "" for none.
func MoreProblems(n int) string {
	switch n {
	case 0:
		return ""
	case 1:
		return " (and 1 more problem)"
	}
	return fmt.Sprintf(" (and %d more problems)", n)
}

// OneLine keeps a message on one line whatever a parser, a document or a
// panic put into it: line breaks, and the spaces around them, become one
// space.
func OneLine(s string) string {
	if !strings.ContainsAny(s, "\r\n") {
		return s
	}
	return strings.Join(strings.Fields(strings.ReplaceAll(s, "\r", " ")), " ")
}

// ShowPointer shows a pointer as it is, unless the document's keys make it
// long or put a character into it that could break or forge the line: then
// it is quoted and cut short.
func ShowPointer(p string) string {
	if len(p) > 200 || !utf8.ValidString(p) || strings.IndexFunc(p, func(r rune) bool { return !strconv.IsPrint(r) }) >= 0 {
		return Quote(p)
	}
	return p
}

// Quote shows a document's text in a message: quoted, escaped, and cut
// short when long, so a hostile key cannot flood or forge a report line.
func Quote(s string) string {
	const max = 80
	if len(s) > max {
		cut := max
		for cut > 0 && s[cut]&0xC0 == 0x80 { // do not split a UTF-8 sequence
			cut--
		}
		return fmt.Sprintf("%q...", s[:cut])
	}
	return fmt.Sprintf("%q", s)
}
