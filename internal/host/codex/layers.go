package codex

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"sort"

	"github.com/spawngate/spawngate/internal/document"
	"github.com/spawngate/spawngate/internal/host"
	"github.com/spawngate/spawngate/internal/host/doctor"
)

// layers is what a session in a folder loads from Codex's configuration
// layers, read as doctor codex reads them (the same reader).
type layers struct {
	// agents are the folders Codex takes agent definitions from, highest
	// precedence first: each trusted project's .codex/agents, closest
	// first, then $CODEX_HOME/agents. An untrusted project's are not
	// loaded.
	agents []string
	// servers are the MCP servers the layers' config.toml declare: the
	// session's, which every child inherits beside its definition's.
	servers []string
	// roles are the agent types the layers' config.toml declare
	// ([agents.NAME]), by name, the highest layer's declaration winning.
	roles map[string]role
}

// role is one [agents.NAME] declaration of a config.toml.
type role struct {
	// file is its config_file, absolute (a relative one is taken from the
	// declaring config.toml's folder); "" when it names none.
	file string
	// decl is where it is declared, for messages: the config.toml and the
	// table.
	decl string
	// rank is how many agents folders come before it: those of higher
	// layers. Codex takes a declaration over its own layer's folder (seen
	// on the real client, both in the user's layer and a project's), and
	// a higher layer's folder over it.
	rank int
}

// readLayers reads the layers of a session started in cwd.
func readLayers(env host.Env, cwd string) (layers, error) {
	var l layers
	d := &checkup{Run: doctor.Run{Options: doctor.Options{Project: cwd, Home: env.Home, Root: env.Root, Getenv: env.Getenv}}, project: cwd, home: env.Home,
		states: map[string]hookState{}}
	d.codexHome = d.findCodexHome()
	if err := d.read(); err != nil {
		var de *doctor.Error
		if errors.As(err, &de) {
			return l, &document.Error{Source: de.File, Msg: fmt.Sprintf("Codex's configuration cannot be read, so what the session hands its children cannot be known: %s", de.Msg)}
		}
		return l, err
	}
	for i := len(d.trusted) - 1; i >= 0; i-- {
		l.agents = append(l.agents, filepath.Join(d.trusted[i], "agents"))
	}
	if d.codexHome != "" {
		l.agents = append(l.agents, filepath.Join(d.codexHome, "agents"))
	}
	for _, cfg := range d.configs {
		servers, _ := cfg.Tree["mcp_servers"].(map[string]any)
		for name := range servers {
			if !slices.Contains(l.servers, name) {
				l.servers = append(l.servers, name)
			}
		}
	}
	sort.Strings(l.servers)
	l.roles = declaredRoles(d.configs, l.agents)
	return l, nil
}

// declaredRoles reads the [agents.NAME] tables, lowest layer first so
// that a higher one replaces a name. The [agents] table's own settings
// (max_threads, max_depth, ...) are not tables and are passed over.
func declaredRoles(configs []*configDoc, folders []string) map[string]role {
	roles := map[string]role{}
	for _, cfg := range configs {
		agents, _ := cfg.Tree["agents"].(map[string]any)
		dir := filepath.Dir(cfg.Path)
		rank := slices.Index(folders, filepath.Join(dir, "agents"))
		if rank < 0 {
			rank = len(folders) // the system layer, below every folder
		}
		for name, v := range agents {
			decl, ok := v.(map[string]any)
			if !ok {
				continue
			}
			r := role{decl: fmt.Sprintf("%s [agents.%s]", cfg.Path, name), rank: rank}
			if file, _ := decl["config_file"].(string); file != "" {
				if !filepath.IsAbs(file) {
					file = filepath.Join(dir, file)
				}
				r.file = filepath.Clean(file)
			}
			roles[name] = r
		}
	}
	return roles
}
