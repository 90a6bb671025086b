package render

import (
	"github.com/spawngate/spawngate/internal/report"

	"io"
	"strconv"
	"unicode/utf8"
)

// JSON renders the report as one JSON document: the fields of Report,
// indented by two spaces, with HTML characters left as they are. The bytes
// are exactly what encoding/json's Encoder (SetEscapeHTML(false),
// SetIndent("", "  ")) writes for Report; json_test.go holds it to that.
// It is written by hand because it is on the hot path: at 100,000 children
// encoding/json took a quarter of the whole check.
type JSON struct{}

// Render writes the report.
func (JSON) Render(w io.Writer, r *report.Report) error {
	b := make([]byte, 0, estimate(r))
	b = append(b, "{\n  \"verdict\": "...)
	b = appendString(b, string(r.Verdict))
	if r.Error != "" {
		b = append(b, ",\n  \"error\": "...)
		b = appendString(b, r.Error)
	}
	if len(r.Problems) > 0 {
		b = append(b, ",\n  \"problems\": "...)
		b = appendList(b, r.Problems, "  ", appendStringItem)
	}
	if r.Note != "" {
		b = append(b, ",\n  \"note\": "...)
		b = appendString(b, r.Note)
	}
	b = append(b, ",\n  \"results\": "...)
	b = appendList(b, r.Results, "  ", appendResult)
	b = append(b, "\n}\n"...)
	_, err := w.Write(b)
	return err
}

// estimate sizes the output buffer, so a large report is not copied as it
// grows.
func estimate(r *report.Report) int {
	n := 256
	for _, res := range r.Results {
		n += 256 + len(res.Error) + 80*len(res.Children) + 160*len(res.Exceptions) + violationsSize(res.Violations)
		for _, c := range res.Children {
			n += len(c.Role) + violationsSize(c.Violations)
		}
	}
	return n
}

func violationsSize(vs []report.Violation) int {
	n := 0
	for _, v := range vs {
		n += 120 + len(v.Message) + len(v.Path)
		if v.Excepted != nil {
			n += 160 + len(v.Excepted.Reason)
		}
	}
	return n
}

// appendList writes a JSON array the way encoding/json indents it: null for
// a nil slice, [] for an empty one.
func appendList[T any](b []byte, list []T, indent string, each func([]byte, T, string) []byte) []byte {
	switch {
	case list == nil:
		return append(b, "null"...)
	case len(list) == 0:
		return append(b, "[]"...)
	}
	inner := indent + "  "
	b = append(b, '[')
	for i, x := range list {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, '\n')
		b = append(b, inner...)
		b = each(b, x, inner)
	}
	b = append(b, '\n')
	b = append(b, indent...)
	return append(b, ']')
}

func appendResult(b []byte, r report.Result, indent string) []byte {
	in := "\n" + indent + "  "
	b = append(b, '{')
	b = appendField(b, in, "source", r.Source, false)
	b = appendField(b, in, "verdict", string(r.Verdict), true)
	if r.Error != "" {
		b = appendField(b, in, "error", r.Error, true)
	}
	if len(r.Problems) > 0 {
		b = appendKey(b, in, "problems", true)
		b = appendList(b, r.Problems, indent+"  ", appendStringItem)
	}
	if len(r.Policies) > 0 {
		b = appendKey(b, in, "policies", true)
		b = appendList(b, r.Policies, indent+"  ", appendStringItem)
	}
	if r.PolicyInPlan {
		b = appendKey(b, in, "policy_in_plan", true)
		b = append(b, "true"...)
	}
	b = appendKey(b, in, "children", true)
	b = appendList(b, r.Children, indent+"  ", appendChild)
	if len(r.Violations) > 0 {
		b = appendKey(b, in, "violations", true)
		b = appendList(b, r.Violations, indent+"  ", appendViolation)
	}
	if len(r.Exceptions) > 0 {
		b = appendKey(b, in, "exceptions", true)
		b = appendList(b, r.Exceptions, indent+"  ", appendNote)
	}
	b = append(b, '\n')
	b = append(b, indent...)
	return append(b, '}')
}

