package agent

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/pelletier/go-toml/v2"
	"github.com/pelletier/go-toml/v2/unstable"
	"gopkg.in/yaml.v3"

	"github.com/spawngate/spawngate/internal/plan"
)

// Host is an orchestrator whose agents spawngate reads.
type Host string

const (
	ClaudeCode Host = "claude-code"
	Codex      Host = "codex"
)

// Definition is one agent definition file, as far as the gate reads it.
type Definition struct {
	Host Host
	File string // the path it was read from
	// Name is the identity the host knows it by (the frontmatter or TOML
	// name); "" when the file could not be read far enough to tell.
	Name string
	// Err is why the file cannot be read as a definition the gate can
	// judge, or nil.
	Err *plan.Error
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

// ReadClaude reads a Claude Code agent definition: Markdown with YAML
// frontmatter. The frontmatter is read with the gate's strict YAML reader,
// so that nothing in it means one thing to the gate and another to Claude
// Code; a file the strict reader refuses is a definition that does not
// parse. A file Claude Code would skip (no frontmatter, no name, YAML it
// cannot read) defines nothing, and says why in Skipped.
func ReadClaude(ctx context.Context, file string, data []byte, lim plan.Limits) *Definition {
	d := &Definition{Host: ClaudeCode, File: file, Lines: map[string]int{}}
	front, ok := frontmatter(data)
	if !ok {
		// Written almost as frontmatter (a byte-order mark, spaces after a
		// ---), a host might still read it: then it is a definition the gate
		// cannot read, refused under the name a lenient reading finds, so
		// that a definition of the same name further down is not taken for
		// it.
		if loose, ok := frontmatter(leniently(data)); ok {
			d.Err = &plan.Error{Source: file, Line: 1, Msg: "the frontmatter is written oddly (a byte-order mark, or spaces after ---): hosts may read it differently; write it plainly"}
			var fields map[string]any
			if yaml.Unmarshal(loose, &fields) == nil {
				d.Name, _ = fields["name"].(string)
			}
			if d.Name == "" {
				d.Err, d.Skipped = nil, "its frontmatter has no name, so Claude Code does not load it"
			}
			return d
		}
		d.Skipped = "it does not start with YAML frontmatter between --- lines, so Claude Code does not load it"
		return d
	}
	// The frontmatter starts on the file's second line.
	v, err := plan.Decode(ctx, file, front, plan.YAML, lim)
	if err != nil {
		var pe *plan.Error
		if !errors.As(err, &pe) {
			d.Err = &plan.Error{Source: file, Msg: plan.OneLine(err.Error())}
			return d
		}
		shifted := *pe
		if shifted.Line > 0 {
			shifted.Line++
		}
		d.Err = &shifted
		// Claude Code reads YAML more leniently than the gate. If a lenient
		// reading finds a name, the host would load the file under it, so
		// the name is kept: a spawn of that type is refused, not passed.
		var loose map[string]any
		if yaml.Unmarshal(front, &loose) != nil {
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
	keyLines(front, 1, d.Lines)
	name, _ := fields["name"].(string)
	switch {
	case name == "":
		d.Skipped = "its frontmatter has no name, so Claude Code does not load it"
	case strings.Contains(name, ":") || strings.HasPrefix(name, "-"):
		d.Skipped = fmt.Sprintf("its name %q has a ':' or starts with '-', so Claude Code does not load it", name)
	case !isString(fields["description"]) || fields["description"] == "":
		d.Skipped = "its frontmatter has no description, so Claude Code does not load it"
	}
	d.Name = name
	return d
}

func isString(v any) bool { _, ok := v.(string); return ok }

// frontmatter returns the text between a first line "---" and the next
// line "---".
func frontmatter(data []byte) ([]byte, bool) {
	data = bytes.ReplaceAll(data, []byte("\r\n"), []byte("\n"))
	if !bytes.HasPrefix(data, []byte("---\n")) {
		return nil, false
	}
	rest := data[4:]
	if bytes.HasPrefix(rest, []byte("---\n")) || bytes.Equal(rest, []byte("---")) {
		return []byte{}, true
	}
	end := bytes.Index(rest, []byte("\n---\n"))
	if end < 0 {
		if !bytes.HasSuffix(rest, []byte("\n---")) {
			return nil, false
		}
		end = len(rest) - 4
	}
	return rest[:end+1], true
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

// keyLines records the line of each top-level key of a YAML mapping, and of
// each entry of a block list under one, shifted by offset lines.
func keyLines(front []byte, offset int, lines map[string]int) {
	var doc yaml.Node
	if yaml.Unmarshal(front, &doc) != nil || len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		return
	}
	m := doc.Content[0]
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, v := m.Content[i], m.Content[i+1]
		lines[k.Value] = k.Line + offset
		if v.Kind == yaml.SequenceNode {
			for j, item := range v.Content {
				lines[fmt.Sprintf("%s/%d", k.Value, j)] = item.Line + offset
			}
		}
	}
}

// ReadCodex reads a Codex agent definition: TOML, read strictly (a key
// written twice, or a value of the wrong type, is a definition that does
// not parse).
func ReadCodex(file string, data []byte) *Definition {
	d := &Definition{Host: Codex, File: file, Lines: map[string]int{}}
	var fields map[string]any
	if err := toml.Unmarshal(data, &fields); err != nil {
		d.Err = &plan.Error{Source: file, Msg: plan.OneLine(tomlMessage(err))}
		var de *toml.DecodeError
		if errors.As(err, &de) {
			d.Err.Line, d.Err.Column = de.Position()
		}
		// A key written twice is an error of meaning, not of syntax: the
		// name may still be read, so that only a spawn of that name is
		// refused for it.
		d.Name = tomlName(data)
		return d
	}
	d.Fields = normalizeTOML(fields).(map[string]any)
	tomlLines(data, d.Lines)
	name, ok := d.Fields["name"].(string)
	_, servers := d.Fields["mcp_servers"].(map[string]any)
	_, serversSet := d.Fields["mcp_servers"]
	switch {
	case serversSet && !servers:
		d.Name = name
		d.Err = &plan.Error{Source: file, Line: d.Lines["mcp_servers"], Msg: "mcp_servers is not a table of servers"}
	case !ok || name == "":
		d.Err = &plan.Error{Source: file, Line: d.Lines["name"], Msg: "the definition has no name, which Codex knows an agent by"}
	case !isString(d.Fields["description"]):
		d.Name = name
		d.Err = &plan.Error{Source: file, Line: d.Lines["description"], Msg: "the definition has no description, which Codex requires"}
	default:
		d.Name = name
	}
	return d
}

func tomlMessage(err error) string {
	msg := err.Error()
	var de *toml.DecodeError
	if errors.As(err, &de) {
		msg = de.Error()
	}
	return strings.TrimPrefix(msg, "toml: ")
}

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
		at += plan.ShowPointer(d.Err.Pointer) + ": "
	}
	return at + plan.OneLine(d.Err.Msg)
}

