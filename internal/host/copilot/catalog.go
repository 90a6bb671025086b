package copilot

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/spawngate/spawngate/internal/agent"
	"github.com/spawngate/spawngate/internal/host"
)

// The folders of definitions in a project, relative to a folder of it.
var (
	githubFolder = filepath.Join(".github", "agents")
	claudeFolder = filepath.Join(".claude", "agents")
)

// sources lists the folders Copilot takes definitions from, highest
// precedence first (observed): the user's ($COPILOT_HOME/agents, else
// ~/.copilot/agents), then .github/agents of the folder the session
// started in and of each folder above it up to the repository's root,
// closest first, then .claude/agents the same way. (Folders an --add-dir
// brings rank below the repository's; a name only they define is not
// found, and refused.)
func sources(env host.Env, cwd string) []string {
	if env.AgentsDirs != nil {
		return env.AgentsDirs
	}
	var dirs []string
	if u := userDir(env, cwd); u != "" {
		dirs = append(dirs, filepath.Join(u, "agents"))
	}
	up := agent.UpToRoot(cwd)
	for _, d := range up {
		dirs = append(dirs, filepath.Join(d, githubFolder))
	}
	for _, d := range up {
		dirs = append(dirs, filepath.Join(d, claudeFolder))
	}
	return dirs
}

// userDir is the user's Copilot folder: COPILOT_HOME when set (a
// relative one read against the session's folder, as the client reads
// it), else ~/.copilot; "" when neither is known.
func userDir(env host.Env, cwd string) string {
	if env.Getenv != nil {
		if d := env.Getenv("COPILOT_HOME"); d != "" {
			if !filepath.IsAbs(d) {
				d = filepath.Join(cwd, d)
			}
			return filepath.Clean(d)
		}
	}
	if env.Home == "" {
		return ""
	}
	return filepath.Join(env.Home, ".copilot")
}

// load reads every definition in the folders, in subfolders too (*.md,
// which holds *.agent.md).
func load(ctx context.Context, env host.Env, dirs []string) (*agent.Catalog, error) {
	return agent.Load(ctx, dirs, ".md", true, env.Limits, func(ctx context.Context, file string, data []byte) *agent.Definition {
		return ReadCopilot(ctx, file, data, env.Limits)
	})
}

// resolve finds the definition a task call of typ runs, as Copilot does:
// a built-in type first (a definition cannot replace one), then the first
// folder that defines the exact name (case counts). It says why, when
// none can be judged.
func resolve(c *agent.Catalog, typ string) (*agent.Definition, string) {
	if b, ok := builtins[typ]; ok {
		return b.definition(typ)
	}
	def, problem, found := c.Find(typ, func(d *agent.Definition) bool { return d.Name == typ })
	if !found {
		return nil, fmt.Sprintf("agent type %q is not defined in any agents folder (looked in %s)", typ, strings.Join(c.Dirs(), ", "))
	}
	if def != nil {
		if why := uninvocable(def); why != "" {
			return nil, fmt.Sprintf("%s sets %s, so Copilot refuses a task call for agent type %q", def.File, why, typ)
		}
	}
	return def, problem
}
