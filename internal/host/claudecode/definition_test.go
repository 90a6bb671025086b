package claudecode

import (
	"context"
	"fmt"
	"testing"

	"github.com/spawngate/spawngate/internal/document"
	"github.com/spawngate/spawngate/internal/host"
	"github.com/spawngate/spawngate/internal/host/hosttest"
)

// claudeCase is a Claude Code definition file and what ReadClaude reads
// from it.
type claudeCase struct {
	name string
	data string
	lim  *document.Limits // nil for document.DefaultLimits
	// want
	defName string
	skipped string // a part of Skipped; "" when the file is not skipped
	err     string // ParseProblem() exactly; "" when there is no error
	fields  string // Fields as JSON; "" when Fields is nil
	lines   map[string]int
}

const skipNoFrontmatter = "it does not start with YAML frontmatter"

// earlyEndProblem is ReadClaude's problem with a frontmatter Claude Code
// ends early, at a --- on the given line.
func earlyEndProblem(line int) string {
	return fmt.Sprintf("line %d: Claude Code ends this frontmatter at another \"---\" (inside a value, or a line of more dashes) and would read other settings than these: take the --- out of the value and close the frontmatter with a line of exactly ---", line)
}

var claudeCases = []claudeCase{
	{
		// Read from the client: YAML its parser refuses it parses again
		// with such values quoted; where that is plain YAML, it is the
		// definition.
		name:    "a description holding ': ' is read as the host rewrites it",
		data:    "---\nname: r\ndescription: Use it when: files need reading\ntools: Read\n---\nbody\n",
		defName: "r",
		fields:  `{"name": "r", "description": "Use it when: files need reading", "tools": "Read"}`,
		lines:   map[string]int{"name": 2, "description": 3, "tools": 4},
	},
	{
		name:    "tabs before a key are read as the host rewrites them",
		data:    "---\nname: r\ndescription: d\ntools:\n\t- Read\n---\n",
		defName: "r",
		fields:  `{"name": "r", "description": "d", "tools": ["Read"]}`,
		lines:   map[string]int{"name": 2, "description": 3, "tools": 4, "tools/0": 5},
	},
	{
		// The host keeps the last; the gate refuses under the name.
		name:    "a key given twice: refused under its name, not skipped",
		data:    "---\nname: r\ndescription: d\ntools: Read\ntools: Read, Write\n---\n",
		defName: "r",
		err:     "SKIP",
	},
	{
		name:    "a top-level PreToolUse makes the host skip the file",
		data:    "---\nname: r\ndescription: d\ntools: Read\nPreToolUse: []\n---\n",
		defName: "r",
		skipped: "declares PreToolUse or PermissionRequest at the top level",
		fields:  `{"name": "r", "description": "d", "tools": "Read", "PreToolUse": []}`,
		lines:   map[string]int{"name": 2, "description": 3, "tools": 4, "PreToolUse": 5},
	},
	{
		// The host's reading ends at the first three dashes of ----: it
		// loads the file, so the gate must not skip it.
		name:    "frontmatter closed by a line of four dashes: refused, not skipped",
		data:    "---\nname: r\ndescription: d\ntools: Read\n----\nbody\n",
		defName: "r",
		err:     earlyEndProblem(5),
	},
	{
		// The host reads up to the --- inside the description: its name is
		// the one before it, and the gate refuses under that name, not the
		// one the whole frontmatter gives.
		name:    "a --- that ends the host's reading before a second name",
		data:    "---\nname: r\ndescription: a---\nname: w\ntools: Read\n---\n",
		defName: "r",
		err:     earlyEndProblem(3),
	},
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
		name:    "a longer line of dashes closes the frontmatter for the host only",
		data:    "---\nname: a\ndescription: d\n----\n",
		defName: "a",
		err:     earlyEndProblem(4),
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
		lim:     &document.Limits{MaxBytes: 1 << 20, MaxYAMLBytes: 10, MaxDepth: 64, MaxAliasNodes: 10, MaxAliasBytes: 10, MaxStringBytes: 100, MaxValues: 100, MaxChildren: 1, MaxChildEntries: 1},
		defName: "big",
		err:     "YAML document is larger than 10 bytes; a JSON document may be larger",
	},
	{
		// Claude Code's parser keeps the last: it loads the file as b.
		name:    "a duplicate key: refused under the name the host keeps",
		data:    "---\nname: a\nname: b\ndescription: d\n---\n",
		defName: "b",
		err:     `line 3, column 1: duplicate key "name": consumers disagree on which value wins`,
	},
	{
		// The host parses it again with the value quoted, and loads it as
		// "[a": refused under that name, since the rewrite touched more
		// than a description.
		name:    "YAML the host parses only rewritten",
		data:    "---\nname: [a\ndescription: d\n---\n",
		defName: "[a",
		err:     "line 3: did not find expected ',' or ']'", // where the parser finds the list not closed
	},
	{
		name:    "YAML that is not YAML even rewritten",
		data:    "---\nname: a\n- b\n---\n",
		skipped: "is not YAML",
		err:     "SKIP",
	},
	{
		name:    "a tab where indentation goes",
		data:    "---\nname: a\ndescription: d\n\ttools: Read\n---\n",
		skipped: "is not YAML",
		err:     "line 4, column 1: a tab indents this line: YAML indents with spaces",
	},
	{
		name:    "a --- inside a value ends the frontmatter early for Claude Code",
		data:    "---\nname: r\ndescription: reads---carefully\ntools: Read\n---\nbody\n",
		defName: "r",
		err:     earlyEndProblem(3),
	},
	{
		name:    "a --- before the name: the name the gate reads is kept",
		data:    "---\ndescription: a---b\nname: r\ntools: Read\n---\n",
		defName: "r",
		err:     earlyEndProblem(2),
	},
	{
		name:    "an indented --- line in a block scalar",
		data:    "---\nname: r\ndescription: |\n  text\n  ---\n  more\ntools: Read\n---\n",
		defName: "r",
		err:     earlyEndProblem(5),
	},
	{
		name:    "a --- inside a value with CRLF line endings",
		data:    "---\r\nname: r\r\ndescription: x --- y\r\n---\r\n",
		defName: "r",
		err:     earlyEndProblem(3),
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
			lim := document.DefaultLimits
			if tc.lim != nil {
				lim = *tc.lim
			}
			d := ReadClaude(context.Background(), "agents/a.md", []byte(tc.data), lim)
			want := hosttest.WantDefinition{File: "agents/a.md", Name: tc.defName, Skipped: tc.skipped, Problem: tc.err, Fields: tc.fields, Lines: tc.lines}
			if tc.err == "SKIP" && d.ParseProblem() != "" {
				want.Problem = d.ParseProblem() // any problem will do
			}
			hosttest.Definition(t, d, want)
		})
	}
}

// TestExampleDefinitions reads the definitions the example ships: each is
// one the gate can judge but ambiguous.md, whose description is a bare
// yes.
func TestExampleDefinitions(t *testing.T) {
	dir := "../../../examples/claude-code/" + Folder
	c, err := load(context.Background(), host.Env{AgentsDirs: []string{dir}, Limits: document.DefaultLimits}, session{})
	if err != nil {
		t.Fatal(err)
	}
	hosttest.Examples(t, c.Definitions(), "ambiguous.md")
}
