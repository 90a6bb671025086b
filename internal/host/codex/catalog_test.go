package codex

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/spawngate/spawngate/internal/agent"
	"github.com/spawngate/spawngate/internal/document"
	"github.com/spawngate/spawngate/internal/host"
	"github.com/spawngate/spawngate/internal/host/hosttest"
)

var testEnv = host.Env{Limits: document.DefaultLimits}

// TestLoad: Codex reads the *.toml files of each folder and its
// subfolders (collect_agent_role_files_recursive).
func TestLoad(t *testing.T) {
	const toml = "name = \"a\"\ndescription = \"d\"\n"
	root := t.TempDir()
	hosttest.WriteTree(t, root, map[string]string{
		"agents/b.toml": toml, "agents/a.toml": toml, "agents/team/c.toml": toml,
		"agents/x.md": "---\nname: a\ndescription: d\n---\n", "agents/dir.toml/": "", "agents/a.toml.bak": toml,
		"agents/linked.toml": "->../elsewhere/l.toml", "elsewhere/l.toml": toml,
	})
	c, err := load(context.Background(), testEnv, []string{filepath.Join(root, "agents")})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, d := range c.Definitions() {
		r, _ := filepath.Rel(root, d.File)
		got = append(got, filepath.ToSlash(r))
		if d.Err != nil || d.Name != "a" {
			t.Errorf("%s: Name %q, Err %v", r, d.Name, d.Err)
		}
	}
	// Subfolders too, as Codex reads them.
	if want := []string{"agents/a.toml", "agents/b.toml", "agents/linked.toml", "agents/team/c.toml"}; !slices.Equal(got, want) {
		t.Errorf("files read = %q\nwant         %q", got, want)
	}
}

func TestResolve(t *testing.T) {
	toml := func(name string) string {
		return "name = \"" + name + "\"\ndescription = \"d\"\nsandbox_mode = \"read-only\"\n"
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
			files: map[string]string{"a/r.toml": toml("reader"), "b/r.toml": toml("reader")},
			dirs:  []string{"a", "b"}, typ: "reader", want: "a/r.toml",
		},
		{
			name:  "a missing folder is passed over",
			files: map[string]string{"b/r.toml": toml("reader")},
			dirs:  []string{"missing", "b"}, typ: "reader", want: "b/r.toml",
		},
		{
			name:  "Codex matches names exactly",
			files: map[string]string{"a/r.toml": toml("reader")},
			dirs:  []string{"a"}, typ: "Reader",
			problem: `agent type "Reader" is not defined in any agents folder (looked in {a})`,
		},
		{
			name:  "no loose match either",
			files: map[string]string{"a/r.toml": toml("code-reader")},
			dirs:  []string{"a"}, typ: "code_reader",
			problem: `agent type "code_reader" is not defined in any agents folder (looked in {a})`,
		},
		{
			name:  "defined twice in Codex",
			files: map[string]string{"a/one.toml": toml("reader"), "a/two.toml": toml("reader")},
			dirs:  []string{"a"}, typ: "reader",
			problem: `agent type "reader" is defined twice in {a} ({a}/one.toml and {a}/two.toml): the host would pick one by file order; keep one`,
		},
		{
			name:  "once in each of two folders is no problem",
			files: map[string]string{"a/r.toml": toml("reader"), "b/r.toml": toml("reader")},
			dirs:  []string{"b", "a"}, typ: "reader", want: "b/r.toml",
		},
		{
			name:  "a Codex definition with a key written twice does not parse",
			files: map[string]string{"a/r.toml": toml("reader") + "sandbox_mode = \"danger-full-access\"\n"},
			dirs:  []string{"a"}, typ: "reader",
			problem: `the definition of agent type "reader" in {a}/r.toml does not parse: line 4, column 1: key sandbox_mode is already defined`,
		},
		{
			name:  "a Codex definition without a description does not parse",
			files: map[string]string{"a/r.toml": "name = \"reader\"\n"},
			dirs:  []string{"a"}, typ: "reader",
			problem: `the definition of agent type "reader" in {a}/r.toml does not parse: the definition has no description, which Codex requires`,
		},
		{
			name:  "an unnamed broken file in a folder before the match",
			files: map[string]string{"a/bad.toml": "x = \nname = \"reader\"\n", "b/r.toml": toml("reader")},
			dirs:  []string{"a", "b"}, typ: "reader",
			problem: `agent type "reader" may be defined by {a}/bad.toml, which does not parse: line 1, column 5: unexpected character U+000A at start of value`,
		},
		{
			name:  "an unnamed broken file in the folder of the match",
			files: map[string]string{"a/bad.toml": "x = \nname = \"reader\"\n", "a/r.toml": toml("reader")},
			dirs:  []string{"a"}, typ: "reader",
			problem: `agent type "reader" may be defined by {a}/bad.toml, which does not parse: line 1, column 5: unexpected character U+000A at start of value`,
		},
		{
			name:  "a Codex file without a name may define any type",
			files: map[string]string{"a/noname.toml": "description = \"d\"\n", "a/r.toml": toml("reader")},
			dirs:  []string{"a"}, typ: "reader",
			problem: `agent type "reader" may be defined by {a}/noname.toml, which does not parse: the definition has no name, which Codex knows an agent by`,
		},
		{
			name:  "a broken file named for another type is no problem",
			files: map[string]string{"a/o.toml": "name = \"other\"\n", "a/r.toml": toml("reader")},
			dirs:  []string{"a"}, typ: "reader", want: "a/r.toml",
		},
		{
			name:  "an unnamed broken file after the match is no problem",
			files: map[string]string{"a/r.toml": toml("reader"), "b/bad.toml": "x = \n"},
			dirs:  []string{"a", "b"}, typ: "reader", want: "a/r.toml",
		},
		{
			name:  "an unnamed broken file refuses an unknown type too",
			files: map[string]string{"a/bad.toml": "x = \n"},
			dirs:  []string{"a"}, typ: "nope",
			problem: `agent type "nope" may be defined by {a}/bad.toml, which does not parse: line 1, column 5: unexpected character U+000A at start of value`,
		},
		{
			name: "a Codex built-in type",
			dirs: []string{"a"}, typ: "worker",
			problem: `agent type "worker" is built in and no agents folder defines it, so it would inherit every tool: define worker in an agents folder with the tools it may use`,
		},
		{
			name:  "a folder may define a built-in type",
			files: map[string]string{"a/d.toml": toml("default")},
			dirs:  []string{"a"}, typ: "default", want: "a/d.toml",
		},
		{
			name:  "an unknown type",
			files: map[string]string{"a/r.toml": toml("reader")},
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
			c, err := load(context.Background(), testEnv, dirs)
			if err != nil {
				t.Fatal(err)
			}
			def, problem := resolve(c, nil, tc.typ)
			hosttest.Resolved(t, root, def, problem, hosttest.WantResolved{File: tc.want, Problem: tc.problem})
		})
	}
}

