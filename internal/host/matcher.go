package host

import (
	"fmt"
	"regexp"
	"strings"
)

// A hook's matcher, where it is a regular expression, is read by the
// host's own engine: Claude Code's is JavaScript's, Codex's Rust's regex
// crate. Go's regexp reads many patterns as neither does (\Q...\E and
// (?i) are errors in JavaScript; \Q...\E and octal escapes in Rust; \<
// and nested classes mean other things in Rust), so a doctor that
// compiled a matcher with Go's could pass one the host never matches.
// PortableMatcher accepts only the patterns all three read alike, and a
// doctor fails the rest with the reason.

// portableToken is one piece of a pattern all three engines read alike:
// a name's characters, an escaped dot, the dot, the quantifiers * + ?
// (lazy too), alternation, a group (capturing or not) and the anchors ^ $.
var portableToken = regexp.MustCompile(`^(?:[A-Za-z0-9_\-:]+|\\\.|\.|[*+?]\??|\||\(\?:|\(|\)|\^|\$)`)

// PortableMatcher compiles a matcher that is a regular expression when
// it is written only in the syntax JavaScript, Rust's regex and Go's
// regexp read alike, unanchored as all three hosts search; else it says
// which part is not.
func PortableMatcher(pattern string) (*regexp.Regexp, error) {
	for rest := pattern; rest != ""; {
		tok := portableToken.FindString(rest)
		if tok == "(" && strings.HasPrefix(rest, "(?") {
			tok = "" // a group's flags or name: (?i), (?P<n>
		}
		if tok == "" {
			return nil, fmt.Errorf("the character %s at byte %d is syntax that the host's regular-expression engine may read otherwise than doctor; write the matcher with letters, digits, _ - :, \\., ., * + ?, |, ( ), ^ and $ only", firstRune(rest), len(pattern)-len(rest)+1)
		}
		rest = rest[len(tok):]
	}
	re, err := regexp.Compile(pattern)
	if err != nil {
		return nil, &NotRegexpError{Msg: strings.TrimPrefix(err.Error(), "error parsing regexp: ")}
	}
	return re, nil
}

// NotRegexpError is PortableMatcher's error for a pattern written in the
// syntax every engine reads alike that does not compile: no host's engine
// compiles it either, so a doctor can say what the host does with it.
type NotRegexpError struct {
	Msg string // why, as Go's regexp says it
}

func (e *NotRegexpError) Error() string { return "does not compile: " + e.Msg }

func firstRune(s string) string {
	for _, r := range s {
		return string(r)
	}
	return ""
}
