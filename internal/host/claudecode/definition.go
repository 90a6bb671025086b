package claudecode

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/spawngate/spawngate/internal/agent"
	"github.com/spawngate/spawngate/internal/document"
)

// ReadClaude reads a Claude Code agent definition: Markdown with YAML
// frontmatter. The frontmatter is read with the gate's strict YAML reader,
// so that nothing in it means one thing to the gate and another to Claude
// Code; a file the strict reader refuses is a definition that does not
// parse. A file Claude Code would skip (no frontmatter, no name, YAML it
// cannot read) defines nothing, and says why in Skipped.
func ReadClaude(ctx context.Context, file string, data []byte, lim document.Limits) *agent.Definition {
	d := &agent.Definition{File: file, Lines: map[string]int{}}
	front, ok := agent.Frontmatter(data)
	hf, _, hok := hostFrontmatter(data)
	if !ok && !hok {
		d.Skipped = "it does not start with YAML frontmatter between --- lines, so Claude Code does not load it"
		return d
	}
	if !ok || !hok || !sameFront(hf, front) {
		// Claude Code reads frontmatter more loosely than the gate: after a
		// byte-order mark, with spaces after a ---, and up to the first
		// "---" after the opening one wherever it stands (a---b in a value,
		// a closing ----). It would read other settings than the gate, so
		// the definition is refused, under the name the host's reading
		// finds, so that a definition of the same name further down is not
		// taken for it.
		if _, lok := agent.Frontmatter(leniently(data)); lok && !ok {
			d.Err = &document.Error{Source: file, Line: 1, Msg: "the frontmatter is written oddly (a byte-order mark, or spaces after ---): hosts may read it differently; write it plainly"}
		} else {
			d.Err = &document.Error{Source: file, Line: earlyEnd(data), Msg: "Claude Code ends this frontmatter at another \"---\" (inside a value, or a line of more dashes) and would read other settings than these: take the --- out of the value and close the frontmatter with a line of exactly ---"}
		}
		var fields map[string]any
		if hok && yaml.Unmarshal(hf, &fields) == nil {
			d.Name, _ = fields["name"].(string)
		}
		if d.Name == "" && ok && yaml.Unmarshal(front, &fields) == nil {
			// Where the host's reading finds no name, the host skips the
			// file; refusing under the name the gate reads is the cautious
			// answer.
			d.Name, _ = fields["name"].(string)
		}
		if d.Name == "" {
			d.Err, d.Skipped = nil, "its frontmatter, as Claude Code reads it, has no name, so Claude Code does not load it"
		}
		return d
	}
	v, perr, ofText := agent.DecodeFrontmatter(ctx, file, front, lim)
	if perr != nil {
		d.Err = perr
		if !ofText {
			return d
		}
		// Claude Code reads YAML more leniently than the gate. Its parser
		// keeps the last of a key given twice; YAML it refuses it parses
		// again rewritten (clientFallback). Where the host finds a name,
		// a spawn of that name is refused, not passed to a definition
		// further down; where the rewrite only quoted a description, the
		// rewritten text is the definition.
		if len(bytes.TrimSpace(front)) == 0 {
			d.Skipped = "its frontmatter has no name, so Claude Code does not load it"
			return d
		}
		loose, _, ok := lastWins(front)
		if !ok {
			fixed, keys := clientFallback(front)
			if onlyProse(keys) {
				if _, ferr := document.Decode(ctx, file, fixed, document.YAML, lim); ferr == nil {
					return ReadClaude(ctx, file, append([]byte("---\n"), append(fixed, []byte("---\n")...)...), lim)
				}
			}
			loose, _, ok = lastWins(fixed)
		}
		if !ok {
			d.Skipped = "its frontmatter is not YAML, so Claude Code does not load it"
			return d
		}
		d.Name, _ = loose["name"].(string)
		if d.Name == "" {
			d.Skipped = "its frontmatter has no name, so Claude Code does not load it"
		}
		return d
	}
	fields, ok := v.(map[string]any)
	if !ok {
		d.Skipped = "its frontmatter is not a mapping, so Claude Code does not load it"
		return d
	}
	d.Fields = fields
	agent.KeyLines(front, 1, d.Lines)
	name, _ := fields["name"].(string)
	_, preToolUse := fields["PreToolUse"]
	_, permissionRequest := fields["PermissionRequest"]
	switch {
	case preToolUse || permissionRequest:
		// Read from the client: such a definition is unloadable.
		d.Skipped = "its frontmatter declares PreToolUse or PermissionRequest at the top level, outside hooks:, so Claude Code does not load it"
	case name == "":
		d.Skipped = "its frontmatter has no name, so Claude Code does not load it"
	case strings.Contains(name, ":") || strings.HasPrefix(name, "-"):
		d.Skipped = fmt.Sprintf("its name %q has a ':' or starts with '-', so Claude Code does not load it", name)
	case !agent.IsString(fields["description"]) || fields["description"] == "":
		d.Skipped = "its frontmatter has no description, so Claude Code does not load it"
	}
	d.Name = name
	return d
}

