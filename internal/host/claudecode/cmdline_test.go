package claudecode

import (
	"slices"
	"strings"
	"testing"
)

// TestCommandLineAsClaudeCodeReadsIt: each case is how the 2.1.332
// client was seen to read the command line (docs/claude-code.md), and the
// hook must read it alike: an option that takes a value takes "--" and
// "--agents" too, a word after "--" is the prompt, and what cannot be read
// with certainty is an error.
func TestCommandLineAsClaudeCodeReadsIt(t *testing.T) {
	const defs = `{"reader": {"description": "d", "prompt": "p", "tools": ["Read", "Write", "Bash"]}}`
	for _, tc := range []struct {
		name    string
		args    []string
		agents  string   // the --agents value read, "" for none
		addDirs []string // the --add-dir folders read
		safe    bool
		bare    bool
		sources []string
		program bool   // definitions from the driving program
		err     string // the error, "" for none
	}{
		{name: "plain", args: []string{"-p", "hi", "--agents", defs}, agents: defs},
		// The client takes -- as --append-system-prompt's value, and still
		// loads --agents (seen on the real client).
		{name: "dashdash-as-a-value", args: []string{"--append-system-prompt", "--", "--agents", defs, "-p", "hi"}, agents: defs},
		// The client takes --agents as the prompt text to append, and the
		// JSON as the prompt.
		{name: "agents-as-a-value", args: []string{"--append-system-prompt", "--agents", defs, "-p"}},
		{name: "after-dashdash-is-the-prompt", args: []string{"-p", "--", "--agents", defs}},
		{name: "equals", args: []string{"--agents=" + defs, "-p", "hi"}, agents: defs},
		{name: "last-wins", args: []string{"--agents", `{}`, "--agents", defs, "-p", "hi"}, agents: defs},
		{name: "short-value-attached", args: []string{"-nname", "--agents", defs, "-p", "hi"}, agents: defs},
		{name: "short-chained", args: []string{"-cp", "--agents", defs}, agents: defs},
		// -n takes the next word, --agents, as the session's name.
		{name: "chained-short-eats", args: []string{"-pn", "--agents", defs}},
		{name: "add-dir-takes-words", args: []string{"--add-dir", "/a", "/b", "--add-dir", "/c", "-p", "hi"}, addDirs: []string{"/a", "/b", "/c"}},
		{name: "optional-value-not-an-option", args: []string{"--debug", "--agents", defs, "-p", "hi"}, agents: defs},
		{name: "optional-value-taken", args: []string{"--debug", "hooks", "-p", "hi"}},
		// --safe-mode is found by a plain search: as a value too, never
		// after --.
		{name: "safe-mode-as-a-value", args: []string{"--append-system-prompt", "--safe-mode", "--agents", defs, "-p", "hi"}, agents: defs, safe: true},
		{name: "safe-mode-after-dashdash", args: []string{"--append-system-prompt", "--", "--safe-mode", "--agents", defs, "-p", "hi"}, agents: defs},
		{name: "sources", args: []string{"--setting-sources", "user", "-p", "hi"}, sources: []string{"user"}},
		{name: "sdk", args: []string{"--output-format", "stream-json", "--verbose", "--input-format", "stream-json"}, program: true},
		{name: "sdk-url", args: []string{"--sdk-url", "ws://127.0.0.1:1", "-p"}, program: true},
		{name: "unknown-option", args: []string{"--agentz", defs, "-p", "hi"}, err: "--agentz, an option Claude Code 2.1.332 does not have"},
		{name: "unknown-long-with-value", args: []string{"--verbose=true", "-p", "hi"}, err: "--verbose=true"},
		{name: "value-missing", args: []string{"-p", "hi", "--agents"}, err: "--agents is given last with no value"},
		{name: "subcommand", args: []string{"mcp", "serve"}, err: "the subcommand mcp"},
		{name: "subcommand-name-as-a-prompt", args: []string{"-p", "mcp"}},
		// The eager scan reads --settings here; the parser a name.
		{name: "readers-disagree", args: []string{"-pn", "--settings", `{"x":1}`, "hi"}, err: "reads --settings one way before its option parser"},
		{name: "managed-settings", args: []string{"--managed-settings", `{}`, "-p", "hi"}},
		{name: "bare", args: []string{"--append-system-prompt", "--bare", "--agents", defs, "-p", "hi"}, agents: defs, bare: true},
		// A plugin's agents and skills are named plugin:NAME, which no
		// definition the hook reads shadows; its hooks do not run beside a
		// managed installation's (allowManagedHooksOnly).
		{name: "plugin-dir", args: []string{"--plugin-dir", "/p", "-p", "hi"}},
		{name: "project-config-root", args: []string{"--project-config-root", "/x", "-p", "hi"}, err: "--project-config-root"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var s session
			err := s.parse(append([]string{"claude"}, tc.args...))
			switch {
			case tc.err != "":
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want one saying %q", err, tc.err)
				}
				return
			case err != nil:
				t.Fatal(err)
			}
			agents := ""
			if len(s.agents) > 0 {
				agents = s.agents[len(s.agents)-1].value
			}
			if agents != tc.agents || !slices.Equal(s.addDirs, tc.addDirs) || s.safe != tc.safe || s.bare != tc.bare || !slices.Equal(s.sources, tc.sources) || (s.program != "") != tc.program {
				t.Fatalf("read agents %q, add-dir %q, safe %v, sources %q, program %q", agents, s.addDirs, s.safe, s.sources, s.program)
			}
		})
	}
}

// TestClaudeOptionsKnowTheHooksFlags: every flag the hook reads is one
// of the client's options with the arity it has.
func TestClaudeOptionsKnowTheHooksFlags(t *testing.T) {
	for name, want := range map[string]arity{"--agents": required, "--add-dir": variadic, "--setting-sources": required, "--settings": required,
		"--managed-settings": required, "--input-format": required, "--plugin-dir": required, "--safe-mode": noValue, "--restricted": noValue,
		"-p": noValue, "-n": required, "-d": optional, "-r": optional, "--append-system-prompt": required} {
		if got, ok := claudeOptions[name]; !ok || got != want {
			t.Errorf("%s: %v (%v), want %v", name, got, ok, want)
		}
	}
}
