package document_test

import (
	"bytes"
	"context"
	"errors"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/spawngate/spawngate/internal/document"
)

// allocated runs f and returns how many bytes it allocated.
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// Each limit must hold with memory bounded: hostile input is refused early,
// naming the flag that raises the limit, without building what it asks for.
func TestLimitsHoldWithMemoryBounded(t *testing.T) {
	const MiB = 1 << 20
	with := func(change func(*document.Limits)) document.Limits {
		l := document.DefaultLimits
		change(&l)
		return l
	}
	tests := []struct {
		name     string
		source   string
		data     []byte
		lim      document.Limits
		want     string
		maxAlloc uint64
	}{
		{
			name: "document size", source: "big.json",
			data: bytes.Repeat([]byte(" "), 2*MiB), lim: with(func(l *document.Limits) { l.MaxBytes = MiB }),
			want: "document is larger than 1048576 bytes (limit max-bytes)", maxAlloc: 64 << 10,
		},
		{
			name: "nesting depth, JSON", source: "deep.json",
			data: bytes.Repeat([]byte("["), 8*MiB), lim: document.DefaultLimits,
			want: "nested deeper than 64 levels (limit max-depth)", maxAlloc: MiB,
		},
		{
			name: "nesting depth, YAML", source: "deep.yaml",
			data: []byte(strings.Repeat("- ", 200) + "x\n"), lim: document.DefaultLimits,
			want: "nested deeper than 64 levels (limit max-depth)", maxAlloc: 4 * MiB,
		},
		{
			name: "alias expansion", source: "laughs.yaml", data: []byte(laughs(10)), lim: document.DefaultLimits,
			want: "aliases expand to more than 10000 values (limit max-alias-nodes)", maxAlloc: 8 * MiB,
		},
		{
			name: "string length, JSON", source: "long.json",
			data: []byte(`{"plan": ["` + strings.Repeat("a", 4*MiB) + `"]}`), lim: with(func(l *document.Limits) { l.MaxStringBytes = MiB }),
			want: "/plan/0: string longer than 1048576 bytes (limit max-string-bytes)", maxAlloc: 64 << 10,
		},
		{
			name: "string length, JSON with escapes", source: "long.json",
			data: []byte(`{"plan": ["\n` + strings.Repeat("a", 2*MiB) + `"]}`), lim: with(func(l *document.Limits) { l.MaxStringBytes = MiB }),
			want: "/plan/0: string longer than 1048576 bytes (limit max-string-bytes)", maxAlloc: 8 * MiB,
		},
		{
			name: "key length, JSON", source: "key.json",
			data: []byte(`{"` + strings.Repeat("k", 2*MiB) + `": 1}`), lim: with(func(l *document.Limits) { l.MaxStringBytes = MiB }),
			want: "string longer than 1048576 bytes (limit max-string-bytes)", maxAlloc: 64 << 10,
		},
		{
			name: "string length, YAML", source: "long.yaml",
			data: []byte("plan: [" + strings.Repeat("a", 2*MiB) + "]\n"), lim: with(func(l *document.Limits) { l.MaxStringBytes = MiB }),
			want: "/plan/0: string longer than 1048576 bytes (limit max-string-bytes)", maxAlloc: 64 * MiB,
		},
		{
			name: "values, JSON", source: "many.json",
			data: []byte(`{"plan": [` + strings.Repeat("0,", 4*MiB) + `0]}`), lim: with(func(l *document.Limits) { l.MaxValues = 1000 }),
			want: "more than 1000 values in the document (limit max-values)", maxAlloc: 256 << 10,
		},
		{
			name: "values, YAML", source: "many.yaml",
			data: []byte("plan: [" + strings.Repeat("0, ", 100000) + "0]\n"), lim: with(func(l *document.Limits) { l.MaxValues = 1000 }),
			want: "more than 1000 values in the document (limit max-values)", maxAlloc: 128 * MiB,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			syntax, err := document.SyntaxOf(tt.source)
			if err != nil {
				t.Fatal(err)
			}
			var derr error
			n := allocated(func() { _, derr = document.Decode(context.Background(), tt.source, tt.data, syntax, tt.lim) })
			if derr == nil || !strings.Contains(derr.Error(), tt.want) {
				t.Fatalf("error %v, want it to contain %q", derr, tt.want)
			}
			if strings.Contains(derr.Error(), "\n") {
				t.Fatalf("error is not one line: %q", derr)
			}
			if n > tt.maxAlloc {
				t.Fatalf("allocated %d bytes refusing it, want at most %d", n, tt.maxAlloc)
			}
		})
	}
}

