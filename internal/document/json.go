package document

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/spawngate/spawngate/internal/jsonpointer"
)

// parseJSON reads exactly one JSON value (RFC 8259) and nothing else: no
// comments, no trailing commas, no NaN or Infinity, no duplicate keys, no
// lone surrogates, and no number a float64 cannot hold. Numbers keep their
// literal text. The input is already known to be valid UTF-8.
func parseJSON(ctx context.Context, source string, data []byte, lim Limits) (any, error) {
	p := &jsonParser{src: data, lim: lim, ctx: ctx}
	v, err := p.value()
	if err == nil {
		p.skipSpace()
		if p.pos < len(p.src) {
			err = p.fail("unexpected content after the document: a document holds one JSON value")
		}
	}
	if err != nil {
		e, ok := err.(*jsonError)
		if !ok {
			return nil, err // the context ended
		}
		line, col := position(data, e.offset)
		return nil, &Error{Source: source, Line: line, Column: col, Pointer: e.pointer, Msg: e.msg, Limit: e.limit}
	}
	return v, nil
}

type jsonParser struct {
	strings map[string]any // short strings seen so far, shared
	numbers map[string]any // numbers seen so far, checked once, shared
	src     []byte
	pos     int
	depth   int
	values  int
	lim     Limits
	path    []segment // where the parser is, for error messages
	ctx     context.Context
}

// checkEvery is how many values a reader reads between two looks at its
// context: often enough to stop within a millisecond or so, rarely enough
// to cost nothing.
const checkEvery = 1 << 12

// ctxErr looks at the context every checkEvery steps of a loop.
func ctxErr(ctx context.Context, step int) error {
	if step%checkEvery != 0 {
		return nil
	}
	return ctx.Err()
}

// segment is one step of a JSON pointer: an object key or an array index.
type segment struct {
	key   string
	index int // -1 for a key
}

func segmentsPointer(path []segment) string {
	parts := make([]string, len(path))
	for i, s := range path {
		if s.index >= 0 {
			parts[i] = strconv.Itoa(s.index)
		} else {
			parts[i] = s.key
		}
	}
	return jsonpointer.Join("", parts...)
}

type jsonError struct {
	offset  int
	pointer string
	msg     string
	limit   string
}

func (e *jsonError) Error() string { return e.msg }

func (p *jsonParser) fail(format string, args ...any) error {
	return p.failAt(p.pos, format, args...)
}

func (p *jsonParser) failAt(offset int, format string, args ...any) error {
	return &jsonError{offset: offset, pointer: segmentsPointer(p.path), msg: fmt.Sprintf(format, args...)}
}

// overLimit reports the document going over a limit at offset.
func (p *jsonParser) overLimit(offset int, limit, format string, args ...any) error {
	return &jsonError{offset: offset, pointer: segmentsPointer(p.path), msg: fmt.Sprintf(format, args...), limit: limit}
}

// internFrom is the size of the smallest document whose strings are
// interned: in a smaller one the table costs more than the few repeats
// it saves (a hook's or a server's two-child plan).
const internFrom = 16 << 10

// intern returns the string for b as a value, sharing one copy of the
// short strings a plan repeats (keys, roles, tools, paths) instead of
// allocating the string and its interface box each time. The table stops
// growing at a few thousand entries, so unique strings (ids, briefs) cost no
// more than before.
func (p *jsonParser) intern(b []byte) any {
	if len(b) > 64 || len(p.src) < internFrom {
		return string(b)
	}
	if v, ok := p.strings[string(b)]; ok {
		return v
	}
	var v any = string(b)
	if len(p.strings) < 4096 {
		if p.strings == nil {
			p.strings = make(map[string]any, 16)
		}
		p.strings[string(b)] = v
	}
	return v
}

func (p *jsonParser) skipSpace() {
	for p.pos < len(p.src) {
		switch p.src[p.pos] {
		case ' ', '\t', '\n', '\r':
			p.pos++
		default:
			return
		}
	}
}

func (p *jsonParser) value() (any, error) {
	p.values++
	if p.values > p.lim.MaxValues {
		return nil, p.overLimit(p.pos, "max-values", "more than %d values in the document", p.lim.MaxValues)
	}
	if p.values%checkEvery == 0 {
		if err := p.ctx.Err(); err != nil {
			return nil, err
		}
	}
	p.skipSpace()
	if p.pos >= len(p.src) {
		return nil, p.fail("unexpected end of the document: a value is missing")
	}
	switch c := p.src[p.pos]; {
	case c == '{':
		return p.object()
	case c == '[':
		return p.array()
	case c == '"':
		return p.string()
	case c == '-' || ('0' <= c && c <= '9'):
		return p.number()
	case c == 't':
		return true, p.literal("true")
	case c == 'f':
		return false, p.literal("false")
	case c == 'n':
		return nil, p.literal("null")
	default:
		return nil, p.fail("unexpected %s: a JSON value starts with {, [, \", a digit, -, true, false or null", p.describe())
	}
}

