package codex

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/pelletier/go-toml/v2"
	"github.com/pelletier/go-toml/v2/unstable"

	"github.com/spawngate/spawngate/internal/agent"
	"github.com/spawngate/spawngate/internal/host"
	"github.com/spawngate/spawngate/internal/plan"
)

// ReadCodex reads a Codex agent definition: TOML, read strictly (a key
// written twice, or a value of the wrong type, is a definition that does
// not parse).
func ReadCodex(file string, data []byte) *agent.Definition {
	d := parseTOML(file, data)
	if d.Err != nil {
		// A key written twice is an error of meaning, not of syntax: the
		// name may still be read, so that only a spawn of that name is
		// refused for it.
		d.Name = tomlName(data)
		return d
	}
	name, ok := d.Fields["name"].(string)
	switch {
	case badServers(d):
		d.Name = name
	case !ok || name == "":
		d.Err = &plan.Error{Source: file, Line: d.Lines["name"], Msg: "the definition has no name, which Codex knows an agent by"}
	case !agent.IsString(d.Fields["description"]):
		d.Name = name
		d.Err = &plan.Error{Source: file, Line: d.Lines["description"], Msg: "the definition has no description, which Codex requires"}
	default:
		d.Name = name
	}
	return d
}

// readRole reads the config_file of a role that config.toml declares
// ([agents.NAME]): a layer of configuration over the session's, which
// needs no name or description (the declaration gives them). A name in
// the file other than the declared one is refused: which of the two Codex
// goes by is not known.
func readRole(name string) agent.Reader {
	return func(_ context.Context, file string, data []byte) *agent.Definition {
		d := parseTOML(file, data)
		d.Name = name
		if d.Err != nil || badServers(d) {
			return d
		}
		if own, set := d.Fields["name"]; set && own != name {
			d.Err = &plan.Error{Source: file, Line: d.Lines["name"], Msg: fmt.Sprintf("the role's file names itself %s, while config.toml declares it as %q: which name Codex goes by is not known", host.Show(own), name)}
		}
		return d
	}
}

// parseTOML reads a definition's fields and their lines, or why it does
// not parse.
func parseTOML(file string, data []byte) *agent.Definition {
	d := &agent.Definition{File: file, Lines: map[string]int{}}
	var fields map[string]any
	if err := toml.Unmarshal(data, &fields); err != nil {
		d.Err = &plan.Error{Source: file, Msg: plan.OneLine(tomlMessage(err))}
		var de *toml.DecodeError
		if errors.As(err, &de) {
			d.Err.Line, d.Err.Column = de.Position()
		}
		return d
	}
	d.Fields = normalizeTOML(fields).(map[string]any)
	tomlLines(data, d.Lines)
	return d
}

// badServers refuses an mcp_servers that is not a table of servers.
func badServers(d *agent.Definition) bool {
	v, set := d.Fields["mcp_servers"]
	if _, ok := v.(map[string]any); !set || ok {
		return false
	}
	d.Err = &plan.Error{Source: d.File, Line: d.Lines["mcp_servers"], Msg: "mcp_servers is not a table of servers"}
	return true
}

func tomlMessage(err error) string {
	msg := err.Error()
	var de *toml.DecodeError
	if errors.As(err, &de) {
		msg = de.Error()
	}
	return strings.TrimPrefix(msg, "toml: ")
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
		return json.Number(fmt.Sprint(v))
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
		return json.Number(s)
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
