package render

import (
	"bytes"
	"strings"
	"unicode/utf8"

	"gopkg.in/yaml.v3"
)

// The HTML report marks each refused value in the plan's own text. A
// violation places its value by line and column only (1-based, the column
// counted in characters, as every message counts it), so the mark's end is
// found here, from the text alone, and must never claim more than the
// value's token: a quoted string to its closing quote, anything else to
// the end of the plain scalar.

// textLines indexes a document's lines: where each starts, in bytes. A line
// ends at its "\n", and a "\r" before that is part of the line ending, not
// of its text.
type textLines struct {
	data   []byte
	starts []int
	// plain holds each plain scalar written on one line, by its line and
	// column, as YAML reads the document (a JSON document is YAML too):
	// the only way to tell where "a, b" ends, which is one value in a
	// block and two in a flow list. nil when the text does not parse.
	plain map[[2]int]string
}

func indexLines(data []byte) textLines {
	starts := []int{0}
	for i, c := range data {
		if c == '\n' {
			starts = append(starts, i+1)
		}
	}
	return textLines{data, starts, plainScalars(data)}
}

// maxMarkedYAML is the largest text read as YAML for its marks: the
// gate's own default limit on a YAML document.
const maxMarkedYAML = 4 << 20

// plainScalars reads the document's plain scalars that are written on one
// line. The text was read by the gate's own strict reader already; this
// is yaml.v3 once more, for the marks alone, and a text it cannot read
// leaves the marks to tokenEnd.
func plainScalars(data []byte) map[[2]int]string {
	if len(data) > maxMarkedYAML {
		return nil // YAML costs many times its size to read: the page marks by token
	}
	var root yaml.Node
	if yaml.Unmarshal(data, &root) != nil {
		return nil
	}
	out := map[[2]int]string{}
	var walk func(n *yaml.Node, depth int)
	walk = func(n *yaml.Node, depth int) {
		if depth > 10000 {
			return
		}
		if n.Kind == yaml.ScalarNode && n.Style == 0 && n.Value != "" && !strings.ContainsAny(n.Value, "\r\n") {
			out[[2]int{n.Line, n.Column}] = n.Value
		}
		for _, c := range n.Content {
			walk(c, depth+1)
		}
	}
	walk(&root, 0)
	return out
}

// count is how many lines the document has; a last line that is empty (a
// document that ends with a line break) is not one.
func (l textLines) count() int {
	n := len(l.starts)
	if n > 1 && l.starts[n-1] == len(l.data) {
		n--
	}
	return n
}

// text is line n's bytes (1-based), without its line ending.
func (l textLines) text(n int) []byte {
	start := l.starts[n-1]
	end := len(l.data)
	if n < len(l.starts) {
		end = l.starts[n] - 1
	}
	line := l.data[start:end]
	return bytes.TrimSuffix(line, []byte{'\r'})
}

// span is where the value at (line, column) is written in line's text:
// bytes [start, end) of that line. ok is false when the place is not in
// the text (a line or column past its end, a column of 0) or at no
// value's start (a blank, a separator, a comment).
func (l textLines) span(line, column int) (start, end int, ok bool) {
	start, ok = l.offset(line, column)
	if !ok {
		return 0, 0, false
	}
	text := l.text(line)
	switch text[start] {
	case ' ', '\t', '#':
		return 0, 0, false // no value starts so: the place is not a value's
	}
	if v, ok := l.plain[[2]int{line, column}]; ok && bytes.HasPrefix(text[start:], []byte(v)) {
		return start, start + len(v), true
	}
	end = tokenEnd(text, start)
	return start, end, end > start
}

// offset is where the character at (line, column) starts in line's text,
// in bytes; ok is false when the place is not in the text.
func (l textLines) offset(line, column int) (start int, ok bool) {
	if line < 1 || line > l.count() || column < 1 {
		return 0, false
	}
	text := l.text(line)
	for c := 1; c < column; c++ {
		if start >= len(text) {
			return 0, false
		}
		_, size := utf8.DecodeRune(text[start:])
		start += size
	}
	return start, start < len(text)
}

// point is the one character at (line, column): a problem's place, which
// may be where no value starts (a tab where indentation goes).
func (l textLines) point(line, column int) (start, end int, ok bool) {
	start, ok = l.offset(line, column)
	if !ok {
		return 0, 0, false
	}
	_, size := utf8.DecodeRune(l.text(line)[start:])
	return start, start + size, true
}

// lineSpan is a line's text without its indentation and trailing blanks:
// what a violation that knows its line but not its column marks (an agent
// definition's findings are placed so).
func (l textLines) lineSpan(line int) (start, end int, ok bool) {
	if line < 1 || line > l.count() {
		return 0, 0, false
	}
	text := l.text(line)
	end = len(bytes.TrimRight(text, " \t"))
	start = len(text) - len(bytes.TrimLeft(text, " \t"))
	return start, end, end > start
}

// tokenEnd is where the token that starts at text[start] ends on its line,
// exclusive. A double-quoted string (JSON, or YAML) ends after its closing
// quote, past backslash escapes; a single-quoted one (YAML) after its
// closing quote, past doubled quotes; a string that does not close on the
// line runs to the line's end. The opening of a mapping or a list is the
// one bracket. A plain scalar ends before ',' ']' '}', before a '#' that
// follows a blank (a comment), or at the line's end, trailing blanks left
// out.
func tokenEnd(text []byte, start int) int {
	switch text[start] {
	case '"':
		for i := start + 1; i < len(text); i++ {
			switch text[i] {
			case '\\':
				i++ // the escaped byte; a multi-byte character's others are never a quote
			case '"':
				return i + 1
			}
		}
		return len(text)
	case '\'':
		for i := start + 1; i < len(text); i++ {
			if text[i] != '\'' {
				continue
			}
			if i+1 < len(text) && text[i+1] == '\'' {
				i++
				continue
			}
			return i + 1
		}
		return len(text)
	case '{', '[':
		return start + 1
	}
	end := len(text)
scan:
	for i := start; i < len(text); i++ {
		switch c := text[i]; {
		case c == ',' || c == ']' || c == '}':
			end = i
			break scan
		case c == '#' && i > start && (text[i-1] == ' ' || text[i-1] == '\t'):
			end = i
			break scan
		}
	}
	for end > start && (text[end-1] == ' ' || text[end-1] == '\t') {
		end--
	}
	return end
}