// laughs is a "billion laughs" document: each level aliases the one below
// ten times, so n levels ask for 10^n values.
func laughs(n int) string {
	var b strings.Builder
	b.WriteString("a0: &a0 [lol]\n")
	for i := 1; i <= n; i++ {
		refs := strings.Repeat("*a"+strconv.Itoa(i-1)+", ", 9) + "*a" + strconv.Itoa(i-1)
		b.WriteString("a" + strconv.Itoa(i) + ": &a" + strconv.Itoa(i) + " [" + refs + "]\n")
	}
	return b.String()
}

func TestLimitsAtTheirValuePass(t *testing.T) {
	lim := document.DefaultLimits
	lim.MaxStringBytes, lim.MaxValues, lim.MaxDepth = 5, 4, 2
	for _, doc := range []string{`{"a": ["abcde"]}`, `{"abcde": [1, 2]}`, "a: [abcde]\n"} {
		syntax := document.JSON
		if !strings.HasPrefix(doc, "{") {
			syntax = document.YAML
		}
		if _, err := document.Decode(context.Background(), "doc", []byte(doc), syntax, lim); err != nil {
			t.Errorf("%s at the limits: %v", doc, err)
		}
	}
}

// Check refuses each limit no document could be read under, by both its
// names, and takes the defaults and alias bounds of 0 (no aliases at all).
func TestLimitsCheck(t *testing.T) {
	with := func(change func(*document.Limits)) document.Limits {
		l := document.DefaultLimits
		change(&l)
		return l
	}
	for _, tc := range []struct {
		lim          document.Limits
		limit, field string
	}{
		{document.DefaultLimits, "", ""},
		{with(func(l *document.Limits) { l.MaxAliasNodes, l.MaxAliasBytes = 0, 0 }), "", ""},
		{with(func(l *document.Limits) { l.MaxDepth = document.MaxDepthCeiling }), "", ""},
		{document.Limits{}, "max-bytes", "MaxBytes"},
		{with(func(l *document.Limits) { l.MaxYAMLBytes = -1 }), "max-yaml-bytes", "MaxYAMLBytes"},
		{with(func(l *document.Limits) { l.MaxDepth = 0 }), "max-depth", "MaxDepth"},
		{with(func(l *document.Limits) { l.MaxDepth = document.MaxDepthCeiling + 1 }), "max-depth", "MaxDepth"},
		{with(func(l *document.Limits) { l.MaxAliasNodes = -1 }), "max-alias-nodes", "MaxAliasNodes"},
		{with(func(l *document.Limits) { l.MaxAliasBytes = -1 }), "max-alias-bytes", "MaxAliasBytes"},
		{with(func(l *document.Limits) { l.MaxChildEntries = 0 }), "max-child-entries", "MaxChildEntries"},
		{with(func(l *document.Limits) { l.MaxStringBytes = 0 }), "max-string-bytes", "MaxStringBytes"},
		{with(func(l *document.Limits) { l.MaxValues = -5 }), "max-values", "MaxValues"},
		{with(func(l *document.Limits) { l.MaxChildren = 0 }), "max-children", "MaxChildren"},
	} {
		err := tc.lim.Check()
		var le *document.LimitError
		switch {
		case tc.limit == "" && err != nil:
			t.Errorf("%+v: %v", tc.lim, err)
		case tc.limit != "" && (!errors.As(err, &le) || le.Limit != tc.limit || le.Field != tc.field || !strings.HasPrefix(err.Error(), tc.field+" must ")):
			t.Errorf("%+v: got %v, want %s (%s)", tc.lim, err, tc.limit, tc.field)
		}
	}
}