func appendChild(b []byte, c report.Child, indent string) []byte {
	in := "\n" + indent + "  "
	b = append(b, '{')
	b = appendInt(b, in, "index", c.Index, false)
	if c.Pointer != "" {
		b = appendField(b, in, "pointer", c.Pointer, true)
	}
	b = appendField(b, in, "role", c.Role, true)
	b = appendField(b, in, "verdict", string(c.Verdict), true)
	b = appendKey(b, in, "violations", true)
	b = appendList(b, c.Violations, indent+"  ", appendViolation)
	if c.Unlisted != 0 {
		b = appendInt(b, in, "unlisted", c.Unlisted, true)
	}
	b = append(b, '\n')
	b = append(b, indent...)
	return append(b, '}')
}

func appendViolation(b []byte, v report.Violation, indent string) []byte {
	in := "\n" + indent + "  "
	b = append(b, '{')
	b = appendField(b, in, "rule", v.Rule, false)
	b = appendField(b, in, "severity", v.Severity, true)
	b = appendField(b, in, "message", v.Message, true)
	b = appendField(b, in, "path", v.Path, true)
	if v.Line != 0 {
		b = appendInt(b, in, "line", v.Line, true)
	}
	if v.Column != 0 {
		b = appendInt(b, in, "column", v.Column, true)
	}
	if len(v.Policies) > 0 {
		b = appendKey(b, in, "policies", true)
		b = appendList(b, v.Policies, indent+"  ", appendStringItem)
	}
	if v.Excepted != nil {
		b = appendKey(b, in, "excepted", true)
		b = append(b, `{`...)
		b = appendException(b, *v.Excepted, indent+"  ")
		b = append(b, '\n')
		b = append(b, indent...)
		b = append(b, "  }"...)
	}
	b = append(b, '\n')
	b = append(b, indent...)
	return append(b, '}')
}

// appendException writes the fields of an exception, without braces, each
// on its own line at indent plus two spaces.
func appendException(b []byte, e report.Exception, indent string) []byte {
	in := "\n" + indent + "  "
	b = appendInt(b, in, "index", e.Index, false)
	b = appendField(b, in, "pointer", e.Pointer, true)
	b = appendField(b, in, "rule", e.Rule, true)
	b = appendField(b, in, "reason", e.Reason, true)
	return appendField(b, in, "expires", e.Expires, true)
}

func appendNote(b []byte, n report.ExceptionNote, indent string) []byte {
	in := "\n" + indent + "  "
	b = append(b, '{')
	b = appendException(b, n.Exception, indent)
	b = appendField(b, in, "status", n.Status, true)
	if n.Blocks {
		b = appendKey(b, in, "blocks", true)
		b = append(b, `true`...)
	}
	b = append(b, '\n')
	b = append(b, indent...)
	return append(b, '}')
}

// appendKey writes a member's key on a line of its own at in, after a
// comma when a member comes before it.
func appendKey(b []byte, in, name string, comma bool) []byte {
	if comma {
		b = append(b, ',')
	}
	b = append(b, in...)
	b = append(b, '"')
	b = append(b, name...)
	return append(b, `": `...)
}

// appendStringItem writes one string of a list.
func appendStringItem(b []byte, s, _ string) []byte { return appendString(b, s) }

func appendInt(b []byte, in, name string, value int, comma bool) []byte {
	return strconv.AppendInt(appendKey(b, in, name, comma), int64(value), 10)
}

func appendField(b []byte, in, name, value string, comma bool) []byte {
	return appendString(appendKey(b, in, name, comma), value)
}

const hex = "0123456789abcdef"

// appendString writes s as a JSON string the way encoding/json does with
// HTML escaping off: \" \\ \b \f \n \r \t, other control characters as
// \u00XX, U+2028 and U+2029 escaped, invalid UTF-8 as \ufffd.
func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hex[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
