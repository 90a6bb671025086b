package claudecode

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/spawngate/spawngate/internal/agent"
	"github.com/spawngate/spawngate/internal/document"
	"github.com/spawngate/spawngate/internal/host"
)

// Folder is where Claude Code keeps agent definitions, relative to a
// project or a home directory.
var Folder = filepath.Join(".claude", "agents")

// managedAgents is the machine-wide folder of definitions that outrank
// every other, under the managed settings' folder.
var managedAgents = filepath.Join("etc", "claude-code", ".claude", "agents")

// Builtin lists the agent types Claude Code brings without a definition
// file (fork is accepted by the Agent tool without being listed). Each
// inherits every tool of its parent, or a fixed set the gate does not
// read, unless a definition of the exact name replaces it.
var Builtin = []string{"claude", "Explore", "general-purpose", "Plan", "statusline-setup", "fork"}

// DefaultType is the type a spawn that names none asks for.
const DefaultType = "general-purpose"

// sources lists the places Claude Code takes definitions from, highest
// precedence first (read off the client's own merge, and tried on it):
// the managed folder, the program's (programLevel), --agents on the
// command line, the project's folders (projectDirs), the --add-dir
// folders (the one given last first), the user's folder (userDir). A
// level named "--agents" holds the command line's definitions. In safe
// mode (--safe-mode, --restricted, CLAUDE_CODE_SAFE_MODE) Claude Code
// loads none but the managed ones and the program's, which it takes in
// every mode.
func sources(env host.Env, s session) []string {
	var dirs []string
	if env.AgentsDirs == nil {
		dirs = append(dirs, filepath.Join(rootOf(env), managedAgents))
	}
	switch {
	case s.programDefs != nil:
		dirs = append(dirs, programDefsLevel)
	case s.program != "":
		dirs = append(dirs, programLevel)
	}
	if s.safe || env.AgentsDirs == nil && safeByEnv(env) {
		return dirs
	}
	if len(s.agents) > 0 {
		dirs = append(dirs, agentsLevel)
	}
	if env.AgentsDirs != nil {
		return append(dirs, env.AgentsDirs...)
	}
	if s.bare || env.Getenv != nil && truthy(env.Getenv("CLAUDE_CODE_SIMPLE")) {
		return dirs
	}
	if s.loads("project") {
		for _, d := range projectDirs(env, s) {
			dirs = append(dirs, filepath.Join(d, Folder))
		}
		for i := len(s.addDirs) - 1; i >= 0; i-- {
			d := s.addDirs[i]
			if !filepath.IsAbs(d) {
				d = filepath.Join(s.project, d)
			}
			dirs = append(dirs, filepath.Join(d, Folder))
		}
	}
	if u := userDir(env, s); s.loads("user") && u != "" {
		dirs = append(dirs, filepath.Join(u, "agents"))
	}
	return dirs
}

// safeByEnv tells whether CLAUDE_CODE_SAFE_MODE puts the session in safe
// mode.
func safeByEnv(env host.Env) bool {
	return env.Getenv != nil && (truthy(env.Getenv("CLAUDE_CODE_SAFE_MODE")) || truthy(env.Getenv("CLAUDE_CODE_RESTRICTED")))
}

// userDir is the user's Claude Code folder: CLAUDE_CONFIG_DIR when set
// (relative to the folder the session started in), else ~/.claude; ""
// when neither is known.
func userDir(env host.Env, s session) string {
	if env.Getenv != nil {
		if d := env.Getenv("CLAUDE_CONFIG_DIR"); d != "" {
			if !filepath.IsAbs(d) {
				d = filepath.Join(s.project, d)
			}
			return filepath.Clean(d)
		}
	}
	if env.Home == "" {
		return ""
	}
	return filepath.Join(env.Home, ".claude")
}

// projectDirs are the folders whose .claude Claude Code reads as the
// project's, closest first: the folder the session started in and each
// above it, up to the repository root, or, outside a repository, up to
// the root of the file system, never the home folder itself (whose
// .claude is the user's); then, for a session in a linked git worktree,
// the main checkout.
func projectDirs(env host.Env, s session) []string {
	root := agent.RepoRoot(s.project)
	inRepo := root != s.project || isRepo(s.project)
	home := filepath.Clean(env.Home)
	var dirs []string
	for d := s.project; ; d = filepath.Dir(d) {
		if env.Home != "" && d == home && d != s.project {
			break
		}
		dirs = append(dirs, d)
		if inRepo && d == root || d == filepath.Dir(d) {
			break
		}
	}
	if inRepo {
		if main := mainCheckout(root); main != "" && !slices.Contains(dirs, main) {
			dirs = append(dirs, main)
		}
	}
	return dirs
}

