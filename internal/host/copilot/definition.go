package copilot

import (
	"context"
	"fmt"

	"github.com/spawngate/spawngate/internal/agent"
	"github.com/spawngate/spawngate/internal/document"
)

// ReadCopilot reads a Copilot CLI agent definition (NAME.agent.md, or any
// NAME.md in an agents folder): Markdown with YAML frontmatter, read with
// the gate's strict YAML reader. The name is the frontmatter's name, else
// the file's (observed). Copilot checks the frontmatter against a schema
// and skips a file that fails it (no frontmatter, no description, tools:
// null, a setting of the wrong type), and a definition of the name
// further down then runs: such a file is Skipped here too. A file whose
// YAML the gate's reader refuses is one that does not parse, under the
// name a lenient reading finds (none: it may be any): Copilot's YAML
// reader may read it otherwise, so a spawn of a name it might define is
// refused, never passed to a definition further down.
func ReadCopilot(ctx context.Context, file string, data []byte, lim document.Limits) *agent.Definition {
	d, fields := agent.OpenMarkdown(ctx, file, data, lim, "Copilot", stem(file))
	if fields == nil {
		return d
	}
	d.Name = stem(file)
	if name, set := fields["name"]; set && name != nil {
		s, ok := name.(string)
		if !ok {
			d.Skipped = "its name is not a string, so Copilot does not load it"
			return d
		}
		if s != "" {
			d.Name = s
		}
	}
	if desc, ok := fields["description"].(string); !ok || desc == "" {
		d.Skipped = "its frontmatter has no description, so Copilot does not load it"
		return d
	}
	if t, set := fields["tools"]; set {
		if _, list := t.([]any); !list && !agent.IsString(t) {
			d.Skipped = "its tools is neither a list nor a string, so Copilot does not load it"
			return d
		}
	}
	for _, k := range []string{"infer", "disable-model-invocation", "user-invocable"} {
		if v, set := fields[k]; set {
			if _, ok := v.(bool); !ok {
				d.Skipped = fmt.Sprintf("its %s is not true or false, so Copilot does not load it", k)
				return d
			}
		}
	}
	return d
}

// uninvocable says why task cannot start a definition Copilot loads
// (infer: false, disable-model-invocation: true), "" when it can. Such a
// definition still hides one of its name further down (observed).
func uninvocable(d *agent.Definition) string {
	switch {
	case d.Fields["infer"] == false:
		return "infer: false"
	case d.Fields["disable-model-invocation"] == true:
		return "disable-model-invocation: true"
	}
	return ""
}
