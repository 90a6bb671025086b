package codex

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"sort"

	"github.com/spawngate/spawngate/internal/host"
	"github.com/spawngate/spawngate/internal/plan"
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
}

// readLayers reads the layers of a session started in cwd.
func readLayers(env host.Env, cwd string) (layers, error) {
	var l layers
	d := &doctor{o: host.DoctorOptions{Project: cwd, Home: env.Home, Root: env.Root, Getenv: env.Getenv}, project: cwd, home: env.Home,
		states: map[string]hookState{}, jsonPos: map[string]map[string]plan.Position{}}
	d.codexHome = d.findCodexHome()
	if err := d.read(); err != nil {
		var de *host.DoctorError
		if errors.As(err, &de) {
			return l, &plan.Error{Source: de.File, Msg: fmt.Sprintf("Codex's configuration cannot be read, so what the session hands its children cannot be known: %s", de.Msg)}
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
		servers, _ := cfg.tree["mcp_servers"].(map[string]any)
		for name := range servers {
			if !slices.Contains(l.servers, name) {
				l.servers = append(l.servers, name)
			}
		}
	}
	sort.Strings(l.servers)
	return l, nil
}
