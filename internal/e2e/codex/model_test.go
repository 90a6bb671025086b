package codex

import (
	"encoding/json"

	"github.com/spawngate/spawngate/internal/e2e/fakemodel"
)

// codexHost is how Codex talks to its model: the Responses API, with its
// own sign on a sub-agent's requests.
var codexHost = fakemodel.Host{API: fakemodel.OpenAIResponses, IsSub: subHeaders}

// subHeaders reports whether Codex marked the request as a sub-agent's: it
// carries its parent's thread (x-codex-parent-thread-id) or the
// x-openai-subagent header ("collab_spawn" for spawn_agent children).
func subHeaders(r *fakemodel.Request) bool {
	return r.Header.Get("x-openai-subagent") != "" || r.Header.Get("x-codex-parent-thread-id") != ""
}

// thread is the thread (agent) the request is for.
func thread(r *fakemodel.Request) string {
	if id := r.Header.Get("thread-id"); id != "" {
		return id
	}
	cm, _ := r.JSON["client_metadata"].(map[string]any)
	id, _ := cm["thread_id"].(string)
	return id
}

// turnMetadata is the x-codex-turn-metadata header: Codex states the turn's
// sandbox_mode there, per thread, which is how a test reads the sandbox a
// child really got without trusting the hook's view.
func turnMetadata(r *fakemodel.Request) (map[string]any, error) {
	meta := r.Header.Get("x-codex-turn-metadata")
	if meta == "" {
		return nil, nil
	}
	var m map[string]any
	err := json.Unmarshal([]byte(meta), &m)
	return m, err
}

// sandboxMode is what Codex put in the request's turn metadata.
func sandboxMode(r *fakemodel.Request) string {
	m, _ := turnMetadata(r)
	s, _ := m["sandbox_mode"].(string)
	return s
}

// outputs are the texts of the tool results the request carries.
func outputs(r *fakemodel.Request) []string {
	var out []string
	for _, x := range r.Results {
		out = append(out, x.Text)
	}
	return out
}

// call is a turn of one function call under the id a script names it by;
// ns is the tool's namespace ("" for a top-level function tool), since
// Codex routes a namespaced tool only when the call names its namespace.
func call(ns, name, id string, args any) fakemodel.Turn {
	return fakemodel.Turn{Calls: []fakemodel.Call{{ID: id, Namespace: ns, Name: name, Args: args}}}
}

// agentID pulls the child's id out of a spawn_agent result (v1:
// {"agent_id": ...}); "" when the spawn did not happen.
func agentID(output string) string {
	var v map[string]any
	if err := json.Unmarshal([]byte(output), &v); err != nil {
		return ""
	}
	for _, k := range []string{"agent_id", "id", "thread_id"} {
		if s, ok := v[k].(string); ok && s != "" {
			return s
		}
	}
	return ""
}
