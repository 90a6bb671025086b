package agent_test

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/spawngate/spawngate/internal/agent"
	"github.com/spawngate/spawngate/internal/document"
	"github.com/spawngate/spawngate/internal/host/hosttest"
)

// readName is an agent.Reader for the tests: a file's whole text,
// trimmed, is the name it defines.
func readName(_ context.Context, file string, data []byte) *agent.Definition {
	return &agent.Definition{File: file, Name: strings.TrimSpace(string(data)), Lines: map[string]int{}}
}

// TestUpToRoot holds the walk every host's search for project folders
// starts from: the directory and each one above it, up to the closest
// directory holding .git.
func TestUpToRoot(t *testing.T) {
	base := hosttest.OutsideRepo(t)
	hosttest.WriteTree(t, base, hosttest.Repositories())
	j := filepath.Join
	for _, tc := range []struct {
		name string
		dir  string
		want []string
	}{
		{
			name: "from a subfolder up to the repository root",
			dir:  j(base, "repo/a/b"),
			want: []string{j(base, "repo/a/b"), j(base, "repo/a"), j(base, "repo")},
		},
		{
			name: "at the repository root",
			dir:  j(base, "repo"),
			want: []string{j(base, "repo")},
		},
		{
			name: "a .git file marks the root too",
			dir:  j(base, "worktree/src"),
			want: []string{j(base, "worktree/src"), j(base, "worktree")},
		},
		{
			name: "the closest repository is the root",
			dir:  j(base, "repo/a/b/sub"),
			want: []string{j(base, "repo/a/b/sub")},
		},
		{
			name: "outside a repository: the directory alone",
			dir:  j(base, "plain/a"),
			want: []string{j(base, "plain/a")},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := agent.UpToRoot(tc.dir); !slices.Equal(got, tc.want) {
				t.Errorf("UpToRoot = %q\nwant       %q", got, tc.want)
			}
		})
	}
	if got := agent.RepoRoot(j(base, "repo/a/b")); got != j(base, "repo") {
		t.Errorf("RepoRoot in a repository = %q", got)
	}
	if got := agent.RepoRoot(j(base, "plain/a")); got != j(base, "plain/a") {
		t.Errorf("RepoRoot outside one = %q", got)
	}
}

