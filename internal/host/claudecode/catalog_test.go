package claudecode

import (
	"context"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/spawngate/spawngate/internal/agent"
	"github.com/spawngate/spawngate/internal/document"
	"github.com/spawngate/spawngate/internal/host"
	"github.com/spawngate/spawngate/internal/host/hosttest"
)

// dirsEnv is the environment of a test that names its folders of
// definitions itself.
func dirsEnv(dirs ...string) host.Env {
	return host.Env{AgentsDirs: dirs, Limits: document.DefaultLimits}
}

func TestSearchDirs(t *testing.T) {
	base := hosttest.OutsideRepo(t)
	hosttest.WriteTree(t, base, hosttest.Repositories())
	j := filepath.Join
	root := j(base, "root")
	managed := j(root, "etc/claude-code/.claude/agents")
	for _, tc := range []struct {
		name string
		env  host.Env
		s    session
		want []string
	}{
		{
			name: "managed, then from the start folder up to the repository root, then home",
			env:  host.Env{Root: root, Home: j(base, "home")},
			s:    session{project: j(base, "repo/a/b")},
			want: []string{managed, j(base, "repo/a/b/.claude/agents"), j(base, "repo/a/.claude/agents"), j(base, "repo/.claude/agents"), j(base, "home/.claude/agents")},
		},
		{
			name: "at the repository root",
			env:  host.Env{Root: root, Home: j(base, "home")},
			s:    session{project: j(base, "repo")},
			want: []string{managed, j(base, "repo/.claude/agents"), j(base, "home/.claude/agents")},
		},
		{
			// A worktree's .git is a file naming the main checkout, whose
			// folder Claude Code reads after the worktree's.
			name: "a .git file marks the root too, and a linked worktree reads its main checkout",
			env:  host.Env{Root: root},
			s:    session{project: j(base, "worktree/src")},
			want: []string{managed, j(base, "worktree/src/.claude/agents"), j(base, "worktree/.claude/agents"), j(base, "repo/.claude/agents")},
		},
		{
			name: "the closest repository is the root",
			env:  host.Env{Root: root},
			s:    session{project: j(base, "repo/a/b/sub")},
			want: []string{managed, j(base, "repo/a/b/sub/.claude/agents")},
		},
		{
			// Outside a repository Claude Code walks up to the home folder
			// (whose .claude is the user's), or to / when not under it.
			name: "outside a repository: up to home, then home",
			env:  host.Env{Root: root, Home: base},
			s:    session{project: j(base, "plain/a")},
			want: []string{managed, j(base, "plain/a/.claude/agents"), j(base, "plain/.claude/agents"), j(base, ".claude/agents")},
		},
		{
			name: "outside a repository and not under home: up to /",
			env:  host.Env{Root: root, Home: "/nonexistent-home"},
			s:    session{project: j(base, "plain/a")},
			want: append(append([]string{managed}, upTo(j(base, "plain/a"))...), "/nonexistent-home/.claude/agents"),
		},
		{
			name: "--agents after managed; --add-dir after the project, relative to it, the last given first",
			env:  host.Env{Root: root, Home: base},
			s:    session{project: j(base, "plain/a"), agents: []agentsFlag{{"{}"}}, addDirs: []string{"../x", "/abs"}},
			want: []string{managed, agentsLevel, j(base, "plain/a/.claude/agents"), j(base, "plain/.claude/agents"), "/abs/.claude/agents", j(base, "plain/x/.claude/agents"), j(base, ".claude/agents")},
		},
		{
			name: "CLAUDE_CONFIG_DIR moves the user's folder",
			env:  host.Env{Root: root, Home: base, Getenv: func(k string) string { return map[string]string{"CLAUDE_CONFIG_DIR": "../cfg"}[k] }},
			s:    session{project: j(base, "repo")},
			want: []string{managed, j(base, "repo/.claude/agents"), j(base, "cfg/agents")},
		},
		{
			name: "safe mode: managed alone",
			env:  host.Env{Root: root, Home: base},
			s:    session{project: j(base, "repo"), safe: true, agents: []agentsFlag{{"{}"}}},
			want: []string{managed},
		},
		{
			name: "CLAUDE_CODE_SAFE_MODE: managed alone",
			env:  host.Env{Root: root, Home: base, Getenv: func(k string) string { return map[string]string{"CLAUDE_CODE_SAFE_MODE": "1"}[k] }},
			s:    session{project: j(base, "repo")},
			want: []string{managed},
		},
		{
			name: "--setting-sources user: no project folder, --add-dir's neither",
			env:  host.Env{Root: root, Home: j(base, "home")},
			s:    session{project: j(base, "plain/a"), addDirs: []string{"/abs"}, sources: []string{"user"}},
			want: []string{managed, j(base, "home/.claude/agents")},
		},
		{
			name: "--setting-sources project: no user folder",
			env:  host.Env{Root: root, Home: base},
			s:    session{project: j(base, "plain/a"), sources: []string{"project", "local"}},
			want: []string{managed, j(base, "plain/a/.claude/agents"), j(base, "plain/.claude/agents")},
		},
		{
			name: "folders given replace all but --agents",
			env:  host.Env{Root: root, Home: j(base, "home"), AgentsDirs: []string{"/one", "/two"}},
			s:    session{project: j(base, "plain/a"), agents: []agentsFlag{{"{}"}}},
			want: []string{agentsLevel, "/one", "/two"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := sources(tc.env, tc.s); !slices.Equal(got, tc.want) {
				t.Errorf("sources = %q\nwant      %q", got, tc.want)
			}
		})
	}
	if got := sources(host.Env{}, session{project: "/p"}); got[0] != filepath.Join("/", managedAgents) {
		t.Errorf("without Root, the managed folder is %q", got[0])
	}
}

