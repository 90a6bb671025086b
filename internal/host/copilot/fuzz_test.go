package copilot

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

// The fuzz target reads any bytes as a Copilot definition and holds the
// reader to the invariants every host's reader keeps (hosttest.Reading),
// and to Copilot's own:
//
//   - a usable definition has a description (Copilot skips a file
//     without one) and a name: its own, else the file's;
//   - a child's facts say what the definition and the call say: the
//     call's model wins (but over a required list), every tool it writes
//     with or spawns with is among its tools, and a child either inherits
//     every tool or lists them.

func FuzzReadCopilot(f *testing.F) { reading.Fuzz(f, copilotSeeds(f)) }

// TestFuzzReadCopilotShort runs FuzzReadCopilot's property over inputs
// mutated from its seeds.
func TestFuzzReadCopilotShort(t *testing.T) { reading.Short(t, copilotSeeds(t)) }

const fuzzFile = "/repo/.github/agents/agent.agent.md"

// reading is ReadCopilot, and what the fuzz target holds it to.
var reading = hosttest.Reading{
	Host: Name,
	File: fuzzFile,
	Read: func(file string, data []byte) *agent.Definition {
		return ReadCopilot(context.Background(), file, data, document.DefaultLimits)
	},
	Definition:  checkDefinition,
	DefaultType: "agent",
	Spawns: func(typ string) []hosttest.Spawn {
		return []hosttest.Spawn{
			fuzzSpawn(call{Call: agent.Call{Host: Name, Type: typ, Paths: []string{"/repo"}, Budget: "1000"}}),
			fuzzSpawn(call{Call: agent.Call{Host: Name, Type: typ, Paths: []string{"/repo"}, Brief: "b", Caller: "lead"}, Model: "call-model", Mode: "background"}),
		}
	},
}

func copilotSeeds(tb testing.TB) [][]byte {
	seeds := hosttest.ExampleDefinitions(tb, Name, githubFolder, "*.md")
	for _, front := range []string{
		"description: d\ntools: [read, search, \"srv/*\", edit]\nmodel: [a, b]\nmodel-policy: required\n",
		"name: x\ndescription: d\ntools: Read, SHELL, agent\nmcp-servers:\n  db: {command: x}\nhooks:\n  preToolUse: []\n",
		"description: d\ntools: [\"*\"]\ninfer: false\n",
		"description: d\ntools:\ndisable-model-invocation: yes\n",
		"name: 3\ndescription: d\n",
		"description: d\ntools: [read]\ntools: [shell]\n",
	} {
		seeds = append(seeds, []byte(def(front)))
	}
	return append(seeds, []byte("no frontmatter\n"), []byte("---\n- a\n---\n"))
}

// checkDefinition checks Copilot's own invariants of a definition.
func checkDefinition(d *agent.Definition, _ []byte) error {
	if d.Skipped != "" || d.Err != nil {
		return nil
	}
	if desc, _ := d.Fields["description"].(string); desc == "" {
		return errors.New("a usable definition without a description")
	}
	if name, _ := d.Fields["name"].(string); name != "" && d.Name != name || name == "" && d.Name != stem(d.File) {
		return fmt.Errorf("name %q of a definition whose name is %v", d.Name, d.Fields["name"])
	}
	return nil
}

// fuzzSpawn is a spawn of c for the property, with Copilot's checks of
// its facts.
func fuzzSpawn(c call) hosttest.Spawn {
	return hosttest.Spawn{
		Call:      c.Call,
		Translate: func(def *agent.Definition, problem string) agent.Translation { return translate(c, def, problem) },
		Check:     func(tr agent.Translation, def *agent.Definition) error { return checkFacts(tr, c, def) },
	}
}

// checkFacts checks the facts of a translation that are Copilot's own.
func checkFacts(tr agent.Translation, c call, def *agent.Definition) error {
	facts := tr.Child["agent"].(map[string]any)
	required := def != nil && def.Fields["model-policy"] == "required"
	if c.Model != "" && !required && tr.Child["model"] != c.Model {
		return fmt.Errorf("model %v, called for %q", tr.Child["model"], c.Model)
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
}
