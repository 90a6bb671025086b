package render

import (
	"bytes"
	"unicode/utf8"
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
}

func indexLines(data []byte) textLines {
	starts := []int{0}
	for i, c := range data {
		if c == '\n' {
			starts = append(starts, i+1)
		}
	}
	return textLines{data, starts}
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
	if line < 1 || line > l.count() || column < 1 {
		return 0, 0, false
	}
	text := l.text(line)
	start = 0
	for c := 1; c < column; c++ {
		if start >= len(text) {
			return 0, 0, false
		}
		_, size := utf8.DecodeRune(text[start:])
		start += size
	}
	if start >= len(text) {
		return 0, 0, false
	}
	switch text[start] {
	case ' ', '\t', '#':
		return 0, 0, false // no value starts so: the place is not a value's
	}
	end = tokenEnd(text, start)
	return start, end, end > start
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