// describe names the character at the parser's position for a message.
func (p *jsonParser) describe() string {
	if p.pos >= len(p.src) {
		return "end of the document"
	}
	r, _ := utf8.DecodeRune(p.src[p.pos:])
	return "character " + strconv.QuoteRune(r)
}

func (p *jsonParser) literal(word string) error {
	if !strings.HasPrefix(string(p.src[p.pos:min(len(p.src), p.pos+len(word))]), word) {
		return p.fail("unexpected %s: a JSON value starts with {, [, \", a digit, -, true, false or null", p.describe())
	}
	p.pos += len(word)
	return nil
}

func (p *jsonParser) enter() error {
	p.depth++
	if p.depth > p.lim.MaxDepth {
		return p.overLimit(p.pos, "max-depth", "nested deeper than %d levels", p.lim.MaxDepth)
	}
	return nil
}

func (p *jsonParser) object() (any, error) {
	if err := p.enter(); err != nil {
		return nil, err
	}
	p.pos++                        // {
	obj := make(map[string]any, 8) // a child's keys fit without growing
	p.skipSpace()
	if p.pos < len(p.src) && p.src[p.pos] == '}' {
		p.pos++
		p.depth--
		return obj, nil
	}
	for {
		p.skipSpace()
		if p.pos >= len(p.src) || p.src[p.pos] != '"' {
			if p.pos < len(p.src) && p.src[p.pos] == '}' {
				return nil, p.fail("trailing comma before }")
			}
			return nil, p.fail("unexpected %s: expected a string key", p.describe())
		}
		keyAt := p.pos
		k, err := p.string()
		if err != nil {
			return nil, err
		}
		key := k.(string)
		if _, dup := obj[key]; dup {
			return nil, p.failAt(keyAt, "duplicate key %s: consumers disagree on which value wins", Quote(key))
		}
		p.skipSpace()
		if p.pos >= len(p.src) || p.src[p.pos] != ':' {
			return nil, p.fail("unexpected %s: expected ':' after the key %s", p.describe(), Quote(key))
		}
		p.pos++
		p.path = append(p.path, segment{key: key, index: -1})
		v, err := p.value()
		if err != nil {
			return nil, err
		}
		p.path = p.path[:len(p.path)-1]
		obj[key] = v
		if more, err := p.separator('}', "a member"); !more {
			if err != nil {
				return nil, err
			}
			return obj, nil
		}
	}
}

// separator reads what follows a member or an element: a comma when more
// follow, or the closing bracket, which ends the object or array.
func (p *jsonParser) separator(closing byte, after string) (more bool, err error) {
	p.skipSpace()
	if p.pos < len(p.src) {
		switch p.src[p.pos] {
		case ',':
			p.pos++
			return true, nil
		case closing:
			p.pos++
			p.depth--
			return false, nil
		}
	}
	return false, p.fail("unexpected %s: expected ',' or '%c' after %s", p.describe(), closing, after)
}

func (p *jsonParser) array() (any, error) {
	if err := p.enter(); err != nil {
		return nil, err
	}
	p.pos++ // [
	arr := make([]any, 0, 4)
	p.skipSpace()
	if p.pos < len(p.src) && p.src[p.pos] == ']' {
		p.pos++
		p.depth--
		return arr, nil
	}
	for i := 0; ; i++ {
		p.skipSpace()
		if i > 0 && p.pos < len(p.src) && p.src[p.pos] == ']' {
			return nil, p.fail("trailing comma before ]")
		}
		p.path = append(p.path, segment{index: i})
		v, err := p.value()
		if err != nil {
			return nil, err
		}
		p.path = p.path[:len(p.path)-1]
		arr = append(arr, v)
		if more, err := p.separator(']', "an element"); !more {
			if err != nil {
				return nil, err
			}
			return arr, nil
		}
	}
}

func (p *jsonParser) string() (any, error) {
	start := p.pos + 1
	for i := start; i < len(p.src); i++ {
		switch c := p.src[i]; {
		case c == '"':
			if i-start > p.lim.MaxStringBytes {
				return nil, p.overLimit(p.pos, "max-string-bytes", "string longer than %d bytes", p.lim.MaxStringBytes)
			}
			p.pos = i + 1
			return p.intern(p.src[start:i]), nil
		case c == '\\':
			return p.escapedString(start, i)
		case c < 0x20:
			return nil, p.failAt(i, "control character %s in a string: escape it", strconv.QuoteRune(rune(c)))
		}
	}
	return nil, p.failAt(p.pos, "string is not terminated")
}