// TestDeclaredRoles: a role config.toml declares comes before its own
// layer's agents folder and after a higher layer's (as the real client
// takes them), before a built-in type; its file needs no name or
// description, one naming itself otherwise is refused, and so is a
// declaration without a file, which runs with what the session has.
func TestDeclaredRoles(t *testing.T) {
	root := t.TempDir()
	hosttest.WriteTree(t, root, map[string]string{
		"a/r.toml":         codexAgent("reader", ""),
		"b/w.toml":         codexAgent("writer", ""),
		"b/bad.toml":       "x = \n",
		"roles/r.toml":     "model = \"o3\"\nsandbox_mode = \"read-only\"\n",
		"roles/named.toml": "name = \"other\"\n",
		"roles/bad.toml":   "model = \n",
	})
	j := filepath.Join
	c, err := load(context.Background(), testEnv, []string{j(root, "a"), j(root, "b")})
	if err != nil {
		t.Fatal(err)
	}
	decl := func(name string, rank int, file string) role {
		r := role{decl: "cfg [agents." + name + "]", rank: rank}
		if file != "" {
			r.file = j(root, "roles", file)
		}
		return r
	}
	roles := declaredIn(context.Background(), testEnv, map[string]role{
		"reader":  decl("reader", 1, "r.toml"),  // below folder a, which defines it
		"writer":  decl("writer", 1, "r.toml"),  // in folder b's layer: before it
		"planner": decl("planner", 2, "r.toml"), // below b, whose bad.toml may define it
		"default": decl("default", 1, "r.toml"),
		"plain":   decl("plain", 0, ""),
		"named":   decl("named", 0, "named.toml"),
		"bad":     decl("bad", 0, "bad.toml"),
		"gone":    decl("gone", 0, "gone.toml"),
	})
	for _, tc := range []struct{ typ, file, problem string }{
		{"reader", "a/r.toml", ""},
		{"writer", "roles/r.toml", ""},
		{"planner", "", `agent type "planner" may be defined by ` + j(root, "b", "bad.toml") + ", which does not parse"},
		{"default", "roles/r.toml", ""},
		{"plain", "", `agent type "plain" is declared in cfg [agents.plain] without a config_file, so it would run with everything the session has`},
		{"named", "", `the role "named" that cfg [agents.named] declares, in ` + j(root, "roles", "named.toml") + `: line 1: the role's file names itself "other", while config.toml declares it as "named"`},
		{"bad", "", `the role "bad" that cfg [agents.bad] declares, in ` + j(root, "roles", "bad.toml") + ": line 1, column 9:"},
		{"gone", "", `the role "gone" that cfg [agents.gone] declares, in ` + j(root, "roles", "gone.toml") + ": cannot be read: no such file"},
		{"nope", "", `agent type "nope" may be defined by ` + j(root, "b", "bad.toml")},
	} {
		def, problem := resolve(c, roles, tc.typ)
		switch {
		case tc.file != "" && (def == nil || def.File != j(root, tc.file) || def.Name != tc.typ || problem != ""):
			t.Errorf("%s: resolve = %v, %q; want %s", tc.typ, def, problem, tc.file)
		case tc.file == "" && (def != nil || !strings.HasPrefix(problem, tc.problem)):
			t.Errorf("%s: resolve = %v, %q\nwant the problem %q", tc.typ, def, problem, tc.problem)
		}
	}
	if _, problem := resolve(&agent.Catalog{}, roles, "nope"); !strings.HasSuffix(problem, "(looked in ) nor declared in config.toml") {
		t.Errorf("an unknown type: %q", problem)
	}
	if def, _ := resolve(c, roles, "writer"); def == nil || def.Fields["model"] != "o3" {
		t.Errorf("the declared role's fields: %v", def)
	}
}

func TestBuiltinAndDefault(t *testing.T) {
	if !slices.Contains(Builtin, DefaultType) {
		t.Errorf("the default type %q is not built in", DefaultType)
	}
	c := &agent.Catalog{}
	for _, b := range Builtin {
		if def, problem := resolve(c, nil, b); def != nil || !strings.Contains(problem, "is built in") {
			t.Errorf("resolve(%q) = %v, %q", b, def, problem)
		}
	}
	if Folder != filepath.Join(".codex", "agents") || (Adapter{}).DefinitionsFolder() != Folder {
		t.Errorf("Folder = %q", Folder)
	}
}
