package jsonpointer_test

import (
	"math/rand"
	"reflect"
	"slices"
	"testing"

	"github.com/spawngate/spawngate/internal/jsonpointer"
)

func TestEscape(t *testing.T) {
	tests := []struct {
		key, want string
	}{
		{"", ""},
		{"role", "role"},
		{"a/b", "a~1b"},
		{"a~b", "a~0b"},
		{"~1", "~01"},
		{"/~", "~1~0"},
		{"~~//", "~0~0~1~1"},
		{"é/😀", "é~1😀"},
	}
	for _, tt := range tests {
		t.Run(tt.key, func(t *testing.T) {
			if got := jsonpointer.Escape(tt.key); got != tt.want {
				t.Errorf("Escape(%q) = %q, want %q", tt.key, got, tt.want)
			}
		})
	}
}

func TestJoin(t *testing.T) {
	tests := []struct {
		name     string
		ptr      string
		segments []string
		want     string
	}{
		{"nothing", "", nil, ""},
		{"base only", "/plan", nil, "/plan"},
		{"one segment", "", []string{"plan"}, "/plan"},
		{"empty key", "", []string{""}, "/"},
		{"index", "/plan", []string{"0", "role"}, "/plan/0/role"},
		{"escapes each segment", "/plan", []string{"a/b", "c~d"}, "/plan/a~1b/c~0d"},
		{"does not escape the base", "/a~1b", []string{"~"}, "/a~1b/~0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := jsonpointer.Join(tt.ptr, tt.segments...); got != tt.want {
				t.Errorf("Join(%q, %q) = %q, want %q", tt.ptr, tt.segments, got, tt.want)
			}
		})
	}
}

func TestLookup(t *testing.T) {
	child := map[string]any{"id": "x", "tools": []any{"fs.read", "fs.write"}}
	doc := map[string]any{
		"plan": []any{child, "s"},
		"a/b":  "slash",
		"m~n":  "tilde",
		"":     "empty key",
		"~1":   "literal ~1",
		"n":    nil,
	}
	tests := []struct {
		name   string
		ptr    string
		want   any
		wantOK bool
	}{
		{"whole document", "", doc, true},
		{"object member", "/plan/0/id", "x", true},
		{"array element", "/plan/1", "s", true},
		{"nested array", "/plan/0/tools/1", "fs.write", true},
		{"container", "/plan/0", child, true},
		{"escaped slash", "/a~1b", "slash", true},
		{"escaped tilde", "/m~0n", "tilde", true},
		{"~01 is ~1, not /", "/~01", "literal ~1", true},
		{"empty key", "/", "empty key", true},
		{"null member is found", "/n", nil, true},
		{"missing key", "/nope", nil, false},
		{"unescaped slash is two segments", "/a/b", nil, false},
		{"index out of range", "/plan/2", nil, false},
		{"negative index", "/plan/-1", nil, false},
		{"past-the-end marker", "/plan/-", nil, false},
		{"index not a number", "/plan/x", nil, false},
		{"index with a leading zero", "/plan/01", nil, false},
		{"index with a plus sign", "/plan/+1", nil, false},
		{"index minus zero", "/plan/-0", nil, false},
		{"empty index", "/plan/", nil, false},
		{"index beyond int", "/plan/99999999999999999999", nil, false},
		{"inside a string", "/plan/1/x", nil, false},
		{"inside null", "/n/x", nil, false},
		{"no leading slash", "plan", nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := jsonpointer.Lookup(doc, tt.ptr)
			if ok != tt.wantOK || !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Lookup(doc, %q) = %#v, %v; want %#v, %v", tt.ptr, got, ok, tt.want, tt.wantOK)
			}
		})
	}
}

func TestLookupJoinRoundTrip(t *testing.T) {
	for _, key := range []string{"", "a", "a/b", "~", "~0", "~1", "/", "//~~", "é"} {
		t.Run(key, func(t *testing.T) {
			doc := map[string]any{key: []any{"v"}}
			ptr := jsonpointer.Join("", key, "0")
			if got, ok := jsonpointer.Lookup(doc, ptr); !ok || got != "v" {
				t.Errorf("Lookup(doc, %q) = %#v, %v; want \"v\", true", ptr, got, ok)
			}
		})
	}
}