func TestLoose(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"code-reviewer", "codereviewer"},
		{"Code Reviewer", "codereviewer"},
		{"CODE_REVIEWER", "codereviewer"},
		{"  code - _reviewer  ", "codereviewer"},
		{"-code-reviewer-", "codereviewer"},
		{"codeReviewer", "codereviewer"},
		{"code\treviewer\n", "codereviewer"},
		{"code.reviewer", "code.reviewer"},
		{"Ünïcode", "ünïcode"},
		{"", ""},
	} {
		if got := loose(tc.in); got != tc.want {
			t.Errorf("loose(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestResolve(t *testing.T) {
	md := func(name, extra string) string {
		return "---\nname: " + name + "\ndescription: d\n" + extra + "---\nbody\n"
	}
	for _, tc := range []struct {
		name    string
		files   map[string]string
		dirs    []string
		typ     string
		want    string // the file of the definition found, relative to the tree
		problem string // the problem, with {a} for the tree's folder a; "" when one is found
	}{
		{
			name:  "the first folder that defines the type wins",
			files: map[string]string{"a/r.md": md("reviewer", "tools: Read\n"), "b/r.md": md("reviewer", "")},
			dirs:  []string{"a", "b"}, typ: "reviewer", want: "a/r.md",
		},
		{
			name:  "a later folder when the first does not define it",
			files: map[string]string{"a/o.md": md("other", ""), "b/r.md": md("reviewer", "")},
			dirs:  []string{"a", "b"}, typ: "reviewer", want: "b/r.md",
		},
		{
			name:  "the file's name does not matter, its frontmatter name does",
			files: map[string]string{"a/reviewer.md": md("other", ""), "a/x.md": md("reviewer", "")},
			dirs:  []string{"a"}, typ: "reviewer", want: "a/x.md",
		},
		{
			name:  "a missing folder is passed over",
			files: map[string]string{"b/r.md": md("reviewer", "")},
			dirs:  []string{"missing", "b"}, typ: "reviewer", want: "b/r.md",
		},
		{
			name:  "no exact match: case and separators set aside",
			files: map[string]string{"a/cr.md": md("code-reviewer", "")},
			dirs:  []string{"a"}, typ: "Code Reviewer", want: "a/cr.md",
		},
		{
			name:  "no exact match: a definition's name is matched loosely too",
			files: map[string]string{"a/cr.md": md("Code_Reviewer", "")},
			dirs:  []string{"a"}, typ: "code-reviewer", want: "a/cr.md",
		},
		{
			name:  "a loose match when exactly one name matches",
			files: map[string]string{"a/cr.md": md("code-reviewer", ""), "a/o.md": md("other", "")},
			dirs:  []string{"a"}, typ: "codereviewer", want: "a/cr.md",
		},
		{
			name:  "a loose match found in a lower folder",
			files: map[string]string{"a/o.md": md("other", ""), "b/cr.md": md("code-reviewer", "")},
			dirs:  []string{"a", "b"}, typ: "CodeReviewer", want: "b/cr.md",
		},
		{
			name:  "an exact match beats a loose one in a higher folder",
			files: map[string]string{"a/cr.md": md("code_reviewer", ""), "b/cr.md": md("code-reviewer", "tools: Read\n")},
			dirs:  []string{"a", "b"}, typ: "code-reviewer", want: "b/cr.md",
		},
		{
			name:  "an exact match beats a loose one in the same folder",
			files: map[string]string{"a/one.md": md("code_reviewer", ""), "a/two.md": md("code-reviewer", "tools: Read\n")},
			dirs:  []string{"a"}, typ: "code_reviewer", want: "a/one.md",
		},
		{
			name:  "two names that match loosely are ambiguous",
			files: map[string]string{"a/one.md": md("code_reviewer", ""), "a/two.md": md("code-reviewer", "")},
			dirs:  []string{"a"}, typ: "Code Reviewer",
			problem: `agent type "Code Reviewer" matches "code-reviewer" and "code_reviewer" once case, spaces, '-' and '_' are set aside, and Claude Code refuses such a spawn as ambiguous: name one exactly`,
		},
		{
			name:  "ambiguous across folders too",
			files: map[string]string{"a/one.md": md("Code Reviewer", ""), "b/two.md": md("code_reviewer", "")},
			dirs:  []string{"a", "b"}, typ: "code-reviewer",
			problem: `agent type "code-reviewer" matches "Code Reviewer" and "code_reviewer" once case, spaces, '-' and '_' are set aside, and Claude Code refuses such a spawn as ambiguous: name one exactly`,
		},
		{
			name:  "one name defined in two folders is one match, the higher one",
			files: map[string]string{"a/cr.md": md("code-reviewer", "tools: Read\n"), "b/cr.md": md("code-reviewer", "")},
			dirs:  []string{"a", "b"}, typ: "Code Reviewer", want: "a/cr.md",
		},
		{
			name:  "a loose name matching a built-in is the built-in",
			files: map[string]string{"a/o.md": md("other", "")},
			dirs:  []string{"a"}, typ: "explore",
			problem: `agent type "Explore" is built in and no agents folder defines it, so it would inherit every tool: define Explore in an agents folder with the tools it may use`,
		},
		{
			name:  "a built-in's exact name beats a definition's loose one",
			files: map[string]string{"a/gp.md": md("general_purpose", "tools: Read\n")},
			dirs:  []string{"a"}, typ: "general-purpose",
			problem: `agent type "general-purpose" is built in and no agents folder defines it, so it would inherit every tool: define general-purpose in an agents folder with the tools it may use`,
		},
		{
			name:  "a name outside ASCII is not matched loosely",
			files: map[string]string{"a/r.md": md("révieweur", "")},
			dirs:  []string{"a"}, typ: "Révieweur",
			problem: `agent type "Révieweur" is not plain ASCII, and Claude Code matches such a name after Unicode normalisation: name the type exactly as its definition does`,
		},
		{
			name:  "defined twice in the winning folder",
			files: map[string]string{"a/one.md": md("reviewer", ""), "a/team/two.md": md("reviewer", ""), "b/r.md": md("reviewer", "")},
			dirs:  []string{"a", "b"}, typ: "reviewer",
			problem: `agent type "reviewer" is defined twice in {a} ({a}/one.md and {a}/team/two.md): the host would pick one by file order; keep one`,
		},
		{
			name:  "the definition does not parse",
			files: map[string]string{"a/r.md": "---\nname: reviewer\ndescription: yes\n---\n", "b/r.md": md("reviewer", "")},
			dirs:  []string{"a", "b"}, typ: "reviewer",
			problem: `the definition of agent type "reviewer" in {a}/r.md does not parse: line 3, column 14: /description: unquoted "yes" is a boolean to YAML 1.1 parsers: quote it`,
		},
		{
			name:  "a broken definition whose name matches loosely may be the one",
			files: map[string]string{"a/r.md": "---\nname: Code_Reviewer\ndescription: yes\n---\n", "b/r.md": md("code-reviewer", "")},
			dirs:  []string{"a", "b"}, typ: "code-reviewer",
			problem: `agent type "code-reviewer" may be defined by {a}/r.md, which does not parse: line 3, column 14: /description: unquoted "yes" is a boolean to YAML 1.1 parsers: quote it`,
		},
		{
			name:  "a definition of another name that does not parse is no problem",
			files: map[string]string{"a/o.md": "---\nname: other\ndescription: yes\n---\n", "a/r.md": md("reviewer", "")},
			dirs:  []string{"a"}, typ: "reviewer", want: "a/r.md",
		},
		{
			name:  "an unreadable file in the folder of the match",
			files: map[string]string{"a/gone.md": "->nowhere.md", "a/r.md": md("reviewer", "")},
			dirs:  []string{"a"}, typ: "reviewer",
			problem: `agent type "reviewer" may be defined by {a}/gone.md, which does not parse: `,
		},
		{
			name: "files Claude Code skips define nothing",
			files: map[string]string{
				"a/nodesc.md":  "---\nname: reviewer\n---\n",
				"a/colon.md":   md("'reviewer:x'", ""),
				"a/nofront.md": "name: reviewer\n",
				"a/notyaml.md": "---\nname: [reviewer\n---\n",
				"a/noname.md":  "---\ndescription: yes\n---\n",
				"b/r.md":       md("reviewer", ""),
			},
			dirs: []string{"a", "b"}, typ: "reviewer", want: "b/r.md",
		},
		{
			name:  "a built-in type",
			files: map[string]string{"a/r.md": md("reviewer", "")},
			dirs:  []string{"a"}, typ: "general-purpose",
			problem: `agent type "general-purpose" is built in and no agents folder defines it, so it would inherit every tool: define general-purpose in an agents folder with the tools it may use`,
		},
		{
			name: "a built-in type with capitals",
			dirs: []string{"a"}, typ: "Explore",
			problem: `agent type "Explore" is built in and no agents folder defines it, so it would inherit every tool: define Explore in an agents folder with the tools it may use`,
		},
		{
			name:  "a folder may define a built-in type",
			files: map[string]string{"a/gp.md": md("general-purpose", "tools: Read\n")},
			dirs:  []string{"a"}, typ: "general-purpose", want: "a/gp.md",
		},
		{
			name:  "an unknown type",
			files: map[string]string{"a/r.md": md("reviewer", "")},
			dirs:  []string{"a", "b"}, typ: "nope",
			problem: `agent type "nope" is not defined in any agents folder (looked in {a}, {b})`,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			hosttest.WriteTree(t, root, tc.files)
			var dirs []string
			for _, d := range tc.dirs {
				dirs = append(dirs, filepath.Join(root, d))
			}
			c, err := load(context.Background(), dirsEnv(dirs...), session{})
			if err != nil {
				t.Fatal(err)
			}
			def, problem := resolve(c, tc.typ)
			hosttest.Resolved(t, root, def, problem, hosttest.WantResolved{File: tc.want, Problem: tc.problem})
		})
	}
}

func TestBuiltinAndDefault(t *testing.T) {
	if !slices.Contains(Builtin, DefaultType) {
		t.Errorf("the default type %q is not built in", DefaultType)
	}
	want := []string{"claude", "Explore", "general-purpose", "Plan", "statusline-setup", "fork"}
	if !slices.Equal(Builtin, want) {
		t.Errorf("Builtin = %q, want %q", Builtin, want)
	}
	c := &agent.Catalog{}
	for _, b := range Builtin {
		if def, problem := resolve(c, b); def != nil || !strings.Contains(problem, "is built in") {
			t.Errorf("resolve(%q) = %v, %q", b, def, problem)
		}
	}
	if Folder != filepath.Join(".claude", "agents") || (Adapter{}).DefinitionsFolder() != Folder {
		t.Errorf("Folder = %q", Folder)
	}
}

// sessionSpawn has the adapter translate a spawn of typ in a session that
// started in project, with Claude Code's environment and command line,
// and returns the definition file the child was judged by ("" for none)
// and the problem, when there is one.
func sessionSpawn(t *testing.T, env host.Env, project string, args []string, typ string) (file, problem string) {
	t.Helper()
	env.Limits = document.DefaultLimits
	if env.Getenv == nil {
		env.Getenv = func(k string) string {
			return map[string]string{"CLAUDE_PROJECT_DIR": project, "CLAUDE_PID": "4242"}[k]
		}
	}
	env.CommandLine = func(pid int) ([]string, error) {
		if pid != 4242 {
			t.Errorf("the command line of pid %d was read", pid)
		}
		return args, nil
	}
	payload := map[string]any{"cwd": project, "tool_name": "Agent", "tool_input": map[string]any{"subagent_type": typ, "prompt": "p"}}
	sp, err := Adapter{}.Spawn(context.Background(), payload, env)
	if err != nil {
		t.Fatalf("Spawn: %v", err)
	}
	if sp == nil || len(sp.Children) != 1 {
		t.Fatalf("Spawn = %+v", sp)
	}
	facts := sp.Children[0].Child["agent"].(map[string]any)
	file, _ = facts["definition"].(string)
	problem, _ = facts["problem"].(string)
	return file, problem
}

// TestResolveLevels holds the order of Claude Code's sources of
// definitions, read as a session reads them: managed, --agents, the
// project's folders closest first, --add-dir, the user's.
func TestResolveLevels(t *testing.T) {
	md := func(name, tools string) string {
		return "---\nname: " + name + "\ndescription: d\ntools: " + tools + "\n---\nbody\n"
	}
	base := hosttest.OutsideRepo(t)
	hosttest.WriteTree(t, base, map[string]string{
		"repo/.git/":                                     "",
		"repo/.claude/agents/r.md":                       md("reviewer", "Read, Bash"),
		"repo/.claude/agents/top.md":                     md("top", "Read"),
		"repo/a/.claude/agents/r.md":                     md("reviewer", "Read"),
		"repo/a/.claude/agents/cr.md":                    md("code_reviewer", "Bash"),
		"home/.claude/agents/cr.md":                      md("code-reviewer", "Read"),
		"home/.claude/agents/mine.md":                    md("mine", "Read"),
		"home/.claude/agents/top.md":                     md("top", "Bash"),
		"extra/.claude/agents/e.md":                      md("extra-agent", "Read"),
		"extra/.claude/agents/top.md":                    md("top", "Bash"),
		"root/etc/claude-code/.claude/agents/managed.md": md("reviewer", "Grep"),
	})
	j := filepath.Join
	project := j(base, "repo/a")
	home := j(base, "home")
	root := j(base, "root")
	empty := j(base, "empty-root")
	claude := []string{"/usr/bin/claude"}
	for _, tc := range []struct {
		name    string
		root    string
		args    []string
		typ     string
		want    string // the definition file, relative to base; or the start of the problem
		problem bool
	}{
		{name: "the closest project folder wins", root: empty, args: claude, typ: "reviewer", want: "repo/a/.claude/agents/r.md"},
		{name: "a farther project folder before the user's", root: empty, args: claude, typ: "top", want: "repo/.claude/agents/top.md"},
		{name: "the managed folder outranks the project", root: root, args: claude, typ: "reviewer", want: "root/etc/claude-code/.claude/agents/managed.md"},
		{name: "an exact name in the user's folder beats a loose one in the project's", root: empty, args: claude, typ: "code-reviewer", want: "home/.claude/agents/cr.md"},
		{name: "the user's folder", root: empty, args: claude, typ: "mine", want: "home/.claude/agents/mine.md"},
		{
			name: "--agents outranks the project's file", root: empty,
			args: []string{"claude", "--agents", `{"reviewer": {"description": "d", "prompt": "p", "tools": ["Read"]}}`},
			typ:  "reviewer", want: agentsLevel,
		},
		{
			name: "--agents= outranks the project's file too", root: empty,
			args: []string{"claude", `--agents={"reviewer": {"description": "d", "prompt": "p"}}`},
			typ:  "reviewer", want: agentsLevel,
		},
		{
			name: "the managed folder outranks --agents", root: root,
			args: []string{"claude", "--agents", `{"reviewer": {"description": "d", "prompt": "p"}}`},
			typ:  "reviewer", want: "root/etc/claude-code/.claude/agents/managed.md",
		},
		{
			name: "--setting-sources user drops the project's definitions", root: empty,
			args: []string{"claude", "--setting-sources", "user"},
			typ:  "top", want: "home/.claude/agents/top.md",
		},
		{
			name: "--setting-sources user: a type only the project defines is unknown", root: empty,
			args: []string{"claude", "--setting-sources", "user"},
			typ:  "reviewer", want: `agent type "reviewer" is not defined in any agents folder`, problem: true,
		},
		{
			name: "--add-dir adds a folder's definitions", root: empty,
			args: []string{"claude", "--add-dir", "../../extra", "--model", "x"},
			typ:  "extra-agent", want: "extra/.claude/agents/e.md",
		},
		{
			name: "--add-dir comes after the project's folders", root: empty,
			args: []string{"claude", "--add-dir", j(base, "extra")},
			typ:  "top", want: "repo/.claude/agents/top.md",
		},
		{
			name: "--add-dir comes before the user's folder", root: empty,
			args: []string{"claude", "--add-dir=" + j(base, "extra"), "--setting-sources", "project,user"},
			typ:  "extra-agent", want: "extra/.claude/agents/e.md",
		},
		{
			name: "without --add-dir its folder is not read", root: empty, args: claude,
			typ: "extra-agent", want: `agent type "extra-agent" is not defined in any agents folder`, problem: true,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			file, problem := sessionSpawn(t, host.Env{Root: tc.root, Home: home}, project, tc.args, tc.typ)
			switch {
			case tc.problem:
				if file != "" || !strings.HasPrefix(problem, tc.want) {
					t.Errorf("definition %q, problem %q; want the problem %q", file, problem, tc.want)
				}
			case tc.want == agentsLevel:
				if file != agentsLevel || problem != "" {
					t.Errorf("definition %q, problem %q; want --agents's", file, problem)
				}
			default:
				if file != j(base, filepath.FromSlash(tc.want)) || problem != "" {
					t.Errorf("definition %q, problem %q; want %s", file, problem, tc.want)
				}
			}
		})
	}
}

