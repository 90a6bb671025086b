package codex

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/pelletier/go-toml/v2"
	"github.com/pelletier/go-toml/v2/unstable"

	"github.com/spawngate/spawngate/internal/host/doctor"
)

// tomlMessage is the TOML library's error without its prefix.
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

// tomlLinesByPointer records the line of each key and table of a TOML
// document by its JSON pointer: [[hooks.PreToolUse]] twice holds
// /hooks/PreToolUse/0 and /hooks/PreToolUse/1, an inline table's keys
// their own lines.
func tomlLinesByPointer(data []byte) map[string]int {
	lines := map[string]int{}
	arrays := map[string]int{} // an array of tables: its elements so far
	p := unstable.Parser{}
	p.Reset(data)
	record := func(ptr string, r *unstable.Range) {
		if r == nil {
			return
		}
		if _, seen := lines[ptr]; !seen {
			lines[ptr] = p.Shape(*r).Start.Line
		}
	}
	var value func(ptr string, n *unstable.Node, r *unstable.Range)
	value = func(ptr string, n *unstable.Node, r *unstable.Range) {
		switch n.Kind {
		case unstable.Array:
			it := n.Children()
			for i := 0; it.Next(); i++ {
				c := it.Node()
				cr := r
				if c.Kind == unstable.InlineTable {
					raw := c.Raw
					cr = &raw
				}
				record(fmt.Sprintf("%s/%d", ptr, i), cr)
				value(fmt.Sprintf("%s/%d", ptr, i), c, cr)
			}
		case unstable.InlineTable:
			it := n.Children()
			for it.Next() {
				kv := it.Node()
				if kv.Kind != unstable.KeyValue {
					continue
				}
				parts, kr := keyParts(kv.Key())
				cptr := ptr + doctor.PointerOf(parts...)
				record(cptr, kr)
				value(cptr, kv.Value(), kr)
			}
		}
	}
	table := ""
	for p.NextExpression() {
		e := p.Expression()
		switch e.Kind {
		case unstable.Table, unstable.ArrayTable:
			parts, r := keyParts(e.Key())
			ptr := ""
			for i, part := range parts {
				ptr += "/" + doctor.EscapePointer(part)
				if n, ok := arrays[ptr]; ok && i < len(parts)-1 {
					ptr += "/" + strconv.Itoa(n-1)
				}
			}
			if e.Kind == unstable.ArrayTable {
				record(ptr, r)
				n := arrays[ptr]
				arrays[ptr] = n + 1
				ptr += "/" + strconv.Itoa(n)
			}
			record(ptr, r)
			table = ptr
		case unstable.KeyValue:
			parts, r := keyParts(e.Key())
			ptr := table + doctor.PointerOf(parts...)
			record(ptr, r)
			value(ptr, e.Value(), r)
		}
	}
	return lines
}
