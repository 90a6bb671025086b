package claudecode

import (
	"fmt"
	"strings"

	"github.com/spawngate/spawngate/internal/agent"
	"github.com/spawngate/spawngate/internal/host"
)

// maxObservers is how many of a definition's observers Claude Code starts
// (the first four it names).
const maxObservers = 4

// observersOn tells whether the session starts observer agents: Claude
// Code does when CLAUDE_CODE_EXPERIMENTAL_OBSERVER_AGENTS is set to
// anything but a false value.
func observersOn(env host.Env) bool {
	if env.Getenv == nil {
		return false
	}
	return truthy(env.Getenv("CLAUDE_CODE_EXPERIMENTAL_OBSERVER_AGENTS"))
}

// truthy reads a switch in the environment as Claude Code does: set to
// anything but a false value.
func truthy(v string) bool {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "", "0", "false", "no", "off":
		return false
	}
	return true
}

// observers are the further children a spawn of def starts when observer
// agents are on: the agents its observer: names (a comma-separated list;
// a YAML list is read too), each resolved as a spawn of that name, with
// the observers they name in turn. Each is judged like the child itself:
// one the policy refuses refuses the spawn, which starts them together.
func observers(env host.Env, catalog *agent.Catalog, c call, def *agent.Definition) []agent.Translation {
	if !observersOn(env) || def == nil {
		return nil
	}
	seen := map[*agent.Definition]bool{def: true}
	var out []agent.Translation
	queue := []*agent.Definition{def}
	for len(queue) > 0 && len(out) < 64 {
		d := queue[0]
		queue = queue[1:]
		for _, name := range observerNames(d.Fields["observer"]) {
			od, problem := resolve(catalog, name)
			if od != nil && seen[od] {
				continue // judged already
			}
			o := c
			o.Type, o.Brief, o.Model, o.Mode, o.Launch = name, "", "", "", "observer"
			if c.ID != "" {
				o.ID = fmt.Sprintf("%s/observer/%d", c.ID, len(out)+1)
			}
			t := translate(o, od, problem)
			facts, _ := t.Child["agent"].(map[string]any)
			facts["observes"] = d.Name
			out = append(out, t)
			if od != nil {
				seen[od] = true
				queue = append(queue, od)
			}
		}
	}
	return out
}

// observerNames reads an observer: setting: the first four names of a
// comma-separated list (or of a YAML list), blanks left out.
func observerNames(v any) []string {
	var items []string
	switch v := v.(type) {
	case string:
		items = strings.Split(v, ",")
	case []any:
		for _, x := range v {
			items = append(items, fmt.Sprint(x))
		}
	}
	var names []string
	for _, it := range items {
		if it = strings.TrimSpace(it); it != "" && len(names) < maxObservers {
			names = append(names, it)
		}
	}
	return names
}