// isRepo tells whether dir holds .git.
func isRepo(dir string) bool {
	_, err := os.Lstat(filepath.Join(dir, ".git"))
	return err == nil
}

// mainCheckout is the main working tree of a linked worktree at root (its
// .git is a file "gitdir: MAIN/.git/worktrees/NAME"), "" otherwise.
func mainCheckout(root string) string {
	b, err := os.ReadFile(filepath.Join(root, ".git"))
	if err != nil {
		return ""
	}
	gitdir, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "gitdir:")
	if !ok {
		return ""
	}
	gitdir = strings.TrimSpace(gitdir)
	if !filepath.IsAbs(gitdir) {
		gitdir = filepath.Join(root, gitdir)
	}
	wt := filepath.Dir(filepath.Clean(gitdir)) // MAIN/.git/worktrees
	if filepath.Base(wt) != "worktrees" || filepath.Base(filepath.Dir(wt)) != ".git" {
		return ""
	}
	return filepath.Dir(filepath.Dir(wt))
}

// agentsLevel names the definitions given with --agents.
const agentsLevel = "--agents on Claude Code's command line"

// programLevel stands for the definitions the program that drives the
// session gives Claude Code (the Agent SDK's agents option, sent in its
// initialize request on standard input): the hook cannot read them, and
// they may define or replace any name below the managed ones.
const programLevel = "the definitions of the program that drives the session"

// programDefsLevel names the definitions a program handed the hook
// itself (ProgramField), which it reads at the program's place.
const programDefsLevel = "the agents the program gave (" + ProgramField + ")"

// programAt is the index of the program's level in a catalog, -1 for
// none.
func programAt(c *agent.Catalog) int {
	return slices.IndexFunc(c.Folders, func(f agent.Folder) bool { return strings.HasPrefix(f.Dir, programLevel) })
}

func rootOf(env host.Env) string {
	if env.Root != "" {
		return env.Root
	}
	return string(filepath.Separator)
}

// load reads the definitions of every source: Markdown files in each
// folder and its subfolders (links followed), and the JSON of --agents.
func load(ctx context.Context, env host.Env, s session) (*agent.Catalog, error) {
	var c agent.Catalog
	for _, dir := range sources(env, s) {
		if dir == programLevel {
			c.Folders = append(c.Folders, agent.Folder{Dir: programLevel + " (" + s.program + ")"})
			continue
		}
		if dir == programDefsLevel {
			c.Folders = append(c.Folders, definitionsFolder(programDefsLevel, programDefsLevel, s.programDefs))
			continue
		}
		if dir == agentsLevel {
			f, err := commandLineAgents(s)
			if err != nil {
				return nil, err
			}
			c.Folders = append(c.Folders, f)
			continue
		}
		one, err := agent.Load(ctx, []string{dir}, ".md", true, env.Limits, func(ctx context.Context, file string, data []byte) *agent.Definition {
			return ReadClaude(ctx, file, data, env.Limits)
		})
		if err != nil {
			return nil, err
		}
		c.Folders = append(c.Folders, one.Folders...)
	}
	return &c, nil
}

// commandLineAgents reads the definitions given with --agents: a JSON
// object of definitions by name (each with the frontmatter's settings and
// a prompt), or the name of a file holding one. Given more than once, the
// last --agents is the one Claude Code reads (read from its flag parser:
// a later value replaces an earlier one).
func commandLineAgents(s session) (agent.Folder, error) {
	f := agent.Folder{Dir: agentsLevel}
	last := s.agents
	if len(last) > 1 {
		last = last[len(last)-1:]
	}
	for _, a := range last {
		text, source := []byte(a.value), agentsLevel
		if t := bytes.TrimSpace(text); len(t) == 0 || t[0] != '{' {
			file := a.value
			if !filepath.IsAbs(file) {
				file = filepath.Join(s.project, file)
			}
			data, err := document.ReadFile(file, 4<<20)
			if err != nil {
				return f, &document.Error{Source: file, Msg: "the --agents file of Claude Code's command line cannot be read: " + document.OneLine(err.Error())}
			}
			text, source = data, file
		}
		var defs map[string]any
		dec := json.NewDecoder(bytes.NewReader(text))
		dec.UseNumber()
		if err := dec.Decode(&defs); err != nil {
			return f, &document.Error{Source: source, Msg: "the --agents definitions of Claude Code's command line are not a JSON object: " + document.OneLine(err.Error())}
		}
		f = definitionsFolder(agentsLevel, source, defs)
	}
	return f, nil
}

