package spelling

import "testing"

func TestDistance(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want int
	}{
		{"", "", 0},
		{"abc", "", 3},
		{"check", "check", 0},
		{"chek", "check", 1},
		{"claud-code", "claude-code", 1},
		{"cdoex", "codex", 1}, // a swap of neighbours is one edit
		{"polcy", "policy", 1},
		{"kitten", "sitting", 3},
		{"naïve", "naive", 1}, // runes, not bytes
	} {
		if got := Distance(tc.a, tc.b); got != tc.want {
			t.Errorf("Distance(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
		if got := Distance(tc.b, tc.a); got != tc.want {
			t.Errorf("Distance(%q, %q) = %d, want %d", tc.b, tc.a, got, tc.want)
		}
	}
}

func TestClosest(t *testing.T) {
	hosts := []string{"claude-code", "codex", "copilot", "gemini"}
	keys := []string{"budget_tokens", "id", "paths", "role", "tools"}
	for _, tc := range []struct {
		typed string
		names []string
		want  string
	}{
		{"claud-code", hosts, "claude-code"},
		{"codx", hosts, "codex"},
		{"gemni", hosts, "gemini"},
		{"cursor", hosts, ""},
		{"tool", keys, "tools"},
		{"budget_token", keys, "budget_tokens"},
		{"ix", keys, "id"},
		{"xy", keys, ""},                          // two edits in two letters is a different word
		{"budgetokenz", keys, ""},                 // three edits is too far, however long
		{"paths", keys, "paths"},                  // an exact name is its own closest
		{"rol", []string{"role", "roll"}, "role"}, // a tie goes to the first
	} {
		if got := Closest(tc.typed, tc.names); got != tc.want {
			t.Errorf("Closest(%q) = %q, want %q", tc.typed, got, tc.want)
		}
	}
}
