package doctor

import (
	"errors"
	"fmt"
	"strings"
)

// ShellWords splits the first simple command of a shell command line, as
// a host hands it to sh -c, into the words the shell would run, expanding
// only the variables in vars (and a leading ~ to home). It stops at the
// first operator (; & | < > ( ) or a line break) and returns it. It fails
// on what it cannot know without running anything: another variable, a
// command substitution, an unclosed quote. A doctor uses it to see which
// program a hook command runs.
func ShellWords(s string, vars map[string]string, home string) (words []string, op string, err error) {
	var cur strings.Builder
	inWord := false
	emit := func() {
		if inWord {
			words = append(words, cur.String())
			cur.Reset()
			inWord = false
		}
	}
	// expand reads $NAME or ${NAME} at s[i], returning its value and length.
	expand := func(i int) (string, int, error) {
		rest := s[i+1:]
		var name string
		n := 1
		switch {
		case strings.HasPrefix(rest, "("):
			return "", 0, errors.New("runs a command substitution ($(...))")
		case strings.HasPrefix(rest, "{"):
			end := strings.IndexByte(rest, '}')
			if end < 0 {
				return "", 0, errors.New("has an unclosed ${")
			}
			name, n = rest[1:end], end+2
		default:
			j := 0
			for j < len(rest) && (rest[j] == '_' || 'A' <= rest[j] && rest[j] <= 'Z' || 'a' <= rest[j] && rest[j] <= 'z' || j > 0 && '0' <= rest[j] && rest[j] <= '9') {
				j++
			}
			if j == 0 {
				if rest == "" || strings.IndexByte(" \t\n\"", rest[0]) >= 0 {
					return "$", 1, nil // a dollar sign alone is itself
				}
				return "", 0, fmt.Errorf("uses $%c", rest[0])
			}
			name, n = rest[:j], j+1
		}
		v, ok := vars[name]
		if !ok || v == "" {
			return "", 0, fmt.Errorf("uses %s, which doctor cannot know", s[i:i+n])
		}
		return v, n, nil
	}
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == ' ' || c == '\t':
			emit()
			i++
		case strings.IndexByte(";&|<>()\n", c) >= 0:
			emit()
			if strings.TrimSpace(s[i:]) == "" {
				return words, "", nil
			}
			op := string(c)
			if i+1 < len(s) && s[i+1] == c && strings.IndexByte(";&|<>", c) >= 0 {
				op += string(c)
			}
			if op == "\n" {
				op = "a line break"
			}
			return words, op, nil
		case c == '#' && !inWord:
			end := strings.IndexByte(s[i:], '\n')
			if end < 0 {
				i = len(s)
			} else {
				i += end
			}
		case c == '\'':
			end := strings.IndexByte(s[i+1:], '\'')
			if end < 0 {
				return words, "", errors.New("has an unclosed quote")
			}
			cur.WriteString(s[i+1 : i+1+end])
			inWord = true
			i += end + 2
		case c == '"':
			inWord = true
			i++
			for {
				if i >= len(s) {
					return words, "", errors.New("has an unclosed quote")
				}
				c := s[i]
				if c == '"' {
					i++
					break
				}
				switch c {
				case '\\':
					if i+1 < len(s) && strings.IndexByte("$`\"\\\n", s[i+1]) >= 0 {
						if s[i+1] != '\n' {
							cur.WriteByte(s[i+1])
						}
						i += 2
						continue
					}
					cur.WriteByte(c)
					i++
				case '`':
					return words, "", errors.New("runs a command substitution (`...`)")
				case '$':
					v, n, err := expand(i)
					if err != nil {
						return words, "", err
					}
					cur.WriteString(v)
					i += n
				default:
					cur.WriteByte(c)
					i++
				}
			}
		case c == '\\':
			if i+1 < len(s) && s[i+1] != '\n' {
				cur.WriteByte(s[i+1])
				inWord = true
			}
			i += 2
		case c == '`':
			return words, "", errors.New("runs a command substitution (`...`)")
		case c == '$':
			v, n, err := expand(i)
			if err != nil {
				return words, "", err
			}
			// Unquoted, the value is split into words where it has blanks.
			for _, r := range v {
				if r == ' ' || r == '\t' || r == '\n' {
					emit()
					continue
				}
				cur.WriteRune(r)
				inWord = true
			}
			i += n
		case c == '~' && !inWord && (i+1 == len(s) || strings.IndexByte("/ \t", s[i+1]) >= 0):
			if home == "" {
				return words, "", errors.New("uses ~, which doctor cannot know")
			}
			cur.WriteString(home)
			inWord = true
			i++
		default:
			cur.WriteByte(c)
			inWord = true
			i++
		}
	}
	emit()
	return words, "", nil
}