// definitionsFolder reads definitions given as JSON, an object of them by
// name (--agents, a program's agents option), each with a definition
// file's settings and its prompt; source names them in messages.
func definitionsFolder(dir, source string, defs map[string]any) agent.Folder {
	f := agent.Folder{Dir: dir}
	names := make([]string, 0, len(defs))
	for n := range defs {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		d := &agent.Definition{File: source, Name: name, Lines: map[string]int{}}
		fields, ok := defs[name].(map[string]any)
		if !ok {
			d.Err = &document.Error{Source: source, Pointer: "/" + name, Msg: "a definition given as JSON (with --agents, or by a program) is not an object"}
		} else {
			fields = maps.Clone(fields)
			fields["name"] = name
			d.Fields = fields
		}
		f.Defs = append(f.Defs, d)
	}
	return f
}

// resolve finds the definition an agent type names as Claude Code does:
// a definition or built-in of exactly that name first (where definitions
// of one name meet, the higher source wins); only when none has it, a
// match with case, spaces, '-' and '_' set aside, used when exactly one
// name matches so. It says why none can be judged: built in, ambiguous,
// unknown, or a definition that does not parse.
func resolve(c *agent.Catalog, typ string) (*agent.Definition, string) {
	if at := programAt(c); at >= 0 {
		// Only a definition above the program's stands: any other name the
		// program may define, or replace, in a way the hook cannot read.
		above := &agent.Catalog{Folders: c.Folders[:at]}
		if def, problem, found := above.Find(typ, func(d *agent.Definition) bool { return d.Name == typ }); found {
			return def, problem
		}
		return nil, fmt.Sprintf("this session takes agent definitions from the program that drives it (%s), which may define or replace %q where the hook cannot read it: the gate judges only a managed definition in such a session (see docs/claude-code.md, Agent SDK programs)", strings.TrimSuffix(strings.TrimPrefix(c.Folders[at].Dir, programLevel+" ("), ")"), typ)
	}
	key := loose(typ)
	maybe := func(d *agent.Definition) bool { return loose(d.Name) == key }
	if def, problem, found := c.Find(typ, maybe); found {
		return def, problem
	}
	for _, b := range Builtin {
		if b == typ {
			return nil, fmt.Sprintf("agent type %q is built in and no agents folder defines it, so it would inherit every tool: define %s in an agents folder with the tools it may use", typ, typ)
		}
	}
	if !ascii(typ) {
		return nil, fmt.Sprintf("agent type %q is not plain ASCII, and Claude Code matches such a name after Unicode normalisation: name the type exactly as its definition does", typ)
	}
	var matches []string
	for _, n := range append(c.Names(), Builtin...) {
		if loose(n) == key && !slices.Contains(matches, n) {
			matches = append(matches, n)
		}
	}
	switch len(matches) {
	case 0:
		return nil, fmt.Sprintf("agent type %q is not defined in any agents folder (looked in %s)", typ, strings.Join(c.Dirs(), ", "))
	case 1:
		return resolve(c, matches[0])
	}
	sort.Strings(matches)
	return nil, fmt.Sprintf("agent type %q matches %s once case, spaces, '-' and '_' are set aside, and Claude Code refuses such a spawn as ambiguous: name one exactly", typ, strings.Join(quoted(matches), " and "))
}

// loose is a name as Claude Code compares it when no name matches
// exactly: lower case, without spaces, '-' or '_'.
func loose(name string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(name) {
		switch r {
		case ' ', '\t', '\n', '\r', '-', '_':
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

func ascii(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

func quoted(list []string) []string {
	out := make([]string, len(list))
	for i, s := range list {
		out[i] = fmt.Sprintf("%q", s)
	}
	return out
}
