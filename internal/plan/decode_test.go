package plan_test

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/spawngate/spawngate/internal/plan"
)

// src is the source name every Decode case reads under.
const src = "doc"

// decodeCase is one document and what Decode must make of it: a value, or
// when err is set, an *Error whose Error() is exactly err.
type decodeCase struct {
	name   string
	in     string
	syntax plan.Syntax
	lim    *plan.Limits // nil for plan.DefaultLimits
	want   any
	err    string
}

type (
	obj  = map[string]any
	list = []any
	num  = json.Number
)

func (c decodeCase) limits() plan.Limits {
	if c.lim != nil {
		return *c.lim
	}
	return plan.DefaultLimits
}

func limits(maxBytes int64, maxDepth, maxAliasNodes int) *plan.Limits {
	l := plan.DefaultLimits
	l.MaxBytes, l.MaxDepth, l.MaxAliasNodes = maxBytes, maxDepth, maxAliasNodes
	return &l
}

func aliasBytes(n int) *plan.Limits {
	l := plan.DefaultLimits
	l.MaxAliasBytes = n
	return &l
}

func runDecodeCases(t *testing.T, cases []decodeCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := plan.Decode(context.Background(), src, []byte(tc.in), tc.syntax, tc.limits())
			checkDecoded(t, tc, got, err)
		})
	}
}

func checkDecoded(t *testing.T, tc decodeCase, got any, err error) {
	t.Helper()
	if tc.err != "" {
		if err == nil {
			t.Fatalf("Decode(%q) = %#v, want error\n%s", tc.in, got, tc.err)
		}
		var pe *plan.Error
		if !errors.As(err, &pe) {
			t.Fatalf("Decode(%q) error is %T, want *plan.Error: %v", tc.in, err, err)
		}
		if err.Error() != tc.err {
			t.Fatalf("Decode(%q) error\n got %s\nwant %s", tc.in, err, tc.err)
		}
		if got != nil {
			t.Errorf("Decode(%q) = %#v with an error, want nil", tc.in, got)
		}
		return
	}
	if err != nil {
		t.Fatalf("Decode(%q) error: %v", tc.in, err)
	}
	if !reflect.DeepEqual(got, tc.want) {
		t.Fatalf("Decode(%q)\n got %#v\nwant %#v", tc.in, got, tc.want)
	}
}

