package document_test

import (
	"testing"

	"github.com/spawngate/spawngate/internal/document"
)

// Every error names its place the same way: source, line and column as
// far as they are known, then the pointer.
func TestWhere(t *testing.T) {
	for _, tc := range []struct {
		source       string
		line, column int
		pointer      string
		want         string
	}{
		{"plan.json", 3, 5, "/plan/0", "plan.json:3:5: /plan/0: "},
		{"plan.json", 3, 0, "", "plan.json:3: "},
		{"plan.json", 0, 5, "", "plan.json: "},
		{"", 3, 5, "/plan/0", "/plan/0: "},
		{"", 0, 0, "", ""},
		{"plan.json", 0, 0, "/a\nb", `plan.json: "/a\nb": `},
	} {
		if got := document.Where(tc.source, tc.line, tc.column, tc.pointer); got != tc.want {
			t.Errorf("Where(%q, %d, %d, %q) = %q, want %q", tc.source, tc.line, tc.column, tc.pointer, got, tc.want)
		}
	}
	e := &document.Error{Source: "p.yaml", Line: 2, Column: 1, Pointer: "/x", Msg: "bad", Limit: "max-depth"}
	if got, want := e.Error(), "p.yaml:2:1: /x: bad (limit max-depth)"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
}
