package document_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/spawngate/spawngate/internal/document"
	"github.com/spawngate/spawngate/internal/document/documenttest"
)

// FuzzDecode reads arbitrary bytes as JSON (asJSON) or YAML. Whatever the
// input, Decode must not panic or hang and must give either a JSON-shaped
// value or a one-line *document.Error. JSON that Decode reads, encoding/json
// reads the same way; JSON that encoding/json reads, Decode reads too unless
// it is stricter for a known reason; and what the YAML parser gives, the JSON
// parser reads back unchanged.
func FuzzDecode(f *testing.F) {
	for _, in := range decodeSeeds() {
		f.Add(in.Data, in.AsJSON)
	}
	f.Fuzz(decodeProperty)
}

func decodeSeeds() []documenttest.Input {
	var seeds []documenttest.Input
	for _, cases := range [][]decodeCase{decodeCases, jsonCases, yamlCases} {
		for _, tc := range cases {
			switch tc.syntax {
			case document.JSON:
				seeds = append(seeds, documenttest.Input{Data: []byte(tc.in), AsJSON: true})
			case document.YAML:
				seeds = append(seeds, documenttest.Input{Data: []byte(tc.in), AsJSON: false})
			default:
				seeds = append(seeds, documenttest.Input{Data: []byte(tc.in), AsJSON: true}, documenttest.Input{Data: []byte(tc.in), AsJSON: false})
			}
		}
	}
	return append(seeds, documenttest.Input{Data: []byte(billionLaughs()), AsJSON: false})
}

func decodeProperty(t *testing.T, data []byte, asJSON bool) {
	syntax := document.YAML
	if asJSON {
		syntax = document.JSON
	}
	var v any
	var err error
	documenttest.WithinDeadline(t, data, func() {
		v, err = document.Decode(context.Background(), "fuzz.doc", data, syntax, document.DefaultLimits)
	})
	if asJSON {
		checkAgainstEncodingJSON(t, data, v, err)
	}
	if err != nil {
		documenttest.CheckError(t, err, "fuzz.doc")
		checkWithin(t, err, data)
		if v != nil {
			t.Fatalf("Decode = %#v with error %v", v, err)
		}
		return
	}
	documenttest.CheckShape(t, v, "")
	if !asJSON {
		checkJSONRoundTrip(t, v)
	}
}

// TestFuzzDecodeShort runs FuzzDecode's property over inputs mutated from
// its seeds, so every go test run fuzzes a little; go test -fuzz goes
// further, guided by coverage.
func TestFuzzDecodeShort(t *testing.T) {
	for _, in := range documenttest.Mutated(decodeSeeds(), 20000) {
		decodeProperty(t, in.Data, in.AsJSON)
	}
}

// checkJSONRoundTrip checks that a value the YAML parser gives reads back
// the same through the JSON parser: both parsers give one data model.
func checkJSONRoundTrip(t *testing.T, v any) {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("json.Marshal(%#v): %v", v, err)
	}
	back, err := document.Decode(context.Background(), "roundtrip.json", data, document.JSON, document.DefaultLimits)
	if err != nil {
		t.Fatalf("the JSON parser refuses what the YAML parser gave: %v\n%s", err, data)
	}
	if !reflect.DeepEqual(back, v) {
		t.Fatalf("JSON round trip\n got %#v\nwant %#v", back, v)
	}
}

