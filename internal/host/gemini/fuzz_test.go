package gemini

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/spawngate/spawngate/internal/agent"
	"github.com/spawngate/spawngate/internal/document"
	"github.com/spawngate/spawngate/internal/host/hosttest"
)

// The fuzz target reads any bytes as a Gemini CLI definition and holds
// the reader to the invariants every host's reader keeps
// (hosttest.Reading), and to Gemini CLI's own:
//
//   - a usable definition has a name of lower-case letters, digits, -
//     and _, a description, and no key the client's schema does not know
//     (a remote agent aside);
//   - a child's facts say what the definition and the overrides say: the
//     override's model wins, every tool it writes with or spawns with is
//     among its tools, and a child either inherits every tool or lists
//     them.

func FuzzReadGemini(f *testing.F) { reading.Fuzz(f, geminiSeeds(f)) }

// TestFuzzReadGeminiShort runs FuzzReadGemini's property over inputs
// mutated from its seeds.
func TestFuzzReadGeminiShort(t *testing.T) { reading.Short(t, geminiSeeds(t)) }

// reading is ReadGemini, and what the fuzz target holds it to.
var reading = hosttest.Reading{
	Host: Name,
	File: "/repo/.gemini/agents/agent.md",
	Read: func(file string, data []byte) *agent.Definition {
		return ReadGemini(context.Background(), file, data, document.DefaultLimits)
	},
	NameField:   "name",
	Definition:  checkDefinition,
	DefaultType: "generalist",
	Spawns: func(typ string) []hosttest.Spawn {
		return []hosttest.Spawn{
			fuzzSpawn(agent.Call{Host: Name, Type: typ, Paths: []string{"/repo"}, Budget: "1000"}, override{}),
			fuzzSpawn(agent.Call{Host: Name, Type: typ, Paths: []string{"/repo"}, Brief: "b"}, override{model: "gemini-2.5-pro", servers: []string{"gh"}}),
		}
	},
}

func geminiSeeds(tb testing.TB) [][]byte {
	seeds := hosttest.ExampleDefinitions(tb, Name, projectFolder, "*.md")
	for _, front := range []string{
		"name: r\ndescription: d\ntools: [read_file, grep_search]\nmodel: gemini-2.5-flash\n",
		"name: w\ndescription: d\ntools: [write_file, run_shell_command, \"*\"]\nmcp_servers:\n  db: {command: x}\n",
		"name: far\ndescription: d\nkind: remote\nagent_card_url: https://x\n",
		"name: Bad\ndescription: d\n",
		"name: x\ndescription: d\nfoo: 1\n",
		"name: x\ndescription: d\ntools: [a]\ntools: [b]\n",
	} {
		seeds = append(seeds, []byte(def(front)))
	}
	return append(seeds, []byte("no frontmatter\n"))
}

// checkDefinition checks Gemini CLI's own invariants of a definition.
func checkDefinition(d *agent.Definition, _ []byte) error {
	if d.Skipped != "" || d.Err != nil || d.Fields["kind"] == "remote" {
		return nil
	}
	if desc, _ := d.Fields["description"].(string); desc == "" {
		return errors.New("a usable definition without a description")
	}
	if !validName.MatchString(d.Name) {
		return fmt.Errorf("a usable definition named %q", d.Name)
	}
	for k := range d.Fields {
		if !knownKeys[k] {
			return fmt.Errorf("a usable definition with the key %q", k)
		}
	}
	return nil
}

// fuzzSpawn is a spawn of c with the overrides ov, for the property.
func fuzzSpawn(c agent.Call, ov override) hosttest.Spawn {
	return hosttest.Spawn{
		Call:      c,
		Translate: func(def *agent.Definition, problem string) agent.Translation { return translate(c, def, problem, ov) },
		Check: func(tr agent.Translation, def *agent.Definition) error {
			facts := tr.Child["agent"].(map[string]any)
			if ov.model != "" && tr.Child["model"] != ov.model {
				return fmt.Errorf("model %v, overridden to %q", tr.Child["model"], ov.model)
			}
			if def == nil {
				return nil
			}
			tools, listed := tr.Child["tools"].([]any)
			if listed == (facts["inherits_tools"] == true) {
				return fmt.Errorf("tools %v with inherits_tools %v", tr.Child["tools"], facts["inherits_tools"])
			}
			for _, key := range []string{"write_tools", "spawn_tools"} {
				named, _ := facts[key].([]any)
				for _, t := range named {
					if !slices.Contains(tools, t) {
						return fmt.Errorf("%s names %v, which the child does not hold (%v)", key, t, tools)
					}
				}
			}
			return nil
		},
	}
}
