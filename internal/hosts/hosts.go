// Package hosts lists the hosts spawngate answers for. A new host is a
// package of its own implementing host.Adapter and one line here; the
// hook command, the server's hook endpoints, spawngate agents and the
// public API all take their hosts from this list.
package hosts

import (
	"github.com/spawngate/spawngate/internal/host"
	"github.com/spawngate/spawngate/internal/host/claudecode"
	"github.com/spawngate/spawngate/internal/host/codex"
	"github.com/spawngate/spawngate/internal/host/copilot"
	"github.com/spawngate/spawngate/internal/host/gemini"
)

// All are the hosts, in the order help and reports list them.
var All = []host.Adapter{claudecode.Adapter{}, codex.Adapter{}, copilot.Adapter{}, gemini.Adapter{}}

// Lookup finds a host by its exact name (claude-code, codex, copilot, gemini).
func Lookup(name string) (host.Adapter, bool) {
	for _, a := range All {
		if a.Name() == name {
			return a, true
		}
	}
	return nil, false
}

// Names lists the hosts' names, in order.
func Names() []string {
	names := make([]string, len(All))
	for i, a := range All {
		names[i] = a.Name()
	}
	return names
}