// TestCommandLineAgents: the definitions --agents gives are translated as
// a file's would be, and a later --agents wins for a name given twice.
func TestCommandLineAgents(t *testing.T) {
	base := hosttest.OutsideRepo(t)
	hosttest.WriteTree(t, base, map[string]string{
		"p/.claude/agents/r.md": "---\nname: reviewer\ndescription: d\ntools: Bash\n---\n",
		"p/agents.json":         `{"reviewer": {"description": "d", "prompt": "p", "tools": "Grep"}}`,
	})
	project := filepath.Join(base, "p")
	payload := map[string]any{"cwd": project, "tool_name": "Agent", "tool_input": map[string]any{"subagent_type": "reviewer"}}
	spawn := func(args ...string) (*host.Spawn, error) {
		env := host.Env{Root: filepath.Join(base, "none"), Limits: document.DefaultLimits,
			Getenv:      func(k string) string { return map[string]string{"CLAUDE_PROJECT_DIR": project, "CLAUDE_PID": "7"}[k] },
			CommandLine: func(int) ([]string, error) { return append([]string{"claude"}, args...), nil },
		}
		return Adapter{}.Spawn(context.Background(), payload, env)
	}
	tools := func(sp *host.Spawn) string { return hosttest.Canonical(t, sp.Children[0].Child["tools"]) }
	sp, err := spawn("--agents", `{"reviewer": {"description": "d", "prompt": "p", "tools": ["Read"]}}`)
	if err != nil || tools(sp) != `["Read"]` {
		t.Fatalf("--agents JSON: %v, %v", sp, err)
	}
	sp, err = spawn("--agents", `{"reviewer": {"description": "d", "tools": ["Read"]}}`, "--agents", `{"reviewer": {"description": "d", "tools": ["Glob"]}}`)
	if err != nil || tools(sp) != `["Glob"]` {
		t.Fatalf("a later --agents: %v, %v", sp, err)
	}
	sp, err = spawn("--agents", "agents.json")
	if err != nil || tools(sp) != `["Grep"]` || sp.Children[0].File != filepath.Join(project, "agents.json") {
		t.Fatalf("--agents FILE: %v, %v", sp, err)
	}
	sp, err = spawn("--agents", `{"reviewer": 5}`)
	if err != nil {
		t.Fatal(err)
	}
	if p, _ := sp.Children[0].Child["agent"].(map[string]any)["problem"].(string); !strings.Contains(p, "a definition given as JSON (with --agents, or by a program) is not an object") {
		t.Errorf("a definition that is not an object: %q", p)
	}
	for _, args := range [][]string{{"--agents", "[1]"}, {"--agents", "missing.json"}, {"--agents"}} {
		if _, err := spawn(args...); err == nil {
			t.Errorf("%q: no error", args)
		}
	}
}

