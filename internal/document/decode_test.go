package document_test

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/spawngate/spawngate/internal/document"
)

// src is the source name every Decode case reads under.
const src = "doc"

// decodeCase is one document and what Decode must make of it: a value, or
// when err is set, an *Error whose Error() is exactly err.
type decodeCase struct {
	name   string
	in     string
	syntax document.Syntax
	lim    *document.Limits // nil for document.DefaultLimits
	want   any
	err    string
}

type (
	obj  = map[string]any
	list = []any
	num  = json.Number
)

func (c decodeCase) limits() document.Limits {
	if c.lim != nil {
		return *c.lim
	}
	return document.DefaultLimits
}

func limits(maxBytes int64, maxDepth, maxAliasNodes int) *document.Limits {
	l := document.DefaultLimits
	l.MaxBytes, l.MaxDepth, l.MaxAliasNodes = maxBytes, maxDepth, maxAliasNodes
	return &l
}

func aliasBytes(n int) *document.Limits {
	l := document.DefaultLimits
	l.MaxAliasBytes = n
	return &l
}

func runDecodeCases(t *testing.T, cases []decodeCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := document.Decode(context.Background(), src, []byte(tc.in), tc.syntax, tc.limits())
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
		var pe *document.Error
		if !errors.As(err, &pe) {
			t.Fatalf("Decode(%q) error is %T, want *document.Error: %v", tc.in, err, err)
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
	{name: "at the size limit", in: `{"a":1}`, syntax: document.JSON, lim: limits(7, 64, 10), want: obj{"a": num("1")}},
	{name: "over the size limit", in: `{"a":1} `, syntax: document.JSON, lim: limits(7, 64, 10),
		err: "doc: document is larger than 7 bytes (limit max-bytes)"},
	{name: "over the size limit yaml", in: "a: 12345", syntax: document.YAML, lim: limits(7, 64, 10),
		err: "doc: document is larger than 7 bytes (limit max-bytes)"},
	{name: "size is checked before the encoding", in: "\xff\xff", syntax: document.JSON, lim: limits(1, 64, 10),
		err: "doc: document is larger than 1 bytes (limit max-bytes)"},

	// byte-order marks
	{name: "UTF-8 BOM json", in: "\xEF\xBB\xBF{}", syntax: document.JSON,
		err: "doc:1:1: byte-order mark at the start: save the document as UTF-8 without a BOM"},
	{name: "UTF-8 BOM yaml", in: "\xEF\xBB\xBFa: 1\n", syntax: document.YAML,
		err: "doc:1:1: byte-order mark at the start: save the document as UTF-8 without a BOM"},
	{name: "UTF-8 BOM alone", in: "\xEF\xBB\xBF", syntax: document.Sniff,
		err: "doc:1:1: byte-order mark at the start: save the document as UTF-8 without a BOM"},
	{name: "UTF-16 big-endian BOM", in: "\xFE\xFF\x00{\x00}", syntax: document.JSON,
		err: "doc:1:1: UTF-16 byte-order mark: save the document as UTF-8 without a BOM"},
	{name: "UTF-16 little-endian BOM", in: "\xFF\xFEa\x00:\x00", syntax: document.YAML,
		err: "doc:1:1: UTF-16 byte-order mark: save the document as UTF-8 without a BOM"},
	{name: "UTF-32 little-endian BOM", in: "\xFF\xFE\x00\x00{\x00\x00\x00", syntax: document.Sniff,
		err: "doc:1:1: UTF-16 byte-order mark: save the document as UTF-8 without a BOM"},

	// invalid UTF-8
	{name: "invalid byte", in: `{"a": "` + "\xff" + `"}`, syntax: document.JSON,
		err: "doc:1:8: invalid UTF-8 (byte 0xFF)"},
	{name: "invalid byte after multi-byte characters", in: "plan:\n  - é😀\xC3\x28\n", syntax: document.YAML,
		err: "doc:2:7: invalid UTF-8 (byte 0xC3)"},
	{name: "truncated sequence at the end", in: "a: b\xe2\x82", syntax: document.YAML,
		err: "doc:1:5: invalid UTF-8 (byte 0xE2)"},
	{name: "overlong encoding", in: "[\"\xC0\xAF\"]", syntax: document.JSON,
		err: "doc:1:3: invalid UTF-8 (byte 0xC0)"},
	{name: "UTF-8 encoded surrogate", in: "\n\n  \xED\xA0\x80", syntax: document.Sniff,
		err: "doc:3:3: invalid UTF-8 (byte 0xED)"},
	{name: "invalid byte in a comment", in: "# \xff\na: 1\n", syntax: document.YAML,
		err: "doc:1:3: invalid UTF-8 (byte 0xFF)"},

	// empty
	{name: "empty json", in: "", syntax: document.JSON, err: "doc: empty document: nothing to check"},
	{name: "empty yaml", in: "", syntax: document.YAML, err: "doc: empty document: nothing to check"},
	{name: "empty sniffed", in: "", syntax: document.Sniff, err: "doc: empty document: nothing to check"},
	{name: "whitespace json", in: " \t\r\n\n", syntax: document.JSON, err: "doc: empty document: nothing to check"},
	{name: "whitespace yaml", in: "\n\n   \r\n", syntax: document.YAML, err: "doc: empty document: nothing to check"},
	{name: "only comments yaml", in: "# a plan\n  # will go here\n", syntax: document.YAML, err: "doc: empty document: nothing to check"},
	{name: "only comments sniffed", in: "\n# nothing yet", syntax: document.Sniff, err: "doc: empty document: nothing to check"},

	// sniffing: JSON when the first non-space byte is { or [
	{name: "sniff object is JSON", in: "{a: 1}", syntax: document.Sniff,
		err: "doc:1:2: unexpected character 'a': expected a string key"},
	{name: "sniff list after space is JSON", in: " \t\r\n[1,]", syntax: document.Sniff,
		err: "doc:2:4: trailing comma before ]"},
	{name: "sniff valid JSON", in: `{"plan": [{"budget_tokens": 4e4}]}`, syntax: document.Sniff,
		want: obj{"plan": list{obj{"budget_tokens": num("4e4")}}}},
	{name: "sniff quoted key is YAML", in: `"a": yes`, syntax: document.Sniff,
		err: `doc:1:6: /a: unquoted "yes" is a boolean to YAML 1.1 parsers: quote it`},
	{name: "sniff mapping is YAML", in: "a: [1, 2,]\n", syntax: document.Sniff,
		want: obj{"a": list{num("1"), num("2")}}},
	{name: "sniff sequence is YAML", in: "- x\n", syntax: document.Sniff, want: list{"x"}},
	{name: "sniff scalar is YAML", in: "1", syntax: document.Sniff, want: num("1")},
	{name: "sniff comment first is YAML", in: "# {\n{a: 1}", syntax: document.Sniff, want: obj{"a": num("1")}},
}

func TestDecode(t *testing.T) {
	runDecodeCases(t, decodeCases)
}

func TestSyntaxOf(t *testing.T) {
	tests := []struct {
		name string
		want document.Syntax
		err  string
	}{
		{name: "plan.json", want: document.JSON},
		{name: "PLAN.JSON", want: document.JSON},
		{name: "dir.yaml/plan.Json", want: document.JSON},
		{name: "plan.yaml", want: document.YAML},
		{name: "plan.YAML", want: document.YAML},
		{name: "plan.yml", want: document.YAML},
		{name: "plan.yMl", want: document.YAML},
		{name: "/abs/path/policy.yml", want: document.YAML},
		{name: document.Stdin, want: document.Sniff},
		{name: "/dev/fd/63", want: document.Sniff},
		{name: "plan", want: document.Sniff},
		{name: "dir.json/plan", want: document.Sniff},
		{name: "plan.txt", err: `plan.txt: unknown document type ".txt": use .yaml, .yml or .json`},
		{name: "plan.TOML", err: `plan.TOML: unknown document type ".toml": use .yaml, .yml or .json`},
		{name: "plan.json.bak", err: `plan.json.bak: unknown document type ".bak": use .yaml, .yml or .json`},
		{name: "plan.", err: `plan.: unknown document type ".": use .yaml, .yml or .json`},
		{name: "plan.jsonl", err: `plan.jsonl: unknown document type ".jsonl": use .yaml, .yml or .json`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := document.SyntaxOf(tt.name)
			if tt.err != "" {
				var pe *document.Error
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
		err  document.Error
		want string
	}{
		{"source only", document.Error{Source: "p.yaml", Msg: "m"}, "p.yaml: m"},
		{"line", document.Error{Source: "p.yaml", Line: 3, Msg: "m"}, "p.yaml:3: m"},
		{"line and column", document.Error{Source: "p.yaml", Line: 3, Column: 7, Msg: "m"}, "p.yaml:3:7: m"},
		{"column without a line", document.Error{Source: "p.yaml", Column: 7, Msg: "m"}, "p.yaml: m"},
		{"pointer", document.Error{Source: "p.yaml", Line: 1, Column: 2, Pointer: "/plan/0", Msg: "m"}, "p.yaml:1:2: /plan/0: m"},
		{"pointer without a position", document.Error{Source: "<stdin>", Pointer: "/a~1b", Msg: "m"}, "<stdin>: /a~1b: m"},
		{"pointer with non-ASCII", document.Error{Source: "s", Pointer: "/é 😀", Msg: "m"}, "s: /é 😀: m"},
		{"pointer with a newline is quoted", document.Error{Source: "s", Pointer: "/a\nb", Msg: "m"}, `s: "/a\nb": m`},
		{"pointer with an escape is quoted", document.Error{Source: "s", Pointer: "/\x1b[2J", Msg: "m"}, `s: "/\x1b[2J": m`},
		{"pointer with a line separator is quoted", document.Error{Source: "s", Pointer: "/a\u2028b", Msg: "m"}, `s: "/a\u2028b": m`},
		{"message on several lines", document.Error{Source: "s", Msg: "first\nsecond\r\nthird  fourth\n"}, "s: first second third fourth"},
		{"message with a carriage return", document.Error{Source: "s", Msg: "a\rb"}, "s: a b"},
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
			_, err = document.Decode(context.Background(), src, []byte(in), document.JSON, document.DefaultLimits)
			want := "duplicate key " + tt.shown + ": consumers disagree on which value wins"
			if err == nil || !strings.HasSuffix(err.Error(), ": "+want) {
				t.Errorf("Decode(%s) error\n got %v\nwant ...: %s", in, err, want)
			}
		})
	}
}
