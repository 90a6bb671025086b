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

// declared is what a session's configuration declares about agent types
// ([agents.NAME]), and how to read a declared role's file.
type declared struct {
	roles map[string]role
	read  func(name, file string) *agent.Definition
}

// declaredIn is the declarations of readLayers, each role's file read
// within the limits when a spawn names it.
func declaredIn(ctx context.Context, env host.Env, roles map[string]role) *declared {
	return &declared{roles: roles, read: func(name, file string) *agent.Definition {
		return agent.ReadFile(ctx, file, env.Limits, readRole(name))
	}}
}

// resolve finds the definition of an agent type as Codex does: layer by
// layer from the highest, a role its config.toml declares before its
// agents folder, a name matched exactly (roles may be nil: folders
// only). It says why none can be judged: built in or declared without a
// file (both run with what the session has), unknown, or a definition
// that does not parse.
func resolve(c *agent.Catalog, roles *declared, typ string) (*agent.Definition, string) {
	var r role
	isRole := false
	above := c
	if roles != nil {
		if r, isRole = roles.roles[typ]; isRole {
			above = &agent.Catalog{Folders: c.Folders[:min(r.rank, len(c.Folders))]}
		}
	}
	if def, problem, found := above.Find(typ, func(d *agent.Definition) bool { return d.Name == typ }); found {
		return def, problem
	}
	if isRole {
		if r.file == "" {
			return nil, fmt.Sprintf("agent type %q is declared in %s without a config_file, so it would run with everything the session has: give it a config_file with the tools it may use", typ, r.decl)
		}
		def := roles.read(typ, r.file)
		if def.Err != nil {
			return nil, fmt.Sprintf("the role %q that %s declares, in %s: %s", typ, r.decl, def.File, def.ParseProblem())
		}
		return def, ""
	}
	for _, b := range Builtin {
		if b == typ {
			return nil, fmt.Sprintf("agent type %q is built in and no agents folder defines it, so it would inherit every tool: define %s in an agents folder with the tools it may use", typ, typ)
		}
	}
	nor := ""
	if roles != nil {
		nor = " nor declared in config.toml"
	}
	return nil, fmt.Sprintf("agent type %q is not defined in any agents folder (looked in %s)%s", typ, strings.Join(c.Dirs(), ", "), nor)
}