// decodeCases are the checks Decode makes before either parser runs, and its
// choice of parser.
var decodeCases = []decodeCase{
	// size
	{name: "at the size limit", in: `{"a":1}`, syntax: plan.JSON, lim: limits(7, 64, 10), want: obj{"a": num("1")}},
	{name: "over the size limit", in: `{"a":1} `, syntax: plan.JSON, lim: limits(7, 64, 10),
		err: "doc: document is larger than 7 bytes (limit max-bytes)"},
	{name: "over the size limit yaml", in: "a: 12345", syntax: plan.YAML, lim: limits(7, 64, 10),
		err: "doc: document is larger than 7 bytes (limit max-bytes)"},
	{name: "size is checked before the encoding", in: "\xff\xff", syntax: plan.JSON, lim: limits(1, 64, 10),
		err: "doc: document is larger than 1 bytes (limit max-bytes)"},

	// byte-order marks
	{name: "UTF-8 BOM json", in: "\xEF\xBB\xBF{}", syntax: plan.JSON,
		err: "doc:1:1: byte-order mark at the start: save the document as UTF-8 without a BOM"},
	{name: "UTF-8 BOM yaml", in: "\xEF\xBB\xBFa: 1\n", syntax: plan.YAML,
		err: "doc:1:1: byte-order mark at the start: save the document as UTF-8 without a BOM"},
	{name: "UTF-8 BOM alone", in: "\xEF\xBB\xBF", syntax: plan.Sniff,
		err: "doc:1:1: byte-order mark at the start: save the document as UTF-8 without a BOM"},
	{name: "UTF-16 big-endian BOM", in: "\xFE\xFF\x00{\x00}", syntax: plan.JSON,
		err: "doc:1:1: UTF-16 byte-order mark: save the document as UTF-8 without a BOM"},
	{name: "UTF-16 little-endian BOM", in: "\xFF\xFEa\x00:\x00", syntax: plan.YAML,
		err: "doc:1:1: UTF-16 byte-order mark: save the document as UTF-8 without a BOM"},
	{name: "UTF-32 little-endian BOM", in: "\xFF\xFE\x00\x00{\x00\x00\x00", syntax: plan.Sniff,
		err: "doc:1:1: UTF-16 byte-order mark: save the document as UTF-8 without a BOM"},

	// invalid UTF-8
	{name: "invalid byte", in: `{"a": "` + "\xff" + `"}`, syntax: plan.JSON,
		err: "doc:1:8: invalid UTF-8 (byte 0xFF)"},
	{name: "invalid byte after multi-byte characters", in: "plan:\n  - é😀\xC3\x28\n", syntax: plan.YAML,
		err: "doc:2:7: invalid UTF-8 (byte 0xC3)"},
	{name: "truncated sequence at the end", in: "a: b\xe2\x82", syntax: plan.YAML,
		err: "doc:1:5: invalid UTF-8 (byte 0xE2)"},
	{name: "overlong encoding", in: "[\"\xC0\xAF\"]", syntax: plan.JSON,
		err: "doc:1:3: invalid UTF-8 (byte 0xC0)"},
	{name: "UTF-8 encoded surrogate", in: "\n\n  \xED\xA0\x80", syntax: plan.Sniff,
		err: "doc:3:3: invalid UTF-8 (byte 0xED)"},
	{name: "invalid byte in a comment", in: "# \xff\na: 1\n", syntax: plan.YAML,
		err: "doc:1:3: invalid UTF-8 (byte 0xFF)"},

	// empty
	{name: "empty json", in: "", syntax: plan.JSON, err: "doc: empty document: nothing to check"},
	{name: "empty yaml", in: "", syntax: plan.YAML, err: "doc: empty document: nothing to check"},
	{name: "empty sniffed", in: "", syntax: plan.Sniff, err: "doc: empty document: nothing to check"},
	{name: "whitespace json", in: " \t\r\n\n", syntax: plan.JSON, err: "doc: empty document: nothing to check"},
	{name: "whitespace yaml", in: "\n\n   \r\n", syntax: plan.YAML, err: "doc: empty document: nothing to check"},
	{name: "only comments yaml", in: "# a plan\n  # will go here\n", syntax: plan.YAML, err: "doc: empty document: nothing to check"},
	{name: "only comments sniffed", in: "\n# nothing yet", syntax: plan.Sniff, err: "doc: empty document: nothing to check"},

	// sniffing: JSON when the first non-space byte is { or [
	{name: "sniff object is JSON", in: "{a: 1}", syntax: plan.Sniff,
		err: "doc:1:2: unexpected character 'a': expected a string key"},
	{name: "sniff list after space is JSON", in: " \t\r\n[1,]", syntax: plan.Sniff,
		err: "doc:2:4: trailing comma before ]"},
	{name: "sniff valid JSON", in: `{"plan": [{"budget_tokens": 4e4}]}`, syntax: plan.Sniff,
		want: obj{"plan": list{obj{"budget_tokens": num("4e4")}}}},
	{name: "sniff quoted key is YAML", in: `"a": yes`, syntax: plan.Sniff,
		err: `doc:1:6: /a: unquoted "yes" is a boolean to YAML 1.1 parsers: quote it`},
	{name: "sniff mapping is YAML", in: "a: [1, 2,]\n", syntax: plan.Sniff,
		want: obj{"a": list{num("1"), num("2")}}},
	{name: "sniff sequence is YAML", in: "- x\n", syntax: plan.Sniff, want: list{"x"}},
	{name: "sniff scalar is YAML", in: "1", syntax: plan.Sniff, want: num("1")},
	{name: "sniff comment first is YAML", in: "# {\n{a: 1}", syntax: plan.Sniff, want: obj{"a": num("1")}},
}

func TestDecode(t *testing.T) {
	runDecodeCases(t, decodeCases)
}

