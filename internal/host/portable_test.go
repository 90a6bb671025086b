package host

import (
	"errors"
	"testing"
)

// TestPortableMatcherNotRegexp: a pattern in the portable syntax that does
// not compile is a NotRegexpError, which a doctor tells from one it cannot
// check (syntax an engine may read otherwise).
func TestPortableMatcherNotRegexp(t *testing.T) {
	for _, tc := range []struct {
		pattern string
		not     bool
	}{{"*", true}, {"(task", true}, {`\d`, false}, {"(?i)task", false}} {
		_, err := PortableMatcher(tc.pattern)
		var ne *NotRegexpError
		if err == nil || errors.As(err, &ne) != tc.not {
			t.Errorf("PortableMatcher(%q) = %v; a NotRegexpError: %v, want %v", tc.pattern, err, ne != nil, tc.not)
		}
	}
}
