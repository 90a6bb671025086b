package document

import (
	"bytes"
	"strconv"
	"unicode"
	"unicode/utf8"
)

// yaml.v3 knows where its scanner stopped but says only "line N", and
// nothing at all for the first line (or for the line of a quoted string's
// start, when that is the first). markScannerError finds the character
// itself, by asking yaml.v3 again about prefixes of the document.
//
// The scanner reads left to right and looks at most a character or two
// ahead, so on a prefix that ends just past a character it does what it
// does on the whole document up to that character. For a problem the
// scanner raises at one character of a kind (an '@' where a token should
// start, a ':' that is a value indicator), take the characters of that kind
// in order: a prefix that ends just past one that is not the problem parses
// without that problem, one that ends past the problem fails with it. The
// first candidate whose prefix fails is the problem, found by a binary
// search in a few parses. A candidate is only one the whole document could
// fail at: a ':' followed by a blank, a '\' followed by what is no escape,
// so the end of the prefix never changes how the candidate reads.
//
// What cannot be found this way keeps the line yaml.v3 gave, or none.

// scannerProblem is how one of yaml.v3's scanner problems is found.
type scannerProblem struct {
	// candidate tells whether the character at i could be the problem.
	candidate func(data []byte, i int) bool
	// past is how many characters past the candidate a prefix must hold
	// for the scanner to read the candidate as it reads it in the whole
	// document.
	past int
	// inContext: yaml.v3 names the line of the construct that holds the
	// problem (a quoted or plain scalar's start) unless that is the first
	// line, and the problem's own line only then.
	inContext bool
}

var scannerProblems = map[string]scannerProblem{
	"found character that cannot start any token":                  {candidate: cannotStartToken, past: 1},
	"found a tab character that violates indentation":              {candidate: isByte('\t'), past: 1, inContext: true},
	"found a tab character where an indentation space is expected": {candidate: isByte('\t'), past: 1, inContext: true},
	"mapping values are not allowed in this context":               {candidate: indicator(':'), past: 2},
	"block sequence entries are not allowed in this context":       {candidate: indicator('-'), past: 2},
	"mapping keys are not allowed in this context":                 {candidate: indicator('?'), past: 2},
	"found unknown escape character":                               {candidate: unknownEscape, past: 2, inContext: true},
}

// cannotStartToken: the characters yaml.v3 refuses where a token starts.
// A '%' starts a directive at the start of a line, which is refused before
// parsing.
func cannotStartToken(data []byte, i int) bool {
	switch data[i] {
	case '@', '`', '\t', '%':
		return true
	}
	return false
}

func isByte(b byte) func([]byte, int) bool {
	return func(data []byte, i int) bool { return data[i] == b }
}

// indicator: c followed by a blank, a line break or the end, which is how
// the scanner tells the indicator from text in a block.
func indicator(c byte) func([]byte, int) bool {
	return func(data []byte, i int) bool {
		return data[i] == c && (i+1 == len(data) || bytes.IndexByte([]byte(" \t\r\n"), data[i+1]) >= 0)
	}
}

// unknownEscape: a '\' followed by what no double-quoted escape starts
// with, or by nothing.
func unknownEscape(data []byte, i int) bool {
	if data[i] != '\\' {
		return false
	}
	if i+1 == len(data) {
		return true
	}
	return bytes.IndexByte([]byte("0abt\tnvfre \"/\\N_LPxuU\r\n"), data[i+1]) < 0
}

