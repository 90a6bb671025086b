package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"maps"
	"reflect"
	"strings"
	"testing"

	"github.com/spawngate/spawngate/internal/plan"
)

// claudeCase is a Claude Code definition file and what ReadClaude reads
// from it.
type claudeCase struct {
	name string
	data string
	lim  *plan.Limits // nil for plan.DefaultLimits
	// want
	defName string
	skipped string // a part of Skipped; "" when the file is not skipped
	err     string // ParseProblem() exactly; "" when there is no error
	fields  string // Fields as JSON; "" when Fields is nil
	lines   map[string]int
}

const skipNoFrontmatter = "it does not start with YAML frontmatter"

var claudeCases = []claudeCase{
	{
		name:    "a byte-order mark before the frontmatter: refused under its name, not skipped",
		data:    "\xef\xbb\xbf---\nname: r\ndescription: d\ntools: Read\n---\n",
		defName: "r",
		err:     "line 1: the frontmatter is written oddly (a byte-order mark, or spaces after ---): hosts may read it differently; write it plainly",
	},
	{
		name:    "spaces after the closing ---",
		data:    "---\nname: r\ndescription: d\n---  \nbody\n",
		defName: "r",
		err:     "line 1: the frontmatter is written oddly (a byte-order mark, or spaces after ---): hosts may read it differently; write it plainly",
	},
	{
		name:    "tools as a comma-separated string",
		data:    "---\nname: code-reviewer\ndescription: Reviews code.\ntools: Read, Grep, Glob\nmodel: sonnet\n---\nYou review code.\n",
		defName: "code-reviewer",
		fields:  `{"name": "code-reviewer", "description": "Reviews code.", "tools": "Read, Grep, Glob", "model": "sonnet"}`,
		lines:   map[string]int{"name": 2, "description": 3, "tools": 4, "model": 5},
	},
	{
		name:    "tools as an inline list",
		data:    "---\nname: yolo\ndescription: Runs without asking.\ntools: [Read, Grep]\npermissionMode: bypassPermissions\n---\nbody\n",
		defName: "yolo",
		fields:  `{"name": "yolo", "description": "Runs without asking.", "tools": ["Read", "Grep"], "permissionMode": "bypassPermissions"}`,
		lines:   map[string]int{"name": 2, "description": 3, "tools": 4, "tools/0": 4, "tools/1": 4, "permissionMode": 5},
	},
	{
		name:    "tools as a block list, each entry on its line",
		data:    "---\nname: researcher\ndescription: Looks things up.\ntools:\n  - Read\n  - Grep\n\n  - WebFetch\ndisallowedTools:\n  - Bash\nmodel: haiku\n---\nbody\n",
		defName: "researcher",
		fields:  `{"name": "researcher", "description": "Looks things up.", "tools": ["Read", "Grep", "WebFetch"], "disallowedTools": ["Bash"], "model": "haiku"}`,
		lines:   map[string]int{"name": 2, "description": 3, "tools": 4, "tools/0": 5, "tools/1": 6, "tools/2": 8, "disallowedTools": 9, "disallowedTools/0": 10, "model": 11},
	},
	{
		name:    "CRLF line endings read as LF, with the same lines",
		data:    "---\r\nname: researcher\r\ndescription: Looks things up.\r\ntools:\r\n  - Read\r\n  - Grep\r\n---\r\nbody\r\n",
		defName: "researcher",
		fields:  `{"name": "researcher", "description": "Looks things up.", "tools": ["Read", "Grep"]}`,
		lines:   map[string]int{"name": 2, "description": 3, "tools": 4, "tools/0": 5, "tools/1": 6},
	},
	{
		name:    "CRLF file closed at the end without a line break",
		data:    "---\r\nname: a\r\ndescription: d\r\n---",
		defName: "a",
		fields:  `{"name": "a", "description": "d"}`,
		lines:   map[string]int{"name": 2, "description": 3},
	},
	{
		name:    "frontmatter closed at the end of the file",
		data:    "---\nname: a\ndescription: d\n---",
		defName: "a",
		fields:  `{"name": "a", "description": "d"}`,
		lines:   map[string]int{"name": 2, "description": 3},
	},
	{
		name:    "the first closing line ends the frontmatter",
		data:    "---\nname: a\ndescription: d\n---\nbody\n---\ntools: Bash\n---\n",
		defName: "a",
		fields:  `{"name": "a", "description": "d"}`,
		lines:   map[string]int{"name": 2, "description": 3},
	},
	{
		name:    "comments and blank lines do not shift key lines",
		data:    "---\n# an agent\nname: a\n\n# what it does\ndescription: >\n  folded\n  text\nmodel: inherit # the parent's\n---\n",
		defName: "a",
		fields:  `{"name": "a", "description": "folded text\n", "model": "inherit"}`,
		lines:   map[string]int{"name": 3, "description": 6, "model": 9},
	},
	{
		name:    "a longer line of dashes does not close the frontmatter",
		data:    "---\nname: a\ndescription: d\n----\n",
		skipped: skipNoFrontmatter,
	},
	{
		name:    "no frontmatter",
		data:    "name: a\ndescription: d\n",
		skipped: skipNoFrontmatter,
	},
	{
		name:    "empty file",
		data:    "",
		skipped: skipNoFrontmatter,
	},
	{
		name:    "a blank line before the frontmatter",
		data:    "\n---\nname: a\ndescription: d\n---\n",
		skipped: skipNoFrontmatter,
	},
	{
		name:    "frontmatter not closed",
		data:    "---\nname: a\ndescription: d\ntools: Read\n",
		skipped: skipNoFrontmatter,
	},
	{
		name:    "only an opening line",
		data:    "---\n",
		skipped: skipNoFrontmatter,
	},
	{
		name:    "empty frontmatter",
		data:    "---\n---\nbody\n",
		skipped: "has no name",
		err:     "empty document: nothing to check",
	},
	{
		name:    "no name",
		data:    "---\ndescription: d\ntools: Read\n---\n",
		skipped: "has no name",
		fields:  `{"description": "d", "tools": "Read"}`,
		lines:   map[string]int{"description": 2, "tools": 3},
	},
	{
		name:    "an empty name",
		data:    "---\nname: ''\ndescription: d\n---\n",
		skipped: "has no name",
		fields:  `{"name": "", "description": "d"}`,
		lines:   map[string]int{"name": 2, "description": 3},
	},
	{
		name:    "a name that is not a string",
		data:    "---\nname: 12\ndescription: d\n---\n",
		skipped: "has no name",
		fields:  `{"name": 12, "description": "d"}`,
		lines:   map[string]int{"name": 2, "description": 3},
	},
	{
		name:    "a name with a colon",
		data:    "---\nname: plugin:reviewer\ndescription: d\n---\n",
		defName: "plugin:reviewer",
		skipped: `its name "plugin:reviewer" has a ':'`,
		fields:  `{"name": "plugin:reviewer", "description": "d"}`,
		lines:   map[string]int{"name": 2, "description": 3},
	},
	{
		name:    "a name that starts with a dash",
		data:    "---\nname: '-reviewer'\ndescription: d\n---\n",
		defName: "-reviewer",
		skipped: "starts with '-'",
		fields:  `{"name": "-reviewer", "description": "d"}`,
		lines:   map[string]int{"name": 2, "description": 3},
	},
	{
		name:    "no description",
		data:    "---\nname: a\ntools: Read\n---\n",
		defName: "a",
		skipped: "has no description",
		fields:  `{"name": "a", "tools": "Read"}`,
		lines:   map[string]int{"name": 2, "tools": 3},
	},
	{
		name:    "an empty description",
		data:    "---\nname: a\ndescription: \"\"\n---\n",
		defName: "a",
		skipped: "has no description",
		fields:  `{"name": "a", "description": ""}`,
		lines:   map[string]int{"name": 2, "description": 3},
	},
	{
		name:    "a description that is not a string",
		data:    "---\nname: a\ndescription: [d]\n---\n",
		defName: "a",
		skipped: "has no description",
		fields:  `{"name": "a", "description": ["d"]}`,
		lines:   map[string]int{"name": 2, "description": 3, "description/0": 3},
	},
	{
		name:    "the strict reader refuses an unquoted yes, and the lenient name is kept",
		data:    "---\nname: ambiguous\ndescription: yes\ntools: Read\n---\n",
		defName: "ambiguous",
		err:     `line 3, column 14: /description: unquoted "yes" is a boolean to YAML 1.1 parsers: quote it`,
	},
	{
		name:    "the strict reader refuses a tag, and the lenient name is kept",
		data:    "---\nname: !!str tagged\ndescription: d\n---\n",
		defName: "tagged",
		err:     "line 2, column 7: /name: YAML tag !!str: tags are not supported, because parsers give them different meanings",
	},
	{
		name:    "the strict reader refuses a lone carriage return, and the lenient name is kept",
		data:    "---\nname: a\rdescription: d\n---\n",
		defName: "a",
		err:     "line 2, column 8: a carriage return without a line feed: YAML parsers disagree on how it splits or reads the document",
	},
	{
		name:    "the strict reader refuses, and the lenient reading finds no name",
		data:    "---\ndescription: yes\n---\n",
		skipped: "has no name",
		err:     `line 2, column 14: /description: unquoted "yes" is a boolean to YAML 1.1 parsers: quote it`,
	},
	{
		name:    "a frontmatter over the YAML limit keeps the lenient name",
		data:    "---\nname: big\ndescription: d\n---\n",
		lim:     &plan.Limits{MaxBytes: 1 << 20, MaxYAMLBytes: 10, MaxDepth: 64, MaxAliasNodes: 10, MaxAliasBytes: 10, MaxStringBytes: 100, MaxValues: 100, MaxChildren: 1, MaxChildEntries: 1},
		defName: "big",
		err:     "YAML document is larger than 10 bytes; a JSON document may be larger",
	},
	{
		name:    "a duplicate key is YAML to neither reader",
		data:    "---\nname: a\nname: b\ndescription: d\n---\n",
		skipped: "is not YAML",
		err:     `line 3, column 1: duplicate key "name": consumers disagree on which value wins`,
	},
	{
		name:    "YAML that is not YAML at all",
		data:    "---\nname: [a\ndescription: d\n---\n",
		skipped: "is not YAML",
		err:     "line 2: did not find expected ',' or ']'", // yaml.v3 names the line the list starts on
	},
	{
		name:    "a tab where indentation goes",
		data:    "---\nname: a\ndescription: d\n\ttools: Read\n---\n",
		skipped: "is not YAML",
		err:     "line 3: found a tab character that violates indentation", // yaml.v3 names the line before
	},
	{
		name:    "frontmatter that is a list",
		data:    "---\n- name: a\n- description: d\n---\n",
		skipped: "is not a mapping",
	},
	{
		name:    "frontmatter that is plain text",
		data:    "---\njust some text\n---\n",
		skipped: "is not a mapping",
	},
	{
		name:    "an alias is read as its value",
		data:    "---\nname: &n a\ndescription: *n\ntools: [Read, 5]\nbudget_tokens: 12\n---\n",
		defName: "a",
		fields:  `{"name": "a", "description": "a", "tools": ["Read", 5], "budget_tokens": 12}`,
		lines:   map[string]int{"name": 2, "description": 3, "tools": 4, "tools/0": 4, "tools/1": 4, "budget_tokens": 5},
	},
}

