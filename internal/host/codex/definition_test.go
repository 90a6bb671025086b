package codex

import (
	"context"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/spawngate/spawngate/internal/document"
	"github.com/spawngate/spawngate/internal/host"
	"github.com/spawngate/spawngate/internal/host/hosttest"
)

// codexCase is a Codex definition file and what ReadCodex reads from it.
type codexCase struct {
	name    string
	data    string
	defName string
	err     string // ParseProblem() exactly; "" when there is no error
	fields  string // Fields as JSON; "" when Fields is nil
	lines   map[string]int
}

var codexCases = []codexCase{
	{
		name: "valid, with MCP servers on lines of their own",
		data: `name = "reader"
description = "Reads the code."
developer_instructions = "Read; never change anything."
model = "gpt-5.1-codex"
sandbox_mode = "read-only"

[mcp_servers.github]
command = "github-mcp-server"
args = ["stdio"]

[mcp_servers.slack]
command = "slack-mcp"
`,
		defName: "reader",
		fields: `{"name": "reader", "description": "Reads the code.", "developer_instructions": "Read; never change anything.",
			"model": "gpt-5.1-codex", "sandbox_mode": "read-only",
			"mcp_servers": {"github": {"command": "github-mcp-server", "args": ["stdio"]}, "slack": {"command": "slack-mcp"}}}`,
		lines: map[string]int{
			"name": 1, "description": 2, "developer_instructions": 3, "model": 4, "sandbox_mode": 5,
			"mcp_servers": 7, "mcp_servers/github": 7, "mcp_servers/github/command": 8, "mcp_servers/github/args": 9,
			"mcp_servers/slack": 11, "mcp_servers/slack/command": 12,
		},
	},
	{
		name:    "servers under one [mcp_servers] table, as inline tables",
		data:    "name = \"n\"\ndescription = \"d\"\n\n[mcp_servers]\ngithub = { command = \"gh\" }\nslack = { command = \"sl\" }\n",
		defName: "n",
		fields:  `{"name": "n", "description": "d", "mcp_servers": {"github": {"command": "gh"}, "slack": {"command": "sl"}}}`,
		lines:   map[string]int{"name": 1, "description": 2, "mcp_servers": 4, "mcp_servers/github": 5, "mcp_servers/slack": 6},
	},
	{
		name:    "integers become JSON numbers, also in lists and tables",
		data:    "name = \"n\"\ndescription = \"d\"\nbudget_tokens = 40000\nretries = [1, -2]\nlimits = { max = 0 }\n",
		defName: "n",
		fields:  `{"name": "n", "description": "d", "budget_tokens": 40000, "retries": [1, -2], "limits": {"max": 0}}`,
		lines:   map[string]int{"name": 1, "description": 2, "budget_tokens": 3, "retries": 4, "limits": 5},
	},
	{
		name:    "floats become JSON numbers; nan and inf, which JSON has not, strings",
		data:    "name = \"n\"\ndescription = \"d\"\nf = 1.5\ng = 1e21\nbudget_tokens = inf\nsandbox_mode = nan\nm = -inf\n",
		defName: "n",
		fields:  `{"name": "n", "description": "d", "f": 1.5, "g": 1e+21, "budget_tokens": "+Inf", "sandbox_mode": "NaN", "m": "-Inf"}`,
		lines:   map[string]int{"name": 1, "description": 2, "f": 3, "g": 4, "budget_tokens": 5, "sandbox_mode": 6, "m": 7},
	},
	{
		name:    "booleans stay booleans, dates become strings",
		data:    "name = \"n\"\ndescription = \"d\"\nb = true\nday = 1979-05-27\nt = 07:32:00\n",
		defName: "n",
		fields:  `{"name": "n", "description": "d", "b": true, "day": "1979-05-27", "t": "07:32:00"}`,
		lines:   map[string]int{"name": 1, "description": 2, "b": 3, "day": 4, "t": 5},
	},
	{
		name:    "an escaped name",
		data:    "name = \"a\\u0062\"\ndescription = '''d'''\n",
		defName: "ab",
		fields:  `{"name": "ab", "description": "d"}`,
		lines:   map[string]int{"name": 1, "description": 2},
	},
	{
		name:    "a duplicate key does not parse, and the name is recovered",
		data:    "name = \"broken\"\ndescription = \"Writes its sandbox twice.\"\ndeveloper_instructions = \"Nothing.\"\nsandbox_mode = \"read-only\"\nsandbox_mode = \"danger-full-access\"\n",
		defName: "broken",
		err:     "line 5, column 1: key sandbox_mode is already defined",
		lines:   map[string]int{},
	},
	{
		name:    "a name written twice: the first is recovered",
		data:    "name = \"first\"\nname = \"second\"\n",
		defName: "first",
		err:     "line 2, column 1: key name is already defined",
		lines:   map[string]int{},
	},
	{
		name:    "an escaped name is recovered unescaped",
		data:    "name = \"a\\u0062\"\nname = \"x\"\n",
		defName: "ab",
		err:     "line 2, column 1: key name is already defined",
		lines:   map[string]int{},
	},
	{
		name:    "a duplicate table after the name: the name is recovered",
		data:    "name = \"n\"\ndescription = \"d\"\n[mcp_servers.a]\ncommand = \"x\"\n[mcp_servers.a]\n",
		defName: "n",
		err:     "line 5, column 2: table a already exists",
		lines:   map[string]int{},
	},
	{
		name:  "a syntax error before the name: none is recovered",
		data:  "x = \nname = \"a\"\n",
		err:   "line 1, column 5: unexpected character U+000A at start of value",
		lines: map[string]int{},
	},
	{
		name:  "a name inside a table is not the agent's",
		data:  "[t]\nname = \"a\"\n[t]\n",
		err:   "line 3, column 2: table t already exists",
		lines: map[string]int{},
	},
	{
		name:  "a broken file whose name is not a string",
		data:  "name = 1\nname = 2\n",
		err:   "line 2, column 1: key name is already defined",
		lines: map[string]int{},
	},
	{
		name:   "missing name",
		data:   "description = \"d\"\nsandbox_mode = \"read-only\"\n",
		err:    "the definition has no name, which Codex knows an agent by",
		fields: `{"description": "d", "sandbox_mode": "read-only"}`,
		lines:  map[string]int{"description": 1, "sandbox_mode": 2},
	},
	{
		name:   "an empty name",
		data:   "name = \"\"\ndescription = \"d\"\n",
		err:    "line 1: the definition has no name, which Codex knows an agent by",
		fields: `{"name": "", "description": "d"}`,
		lines:  map[string]int{"name": 1, "description": 2},
	},
	{
		name:   "a name that is not a string",
		data:   "name = 5\ndescription = \"d\"\n",
		err:    "line 1: the definition has no name, which Codex knows an agent by",
		fields: `{"name": 5, "description": "d"}`,
		lines:  map[string]int{"name": 1, "description": 2},
	},
	{
		name:   "an empty file",
		data:   "",
		err:    "the definition has no name, which Codex knows an agent by",
		fields: `{}`,
		lines:  map[string]int{},
	},
	{
		name:    "a description that is not a string",
		data:    "name = \"n\"\ndescription = 5\n",
		defName: "n",
		err:     "line 2: the definition has no description, which Codex requires",
		fields:  `{"name": "n", "description": 5}`,
		lines:   map[string]int{"name": 1, "description": 2},
	},
	{
		name:    "no description",
		data:    "name = \"n\"\n",
		defName: "n",
		err:     "the definition has no description, which Codex requires",
		fields:  `{"name": "n"}`,
		lines:   map[string]int{"name": 1},
	},
	{
		name:    "mcp_servers that is not a table",
		data:    "name = \"n\"\ndescription = \"d\"\nmcp_servers = \"github\"\n",
		defName: "n",
		err:     "line 3: mcp_servers is not a table of servers",
		fields:  `{"name": "n", "description": "d", "mcp_servers": "github"}`,
		lines:   map[string]int{"name": 1, "description": 2, "mcp_servers": 3},
	},
	{
		name:    "a float stays a float: 40000.0 is no whole budget",
		data:    "name = \"n\"\ndescription = \"d\"\nbudget_tokens = 40000.0\n",
		defName: "n",
		fields:  `{"name": "n", "description": "d", "budget_tokens": 40000.0}`,
		lines:   map[string]int{"name": 1, "description": 2, "budget_tokens": 3},
	},
}

