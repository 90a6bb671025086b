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
			i, err := strconv.Atoi(seg)
			if err != nil || i < 0 || i >= len(c) {
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

func compareSegments(a, b string) int {
	if a == b {
		return 0
	}
	na, erra := strconv.Atoi(a)
	nb, errb := strconv.Atoi(b)
	if erra == nil && errb == nil && na != nb {
		return cmp.Compare(na, nb)
	}
	return cmp.Compare(a, b)
}

func split(ptr string) []string {
	if ptr == "" {
		return nil
	}
	return strings.Split(ptr[1:], "/")
}
