package doctor

import (
	"bytes"
	"testing"
)

// TestStripJSONC: comments and trailing commas become blanks, strings
// that look like either are kept, and every byte keeps its offset (a
// line found in the result is the file's line).
func TestStripJSONC(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`{"a": 1}`, `{"a": 1}`},
		{"// top\n{\"a\": 1}", "      \n{\"a\": 1}"},
		{"{\"a\": 1, // why\n\"b\": 2}", "{\"a\": 1,       \n\"b\": 2}"},
		{"{/* x\ny */\"a\": [1, 2,],}", "{    \n    \"a\": [1, 2 ] }"},
		{`{"a": [1, /* c */ ]}`, `{"a": [1          ]}`},
		{`{"u": "http://x/*y*/", "q": "a\",}"}`, `{"u": "http://x/*y*/", "q": "a\",}"}`},
		{`{"a": 1,` + "\r\n}", `{"a": 1 ` + "\r\n}"},
		{"{\"a\": 1 /* open", "{\"a\": 1        "},
		{`{"a": "open`, `{"a": "open`},
	} {
		got := StripJSONC([]byte(tc.in))
		if string(got) != tc.want {
			t.Errorf("StripJSONC(%q) = %q, want %q", tc.in, got, tc.want)
		}
		if len(got) != len(tc.in) || bytes.Count(got, []byte("\n")) != bytes.Count([]byte(tc.in), []byte("\n")) {
			t.Errorf("StripJSONC(%q) moved bytes or lines: %q", tc.in, got)
		}
	}
	// What is left is JSON: a settings file with both reads as one.
	v, _, problem := DecodeJSON(StripJSONC([]byte("// settings\n{\n  \"hooks\": {}, /* none yet */\n  \"x\": [1,],\n}\n")))
	if problem != "" {
		t.Fatalf("not read as JSON: %s", problem)
	}
	if m, ok := v.(map[string]any); !ok || len(m) != 2 {
		t.Fatalf("read as %#v", v)
	}
}
