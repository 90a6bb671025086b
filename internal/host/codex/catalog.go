package codex

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/spawngate/spawngate/internal/agent"
	"github.com/spawngate/spawngate/internal/host"
)

// Folder is where Codex keeps agent definitions, relative to a project or
// a home directory.
var Folder = filepath.Join(".codex", "agents")

// Builtin lists the agent types Codex brings without a definition file.
// Each runs with what the session has unless a definition of the same name
// replaces it.
var Builtin = []string{"default", "worker", "explorer"}

// DefaultType is the type a spawn that names none asks for.
const DefaultType = "default"

// load reads the *.toml definitions of each folder and its subfolders, as
// Codex does; a definition's name is read trimmed, as Codex trims it.
func load(ctx context.Context, env host.Env, dirs []string) (*agent.Catalog, error) {
	return agent.Load(ctx, dirs, ".toml", true, env.Limits, func(_ context.Context, file string, data []byte) *agent.Definition {
		d := ReadCodex(file, data)
		d.Name = strings.TrimSpace(d.Name)
		return d
	})
}

// resolve finds the definition of an agent type as Codex does: by its
// exact name, in the first folder that defines it. It says why none can
// be judged: built in, unknown, or a definition that does not parse.
func resolve(c *agent.Catalog, typ string) (*agent.Definition, string) {
	if def, problem, found := c.Find(typ, func(d *agent.Definition) bool { return d.Name == typ }); found {
		return def, problem
	}
	for _, b := range Builtin {
		if b == typ {
			return nil, fmt.Sprintf("agent type %q is built in and no agents folder defines it, so it would inherit every tool: define %s in an agents folder with the tools it may use", typ, typ)
		}
	}
	return nil, fmt.Sprintf("agent type %q is not defined in any agents folder (looked in %s)", typ, strings.Join(c.Dirs(), ", "))
}