func TestReadClaude(t *testing.T) {
	for _, tc := range claudeCases {
		t.Run(tc.name, func(t *testing.T) {
			lim := plan.DefaultLimits
			if tc.lim != nil {
				lim = *tc.lim
			}
			d := ReadClaude(context.Background(), "agents/a.md", []byte(tc.data), lim)
			if d.Host != ClaudeCode || d.File != "agents/a.md" {
				t.Errorf("Host, File = %q, %q", d.Host, d.File)
			}
			if d.Name != tc.defName {
				t.Errorf("Name = %q, want %q", d.Name, tc.defName)
			}
			if tc.skipped == "" && d.Skipped != "" || !strings.Contains(d.Skipped, tc.skipped) {
				t.Errorf("Skipped = %q, want one with %q", d.Skipped, tc.skipped)
			}
			if got := d.ParseProblem(); got != tc.err {
				t.Errorf("ParseProblem() = %q, want %q", got, tc.err)
			}
			if d.Err != nil && d.Err.Source != "agents/a.md" {
				t.Errorf("Err.Source = %q", d.Err.Source)
			}
			checkFields(t, d.Fields, tc.fields)
			checkLines(t, d.Lines, tc.lines)
		})
	}
}

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
			if d.Host != Codex || d.File != "agents/a.toml" || d.Skipped != "" {
				t.Errorf("Host, File, Skipped = %q, %q, %q", d.Host, d.File, d.Skipped)
			}
			if d.Name != tc.defName {
				t.Errorf("Name = %q, want %q", d.Name, tc.defName)
			}
			if got := d.ParseProblem(); got != tc.err {
				t.Errorf("ParseProblem() = %q, want %q", got, tc.err)
			}
			if d.Err != nil && d.Err.Source != "agents/a.toml" {
				t.Errorf("Err.Source = %q", d.Err.Source)
			}
			checkFields(t, d.Fields, tc.fields)
			checkLines(t, d.Lines, tc.lines)
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