func TestSyntaxOf(t *testing.T) {
	tests := []struct {
		name string
		want plan.Syntax
		err  string
	}{
		{name: "plan.json", want: plan.JSON},
		{name: "PLAN.JSON", want: plan.JSON},
		{name: "dir.yaml/plan.Json", want: plan.JSON},
		{name: "plan.yaml", want: plan.YAML},
		{name: "plan.YAML", want: plan.YAML},
		{name: "plan.yml", want: plan.YAML},
		{name: "plan.yMl", want: plan.YAML},
		{name: "/abs/path/policy.yml", want: plan.YAML},
		{name: plan.Stdin, want: plan.Sniff},
		{name: "/dev/fd/63", want: plan.Sniff},
		{name: "plan", want: plan.Sniff},
		{name: "dir.json/plan", want: plan.Sniff},
		{name: "plan.txt", err: `plan.txt: unknown document type ".txt": use .yaml, .yml or .json`},
		{name: "plan.TOML", err: `plan.TOML: unknown document type ".toml": use .yaml, .yml or .json`},
		{name: "plan.json.bak", err: `plan.json.bak: unknown document type ".bak": use .yaml, .yml or .json`},
		{name: "plan.", err: `plan.: unknown document type ".": use .yaml, .yml or .json`},
		{name: "plan.jsonl", err: `plan.jsonl: unknown document type ".jsonl": use .yaml, .yml or .json`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := plan.SyntaxOf(tt.name)
			if tt.err != "" {
				var pe *plan.Error
				if !errors.As(err, &pe) || err.Error() != tt.err {
					t.Fatalf("SyntaxOf(%q) = %v, %v; want error %s", tt.name, got, err, tt.err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("SyntaxOf(%q) = %v, %v; want %v, nil", tt.name, got, err, tt.want)
			}
		})
	}
}

func TestErrorString(t *testing.T) {
	tests := []struct {
		name string
		err  plan.Error
		want string
	}{
		{"source only", plan.Error{Source: "p.yaml", Msg: "m"}, "p.yaml: m"},
		{"line", plan.Error{Source: "p.yaml", Line: 3, Msg: "m"}, "p.yaml:3: m"},
		{"line and column", plan.Error{Source: "p.yaml", Line: 3, Column: 7, Msg: "m"}, "p.yaml:3:7: m"},
		{"column without a line", plan.Error{Source: "p.yaml", Column: 7, Msg: "m"}, "p.yaml: m"},
		{"pointer", plan.Error{Source: "p.yaml", Line: 1, Column: 2, Pointer: "/plan/0", Msg: "m"}, "p.yaml:1:2: /plan/0: m"},
		{"pointer without a position", plan.Error{Source: "<stdin>", Pointer: "/a~1b", Msg: "m"}, "<stdin>: /a~1b: m"},
		{"pointer with non-ASCII", plan.Error{Source: "s", Pointer: "/é 😀", Msg: "m"}, "s: /é 😀: m"},
		{"pointer with a newline is quoted", plan.Error{Source: "s", Pointer: "/a\nb", Msg: "m"}, `s: "/a\nb": m`},
		{"pointer with an escape is quoted", plan.Error{Source: "s", Pointer: "/\x1b[2J", Msg: "m"}, `s: "/\x1b[2J": m`},
		{"pointer with a line separator is quoted", plan.Error{Source: "s", Pointer: "/a\u2028b", Msg: "m"}, `s: "/a\u2028b": m`},
		{"message on several lines", plan.Error{Source: "s", Msg: "first\nsecond\r\nthird  fourth\n"}, "s: first second third fourth"},
		{"message with a carriage return", plan.Error{Source: "s", Msg: "a\rb"}, "s: a b"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.err.Error(); got != tt.want {
				t.Errorf("Error()\n got %s\nwant %s", got, tt.want)
			}
		})
	}
}

// TestErrorQuotesLongText checks that a key shown in a message is cut short
// without splitting a character.
func TestErrorQuotesLongText(t *testing.T) {
	tests := []struct {
		name, key, shown string
	}{
		{"short", "kk", `"kk"`},
		{"80 bytes", strings.Repeat("k", 80), `"` + strings.Repeat("k", 80) + `"`},
		{"81 bytes", strings.Repeat("k", 81), `"` + strings.Repeat("k", 80) + `"...`},
		{"cut on a character boundary", strings.Repeat("é", 50), `"` + strings.Repeat("é", 40) + `"...`},
		{"cut before a split character", "a" + strings.Repeat("é", 50), `"a` + strings.Repeat("é", 39) + `"...`},
		{"control characters are escaped", "a\x1b[31mb", `"a\x1b[31mb"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			key, err := json.Marshal(tt.key)
			if err != nil {
				t.Fatal(err)
			}
			in := "{" + string(key) + ":1," + string(key) + ":2}"
			_, err = plan.Decode(context.Background(), src, []byte(in), plan.JSON, plan.DefaultLimits)
			want := "duplicate key " + tt.shown + ": consumers disagree on which value wins"
			if err == nil || !strings.HasSuffix(err.Error(), ": "+want) {
				t.Errorf("Decode(%s) error\n got %v\nwant ...: %s", in, err, want)
			}
		})
	}
}