// upTo is each folder's agents folder from dir up to /, closest first.
func upTo(dir string) []string {
	var out []string
	for d := dir; ; d = filepath.Dir(d) {
		out = append(out, filepath.Join(d, Folder))
		if d == filepath.Dir(d) {
			return out
		}
	}
}

// TestProgramDefinitions: a session driven by a program (the Agent SDK:
// --input-format stream-json) takes definitions from it that the hook
// cannot read, and that may shadow a file's: an Agent call, a fork
// skill's agent: and a workflow are refused there, never judged by a
// file's definition or the general-purpose fallback. A managed
// definition, which the program's do not replace, is still judged.
func TestProgramDefinitions(t *testing.T) {
	base := hosttest.OutsideRepo(t)
	root := filepath.Join(base, "root")
	hosttest.WriteTree(t, base, map[string]string{
		"p/.claude/agents/reader.md":                   "---\nname: reader\ndescription: d\ntools: Read\nmodel: sonnet\n---\n",
		"p/.claude/agents/general-purpose.md":          "---\nname: general-purpose\ndescription: d\ntools: Read\nmodel: sonnet\n---\n",
		"p/.claude/skills/fork/SKILL.md":               "---\ndescription: d\ncontext: fork\nagent: sdkwriter\n---\nDo it.\n",
		"root/etc/claude-code/.claude/agents/guard.md": "---\nname: guard\ndescription: d\ntools: Read\nmodel: sonnet\n---\n",
	})
	project := filepath.Join(base, "p")
	sdk := []string{"claude", "--output-format", "stream-json", "--verbose", "--input-format", "stream-json"}
	for _, typ := range []string{"reader", "sdkwriter", "general-purpose"} {
		if file, problem := sessionSpawn(t, host.Env{Root: root, Home: filepath.Join(base, "home")}, project, sdk, typ); file != "" || !strings.Contains(problem, "takes agent definitions from the program that drives it") {
			t.Errorf("%s: judged by %q (%q)", typ, file, problem)
		}
	}
	if file, problem := sessionSpawn(t, host.Env{Root: root, Home: filepath.Join(base, "home")}, project, sdk, "guard"); problem != "" || !strings.HasSuffix(file, "guard.md") {
		t.Errorf("a managed definition: %q (%q)", file, problem)
	}
	// The client takes the program's definitions in safe mode too, which
	// drops the project's: still refused, not "not defined".
	if file, problem := sessionSpawn(t, host.Env{Root: root, Home: filepath.Join(base, "home")}, project, append(slices.Clone(sdk), "--safe-mode"), "reader"); file != "" || !strings.Contains(problem, "takes agent definitions from the program that drives it") {
		t.Errorf("safe mode: judged by %q (%q)", file, problem)
	}
	// Without the program, the project's reader is the one.
	if file, problem := sessionSpawn(t, host.Env{Root: root, Home: filepath.Join(base, "home")}, project, []string{"claude", "-p", "hi"}, "reader"); problem != "" || !strings.HasSuffix(file, "reader.md") {
		t.Errorf("no program: %q (%q)", file, problem)
	}
	env := host.Env{Root: root, Home: filepath.Join(base, "home"), Limits: document.DefaultLimits,
		Getenv: func(k string) string {
			return map[string]string{"CLAUDE_PROJECT_DIR": project, "CLAUDE_PID": "4242"}[k]
		},
		CommandLine: func(int) ([]string, error) { return sdk, nil }}
	for _, tc := range []struct {
		tool  string
		input map[string]any
	}{
		{"Skill", map[string]any{"skill": "fork"}},
		{"Workflow", map[string]any{"name": "e2eflow"}},
	} {
		sp, err := Adapter{}.Spawn(context.Background(), map[string]any{"cwd": project, "tool_name": tc.tool, "tool_input": tc.input}, env)
		if err != nil || sp == nil {
			t.Fatalf("%s: %v, %v", tc.tool, sp, err)
		}
		problem, _ := sp.Children[0].Child["agent"].(map[string]any)["problem"].(string)
		if !strings.Contains(problem, "from the program that drives it") {
			t.Errorf("%s: %q", tc.tool, problem)
		}
	}
}