// escapedString finishes a string that has escapes, from the first one.
func (p *jsonParser) escapedString(start, i int) (any, error) {
	var b strings.Builder
	b.Write(p.src[start:i])
	for i < len(p.src) {
		if b.Len() > p.lim.MaxStringBytes {
			return nil, p.overLimit(p.pos, "max-string-bytes", "string longer than %d bytes", p.lim.MaxStringBytes)
		}
		c := p.src[i]
		switch {
		case c == '"':
			if b.Len() > p.lim.MaxStringBytes {
				return nil, p.overLimit(p.pos, "max-string-bytes", "string longer than %d bytes", p.lim.MaxStringBytes)
			}
			p.pos = i + 1
			return b.String(), nil
		case c < 0x20:
			return nil, p.failAt(i, "control character %s in a string: escape it", strconv.QuoteRune(rune(c)))
		case c != '\\':
			b.WriteByte(c)
			i++
			continue
		}
		if i+1 >= len(p.src) {
			break
		}
		switch e := p.src[i+1]; e {
		case '"', '\\', '/':
			b.WriteByte(e)
		case 'b':
			b.WriteByte('\b')
		case 'f':
			b.WriteByte('\f')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		case 'u':
			r, ok := p.hex4(i + 2)
			if !ok {
				return nil, p.failAt(i, `invalid \u escape: it takes four hex digits`)
			}
			i += 6
			if utf16.IsSurrogate(r) {
				low, ok := p.hex4(i + 2)
				if r >= 0xDC00 || !ok || i+1 >= len(p.src) || p.src[i] != '\\' || p.src[i+1] != 'u' || low < 0xDC00 || low > 0xDFFF {
					return nil, p.failAt(i-6, `lone UTF-16 surrogate \u%04X: it is not a character`, r)
				}
				r = utf16.DecodeRune(r, low)
				i += 6
			}
			b.WriteRune(r)
			continue
		default:
			// Name the character, not its first byte, and never write a
			// control character into the message.
			r, _ := utf8.DecodeRune(p.src[i+1:])
			if r == ' ' || !strconv.IsPrint(r) {
				return nil, p.failAt(i, "invalid escape: a backslash before %s", strconv.QuoteRune(r))
			}
			return nil, p.failAt(i, "invalid escape \\%c", r)
		}
		i += 2
	}
	return nil, p.failAt(p.pos, "string is not terminated")
}

func (p *jsonParser) hex4(at int) (rune, bool) {
	if at+4 > len(p.src) {
		return 0, false
	}
	var r rune
	for _, c := range p.src[at : at+4] {
		switch {
		case '0' <= c && c <= '9':
			r = r<<4 | rune(c-'0')
		case 'a' <= c && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case 'A' <= c && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	return r, true
}

// number reads -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)? and keeps it
// as written.
func (p *jsonParser) number() (any, error) {
	start := p.pos
	i := p.pos
	digits := func() int {
		n := 0
		for i < len(p.src) && '0' <= p.src[i] && p.src[i] <= '9' {
			i++
			n++
		}
		return n
	}
	if p.src[i] == '-' {
		i++
	}
	switch {
	case i < len(p.src) && p.src[i] == '0':
		i++
		if i < len(p.src) && '0' <= p.src[i] && p.src[i] <= '9' {
			return nil, p.failAt(start, "number with a leading zero: JSON does not allow it")
		}
	case digits() == 0:
		return nil, p.failAt(start, "invalid number: a digit must follow '-'")
	}
	if i < len(p.src) && p.src[i] == '.' {
		i++
		if digits() == 0 {
			return nil, p.failAt(start, "invalid number: a digit must follow '.'")
		}
	}
	if i < len(p.src) && (p.src[i] == 'e' || p.src[i] == 'E') {
		i++
		if i < len(p.src) && (p.src[i] == '+' || p.src[i] == '-') {
			i++
		}
		if digits() == 0 {
			return nil, p.failAt(start, "invalid number: a digit must follow the exponent")
		}
	}
	p.pos = i
	literal := p.src[start:i]
	if v, ok := p.numbers[string(literal)]; ok {
		return v, nil
	}
	v, err := checkNumber(string(literal), func(msg string) error { return p.failAt(start, "%s", msg) })
	if err == nil && len(p.numbers) < 4096 {
		if p.numbers == nil {
			p.numbers = make(map[string]any, 8)
		}
		p.numbers[string(literal)] = v
	}
	return v, err
}

// maxNumberLength is the longest number literal, anywhere in a document
// (metadata included). No budget or cap needs more than 16 digits; beyond
// some length, consumers that keep big numbers exactly (Python) and those
// that round them to a float (JavaScript) stop agreeing on what was
// written, and the gate keeps and compares every literal exactly, so the
// length also bounds that cost. Longer values belong in a string.
const maxNumberLength = 64

// checkNumber refuses numbers that some consumers cannot hold: a literal
// beyond float64's range (1e400) becomes infinity in some parsers and an
// error in others.
func checkNumber(literal string, fail func(string) error) (any, error) {
	if len(literal) > maxNumberLength {
		return nil, fail(fmt.Sprintf("number %s... has more than %d characters: write longer values as strings", literal[:20], maxNumberLength))
	}
	f, err := strconv.ParseFloat(literal, 64)
	if err != nil || math.IsInf(f, 0) {
		return nil, fail(fmt.Sprintf("number %s is beyond the range of a 64-bit float", literal))
	}
	return json.Number(literal), nil
}
