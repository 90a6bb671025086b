package hosttest

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/spawngate/spawngate/internal/agent"
	"github.com/spawngate/spawngate/internal/document"
	"github.com/spawngate/spawngate/internal/plan"
)

const toyFile = "/repo/.toy/agents/agent.txt"

// readToy is a host's reader in miniature: the first line is the name, an
// empty one breaks the file, "skip" skips it.
func readToy(file string, data []byte) *agent.Definition {
	d := &agent.Definition{File: file, Lines: map[string]int{}}
	name, _, _ := strings.Cut(string(data), "\n")
	switch {
	case name == "skip":
		d.Skipped = "the host skips it"
	case name == "" || strings.ContainsAny(name, "\r\x00"):
		d.Err = &document.Error{Source: file, Line: 1, Msg: "no name"}
	default:
		d.Name = name
		d.Fields = map[string]any{"name": name}
		d.Lines["name"] = 1
	}
	return d
}

// toySpawn translates as agent.Start does, then lets bend spoil the
// child.
func toySpawn(typ string, bend func(tr agent.Translation)) Spawn {
	c := agent.Call{Host: "toy", Type: typ, Paths: []string{"/repo"}, Caller: "lead"}
	return Spawn{
		Call: c,
		Translate: func(def *agent.Definition, problem string) agent.Translation {
			tr, _ := agent.Start(c, def, problem)
			if bend != nil {
				bend(tr)
			}
			return tr
		},
	}
}

func toyReading(read func(string, []byte) *agent.Definition, bend func(tr agent.Translation)) Reading {
	return Reading{
		Host: "toy", File: toyFile, Read: read, NameField: "name", DefaultType: "default",
		Spawns: func(typ string) []Spawn { return []Spawn{toySpawn(typ, bend)} },
	}
}

// TestReadPropertyHolds: a reader and a translation that keep every
// invariant pass on usable, broken and skipped files.
func TestReadPropertyHolds(t *testing.T) {
	loader, err := plan.NewLoader(document.DefaultLimits)
	if err != nil {
		t.Fatal(err)
	}
	r := toyReading(readToy, nil)
	for _, in := range []string{"reader\nbody", "", "skip", "\r"} {
		if err := r.check(loader, []byte(in)); err != nil {
			t.Errorf("%q: %v", in, err)
		}
	}
}

// TestReadPropertyFails: each broken invariant is reported, naming what
// broke it, so that a host's fuzz target fails on it.
func TestReadPropertyFails(t *testing.T) {
	loader, err := plan.NewLoader(document.DefaultLimits)
	if err != nil {
		t.Fatal(err)
	}
	reader := func(spoil func(d *agent.Definition)) func(string, []byte) *agent.Definition {
		return func(file string, data []byte) *agent.Definition {
			d := readToy(file, data)
			spoil(d)
			return d
		}
	}
	for _, tc := range []struct {
		name  string
		r     Reading
		input string
		want  string
	}{
		{"no definition", toyReading(func(string, []byte) *agent.Definition { return nil }, nil), "a", "nil definition"},
		{"another file", toyReading(reader(func(d *agent.Definition) { d.File = "x" }), nil), "a", `File is "x"`},
		{"nil lines", toyReading(reader(func(d *agent.Definition) { d.Lines = nil }), nil), "a", "nil Lines"},
		{"an error of another file", toyReading(reader(func(d *agent.Definition) { d.Err.Source = "x" }), nil), "", `Err.Source = "x"`},
		{"lines without fields", toyReading(reader(func(d *agent.Definition) { d.Lines["x"] = 1 }), nil), "", "without fields"},
		{"usable without a name", toyReading(reader(func(d *agent.Definition) { d.Name = "" }), nil), "a", "without a name"},
		{"named otherwise", toyReading(reader(func(d *agent.Definition) { d.Name = "b" }), nil), "a", "with the name field a"},
		{"not JSON-shaped", toyReading(reader(func(d *agent.Definition) { d.Fields["x"] = 1 }), nil), "a", "int is not JSON-shaped"},
		{"a bad number", toyReading(reader(func(d *agent.Definition) { d.Fields["x"] = json.Number("1 2") }), nil), "a", `json.Number "1 2"`},
		{"a line past the end", toyReading(reader(func(d *agent.Definition) { d.Lines["name"] = 3 }), nil), "a", "in a file of 1 lines"},
		{"an error past the end", toyReading(reader(func(d *agent.Definition) { d.Err.Line = 9 }), nil), "", "error at line 9"},
		{"another host", toyReading(readToy, func(tr agent.Translation) { tr.Child["agent"].(map[string]any)["host"] = "x" }), "a", "facts host, type = x, a"},
		{"no caller", toyReading(readToy, func(tr agent.Translation) { delete(tr.Child["agent"].(map[string]any), "caller") }), "a", "caller <nil>"},
		{"another role", toyReading(readToy, func(tr agent.Translation) { tr.Child["role"] = "x" }), "a", "role x"},
		{"tools of no definition", toyReading(readToy, func(tr agent.Translation) { tr.Child["tools"] = []any{"Read"} }), "", "no definition, yet tools"},
		{"another problem", toyReading(readToy, func(tr agent.Translation) { tr.Child["agent"].(map[string]any)["problem"] = "x" }), "", "problem fact"},
		{"a line outside the file", toyReading(readToy, func(tr agent.Translation) { tr.Lines["/role"] = 7 }), "a", `LineOf("/role") = 7`},
		{"a plan the loader refuses", toyReading(readToy, func(tr agent.Translation) { tr.Child["budget_tokens"] = json.Number("1e999") }), "a", "the loader refuses the plan"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.r.check(loader, []byte(tc.input))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("check = %v, want an error with %q", err, tc.want)
			}
		})
	}
	// The host's own checks run too.
	r := toyReading(readToy, nil)
	r.Definition = func(d *agent.Definition, data []byte) error {
		if bytes.Contains(data, []byte("!")) {
			return context.Canceled
		}
		return nil
	}
	if err := r.check(loader, []byte("a!")); err == nil {
		t.Error("the host's Definition check did not run")
	}
}
