package agent

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/spawngate/spawngate/internal/plan"
)

// writeTree writes files under root: a path ending in "/" is a folder, a
// content starting with "->" a symbolic link to what follows.
func writeTree(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		path := filepath.Join(root, filepath.FromSlash(name))
		if strings.HasSuffix(name, "/") {
			if err := os.MkdirAll(path, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		var err error
		if target, ok := strings.CutPrefix(content, "->"); ok {
			err = os.Symlink(target, path)
		} else {
			err = os.WriteFile(path, []byte(content), 0o644)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

// outsideRepo returns a temporary directory that no .git lies above, or
// skips the test.
func outsideRepo(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if root := repoRoot(dir); root != "" {
		t.Skipf("the temporary directory %s lies in a repository at %s", dir, root)
	}
	return dir
}

func TestSearchDirs(t *testing.T) {
	base := outsideRepo(t)
	writeTree(t, base, map[string]string{
		"repo/.git/":         "",
		"repo/a/b/":          "",
		"worktree/.git":      "gitdir: ../repo/.git/worktrees/w\n", // a worktree's .git is a file
		"worktree/src/":      "",
		"plain/a/":           "",
		"repo/a/b/sub/.git/": "", // a repository nested inside another
	})
	j := filepath.Join
	for _, tc := range []struct {
		name      string
		host      Host
		cwd, home string
		want      []string
	}{
		{
			name: "from a subfolder up to the repository root, then home",
			host: ClaudeCode, cwd: j(base, "repo/a/b"), home: j(base, "home"),
			want: []string{j(base, "repo/a/b/.claude/agents"), j(base, "repo/a/.claude/agents"), j(base, "repo/.claude/agents"), j(base, "home/.claude/agents")},
		},
		{
			name: "Codex's folder",
			host: Codex, cwd: j(base, "repo/a"), home: j(base, "home"),
			want: []string{j(base, "repo/a/.codex/agents"), j(base, "repo/.codex/agents"), j(base, "home/.codex/agents")},
		},
		{
			name: "at the repository root",
			host: ClaudeCode, cwd: j(base, "repo"), home: j(base, "home"),
			want: []string{j(base, "repo/.claude/agents"), j(base, "home/.claude/agents")},
		},
		{
			name: "a .git file marks the root too",
			host: ClaudeCode, cwd: j(base, "worktree/src"),
			want: []string{j(base, "worktree/src/.claude/agents"), j(base, "worktree/.claude/agents")},
		},
		{
			name: "the closest repository is the root",
			host: Codex, cwd: j(base, "repo/a/b/sub"),
			want: []string{j(base, "repo/a/b/sub/.codex/agents")},
		},
		{
			name: "outside a repository: cwd alone, then home",
			host: ClaudeCode, cwd: j(base, "plain/a"), home: j(base, "home"),
			want: []string{j(base, "plain/a/.claude/agents"), j(base, "home/.claude/agents")},
		},
		{
			name: "no home",
			host: Codex, cwd: j(base, "plain/a"),
			want: []string{j(base, "plain/a/.codex/agents")},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := SearchDirs(tc.host, tc.cwd, tc.home); !slices.Equal(got, tc.want) {
				t.Errorf("SearchDirs = %q\nwant        %q", got, tc.want)
			}
		})
	}
	if got := RepoRoot(j(base, "repo/a/b")); got != j(base, "repo") {
		t.Errorf("RepoRoot in a repository = %q", got)
	}
	if got := RepoRoot(j(base, "plain/a")); got != j(base, "plain/a") {
		t.Errorf("RepoRoot outside one = %q", got)
	}
}

func TestLoad(t *testing.T) {
	const md = "---\nname: a\ndescription: d\n---\n"
	const toml = "name = \"a\"\ndescription = \"d\"\n"
	for _, tc := range []struct {
		name  string
		host  Host
		files map[string]string
		dirs  []string // relative to the tree; "" for the tree itself
		want  []string // the files read, relative to the tree, in order
		err   string   // a part of Load's error
	}{
		{
			name: "a folder that does not exist holds none",
			host: ClaudeCode, dirs: []string{"missing"},
		},
		{
			name: "Claude Code reads *.md, in subfolders too, in name order",
			host: ClaudeCode,
			files: map[string]string{
				"agents/b.md": md, "agents/a.md": md, "agents/team/c.md": md, "agents/team/deep/d.md": md,
				"agents/notes.txt": md, "agents/a.md.bak": md, "agents/x.toml": toml, "agents/folder.md/e.md": md,
			},
			dirs: []string{"agents"},
			want: []string{"agents/a.md", "agents/b.md", "agents/folder.md/e.md", "agents/team/c.md", "agents/team/deep/d.md"},
		},
		{
			name: "Codex reads *.toml at the top level only",
			host: Codex,
			files: map[string]string{
				"agents/b.toml": toml, "agents/a.toml": toml, "agents/team/c.toml": toml,
				"agents/x.md": md, "agents/dir.toml/": "", "agents/a.toml.bak": toml,
			},
			dirs: []string{"agents"},
			want: []string{"agents/a.toml", "agents/b.toml"},
		},
		{
			name:  "folders in order, missing ones empty",
			host:  Codex,
			files: map[string]string{"one/a.toml": toml, "two/b.toml": toml},
			dirs:  []string{"two", "missing", "one"},
			want:  []string{"two/b.toml", "one/a.toml"},
		},
		{
			name:  "a file where a folder should be",
			host:  ClaudeCode,
			files: map[string]string{"agents": md},
			dirs:  []string{"agents"},
			err:   "agents folder is not a directory",
		},
		{
			name:  "a file where a Codex folder should be",
			host:  Codex,
			files: map[string]string{"agents": toml},
			dirs:  []string{"missing", "agents"},
			err:   "agents folder is not a directory",
		},
		{
			name:  "a file that cannot be read is a definition that does not parse",
			host:  ClaudeCode,
			files: map[string]string{"agents/gone.md": "->nowhere.md", "agents/z.md": md},
			dirs:  []string{"agents"},
			want:  []string{"agents/gone.md", "agents/z.md"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			writeTree(t, root, tc.files)
			var dirs []string
			for _, d := range tc.dirs {
				dirs = append(dirs, filepath.Join(root, d))
			}
			c, err := Load(context.Background(), tc.host, dirs, plan.DefaultLimits)
			if tc.err != "" {
				var pe *plan.Error
				if err == nil || !strings.Contains(err.Error(), tc.err) || !errors.As(err, &pe) {
					t.Fatalf("Load error %v, want a *plan.Error with %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if c.Host != tc.host || !slices.Equal(c.Dirs, dirs) {
				t.Errorf("Catalog Host, Dirs = %q, %q", c.Host, c.Dirs)
			}
			var got []string
			for _, d := range c.Definitions() {
				r, _ := filepath.Rel(root, d.File)
				got = append(got, filepath.ToSlash(r))
				if d.Host != tc.host {
					t.Errorf("%s: Host %q", r, d.Host)
				}
				if strings.HasPrefix(filepath.Base(d.File), "gone") {
					if d.Err == nil || d.Name != "" || d.Skipped != "" {
						t.Errorf("%s: Name %q, Err %v, Skipped %q; want an unnamed definition that does not parse", r, d.Name, d.Err, d.Skipped)
					}
				} else if d.Err != nil || d.Name != "a" {
					t.Errorf("%s: Name %q, Err %v", r, d.Name, d.Err)
				}
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("files read = %q\nwant         %q", got, tc.want)
			}
		})
	}
}

func TestLoadCanceled(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root, map[string]string{"agents/a.md": "---\nname: a\ndescription: d\n---\n"})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Load(ctx, ClaudeCode, []string{filepath.Join(root, "agents")}, plan.DefaultLimits); !errors.Is(err, context.Canceled) {
		t.Fatalf("Load with a canceled context: %v", err)
	}
}

func TestReadFileTooLarge(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root, map[string]string{"a.md": "---\nname: a\ndescription: d\n---\n", "a.toml": "name = \"a\"\ndescription = \"d\"\n"})
	lim := plan.DefaultLimits
	lim.MaxBytes = 8
	for _, host := range []Host{ClaudeCode, Codex} {
		file := filepath.Join(root, "a.md")
		if host == Codex {
			file = filepath.Join(root, "a.toml")
		}
		d := ReadFile(context.Background(), host, file, lim)
		if d.Err == nil || d.Name != "" || d.Skipped != "" || d.Host != host || d.Lines == nil {
			t.Errorf("%s: %+v, want an unnamed definition that does not parse", host, d)
		}
	}
}

func TestNormalize(t *testing.T) {
	for _, tc := range []struct {
		host     Host
		in, want string
	}{
		{ClaudeCode, "code-reviewer", "code-reviewer"},
		{ClaudeCode, "Code Reviewer", "code-reviewer"},
		{ClaudeCode, "CODE_REVIEWER", "code-reviewer"},
		{ClaudeCode, "  code - _reviewer  ", "code-reviewer"},
		{ClaudeCode, "-code-reviewer-", "code-reviewer"},
		{ClaudeCode, "codeReviewer", "codereviewer"},
		{ClaudeCode, "Ünïcode", "ünïcode"},
		{ClaudeCode, "", ""},
		{Codex, "Code Reviewer", "Code Reviewer"},
		{Codex, "reader", "reader"},
	} {
		if got := normalize(tc.host, tc.in); got != tc.want {
			t.Errorf("normalize(%s, %q) = %q, want %q", tc.host, tc.in, got, tc.want)
		}
	}
}

func TestResolve(t *testing.T) {
	md := func(name, extra string) string {
		return "---\nname: " + name + "\ndescription: d\n" + extra + "---\nbody\n"
	}
	toml := func(name string) string {
		return "name = \"" + name + "\"\ndescription = \"d\"\nsandbox_mode = \"read-only\"\n"
	}
	for _, tc := range []struct {
		name    string
		host    Host
		files   map[string]string
		dirs    []string
		typ     string
		want    string // the file of the definition found, relative to the tree
		problem string // the problem, with {a} for the tree's folder a; "" when one is found
	}{
		{
			name: "the first folder that defines the type wins",
			host: ClaudeCode, files: map[string]string{"a/r.md": md("reviewer", "tools: Read\n"), "b/r.md": md("reviewer", "")},
			dirs: []string{"a", "b"}, typ: "reviewer", want: "a/r.md",
		},
		{
			name: "a later folder when the first does not define it",
			host: ClaudeCode, files: map[string]string{"a/o.md": md("other", ""), "b/r.md": md("reviewer", "")},
			dirs: []string{"a", "b"}, typ: "reviewer", want: "b/r.md",
		},
		{
			name: "the file's name does not matter, its frontmatter name does",
			host: ClaudeCode, files: map[string]string{"a/reviewer.md": md("other", ""), "a/x.md": md("reviewer", "")},
			dirs: []string{"a"}, typ: "reviewer", want: "a/x.md",
		},
		{
			name: "a missing folder is passed over",
			host: Codex, files: map[string]string{"b/r.toml": toml("reader")},
			dirs: []string{"missing", "b"}, typ: "reader", want: "b/r.toml",
		},
		{
			name: "type matching ignores case and separators",
			host: ClaudeCode, files: map[string]string{"a/cr.md": md("code-reviewer", "")},
			dirs: []string{"a"}, typ: "Code Reviewer", want: "a/cr.md",
		},
		{
			name: "a definition's name is matched loosely too",
			host: ClaudeCode, files: map[string]string{"a/cr.md": md("Code_Reviewer", "")},
			dirs: []string{"a"}, typ: "code-reviewer", want: "a/cr.md",
		},
		{
			name: "Codex matches names exactly",
			host: Codex, files: map[string]string{"a/r.toml": toml("reader")},
			dirs: []string{"a"}, typ: "Reader",
			problem: `agent type "Reader" is not defined in any agents folder (looked in {a})`,
		},
		{
			name: "defined twice in the winning folder",
			host: ClaudeCode, files: map[string]string{"a/one.md": md("reviewer", ""), "a/team/two.md": md("reviewer", ""), "b/r.md": md("reviewer", "")},
			dirs: []string{"a", "b"}, typ: "reviewer",
			problem: `agent type "reviewer" is defined twice in {a} ({a}/one.md and {a}/team/two.md): the host would pick one by file order; keep one`,
		},
		{
			name: "defined twice once names are normalized",
			host: ClaudeCode, files: map[string]string{"a/one.md": md("Code Reviewer", ""), "a/two.md": md("code_reviewer", "")},
			dirs: []string{"a"}, typ: "code-reviewer",
			problem: `agent type "code-reviewer" is defined twice in {a} ({a}/one.md and {a}/two.md): the host would pick one by file order; keep one`,
		},
		{
			name: "defined twice in Codex",
			host: Codex, files: map[string]string{"a/one.toml": toml("reader"), "a/two.toml": toml("reader")},
			dirs: []string{"a"}, typ: "reader",
			problem: `agent type "reader" is defined twice in {a} ({a}/one.toml and {a}/two.toml): the host would pick one by file order; keep one`,
		},
		{
			name: "once in each of two folders is no problem",
			host: Codex, files: map[string]string{"a/r.toml": toml("reader"), "b/r.toml": toml("reader")},
			dirs: []string{"b", "a"}, typ: "reader", want: "b/r.toml",
		},
		{
			name: "the definition does not parse",
			host: ClaudeCode, files: map[string]string{"a/r.md": "---\nname: reviewer\ndescription: yes\n---\n", "b/r.md": md("reviewer", "")},
			dirs: []string{"a", "b"}, typ: "reviewer",
			problem: `the definition of agent type "reviewer" in {a}/r.md does not parse: line 3, column 14: /description: unquoted "yes" is a boolean to YAML 1.1 parsers: quote it`,
		},
		{
			name: "a Codex definition with a key written twice does not parse",
			host: Codex, files: map[string]string{"a/r.toml": toml("reader") + "sandbox_mode = \"danger-full-access\"\n"},
			dirs: []string{"a"}, typ: "reader",
			problem: `the definition of agent type "reader" in {a}/r.toml does not parse: line 4, column 1: key sandbox_mode is already defined`,
		},
		{
			name: "a Codex definition without a description does not parse",
			host: Codex, files: map[string]string{"a/r.toml": "name = \"reader\"\n"},
			dirs: []string{"a"}, typ: "reader",
			problem: `the definition of agent type "reader" in {a}/r.toml does not parse: the definition has no description, which Codex requires`,
		},
		{
			name: "a definition of another name that does not parse is no problem",
			host: ClaudeCode, files: map[string]string{"a/o.md": "---\nname: other\ndescription: yes\n---\n", "a/r.md": md("reviewer", "")},
			dirs: []string{"a"}, typ: "reviewer", want: "a/r.md",
		},
		{
			name: "an unnamed broken file in a folder before the match",
			host: Codex, files: map[string]string{"a/bad.toml": "x = \nname = \"reader\"\n", "b/r.toml": toml("reader")},
			dirs: []string{"a", "b"}, typ: "reader",
			problem: `agent type "reader" may be defined by {a}/bad.toml, which does not parse: line 1, column 5: unexpected character U+000A at start of value`,
		},
		{
			name: "an unnamed broken file in the folder of the match",
			host: Codex, files: map[string]string{"a/bad.toml": "x = \nname = \"reader\"\n", "a/r.toml": toml("reader")},
			dirs: []string{"a"}, typ: "reader",
			problem: `agent type "reader" may be defined by {a}/bad.toml, which does not parse: line 1, column 5: unexpected character U+000A at start of value`,
		},
		{
			name: "a Codex file without a name may define any type",
			host: Codex, files: map[string]string{"a/noname.toml": "description = \"d\"\n", "a/r.toml": toml("reader")},
			dirs: []string{"a"}, typ: "reader",
			problem: `agent type "reader" may be defined by {a}/noname.toml, which does not parse: the definition has no name, which Codex knows an agent by`,
		},
		{
			name: "an unreadable Claude Code file in the folder of the match",
			host: ClaudeCode, files: map[string]string{"a/gone.md": "->nowhere.md", "a/r.md": md("reviewer", "")},
			dirs: []string{"a"}, typ: "reviewer",
			problem: `agent type "reviewer" may be defined by {a}/gone.md, which does not parse: `,
		},
		{
			name: "an unnamed broken file after the match is no problem",
			host: Codex, files: map[string]string{"a/r.toml": toml("reader"), "b/bad.toml": "x = \n"},
			dirs: []string{"a", "b"}, typ: "reader", want: "a/r.toml",
		},
		{
			name: "an unnamed broken file refuses an unknown type too",
			host: Codex, files: map[string]string{"a/bad.toml": "x = \n"},
			dirs: []string{"a"}, typ: "nope",
			problem: `agent type "nope" may be defined by {a}/bad.toml, which does not parse: line 1, column 5: unexpected character U+000A at start of value`,
		},
		{
			name: "files Claude Code skips define nothing",
			host: ClaudeCode,
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
			name: "a built-in type",
			host: ClaudeCode, files: map[string]string{"a/r.md": md("reviewer", "")},
			dirs: []string{"a"}, typ: "general-purpose",
			problem: `agent type "general-purpose" is built in and no agents folder defines it, so it would inherit every tool: define general-purpose in an agents folder with the tools it may use`,
		},
		{
			name: "a built-in type, matched loosely",
			host: ClaudeCode, dirs: []string{"a"}, typ: "Explore",
			problem: `agent type "Explore" is built in and no agents folder defines it, so it would inherit every tool: define Explore in an agents folder with the tools it may use`,
		},
		{
			name: "a Codex built-in type",
			host: Codex, dirs: []string{"a"}, typ: "worker",
			problem: `agent type "worker" is built in and no agents folder defines it, so it would inherit every tool: define worker in an agents folder with the tools it may use`,
		},
		{
			name: "a folder may define a built-in type",
			host: ClaudeCode, files: map[string]string{"a/gp.md": md("general-purpose", "tools: Read\n")},
			dirs: []string{"a"}, typ: "general-purpose", want: "a/gp.md",
		},
		{
			name: "an unknown type",
			host: ClaudeCode, files: map[string]string{"a/r.md": md("reviewer", "")},
			dirs: []string{"a", "b"}, typ: "nope",
			problem: `agent type "nope" is not defined in any agents folder (looked in {a}, {b})`,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			writeTree(t, root, tc.files)
			var dirs []string
			for _, d := range tc.dirs {
				dirs = append(dirs, filepath.Join(root, d))
			}
			c, err := Load(context.Background(), tc.host, dirs, plan.DefaultLimits)
			if err != nil {
				t.Fatal(err)
			}
			def, problem := c.Resolve(tc.typ)
			want := strings.NewReplacer("{a}", filepath.Join(root, "a"), "{b}", filepath.Join(root, "b")).Replace(tc.problem)
			switch {
			case tc.want != "":
				if def == nil || def.File != filepath.Join(root, filepath.FromSlash(tc.want)) || problem != "" {
					t.Fatalf("Resolve = %v, %q; want %s", def, problem, tc.want)
				}
				if def.Err != nil || def.Skipped != "" {
					t.Errorf("resolved to a definition with Err %v, Skipped %q", def.Err, def.Skipped)
				}
			case def != nil:
				t.Fatalf("Resolve found %s, want the problem %q", def.File, want)
			case strings.HasSuffix(want, ": ") && strings.HasPrefix(problem, want):
			case problem != want:
				t.Errorf("problem = %q\nwant      %q", problem, want)
			}
		})
	}
}

func TestBuiltinAndDefault(t *testing.T) {
	for _, host := range []Host{ClaudeCode, Codex} {
		if !slices.Contains(Builtin(host), DefaultType(host)) {
			t.Errorf("%s: the default type %q is not built in", host, DefaultType(host))
		}
		c := &Catalog{Host: host}
		for _, b := range Builtin(host) {
			if def, problem := c.Resolve(b); def != nil || !strings.Contains(problem, "is built in") {
				t.Errorf("%s: Resolve(%q) = %v, %q", host, b, def, problem)
			}
		}
	}
	if Folder(ClaudeCode) != filepath.Join(".claude", "agents") || Folder(Codex) != filepath.Join(".codex", "agents") {
		t.Errorf("Folder = %q, %q", Folder(ClaudeCode), Folder(Codex))
	}
}
