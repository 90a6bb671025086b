package doctor

import (
	"slices"
	"strings"
	"testing"
)

func TestShellWords(t *testing.T) {
	vars := map[string]string{"CLAUDE_PROJECT_DIR": "/p q", "HOME": "/h"}
	for _, tc := range []struct {
		in    string
		words []string
		op    string
		err   string
	}{
		{in: "spawngate hook claude-code", words: []string{"spawngate", "hook", "claude-code"}},
		{in: "  /bin/spawngate\t'a b' \"c d\" e\\ f  ", words: []string{"/bin/spawngate", "a b", "c d", "e f"}},
		{in: `"$CLAUDE_PROJECT_DIR"/bin/x`, words: []string{"/p q/bin/x"}},
		{in: `$CLAUDE_PROJECT_DIR/bin/x`, words: []string{"/p", "q/bin/x"}}, // unquoted: split where it has blanks
		{in: `${HOME}/bin/x ~/p.yaml a~`, words: []string{"/h/bin/x", "/h/p.yaml", "a~"}},
		{in: `x "" ''`, words: []string{"x", "", ""}},
		{in: `x "a\"b\$c"`, words: []string{"x", `a"b$c`}},
		{in: `x $ y`, words: []string{"x", "$", "y"}},
		{in: "x # a comment", words: []string{"x"}},
		{in: "x\n", words: []string{"x"}},
		{in: "x || true", words: []string{"x"}, op: "||"},
		{in: "x; exit 0", words: []string{"x"}, op: ";"},
		{in: "x 2>/dev/null", words: []string{"x", "2"}, op: ">"},
		{in: "x | y", words: []string{"x"}, op: "|"},
		{in: "x &", words: []string{"x"}, op: "&"},
		{in: "x\ny", words: []string{"x"}, op: "a line break"},
		{in: "$BIN x", err: "uses $BIN, which doctor cannot know"},
		{in: "${BIN:-x} y", err: "uses ${BIN:-x}"},
		{in: "$(which spawngate) x", err: "command substitution"},
		{in: "`which spawngate` x", err: "command substitution"},
		{in: `"$(x)"`, err: "command substitution"},
		{in: "'x", err: "unclosed quote"},
		{in: `"x`, err: "unclosed quote"},
		{in: "$1", err: "uses $1"},
	} {
		words, op, err := ShellWords(tc.in, vars, "/h")
		switch {
		case tc.err != "":
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("ShellWords(%q): error %v, want one saying %q", tc.in, err, tc.err)
			}
		case err != nil || op != tc.op || !slices.Equal(words, tc.words):
			t.Errorf("ShellWords(%q) = %q, %q, %v; want %q, %q", tc.in, words, op, err, tc.words, tc.op)
		}
	}
}