func TestLoad(t *testing.T) {
	for _, tc := range []struct {
		name      string
		suffix    string
		recursive bool
		files     map[string]string
		dirs      []string // relative to the tree; "" for the tree itself
		want      []string // the files read, relative to the tree, in order
		err       string   // a part of Load's error
	}{
		{
			name:   "a folder that does not exist holds none",
			suffix: ".md", recursive: true, dirs: []string{"missing"},
		},
		{
			name:   "recursive: every file of the suffix, in subfolders too, in name order",
			suffix: ".md", recursive: true,
			files: map[string]string{
				"agents/b.md": "a", "agents/a.md": "a", "agents/team/c.md": "a", "agents/team/deep/d.md": "a",
				"agents/notes.txt": "a", "agents/a.md.bak": "a", "agents/x.toml": "a", "agents/folder.md/e.md": "a",
			},
			dirs: []string{"agents"},
			want: []string{"agents/a.md", "agents/b.md", "agents/folder.md/e.md", "agents/team/c.md", "agents/team/deep/d.md"},
		},
		{
			name:   "not recursive: the top level only, and no folder taken for a file",
			suffix: ".toml",
			files: map[string]string{
				"agents/b.toml": "a", "agents/a.toml": "a", "agents/team/c.toml": "a",
				"agents/x.md": "a", "agents/dir.toml/": "", "agents/a.toml.bak": "a",
			},
			dirs: []string{"agents"},
			want: []string{"agents/a.toml", "agents/b.toml"},
		},
		{
			name:   "folders in order, missing ones empty",
			suffix: ".toml",
			files:  map[string]string{"one/a.toml": "a", "two/b.toml": "a"},
			dirs:   []string{"two", "missing", "one"},
			want:   []string{"two/b.toml", "one/a.toml"},
		},
		{
			name:   "a file where a folder should be",
			suffix: ".md", recursive: true,
			files: map[string]string{"agents": "a"},
			dirs:  []string{"agents"},
			err:   "agents folder is not a directory",
		},
		{
			name:   "a file where a later folder should be",
			suffix: ".toml",
			files:  map[string]string{"agents": "a"},
			dirs:   []string{"missing", "agents"},
			err:    "agents folder is not a directory",
		},
		{
			name:   "a file that cannot be read is a definition that does not parse",
			suffix: ".md", recursive: true,
			files: map[string]string{"agents/gone.md": "->nowhere.md", "agents/z.md": "a"},
			dirs:  []string{"agents"},
			want:  []string{"agents/gone.md", "agents/z.md"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			hosttest.WriteTree(t, root, tc.files)
			var dirs []string
			for _, d := range tc.dirs {
				dirs = append(dirs, filepath.Join(root, d))
			}
			c, err := agent.Load(context.Background(), dirs, tc.suffix, tc.recursive, document.DefaultLimits, readName)
			if tc.err != "" {
				var pe *document.Error
				if err == nil || !strings.Contains(err.Error(), tc.err) || !errors.As(err, &pe) {
					t.Fatalf("Load error %v, want a *document.Error with %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(c.Dirs(), dirs) {
				t.Errorf("Dirs() = %q, want %q", c.Dirs(), dirs)
			}
			var got []string
			for _, d := range c.Definitions() {
				r, _ := filepath.Rel(root, d.File)
				got = append(got, filepath.ToSlash(r))
				if d.Lines == nil {
					t.Errorf("%s: nil Lines", r)
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
	hosttest.WriteTree(t, root, map[string]string{"agents/a.md": "a"})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := agent.Load(ctx, []string{filepath.Join(root, "agents")}, ".md", true, document.DefaultLimits, readName); !errors.Is(err, context.Canceled) {
		t.Fatalf("Load with a canceled context: %v", err)
	}
}

func TestReadFileTooLarge(t *testing.T) {
	root := t.TempDir()
	hosttest.WriteTree(t, root, map[string]string{"a.md": "a name longer than eight bytes"})
	lim := document.DefaultLimits
	lim.MaxBytes = 8
	read := func(context.Context, string, []byte) *agent.Definition {
		t.Error("the reader was given a file over the limit")
		return nil
	}
	file := filepath.Join(root, "a.md")
	d := agent.ReadFile(context.Background(), file, lim, read)
	if d == nil || d.Err == nil || d.Name != "" || d.Skipped != "" || d.File != file || d.Lines == nil {
		t.Fatalf("%+v, want an unnamed definition that does not parse", d)
	}
	if d.Err.Source != file {
		t.Errorf("Err.Source = %q", d.Err.Source)
	}
}

// TestFilesFollowsLinks holds Files to what the hosts do with links: a
// linked folder is walked and a linked file read, as if they were there;
// a folder or file reached twice (two links, or a loop) is listed once.
func TestFilesFollowsLinks(t *testing.T) {
	root := t.TempDir()
	hosttest.WriteTree(t, root, map[string]string{
		"elsewhere/x.md":   "x",
		"other/target.txt": "y", // the link's name is what counts
		"agents/real.md":   "r",
		"agents/twice.md":  "->real.md",
		"agents/linked":    "->../elsewhere",
		"agents/linked2":   "->../elsewhere",
		"agents/loop":      "->.",
		"agents/y.md":      "->../other/target.txt",
		"agents/sub/z.md":  "z",
		"agents/sub/up":    "->..",
	})
	dir := filepath.Join(root, "agents")
	rel := func(files []string) []string {
		var out []string
		for _, f := range files {
			r, err := filepath.Rel(root, f)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, filepath.ToSlash(r))
		}
		return out
	}
	for _, tc := range []struct {
		name      string
		recursive bool
		want      []string
	}{
		{"recursive", true, []string{"agents/linked/x.md", "agents/real.md", "agents/sub/z.md", "agents/y.md"}},
		{"the top level only", false, []string{"agents/real.md", "agents/y.md"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			files, err := agent.Files(context.Background(), dir, ".md", tc.recursive)
			if err != nil {
				t.Fatal(err)
			}
			if got := rel(files); !slices.Equal(got, tc.want) {
				t.Errorf("Files = %q\nwant    %q", got, tc.want)
			}
		})
	}
	// The definitions behind the links are read.
	c, err := agent.Load(context.Background(), []string{dir}, ".md", true, document.DefaultLimits, readName)
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Names(); !slices.Equal(got, []string{"r", "x", "y", "z"}) {
		t.Errorf("Names() = %q", got)
	}
	// A linked agents folder is followed too.
	hosttest.WriteTree(t, root, map[string]string{"project/.claude/agents": "->../../agents"})
	files, err := agent.Files(context.Background(), filepath.Join(root, "project/.claude/agents"), ".md", false)
	if err != nil || len(files) != 2 {
		t.Errorf("Files of a linked folder = %q, %v", files, err)
	}
}

// TestFind holds the precedence every host's resolution builds on: the
// highest level that defines a name wins, and found says whether any did.
func TestFind(t *testing.T) {
	def := func(dir, name string) *agent.Definition {
		return &agent.Definition{File: dir + "/" + name, Name: name, Lines: map[string]int{}}
	}
	broken := &agent.Definition{File: "low/broken", Err: &document.Error{Source: "low/broken", Line: 2, Msg: "bad"}, Lines: map[string]int{}}
	c := &agent.Catalog{Folders: []agent.Folder{
		{Dir: "high", Defs: []*agent.Definition{def("high", "a")}},
		{Dir: "low", Defs: []*agent.Definition{def("low", "a"), def("low", "b"), broken, {File: "low/skipped", Name: "c", Skipped: "why"}}},
	}}
	never := func(*agent.Definition) bool { return false }
	if d, problem, found := c.Find("a", never); !found || problem != "" || d == nil || d.File != "high/a" {
		t.Errorf("Find(a) = %v, %q, %v", d, problem, found)
	}
	if d, problem, found := c.Find("b", never); !found || d != nil || problem != `agent type "b" may be defined by low/broken, which does not parse: line 2: bad` {
		t.Errorf("Find(b) = %v, %q, %v", d, problem, found)
	}
	if d, problem, found := c.Find("c", never); !found || d != nil || !strings.Contains(problem, "low/broken") {
		t.Errorf("Find(c), defined only by a skipped file = %v, %q, %v", d, problem, found)
	}
	c.Folders[1].Defs = slices.DeleteFunc(c.Folders[1].Defs, func(d *agent.Definition) bool { return d == broken })
	if d, problem, found := c.Find("c", never); found || d != nil || problem != "" {
		t.Errorf("Find(c) without the broken file = %v, %q, %v", d, problem, found)
	}
	if got := c.Names(); !slices.Equal(got, []string{"a", "b"}) {
		t.Errorf("Names() = %q", got)
	}
	if got := c.Dirs(); !slices.Equal(got, []string{"high", "low"}) {
		t.Errorf("Dirs() = %q", got)
	}
}
