package gemini

import (
	"context"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/spawngate/spawngate/internal/agent"
	"github.com/spawngate/spawngate/internal/document"
)

// knownKeys are the frontmatter keys Gemini CLI's schema for a local agent
// reads; any other key makes it refuse the file.
var knownKeys = map[string]bool{
	"name": true, "description": true, "display_name": true, "kind": true, "tools": true, "mcp_servers": true,
	"model": true, "temperature": true, "max_turns": true, "timeout_mins": true,
}

// validName is the form of an agent's name Gemini CLI accepts.
var validName = regexp.MustCompile(`^[a-z0-9_-]+$`)

// ReadGemini reads a Gemini CLI agent definition (NAME.md in an agents
// folder): Markdown with YAML frontmatter, read with the gate's strict
// YAML reader. Gemini CLI checks the frontmatter against a strict schema
// (a name of lower-case letters, digits, - and _; a description; no key
// it does not know) and leaves out a file that fails it: such a file is
// Skipped here too, and the next definition of the name is the one that
// runs. A file whose YAML the gate's reader refuses does not parse, under
// the name a lenient reading finds (none: it may be any), so a spawn of a
// name it might define is refused.
func ReadGemini(ctx context.Context, file string, data []byte, lim document.Limits) *agent.Definition {
	d, fields := agent.OpenMarkdown(ctx, file, data, lim, "Gemini CLI", "")
	if fields == nil {
		return d
	}
	name, _ := fields["name"].(string)
	d.Name = name
	if !validName.MatchString(name) {
		d.Skipped = fmt.Sprintf("its name %v is not lower-case letters, digits, - and _, so Gemini CLI does not load it", fields["name"])
		return d
	}
	if fields["kind"] == "remote" {
		// A remote agent (A2A) runs elsewhere: it is loaded, and refused
		// (translate says it runs remotely).
		return d
	}
	for k := range fields {
		if !knownKeys[k] {
			d.Skipped = fmt.Sprintf("its frontmatter sets %q, which Gemini CLI's schema does not know, so Gemini CLI does not load it", k)
			return d
		}
	}
	switch desc, _ := fields["description"].(string); {
	case desc == "":
		d.Skipped = "its frontmatter has no description, so Gemini CLI does not load it"
	case fields["kind"] != nil && fields["kind"] != "local":
		d.Skipped = fmt.Sprintf("its kind is %v, neither local nor remote, so Gemini CLI does not load it", fields["kind"])
	}
	return d
}

// stem is a definition file's name without .md.
func stem(file string) string { return strings.TrimSuffix(filepath.Base(file), ".md") }