func TestReadCodex(t *testing.T) {
	for _, tc := range codexCases {
		t.Run(tc.name, func(t *testing.T) {
			d := ReadCodex("agents/a.toml", []byte(tc.data))
			hosttest.Definition(t, d, hosttest.WantDefinition{File: "agents/a.toml", Name: tc.defName, Problem: tc.err, Fields: tc.fields, Lines: tc.lines})
		})
	}
}

// TestReadCodexNumbers checks the Go types normalizeTOML gives: the rest of
// the gate reads json.Number, never int64 or float64.
func TestReadCodexNumbers(t *testing.T) {
	d := ReadCodex("a.toml", []byte("name = \"n\"\ndescription = \"d\"\nbudget_tokens = 40000\nlist = [1, 2.5]\nt = { n = -3 }\nbad = nan\n"))
	if d.Err != nil {
		t.Fatal(d.Err)
	}
	want := map[string]any{
		"name": "n", "description": "d",
		"budget_tokens": json.Number("40000"),
		"list":          []any{json.Number("1"), json.Number("2.5")},
		"t":             map[string]any{"n": json.Number("-3")},
		"bad":           "NaN",
	}
	if !reflect.DeepEqual(d.Fields, want) {
		t.Errorf("Fields = %#v\nwant %#v", d.Fields, want)
	}
}

// TestExampleDefinitions reads the definitions the example ships: each is
// one the gate can judge but broken.toml, which writes a key twice.
func TestExampleDefinitions(t *testing.T) {
	dir := "../../../examples/codex/" + Folder
	c, err := load(context.Background(), host.Env{Limits: document.DefaultLimits}, []string{dir})
	if err != nil {
		t.Fatal(err)
	}
	hosttest.Examples(t, c.Definitions(), "broken.toml")
}