// markScannerError finds the line and column (1-based, in characters) of a
// scanner problem yaml.v3 reported at line (0 for none), or 0, 0.
func markScannerError(data []byte, line int, problem string) (int, int) {
	p, ok := scannerProblems[problem]
	if !ok {
		return 0, 0
	}
	var cands []int
	for i := range data {
		if p.candidate(data, i) {
			cands = append(cands, i)
		}
	}
	cut := func(i int) []byte {
		end := i
		for range p.past {
			if end < len(data) {
				_, n := utf8.DecodeRune(data[end:])
				end += n
			}
		}
		return data[:end]
	}
	lo, hi := 0, len(cands) // the first failing candidate lies in [lo, hi]
	for lo < hi {
		mid := lo + (hi-lo)/2
		if failsWith(cut(cands[mid]), problem) {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	if lo == len(cands) {
		return 0, 0
	}
	at := cands[lo]
	if lo > 0 && failsWith(cut(cands[lo-1]), problem) || !failsWith(cut(at), problem) {
		return 0, 0 // not the first: the search went astray
	}
	l, c := position(data, at)
	// What yaml.v3 said must agree.
	switch {
	case line == 0 && l != 1,
		line > 0 && !p.inContext && l != line,
		line > 0 && p.inContext && l < line:
		return 0, 0
	}
	return l, c
}

// unclosedQuote finds where the quoted string that runs to the end of the
// document opens, as a 0-based offset, or -1. The string's text holds no
// closing quote: for '...', quotes only in pairs (two in a row are one); for
// "...", a '"' only after an odd number of '\'. So it opens at the last quote
// that could not be inside it. Which kind it is, yaml.v3 tells: closing it
// with its own quote ends the problem.
func unclosedQuote(data []byte) int {
	single := !failsWith(append(bytes.Clone(data), '\''), "found unexpected end of stream")
	double := !failsWith(append(bytes.Clone(data), '"'), "found unexpected end of stream")
	switch {
	case single == double:
		return -1
	case single:
		// The first quote of the last run of an odd number of quotes.
		for i := len(data) - 1; i >= 0; i-- {
			if data[i] != '\'' {
				continue
			}
			j := i
			for j > 0 && data[j-1] == '\'' {
				j--
			}
			if (i-j+1)%2 == 1 {
				return j
			}
			i = j
		}
	default:
		for i := len(data) - 1; i >= 0; i-- {
			if data[i] != '"' {
				continue
			}
			j := i
			for j > 0 && data[j-1] == '\\' {
				j--
			}
			if (i-j)%2 == 0 {
				return i
			}
		}
	}
	return -1
}

// yamlScannerError is a problem of yaml.v3's scanner, at its line and
// column where they can be found, said in the gate's words where it has
// better ones.
func yamlScannerError(source string, data []byte, line int, problem string) error {
	if problem == "found unexpected end of stream" {
		if i := unclosedQuote(data); i >= 0 {
			l, c := position(data, i)
			end, _ := position(data, len(data))
			// yaml.v3 names the quote's line, or the end's when the quote
			// is on the first, or nothing when both are.
			if line == l || line == 0 && l == 1 && end == 1 || l == 1 && line == end {
				return &Error{Source: source, Line: l, Column: c, Msg: "a quoted string opens here and is never closed"}
			}
		}
	}
	l, c := markScannerError(data, line, problem)
	if l == 0 {
		if line == 0 {
			return &Error{Source: source, Msg: "YAML: " + problem}
		}
		return &Error{Source: source, Line: line, Msg: problem}
	}
	return &Error{Source: source, Line: l, Column: c, Msg: scannerMessage(data, l, c, problem)}
}

// scannerMessage says what is wrong with the character at line:column.
func scannerMessage(data []byte, line, column int, problem string) string {
	text := newSourceText(data).line(line)
	r := text[column-1]
	switch {
	case r == '\t' && len(bytes.TrimLeft([]byte(string(text[:column-1])), " \t")) == 0:
		return "a tab indents this line: YAML indents with spaces"
	case r == '\t' && problem == "found character that cannot start any token":
		return "a tab where YAML wants a space: a tab after an indicator indents what follows, and YAML indents with spaces"
	case problem == "found character that cannot start any token":
		return strconv.Quote(string(r)) + " cannot start unquoted text: YAML reserves it; quote the text"
	case problem == "found unknown escape character":
		if column < len(text) && unicode.IsGraphic(text[column]) && !unicode.IsSpace(text[column]) {
			return `unknown escape \` + string(text[column]) + " in a double-quoted string"
		}
		return "unknown escape in a double-quoted string"
	}
	return problem
}
