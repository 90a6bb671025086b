package agent

import "testing"

func TestFrontmatter(t *testing.T) {
	for _, tc := range []struct {
		in, front string
		ok        bool
	}{
		{"---\na: 1\n---\n", "a: 1\n", true},
		{"---\na: 1\n---", "a: 1\n", true},
		{"---\r\na: 1\r\n---\r\nb\r\n", "a: 1\n", true},
		{"---\n---\n", "", true},
		{"---\n---", "", true},
		{"---\n\n---\n", "\n", true},
		{"---\na: 1\n--- \n", "", false},
		{"---\na: 1\n", "", false},
		{"--- \na: 1\n---\n", "", false},
		{"\xef\xbb\xbf---\na: 1\n---\n", "", false},
		{"---", "", false},
		{"", "", false},
	} {
		front, ok := Frontmatter([]byte(tc.in))
		if ok != tc.ok || string(front) != tc.front {
			t.Errorf("frontmatter(%q) = %q, %v; want %q, %v", tc.in, front, ok, tc.front, tc.ok)
		}
	}
}
