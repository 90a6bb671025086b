package report

import (
	"fmt"
	"strings"
	"unicode"
)

// Clean escapes what must not reach a terminal or a log as it is: control
// characters, line breaks and Unicode format characters such as
// right-to-left overrides. Everything else is left readable.
func Clean(s string) string {
	clean := true
	for _, r := range s {
		if needsEscape(r) {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if needsEscape(r) {
			if r <= 0xFFFF {
				fmt.Fprintf(&b, `\u%04x`, r)
			} else {
				fmt.Fprintf(&b, `\U%08x`, r)
			}
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

func needsEscape(r rune) bool {
	return r == unicode.ReplacementChar || unicode.IsControl(r) || unicode.Is(unicode.Cf, r) || r == '\u2028' || r == '\u2029'
}
