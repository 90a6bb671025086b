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
func Compare(a, b string) int {
	as, bs := split(a), split(b)
	for i := 0; i < len(as) && i < len(bs); i++ {
		if c := compareSegments(as[i], bs[i]); c != 0 {
			return c
		}
	}
	return cmp.Compare(len(as), len(bs))
}

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

func split(ptr string) []string {
	if ptr == "" {
		return nil
	}
	return strings.Split(ptr[1:], "/")
}
