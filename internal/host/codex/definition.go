package codex

import (
	"context"
	"errors"
	"fmt"

	"github.com/pelletier/go-toml/v2"

	"github.com/spawngate/spawngate/internal/agent"
	"github.com/spawngate/spawngate/internal/document"
	"github.com/spawngate/spawngate/internal/host"
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
		d.Err = &document.Error{Source: file, Line: d.Lines["name"], Msg: "the definition has no name, which Codex knows an agent by"}
	case !agent.IsString(d.Fields["description"]):
		d.Name = name
		d.Err = &document.Error{Source: file, Line: d.Lines["description"], Msg: "the definition has no description, which Codex requires"}
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
			d.Err = &document.Error{Source: file, Line: d.Lines["name"], Msg: fmt.Sprintf("the role's file names itself %s, while config.toml declares it as %q: which name Codex goes by is not known", host.Show(own), name)}
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
		d.Err = &document.Error{Source: file, Msg: document.OneLine(tomlMessage(err))}
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
	d.Err = &document.Error{Source: d.File, Line: d.Lines["mcp_servers"], Msg: "mcp_servers is not a table of servers"}
	return true
}