// TestBareSession: a bare session (--bare, found as the client finds it,
// or CLAUDE_CODE_SIMPLE) loads no definition of the project's or the
// user's; one of its names is not judged by their files.
func TestBareSession(t *testing.T) {
	base := hosttest.OutsideRepo(t)
	hosttest.WriteTree(t, base, map[string]string{"p/.claude/agents/reader.md": "---\nname: reader\ndescription: d\ntools: Read\nmodel: sonnet\n---\n"})
	project := filepath.Join(base, "p")
	env := host.Env{Root: filepath.Join(base, "none"), Home: filepath.Join(base, "home")}
	for _, args := range [][]string{{"claude", "--bare", "-p", "hi"}, {"claude", "--append-system-prompt", "--bare", "-p", "hi"}} {
		if file, problem := sessionSpawn(t, env, project, args, "reader"); file != "" || !strings.Contains(problem, "is not defined") {
			t.Errorf("%q: judged by %q (%q)", args, file, problem)
		}
	}
	env.Getenv = func(k string) string {
		return map[string]string{"CLAUDE_PROJECT_DIR": project, "CLAUDE_PID": "4242", "CLAUDE_CODE_SIMPLE": "1"}[k]
	}
	if file, problem := sessionSpawn(t, env, project, []string{"claude", "-p", "hi"}, "reader"); file != "" || !strings.Contains(problem, "is not defined") {
		t.Errorf("CLAUDE_CODE_SIMPLE: judged by %q (%q)", file, problem)
	}
	env.Getenv = nil
	if file, problem := sessionSpawn(t, env, project, []string{"claude", "-p", "hi"}, "reader"); problem != "" || file == "" {
		t.Errorf("not bare: %q (%q)", file, problem)
	}
}