// hostFront is how Claude Code finds frontmatter: from a first "---" to
// the first "---" after it, wherever that stands, even inside a value.
var hostFront = regexp.MustCompile(`^---\s*\n([\s\S]*?)---\s*\n?`)

// hostFrontmatter is the frontmatter, and the body after it, as Claude
// Code reads a file (after a byte-order mark).
func hostFrontmatter(data []byte) (front, body []byte, ok bool) {
	data = bytes.TrimPrefix(data, []byte{0xEF, 0xBB, 0xBF})
	if len(data) < 3 || !bytes.Contains(data[3:], []byte("---")) {
		return nil, data, false
	}
	m := hostFront.FindSubmatchIndex(data)
	if m == nil {
		return nil, data, false
	}
	return data[m[2]:m[3]], data[m[1]:], true
}

// sameFront tells whether two readings of frontmatter hold the same text,
// line ends and blank lines before it aside.
func sameFront(a, b []byte) bool {
	norm := func(x []byte) []byte {
		x = bytes.ReplaceAll(x, []byte("\r\n"), []byte("\n"))
		return bytes.TrimRight(bytes.TrimLeft(x, " \t\r\n"), " \t\r\n")
	}
	return bytes.Equal(norm(a), norm(b))
}

// earlyEnd is the line where Claude Code's reading of the frontmatter
// ends, 0 when it finds none.
func earlyEnd(data []byte) int {
	data = bytes.TrimPrefix(data, []byte{0xEF, 0xBB, 0xBF})
	m := hostFront.FindIndex(data)
	if m == nil {
		return 0
	}
	end := bytes.LastIndex(data[:m[1]], []byte("---"))
	return bytes.Count(data[:end], []byte("\n")) + 1
}

// leniently undoes what a lenient reader of frontmatter forgives: a
// byte-order mark, and spaces or tabs after a --- line.
func leniently(data []byte) []byte {
	data = bytes.TrimPrefix(data, []byte{0xEF, 0xBB, 0xBF})
	lines := bytes.Split(data, []byte("\n"))
	for i, l := range lines {
		if t := bytes.TrimRight(l, " \t\r"); bytes.Equal(t, []byte("---")) {
			lines[i] = t
		}
	}
	return bytes.Join(lines, []byte("\n"))
}

// lossy is what makes Claude Code quote a value when it parses
// frontmatter a second time: a YAML indicator, or ": " inside it.
var lossy = regexp.MustCompile("[{}\\[\\]*&#!|>%@`]|: ")

// keyValue is a line "key: value" of a block mapping.
var keyValue = regexp.MustCompile(`^(\s*[^\s#:'"][^:]*?:)[ \t]+(\S.*?)\s*$`)

// clientFallback is frontmatter as Claude Code rewrites it when it does
// not parse: each value holding ": " or a YAML indicator quoted, and the
// tabs that begin a line made two spaces each.
// keys are the keys whose values were quoted.
func clientFallback(front []byte) (fixed []byte, keys []string) {
	lines := strings.Split(string(front), "\n")
	for i, l := range lines {
		if m := keyValue.FindStringSubmatch(l); m != nil && !strings.HasPrefix(m[2], `"`) && !strings.HasPrefix(m[2], "'") && lossy.MatchString(m[2]) {
			q, _ := json.Marshal(m[2])
			l = m[1] + " " + string(q)
			keys = append(keys, strings.TrimSuffix(strings.TrimSpace(m[1]), ":"))
		}
		tabs := len(l) - len(strings.TrimLeft(l, "\t"))
		lines[i] = strings.Repeat("  ", tabs) + l[tabs:]
	}
	return []byte(strings.Join(lines, "\n")), keys
}

// onlyProse tells whether the rewrite quoted nothing but descriptions:
// text that grants nothing, where the gate's rewrite and the host's
// cannot differ in a power.
func onlyProse(keys []string) bool {
	for _, k := range keys {
		if k != "description" {
			return false
		}
	}
	return true
}

// lastWins reads a YAML mapping as Claude Code's YAML parser does where
// the gate's refuses: a key given twice keeps its last value. dup says a
// key was given twice; ok is false when the text is no mapping.
func lastWins(text []byte) (fields map[string]any, dup, ok bool) {
	var doc yaml.Node
	if yaml.Unmarshal(text, &doc) != nil || len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		return nil, false, false
	}
	m := doc.Content[0]
	fields = map[string]any{}
	for i := 0; i+1 < len(m.Content); i += 2 {
		var v any
		if m.Content[i+1].Decode(&v) != nil {
			return nil, false, false
		}
		if _, seen := fields[m.Content[i].Value]; seen {
			dup = true
		}
		fields[m.Content[i].Value] = v
	}
	return fields, dup, true
}