// normalizeTOML turns the TOML library's values into the JSON shapes the
// rest of the gate reads: integers as JSON numbers, dates as strings.
func normalizeTOML(v any) any {
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			v[k] = normalizeTOML(x)
		}
		return v
	case []any:
		for i, x := range v {
			v[i] = normalizeTOML(x)
		}
		return v
	case int64:
		return jsonNumber(fmt.Sprint(v))
	case float64:
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Sprint(v) // nan and inf are no JSON number
		}
		// A TOML float stays written as one (40000.0, not 40000), so that
		// a budget written as a float is refused as it is in a plan.
		s := strconv.FormatFloat(v, 'g', -1, 64)
		if !strings.ContainsAny(s, ".eE") {
			s += ".0"
		}
		return jsonNumber(s)
	case string, bool:
		return v
	}
	return fmt.Sprint(v)
}

// tomlLines records the line of each top-level key and of each table
// header of a TOML document ("mcp_servers/github" for [mcp_servers.github]).
func tomlLines(data []byte, lines map[string]int) {
	p := unstable.Parser{}
	p.Reset(data)
	var table []string
	record := func(key []string, line int) {
		if len(key) == 0 || line == 0 {
			return
		}
		lines[strings.Join(key, "/")] = line
		if _, seen := lines[key[0]]; !seen {
			lines[key[0]] = line
		}
	}
	for p.NextExpression() {
		e := p.Expression()
		// A table header's own range is not kept; its key's is.
		parts, raw := keyParts(e.Key())
		line := 0
		if raw != nil {
			line = p.Shape(*raw).Start.Line
		}
		switch e.Kind {
		case unstable.Table, unstable.ArrayTable:
			table = parts
			record(table, line)
		case unstable.KeyValue:
			record(append(append([]string{}, table...), parts...), line)
		}
	}
}

// tomlName finds the first top-level name = "..." of a TOML document that
// the strict reader refused, or "".
func tomlName(data []byte) string {
	p := unstable.Parser{}
	p.Reset(data)
	for p.NextExpression() {
		e := p.Expression()
		if e.Kind == unstable.Table || e.Kind == unstable.ArrayTable {
			return ""
		}
		parts, _ := keyParts(e.Key())
		if e.Kind == unstable.KeyValue && len(parts) == 1 && parts[0] == "name" {
			if v := e.Value(); v != nil && v.Kind == unstable.String {
				return string(v.Data)
			}
			return ""
		}
	}
	return ""
}

// keyParts reads a dotted key, and the range of its first part.
func keyParts(it unstable.Iterator) ([]string, *unstable.Range) {
	var parts []string
	var first *unstable.Range
	for it.Next() {
		n := it.Node()
		if first == nil {
			r := n.Raw
			first = &r
		}
		parts = append(parts, string(n.Data))
	}
	return parts, first
}