// TestExampleDefinitions reads the definitions the examples ship: each is
// one the gate can judge but broken.toml, which writes a key twice.
func TestExampleDefinitions(t *testing.T) {
	for _, host := range []Host{ClaudeCode, Codex} {
		dir := "../../examples/claude-code/" + Folder(host)
		if host == Codex {
			dir = "../../examples/codex/" + Folder(host)
		}
		c, err := Load(context.Background(), host, []string{dir}, plan.DefaultLimits)
		if err != nil {
			t.Fatal(err)
		}
		defs := c.Definitions()
		if len(defs) < 5 {
			t.Fatalf("%s: %d definitions", dir, len(defs))
		}
		for _, d := range defs {
			base := d.File[strings.LastIndexByte(d.File, '/')+1:]
			wantErr := base == "broken.toml" || base == "ambiguous.md"
			if (d.Err != nil) != wantErr || d.Skipped != "" || d.Name == "" {
				t.Errorf("%s: Name %q, Err %v, Skipped %q", d.File, d.Name, d.Err, d.Skipped)
			}
			if name := strings.TrimSuffix(strings.TrimSuffix(base, ".md"), ".toml"); d.Name != name {
				t.Errorf("%s: Name %q", d.File, d.Name)
			}
		}
	}
}

func TestFrontmatter(t *testing.T) {
	for _, tc := range []struct {
		in, front string
		ok        bool
	}{
		{"---\na: 1\n---\n", "a: 1\n", true},
		{"---\na: 1\n---", "a: 1\n", true},
		{"---\r\na: 1\r\n---\r\nb\r\n", "a: 1\n", true},
		{"---\n---\n", "", true},
		{"---\n---", "", true},
		{"---\n\n---\n", "\n", true},
		{"---\na: 1\n--- \n", "", false},
		{"---\na: 1\n", "", false},
		{"--- \na: 1\n---\n", "", false},
		{"\xef\xbb\xbf---\na: 1\n---\n", "", false},
		{"---", "", false},
		{"", "", false},
	} {
		front, ok := frontmatter([]byte(tc.in))
		if ok != tc.ok || string(front) != tc.front {
			t.Errorf("frontmatter(%q) = %q, %v; want %q, %v", tc.in, front, ok, tc.front, tc.ok)
		}
	}
}

// checkFields compares a definition's fields with the JSON of the ones
// wanted ("" for none).
func checkFields(t *testing.T, got map[string]any, want string) {
	t.Helper()
	if want == "" {
		if got != nil {
			t.Errorf("Fields = %#v, want nil", got)
		}
		return
	}
	if got == nil {
		t.Errorf("Fields = nil, want %s", want)
		return
	}
	if g, w := canonical(t, got), canonicalText(t, want); g != w {
		t.Errorf("Fields = %s\nwant     %s", g, w)
	}
}

func checkLines(t *testing.T, got, want map[string]int) {
	t.Helper()
	if want == nil {
		want = map[string]int{}
	}
	if !maps.Equal(got, want) {
		t.Errorf("Lines = %v\nwant    %v", got, want)
	}
}

// canonical is a JSON-shaped value's JSON, keys in order.
func canonical(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("not JSON: %v: %#v", err, v)
	}
	return string(b)
}

// canonicalText is a JSON text with keys in order and numbers as written.
func canonicalText(t *testing.T, text string) string {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader([]byte(text)))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("bad JSON in the test: %v: %s", err, text)
	}
	return canonical(t, v)
}
