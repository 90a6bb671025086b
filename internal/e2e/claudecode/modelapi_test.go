package claudecode

import (
	"slices"
	"strings"
	"testing"

	"github.com/spawngate/spawngate/internal/e2e/fakemodel"
)

// step is one scripted model turn; the scripts are fakemodel's, on the
// Anthropic Messages API.
type step = fakemodel.Turn

// callTool is a turn that calls a tool.
func callTool(name string, input map[string]any) step { return fakemodel.CallTool(name, input) }

// spawn is a turn that calls the Agent tool the way the model does.
func spawn(subagentType string) step {
	in := map[string]any{"description": "e2e spawn", "prompt": "Do the e2e task."}
	if subagentType != "" {
		in["subagent_type"] = subagentType
	}
	return callTool("Agent", in)
}

// markerPrefix starts every marker a test writes into a definition's body.
const markerPrefix = "MARKER-"

// claudeCode is how Claude Code talks to its model. A sub-agent's request
// says cc_is_subagent=true in its system prompt; observer agents and a
// fork started by a /skill prompt are not marked so, but their system
// prompt holds a definition's body, and so a marker.
var claudeCode = fakemodel.Host{
	API: fakemodel.AnthropicMessages,
	IsSub: func(r *fakemodel.Request) bool {
		return strings.Contains(r.System, "cc_is_subagent=true") || strings.Contains(r.System, markerPrefix)
	},
}

// startModelAPI serves the script until the test ends: the main agent
// walks main, a sub-agent sub[marker] for the marker its system prompt
// carries. There is no waiting for children: in -p mode the client keeps
// the session open until its background agents end, and then gives the
// main agent one more turn with their notification.
func startModelAPI(t *testing.T, main []step, sub map[string][]step) *fakemodel.Server {
	t.Helper()
	subs := map[string]fakemodel.Script{}
	for marker, steps := range sub {
		subs[marker] = fakemodel.Steps(steps...)
	}
	return fakemodel.Start(t, claudeCode, fakemodel.Scripts{Main: fakemodel.Steps(main...), Subs: subs})
}

// deferredIntro opens the message in which the client lists the tools an
// agent can load through ToolSearch, one a line until a blank line.
const deferredIntro = "The following deferred tools are now available via ToolSearch"

// listed are the tools the client names in a message as loadable through
// ToolSearch: the agent holds them too.
func listed(r *fakemodel.Request) []string {
	var out []string
	for _, text := range r.Texts {
		i := strings.Index(text, deferredIntro)
		if i < 0 {
			continue
		}
		lines := strings.Split(text[i:], "\n")
		for _, l := range lines[1:] {
			if l = strings.TrimSpace(l); l == "" {
				break
			}
			out = append(out, l)
		}
	}
	return out
}

// deferred are the tools the request sent with defer_loading.
func deferred(r *fakemodel.Request) []string {
	var out []string
	tools, _ := r.JSON["tools"].([]any)
	for _, t := range tools {
		tm, _ := t.(map[string]any)
		if d, _ := tm["defer_loading"].(bool); d {
			name, _ := tm["name"].(string)
			out = append(out, name)
		}
	}
	return out
}

// offered is every tool the agent that sent the request can use: the tool
// definitions it was sent, less the placeholders, and the tools listed as
// loadable.
func offered(r *fakemodel.Request) []string {
	out := slices.DeleteFunc(slices.Clone(r.Tools), func(t string) bool {
		return t == "DeferredToolPlaceholder" || t == "ToolSearch"
	})
	return append(out, listed(r)...)
}
