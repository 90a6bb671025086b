// Package jsonpointer builds, reads and orders JSON pointers (RFC 6901),
// the way spawngate names a place in a document.
package jsonpointer

import (
	"cmp"
	"strconv"
	"strings"
)

var (
	escaper   = strings.NewReplacer("~", "~0", "/", "~1")
	unescaper = strings.NewReplacer("~1", "/", "~0", "~")
)

// Escape makes a key safe to use as one pointer segment.
func Escape(key string) string {
	if !strings.ContainsAny(key, "~/") {
		return key
	}
	return escaper.Replace(key)
}

// Unescape reads one pointer segment back into the key it names.
func Unescape(segment string) string {
	if !strings.Contains(segment, "~") {
		return segment
	}
	return unescaper.Replace(segment)
}

// Join appends segments to a pointer, escaping each.
func Join(ptr string, segments ...string) string {
	var b strings.Builder
	b.WriteString(ptr)
	for _, s := range segments {
		b.WriteByte('/')
		b.WriteString(Escape(s))
	}
	return b.String()
}

// Lookup finds the value at ptr in a JSON-shaped document.
func Lookup(doc any, ptr string) (any, bool) {
	if ptr == "" {
		return doc, true
	}
	if ptr[0] != '/' {
		return nil, false
	}
	cur := doc
	for _, raw := range strings.Split(ptr[1:], "/") {
		seg := unescaper.Replace(raw)
		switch c := cur.(type) {
		case map[string]any:
			v, ok := c[seg]
			if !ok {
				return nil, false
			}
			cur = v
		case []any:
			if !isIndex(seg) {
				return nil, false
			}
			i, err := strconv.Atoi(seg)
			if err != nil || i >= len(c) {
				return nil, false
			}
			cur = c[i]
		default:
			return nil, false
		}
	}
	return cur, true
}

// Within tells whether ptr is base or lies under it.
func Within(ptr, base string) bool {
	return ptr == base || strings.HasPrefix(ptr, base+"/")
}

// Compare orders pointers segment by segment, array indexes by value, so
// /plan/2 comes before /plan/10 and a pointer before those under it. It
// returns -1, 0 or 1.
// It allocates nothing: it sorts every report and every list of issues.
func Compare(a, b string) int {
	for a != "" && b != "" {
		var sa, sb string
		sa, a = nextSegment(a)
		sb, b = nextSegment(b)
		if c := compareSegments(sa, sb); c != 0 {
			return c
		}
	}
	switch {
	case a == "" && b == "":
		return 0
	case a == "":
		return -1
	}
	return 1
}

// nextSegment splits the first segment off a pointer that is not "": "/a/b"
// gives "a" and "/b".
func nextSegment(ptr string) (seg, rest string) {
	if i := strings.IndexByte(ptr[1:], '/'); i >= 0 {
		return ptr[1 : 1+i], ptr[1+i:]
	}
	return ptr[1:], ""
}

// CompareSegments orders two escaped segments as Compare orders two
// pointers that differ only in their last segment, those two: a caller
// that chooses among the keys of one object need not build a pointer for
// each.
func CompareSegments(a, b string) int { return compareSegments(a, b) }

// compareSegments puts array indexes first, by value, then every other
// segment by its text. Mixing the two orders (9 < 10 by value, 10 < 1a < 9
// by text) would make a cycle, and a sort that depends on its input order.
func compareSegments(a, b string) int {
	if a == b {
		return 0
	}
	switch ai, bi := isIndex(a), isIndex(b); {
	case ai && bi:
		// Without leading zeros, the longer number is the larger.
		if c := cmp.Compare(len(a), len(b)); c != 0 {
			return c
		}
	case ai:
		return -1
	case bi:
		return 1
	}
	return cmp.Compare(a, b)
}

// isIndex tells whether a segment is an array index as RFC 6901 writes one:
// 0, or digits without a leading zero.
func isIndex(seg string) bool {
	if seg == "" || (seg[0] == '0' && len(seg) > 1) {
		return false
	}
	for i := 0; i < len(seg); i++ {
		if seg[i] < '0' || seg[i] > '9' {
			return false
		}
	}
	return true
}
