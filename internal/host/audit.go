package host

import (
	"fmt"

	"github.com/spawngate/spawngate/internal/agent"
)

// AuditCatalog translates each definition of a catalog as a spawn of its
// own name would be translated, for spawngate agents. stem is the type a
// definition without a name goes by (its file's name, as the host has
// it); resolve resolves a name as the host does; translate writes the
// child of a spawn of typ, with the definition it resolves to (nil, with
// the problem, when none applies). A definition the host skips, one that
// does not parse, and one a spawn of its name would not resolve to (a
// second one of the name, say) are children the gate refuses, each with
// its reason.
func AuditCatalog(catalog *agent.Catalog, stem func(file string) string, resolve func(name string) (*agent.Definition, string), translate func(typ string, def *agent.Definition, problem string) agent.Translation) []Audited {
	var out []Audited
	for _, def := range catalog.Definitions() {
		typ, resolved, problem := def.Name, def, ""
		switch {
		case def.Skipped != "":
			resolved, problem = nil, fmt.Sprintf("%s defines no agent: %s", def.File, def.Skipped)
			typ = stem(def.File)
		case def.Err != nil:
			resolved, problem = nil, "the definition does not parse: "+def.ParseProblem()
			if def.Name == "" {
				typ = stem(def.File)
			}
		default:
			if r, why := resolve(def.Name); r != def {
				resolved, problem = nil, why
			}
		}
		a := Audited{File: def.File, Translation: translate(typ, resolved, problem)}
		if def.Err != nil {
			a.Line = def.Err.Line
		}
		out = append(out, a)
	}
	return out
}