// checkWithin checks that an error's line, and its column when it has one,
// lie within the document: a column at most one past its line's last
// character (where a line or the document ends early).
func checkWithin(t *testing.T, err error, data []byte) {
	t.Helper()
	var pe *document.Error
	if !errors.As(err, &pe) || pe.Line == 0 {
		return
	}
	lines := bytes.Split(data, []byte("\n"))
	if pe.Line > len(lines) {
		t.Fatalf("error on line %d of a document of %d: %v", pe.Line, len(lines), err)
	}
	line := lines[pe.Line-1] // a CR counts: JSON reads a lone one as a space
	if n := utf8.RuneCount(line); pe.Column > n+1 {
		t.Fatalf("error at column %d of a line of %d characters: %v", pe.Column, n, err)
	}
	// A character the gate names is the one it describes.
	if pe.Column > 0 && pe.Column <= utf8.RuneCount(line) {
		r := []rune(string(line))[pe.Column-1]
		for prefix, want := range map[string]string{"a tab ": "\t", "a quoted string opens here": "'\"", "unknown escape": "\\"} {
			if strings.HasPrefix(pe.Msg, prefix) && !strings.ContainsRune(want, r) {
				t.Fatalf("%q at %q: %v", pe.Msg, r, err)
			}
		}
	}
}

// strictReasons are why Decode refuses JSON that encoding/json reads.
var strictReasons = []string{
	"duplicate key",
	"lone UTF-16 surrogate",
	"is beyond the range of a 64-bit float",
	"has more than 64 characters",
	"nested deeper than",
	"invalid UTF-8",
}

// checkAgainstEncodingJSON compares Decode with encoding/json: Decode reads
// a subset of what encoding/json reads, and reads it the same way.
func checkAgainstEncodingJSON(t *testing.T, data []byte, got any, err error) {
	t.Helper()
	want, stdErr := documenttest.DecodeStd(data)
	if err == nil {
		if stdErr != nil {
			t.Fatalf("Decode accepts JSON that encoding/json refuses (%v): %q", stdErr, data)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("Decode(%q)\n got %#v\nencoding/json %#v", data, got, want)
		}
		return
	}
	if stdErr != nil {
		return
	}
	msg := err.Error()
	for _, reason := range strictReasons {
		if strings.Contains(msg, reason) {
			if reason == "duplicate key" && !hasDuplicateKey(data) {
				t.Fatalf("Decode reports a duplicate key encoding/json does not see: %v\n%q", err, data)
			}
			return
		}
	}
	t.Fatalf("Decode refuses JSON that encoding/json reads, for no known reason: %v\n%q", err, data)
}

// hasDuplicateKey tells whether any object of a valid JSON document repeats
// a key, as encoding/json decodes keys.
func hasDuplicateKey(data []byte) bool {
	dec := json.NewDecoder(bytes.NewReader(data))
	type frame struct {
		keys      map[string]bool // nil for an array
		expectKey bool
	}
	var stack []*frame
	valueDone := func() {
		if n := len(stack); n > 0 && stack[n-1].keys != nil {
			stack[n-1].expectKey = true
		}
	}
	for {
		tok, err := dec.Token()
		if err != nil {
			return false
		}
		if n := len(stack); n > 0 && stack[n-1].expectKey {
			top := stack[n-1]
			if tok == json.Delim('}') {
				stack = stack[:n-1]
				valueDone()
				continue
			}
			key := tok.(string)
			if top.keys[key] {
				return true
			}
			top.keys[key] = true
			top.expectKey = false
			continue
		}
		switch tok {
		case json.Delim('{'):
			stack = append(stack, &frame{keys: map[string]bool{}, expectKey: true})
		case json.Delim('['):
			stack = append(stack, &frame{})
		case json.Delim(']'):
			stack = stack[:len(stack)-1]
			valueDone()
		default:
			valueDone()
		}
	}
}

func TestHasDuplicateKey(t *testing.T) {
	tests := []struct {
		in   string
		want bool
	}{
		{`{"a":1,"b":2}`, false},
		{`{"a":1,"a":2}`, true},
		{`{"a":{"a":1},"b":[{"a":1},{"a":2}]}`, false},
		{`[{"x":[1,{"y":1,"y":2}]}]`, true},
		{`{"a":{},"b":[],"a":null}`, true},
		{`{"a":1,"\u0061":2}`, true},
		{`[1,2,3]`, false},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			if got := hasDuplicateKey([]byte(tt.in)); got != tt.want {
				t.Errorf("hasDuplicateKey(%s) = %v, want %v", tt.in, got, tt.want)
			}
		})
	}
}
