package codex

import (
	"errors"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/spawngate/spawngate/internal/agent"
	"github.com/spawngate/spawngate/internal/host/hosttest"
)

// The fuzz target reads any bytes as a Codex definition and holds the
// reader to the invariants every host's reader keeps (hosttest.Reading),
// and to Codex's own:
//
//   - ReadCodex never skips a file: every definition is broken (Err !=
//     nil) or usable (Err == nil: its Name is the non-empty string
//     Fields["name"] and its description a string).
//   - Fields is nil exactly when the TOML did not parse.
//   - A child's facts say what the definition and the call say: its
//     permission mode (bypassPermissions in a session that bypasses
//     permissions), its model (the definition's, else the call's), and,
//     with a definition, its sandbox and a list of tools.

func FuzzReadCodex(f *testing.F) { reading.Fuzz(f, codexSeeds(f)) }

// TestFuzzReadCodexShort runs FuzzReadCodex's property over inputs mutated
// from its seeds.
func TestFuzzReadCodexShort(t *testing.T) { reading.Short(t, codexSeeds(t)) }

// reading is ReadCodex, and what the fuzz target holds it to.
var reading = hosttest.Reading{
	Host:        Name,
	File:        "/repo/" + filepath.ToSlash(Folder) + "/agent.toml",
	Read:        ReadCodex,
	NameField:   "name",
	Definition:  checkDefinition,
	DefaultType: DefaultType,
	Spawns: func(typ string) []hosttest.Spawn {
		return []hosttest.Spawn{
			fuzzSpawn(call{Call: agent.Call{Host: Name, Type: typ, Paths: []string{"/repo"}, Budget: "1000"}}),
			fuzzSpawn(call{Call: agent.Call{Host: Name, Type: DefaultType, Paths: []string{"/repo"}, Brief: "b", ID: "id", Caller: "lead"}, SessionMode: "bypassPermissions", Model: "call-model"}),
		}
	},
}

func codexSeeds(tb testing.TB) [][]byte {
	var seeds [][]byte
	for _, tc := range codexCases {
		seeds = append(seeds, []byte(tc.data))
	}
	for _, tc := range translateCases {
		if tc.def != "" {
			seeds = append(seeds, []byte(tc.def))
		}
	}
	seeds = append(seeds, hosttest.ExampleDefinitions(tb, Name, Folder, "*.toml")...)
	return append(seeds,
		[]byte(codexTOML("sandbox_mode = \"read-only\"\nbudget_tokens = 1\nmodel = \"m\"\n[mcp_servers.a]\ncommand = \"a\"\n[mcp_servers.b.env]\nX = 1\n")),
		[]byte(codexTOML("mcp_servers = { a = { command = \"a\" }, b = 5 }\nsandbox_mode = [\"read-only\"]\nx = 1979-05-27T07:32:00Z\n")),
	)
}

// checkDefinition checks Codex's own invariants of a definition read from
// data.
func checkDefinition(d *agent.Definition, _ []byte) error {
	switch {
	case d.Skipped != "":
		return fmt.Errorf("a Codex definition skipped: %s", d.Skipped)
	case d.Fields == nil && d.Err == nil:
		return errors.New("no fields and no error")
	}
	if _, isString := d.Fields["description"].(string); d.Err == nil && !isString {
		return fmt.Errorf("a usable definition with the description %v", d.Fields["description"])
	}
	return nil
}

// fuzzSpawn is a spawn of c for the property, with Codex's checks of its
// facts.
func fuzzSpawn(c call) hosttest.Spawn {
	return hosttest.Spawn{
		Call:      c.Call,
		Translate: func(def *agent.Definition, problem string) agent.Translation { return translate(c, def, problem) },
		Check:     func(tr agent.Translation, def *agent.Definition) error { return checkFacts(tr, c, def) },
	}
}

// checkFacts checks the facts of a translation of a spawn of def (nil for
// none) that are Codex's own.
func checkFacts(tr agent.Translation, c call, def *agent.Definition) error {
	facts := tr.Child["agent"].(map[string]any)
	mode, _ := facts["permission_mode"].(string)
	switch {
	case mode == "":
		return fmt.Errorf("permission_mode %v", facts["permission_mode"])
	case c.SessionMode == "bypassPermissions" && mode != "bypassPermissions":
		return fmt.Errorf("a session bypassing permissions, a child in %q", mode)
	case defModel(def) != "" && tr.Child["model"] != defModel(def):
		return fmt.Errorf("model %v, the definition's %q", tr.Child["model"], defModel(def))
	case defModel(def) == "" && c.Model != "" && c.Model != "inherit" && tr.Child["model"] != c.Model:
		return fmt.Errorf("model %v, called for %q", tr.Child["model"], c.Model)
	case def == nil:
		return nil
	}
	if _, set := facts["sandbox_mode"]; !set {
		return fmt.Errorf("a Codex child without a sandbox fact: %v", tr.Child)
	}
	if _, listed := tr.Child["tools"].([]any); !listed {
		return fmt.Errorf("a Codex child without a tools list: %v", tr.Child)
	}
	return nil
}

// defModel is the model a definition names, which wins over the call's.
func defModel(def *agent.Definition) string {
	if def == nil {
		return ""
	}
	m, _ := def.Fields["model"].(string)
	return m
}
