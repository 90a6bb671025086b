package agent

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/spawngate/spawngate/internal/document"
)

// Definition is one agent definition file, as far as the gate reads it.
type Definition struct {
	File string // the path it was read from
	// Name is the identity the host knows it by (the frontmatter or TOML
	// name); "" when the file could not be read far enough to tell.
	Name string
	// Err is why the file cannot be read as a definition the gate can
	// judge, or nil.
	Err *document.Error
	// Skipped says why the host itself ignores the file (no name, YAML it
	// cannot read), so that it defines no agent at all; "" otherwise.
	Skipped string
	// Fields holds the definition's settings as written, JSON-shaped.
	Fields map[string]any
	// Lines holds, for each setting and each entry of a setting's list
	// that has a line of its own, the line of the file it is written on:
	// "tools", "tools/2", "mcp_servers/github".
	Lines map[string]int
}

// IsString tells whether a setting is a string.
func IsString(v any) bool { _, ok := v.(string); return ok }

// ParseProblem says where and why the definition does not parse, without
// the file: "line 2, column 1: key name is already defined".
func (d *Definition) ParseProblem() string {
	if d.Err == nil {
		return ""
	}
	at := ""
	if d.Err.Line > 0 {
		at = fmt.Sprintf("line %d", d.Err.Line)
		if d.Err.Column > 0 {
			at += fmt.Sprintf(", column %d", d.Err.Column)
		}
		at += ": "
	}
	if d.Err.Pointer != "" {
		at += document.ShowPointer(d.Err.Pointer) + ": "
	}
	return at + document.OneLine(d.Err.Msg)
}

// ToolList reads a tools setting written as a comma-separated string or a
// list, with each entry's line. An entry that is not a string is kept as
// it is, for the checks to refuse.
func ToolList(raw any, defLines map[string]int, key string) ([]any, []int) {
	var entries []any
	var lines []int
	switch v := raw.(type) {
	case string:
		for _, part := range strings.Split(v, ",") {
			if part = strings.TrimSpace(part); part != "" {
				entries = append(entries, part)
				lines = append(lines, defLines[key])
			}
		}
	case []any:
		for i, e := range v {
			if s, ok := e.(string); ok {
				e = strings.TrimSpace(s)
			}
			entries = append(entries, e)
			line, ok := defLines[key+"/"+strconv.Itoa(i)]
			if !ok {
				line = defLines[key]
			}
			lines = append(lines, line)
		}
	case nil:
	default:
		entries = append(entries, v)
		lines = append(lines, defLines[key])
	}
	return entries, lines
}
