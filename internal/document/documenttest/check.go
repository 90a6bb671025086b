package documenttest

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/spawngate/spawngate/internal/document"
	"github.com/spawngate/spawngate/internal/jsonpointer"
	"github.com/spawngate/spawngate/internal/mutate"
)

// Input is one input of a fuzz target that reads a document as JSON
// (AsJSON) or as YAML.
type Input struct {
	Data   []byte
	AsJSON bool
}

// Mutated derives n inputs from the seeds, each read both ways.
func Mutated(seeds []Input, n int) []Input {
	raw := make([][]byte, len(seeds))
	for i, s := range seeds {
		raw[i] = s.Data
	}
	var out []Input
	for i, data := range mutate.Bytes(raw, n, 1) {
		out = append(out, Input{data, i%2 == 0})
	}
	return out
}

// WithinDeadline runs f, and fails when it takes far longer than any
// document should: Go's fuzzing engine does not report a hang by itself.
func WithinDeadline(t testing.TB, data []byte, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatalf("still reading after 10s: %q", data)
	}
}

// CheckError checks the promise every error of reading a document keeps,
// from the reader or the loader.
func CheckError(t testing.TB, err error, source string) {
	t.Helper()
	var pe *document.Error
	if !errors.As(err, &pe) {
		t.Fatalf("error is %T, want *document.Error: %v", err, err)
	}
	msg := err.Error()
	if !strings.HasPrefix(msg, source+":") {
		t.Fatalf("error %q does not start with %q", msg, source+":")
	}
	if strings.ContainsAny(msg, "\r\n") {
		t.Fatalf("error is not one line: %q", msg)
	}
	// A report line must not carry what a document smuggled into it: no
	// control characters (terminal escapes) and no broken UTF-8.
	if i := strings.IndexFunc(msg, func(r rune) bool { return r < 0x20 || r == 0x7F }); i >= 0 || !utf8.ValidString(msg) {
		t.Fatalf("error carries a control character or invalid UTF-8: %q", msg)
	}
	if pe.Msg == "" {
		t.Fatalf("error without a message: %#v", pe)
	}
	if pe.Line < 0 || pe.Column < 0 {
		t.Fatalf("error with a negative position: %#v", pe)
	}
}

// jsonNumberLiteral is RFC 8259's number grammar.
var jsonNumberLiteral = regexp.MustCompile(`^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)?$`)

// CheckShape checks that v, found at the pointer at, holds only what
// document.Decode promises.
func CheckShape(t testing.TB, v any, at string) {
	t.Helper()
	switch v := v.(type) {
	case nil, bool, string:
	case json.Number:
		if !jsonNumberLiteral.MatchString(string(v)) || len(v) > 64 {
			t.Fatalf("%s: number %q is not a JSON number of at most 64 characters", at, v)
		}
		if f, err := strconv.ParseFloat(string(v), 64); err != nil || math.IsInf(f, 0) {
			t.Fatalf("%s: number %q does not fit a float64", at, v)
		}
	case map[string]any:
		for k, e := range v {
			CheckShape(t, e, jsonpointer.Join(at, k))
		}
	case []any:
		for i, e := range v {
			CheckShape(t, e, jsonpointer.Join(at, strconv.Itoa(i)))
		}
	default:
		t.Fatalf("%s: value of type %T", at, v)
	}
}

// DecodeStd reads a JSON document as encoding/json does, numbers as
// json.Number: what Decode's reading is compared with.
func DecodeStd(data []byte) (any, error) {
	if !json.Valid(data) {
		return nil, errors.New("not valid JSON")
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	return v, nil
}