func TestWithin(t *testing.T) {
	tests := []struct {
		ptr, base string
		want      bool
	}{
		{"/plan", "/plan", true},
		{"/plan/0", "/plan", true},
		{"/plan/0/role", "/plan", true},
		{"/plans", "/plan", false},
		{"/plan", "/plan/0", false},
		{"/a~1b", "/a", false},
		{"/a", "", true},
		{"", "", true},
		{"", "/a", false},
	}
	for _, tt := range tests {
		t.Run(tt.ptr+" in "+tt.base, func(t *testing.T) {
			if got := jsonpointer.Within(tt.ptr, tt.base); got != tt.want {
				t.Errorf("Within(%q, %q) = %v, want %v", tt.ptr, tt.base, got, tt.want)
			}
		})
	}
}

func TestCompare(t *testing.T) {
	tests := []struct {
		a, b string
		want int
	}{
		{"", "", 0},
		{"/plan/0", "/plan/0", 0},
		{"", "/plan", -1},
		{"/plan", "/plan/0", -1},
		{"/plan/0", "/plan/0/role", -1},
		{"/plan/2", "/plan/10", -1},
		{"/plan/9/tools/0", "/plan/10", -1},
		{"/plan/0/tools/2", "/plan/0/tools/10", -1},
		{"/plan/1", "/plan/0/role", 1},
		{"/budget_tokens", "/paths", -1},
		{"/a", "/b", -1},
		{"/a/b", "/a~1b", -1},
		{"/99999999999999999999", "/100", 1},
		{"/9", "/1a", -1},  // an index comes before a key
		{"/10", "/1a", -1}, // whichever way the text sorts
		{"/01", "/1", 1},   // 01 is a key, not an index
		{"/-1", "/0", 1},
		{"/", "/0", 1},
	}
	for _, tt := range tests {
		t.Run(tt.a+" vs "+tt.b, func(t *testing.T) {
			if got := jsonpointer.Compare(tt.a, tt.b); got != tt.want {
				t.Errorf("Compare(%q, %q) = %d, want %d", tt.a, tt.b, got, tt.want)
			}
			if got := jsonpointer.Compare(tt.b, tt.a); got != -tt.want {
				t.Errorf("Compare(%q, %q) = %d, want %d", tt.b, tt.a, got, -tt.want)
			}
		})
	}
}

// TestCompareTotalOrder checks that Compare is a total order over pointers
// that mix indexes and keys, so sorting gives one result whatever order the
// pointers came in (map iteration order, for one).
func TestCompareTotalOrder(t *testing.T) {
	segs := []string{"", "0", "1", "2", "9", "10", "01", "1a", "-1", "+1", "a", "a/b", "~0", "~1", "99999999999999999999", "é"}
	var ptrs []string
	for _, a := range segs {
		ptrs = append(ptrs, "/"+a)
		for _, b := range segs[:6] {
			ptrs = append(ptrs, "/"+a+"/"+b)
		}
	}
	ptrs = append(ptrs, "")

	for _, a := range ptrs {
		for _, b := range ptrs {
			ab, ba := jsonpointer.Compare(a, b), jsonpointer.Compare(b, a)
			if ab != -ba {
				t.Fatalf("Compare(%q, %q) = %d but Compare(%q, %q) = %d", a, b, ab, b, a, ba)
			}
			if (ab == 0) != (a == b) {
				t.Fatalf("Compare(%q, %q) = %d", a, b, ab)
			}
			for _, c := range ptrs {
				if ab < 0 && jsonpointer.Compare(b, c) < 0 && jsonpointer.Compare(a, c) >= 0 {
					t.Fatalf("not transitive: %q < %q < %q but Compare(%q, %q) = %d", a, b, c, a, c, jsonpointer.Compare(a, c))
				}
			}
		}
	}

	want := slices.Clone(ptrs)
	slices.SortStableFunc(want, jsonpointer.Compare)
	r := rand.New(rand.NewSource(1))
	for i := 0; i < 50; i++ {
		got := slices.Clone(ptrs)
		r.Shuffle(len(got), func(i, j int) { got[i], got[j] = got[j], got[i] })
		slices.SortStableFunc(got, jsonpointer.Compare)
		if !slices.Equal(got, want) {
			t.Fatalf("sorting depends on the input order:\n got %q\nwant %q", got, want)
		}
	}
}
