package host

import (
	"strings"
	"testing"
)

// The matchers the hosts' own engines read otherwise than Go's regexp are
// refused; those all three read alike are read.
func TestPortableMatcher(t *testing.T) {
	for _, m := range []string{
		// Claude Code's JavaScript: (?i) is a syntax error there, \z and \Q
		// are a plain z and Q, named groups are written (?<t>), POSIX
		// classes are a class of their letters.
		`(?i)agent|skill|workflow`,
		`^(Agent|Task|Skill|Workflow)\z`,
		`\QAgent\E|Skill|Workflow`,
		`(?P<t>Agent|Skill|Workflow)`,
		`[[:alpha:]]+`,
		// Codex's Rust regex: \Q is an error, \< a word boundary, [[] a
		// nested class, \141 a backreference.
		`^(\QAgent\E|.*spawn_agent|.*resume_agent)$`,
		`\<spawn`,
		`spawn_agent|[[]`,
		`\141gent`,
		`spawn_agent{1}`,
	} {
		if _, err := PortableMatcher(m); err == nil || !strings.Contains(err.Error(), "may read otherwise") {
			t.Errorf("%q was read: %v", m, err)
		}
	}
	for _, tc := range []struct {
		matcher string
		tool    string
		want    bool
	}{
		{`^(Agent|.*spawn_agent|.*resume_agent)$`, "collaborationspawn_agent", true},
		{`^(Agent|.*spawn_agent|.*resume_agent)$`, "spawn_agents", false},
		{`Ag.nt|Sk(?:ill)?`, "Skill", true},
		{`mcp__.*__spawn`, "mcp__x__spawn", true},
		{`^Work`, "Workflow", true},
		{`Skill$`, "Skills", false},
		{`a\.b`, "axb", false},
	} {
		re, err := PortableMatcher(tc.matcher)
		if err != nil {
			t.Fatalf("%q: %v", tc.matcher, err)
		}
		if got := re.MatchString(tc.tool); got != tc.want {
			t.Errorf("%q on %q: %v, want %v", tc.matcher, tc.tool, got, tc.want)
		}
	}
	if _, err := PortableMatcher(`a**`); err == nil || !strings.Contains(err.Error(), "does not compile") {
		t.Errorf("a**: %v", err)
	}
}