// TestProgramHandsItsDefinitions: a program that hands the hook its own
// agents (ProgramField, from its PreToolUse callback) is judged by them,
// at the client's precedence: below the managed definitions, above the
// project's and the user's; a name it does not define is the files'.
func TestProgramHandsItsDefinitions(t *testing.T) {
	base := hosttest.OutsideRepo(t)
	root := filepath.Join(base, "root")
	hosttest.WriteTree(t, base, map[string]string{
		"p/.claude/agents/reader.md":                   "---\nname: reader\ndescription: d\ntools: Read\nmodel: sonnet\n---\n",
		"p/.claude/agents/lister.md":                   "---\nname: lister\ndescription: d\ntools: Glob\nmodel: sonnet\n---\n",
		"p/.claude/skills/fork/SKILL.md":               "---\ndescription: d\ncontext: fork\nagent: sdkwriter\n---\nDo it.\n",
		"root/etc/claude-code/.claude/agents/guard.md": "---\nname: guard\ndescription: d\ntools: Read\nmodel: sonnet\n---\n",
	})
	project := filepath.Join(base, "p")
	program := map[string]any{"project": project, "agents": map[string]any{
		"reader":    map[string]any{"description": "d", "prompt": "p", "tools": []any{"Read", "Write"}, "model": "sonnet"},
		"sdkwriter": map[string]any{"description": "d", "prompt": "p", "tools": []any{"Read", "Edit"}, "model": "sonnet"},
		"guard":     map[string]any{"description": "d", "prompt": "p", "tools": []any{"Bash"}, "model": "sonnet"},
	}}
	// No CLAUDE_PID, no CLAUDE_PROJECT_DIR: the program says what they would.
	env := host.Env{Root: root, Home: filepath.Join(base, "home"), Limits: document.DefaultLimits}
	spawn := func(tool string, input map[string]any, field any) (*host.Spawn, error) {
		payload := map[string]any{"cwd": project, "hook_event_name": "PreToolUse", "tool_name": tool, "tool_input": input, ProgramField: field}
		return Adapter{}.Spawn(context.Background(), payload, env)
	}
	judged := func(sp *host.Spawn) (file, tools string) {
		t.Helper()
		facts := sp.Children[0].Child["agent"].(map[string]any)
		file, _ = facts["definition"].(string)
		if p, _ := facts["problem"].(string); p != "" {
			return "problem: " + p, ""
		}
		return file, hosttest.Canonical(t, sp.Children[0].Child["tools"])
	}
	for _, tc := range []struct{ typ, file, tools string }{
		{"reader", programDefsLevel, `["Read","Write"]`},                                                  // the program's shadows the project's
		{"sdkwriter", programDefsLevel, `["Read","Edit"]`},                                                // the program's own
		{"guard", filepath.Join(root, "etc", "claude-code", ".claude", "agents", "guard.md"), `["Read"]`}, // managed wins
		{"lister", filepath.Join(project, ".claude", "agents", "lister.md"), `["Glob"]`},                  // the files', where it defines none
	} {
		sp, err := spawn("Agent", map[string]any{"subagent_type": tc.typ, "prompt": "p"}, program)
		if err != nil {
			t.Fatalf("%s: %v", tc.typ, err)
		}
		if file, tools := judged(sp); file != tc.file || tools != tc.tools {
			t.Errorf("%s: judged by %q with %s; want %q with %s", tc.typ, file, tools, tc.file, tc.tools)
		}
		if sp.ByHand || !slices.Contains(sp.Folders, project) {
			t.Errorf("%s: by hand %v, folders %q: a program's session is a live one", tc.typ, sp.ByHand, sp.Folders)
		}
	}
	// A fork skill's agent: the program's, never the general-purpose
	// fallback.
	sp, err := spawn("Skill", map[string]any{"skill": "fork"}, program)
	if err != nil {
		t.Fatal(err)
	}
	if file, tools := judged(sp); file != programDefsLevel || tools != `["Read","Edit"]` {
		t.Errorf("fork skill: judged by %q with %s", file, tools)
	}
	// The program's setting sources are the client's.
	withSources := maps.Clone(program)
	withSources["setting_sources"] = []any{"user"}
	sp, err = spawn("Agent", map[string]any{"subagent_type": "lister"}, withSources)
	if err != nil {
		t.Fatal(err)
	}
	if file, _ := judged(sp); !strings.Contains(file, "is not defined") {
		t.Errorf("lister without the project's settings: %q", file)
	}
	for _, bad := range []any{"x", map[string]any{"agents": []any{}}, map[string]any{"project": "rel"}, map[string]any{"projects": "/x"}, map[string]any{"setting_sources": "user"}} {
		if _, err := spawn("Agent", map[string]any{"subagent_type": "reader"}, bad); err == nil || !strings.Contains(err.Error(), ProgramField) {
			t.Errorf("%v: %v", bad, err)
		}
	}
}
