package document_test

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/spawngate/spawngate/internal/document"
)

// TestParserDecisions pins, one row each, the decisions the README lists
// under "How documents are read": for every construct two parsers could
// read differently, the gate either refuses it or accepts it with one
// meaning. A row that changes must change the README with it.
func TestParserDecisions(t *testing.T) {
	tests := []struct {
		decision string
		syntax   document.Syntax
		in       string
		refuse   string // a part of the error, or "" to accept
		want     any    // the value accepted
	}{
		{"duplicate keys (JSON)", document.JSON, `{"a": 1, "a": 2}`, `duplicate key "a"`, nil},
		{"duplicate keys (YAML)", document.YAML, "a: 1\na: 2\n", `duplicate key "a"`, nil},
		{"several YAML documents", document.YAML, "a: 1\n---\na: 2\n", "more than one YAML document", nil},
		{"YAML tag !!str", document.YAML, "a: !!str 12\n", "YAML tag !!str", nil},
		{"YAML tag !!binary", document.YAML, "a: !!binary aGk=\n", "YAML tag !!binary", nil},
		{"custom YAML tag", document.YAML, "a: !vault secret\n", "YAML tag !vault", nil},
		{"bare tag !", document.YAML, "a: ! 40000\n", "YAML tag !", nil},
		{"bare tag ! after an anchor, on the next line", document.YAML, "a: &x\n  ! 40000\n", "YAML tag !", nil},
		{"bare tag ! after an anchor and a comment", document.YAML, "a: &x # note\n\n  ! true\n", "YAML tag !", nil},
		{"anchor then value on the next line", document.YAML, "a: &x\n  40000\n", "", map[string]any{"a": json.Number("40000")}},
		{"explicit key", document.YAML, "? a\n: 1\n", "explicit key indicator ?", nil},
		{"explicit key, indicator on the line before", document.YAML, "?\n  a\n: 1\n", "explicit key indicator ?", nil},
		{"explicit key in a flow mapping", document.YAML, "{a: 1, ?b: 2}\n", "explicit key indicator ?", nil},
		{"explicit key in a flow mapping, across lines", document.YAML, "{ a: 1, ?\n b : 2}\n", "explicit key indicator ?", nil},
		{"a question mark ending a value is text", document.YAML, "a: why?\nb: 1\n", "", map[string]any{"a": "why?", "b": json.Number("1")}},
		{"a question mark in a comment above is text", document.YAML, "# why ?\nb: 1\n", "", map[string]any{"b": json.Number("1")}},
		{"merge key", document.YAML, "base: &b {x: 1}\nc:\n  <<: *b\n", "merge key <<", nil},
		{"anchors and aliases", document.YAML, "a: &x [1, 2]\nb: *x\n", "", map[string]any{"a": []any{json.Number("1"), json.Number("2")}, "b": []any{json.Number("1"), json.Number("2")}}},
		{"alias as a key", document.YAML, "a: &k key\n*k : 1\n", "alias *k used as a key", nil},
		{"non-string key", document.YAML, "1: one\n", "is read as a number, not a string", nil},
		{"YAML 1.1 boolean", document.YAML, "a: yes\n", "is a boolean to YAML 1.1 parsers", nil},
		{"YAML 1.1 boolean, quoted", document.YAML, "a: 'yes'\n", "", map[string]any{"a": "yes"}},
		{"YAML 1.1 octal", document.YAML, "a: 010\n", "not written in plain decimal", nil},
		{"YAML hex", document.YAML, "a: 0x10\n", "not written in plain decimal", nil},
		{"YAML underscores", document.YAML, "a: 1_000\n", "not written in plain decimal", nil},
		{"YAML sexagesimal", document.YAML, "a: 1:20\n", "is a number to some YAML parsers", nil},
		{"YAML .5", document.YAML, "a: .5\n", "not written as JSON writes numbers", nil},
		{"YAML .inf", document.YAML, "a: .inf\n", "not written as JSON writes numbers", nil},
		{"YAML .nan", document.YAML, "a: .nan\n", "not written as JSON writes numbers", nil},
		{"YAML date", document.YAML, "a: 2001-12-14\n", "unquoted date", nil},
		{"YAML 1e5 is a number", document.YAML, "a: 1e5\n", "", map[string]any{"a": json.Number("1e5")}},
		{"integer beyond 2^53, kept exactly", document.JSON, `{"a": 9007199254740993}`, "", map[string]any{"a": json.Number("9007199254740993")}},
		{"number beyond float64", document.JSON, `{"a": 1e400}`, "beyond the range of a 64-bit float", nil},
		{"NaN", document.JSON, `{"a": NaN}`, "unexpected character 'N'", nil},
		{"Infinity", document.JSON, `{"a": Infinity}`, "unexpected character 'I'", nil},
		{"byte-order mark (JSON)", document.JSON, "\xef\xbb\xbf{}", "byte-order mark", nil},
		{"byte-order mark (YAML)", document.YAML, "\xef\xbb\xbfa: 1\n", "byte-order mark", nil},
		{"UTF-16", document.JSON, "\xff\xfe{\x00}\x00", "UTF-16 byte-order mark", nil},
		{"invalid UTF-8", document.JSON, "{\"a\": \"\xff\"}", "invalid UTF-8", nil},
		{"lone surrogate", document.JSON, `{"a": "\ud800"}`, "lone UTF-16 surrogate", nil},
		{"comment in JSON", document.JSON, "{} // note", "unexpected content after the document", nil},
		{"trailing comma", document.JSON, `{"a": 1,}`, "trailing comma", nil},
		{"numbers keep their literal", document.JSON, `{"a": 4e4, "b": 40000.0}`, "", map[string]any{"a": json.Number("4e4"), "b": json.Number("40000.0")}},
	}
	for _, tt := range tests {
		t.Run(tt.decision, func(t *testing.T) {
			v, err := document.Decode(context.Background(), "doc", []byte(tt.in), tt.syntax, document.DefaultLimits)
			if tt.refuse != "" {
				if err == nil || !strings.Contains(err.Error(), tt.refuse) {
					t.Fatalf("got %#v, %v; want a refusal containing %q", v, err, tt.refuse)
				}
				return
			}
			if err != nil {
				t.Fatalf("refused: %v", err)
			}
			if !reflect.DeepEqual(v, tt.want) {
				t.Fatalf("got %#v, want %#v", v, tt.want)
			}
		})
	}
}
