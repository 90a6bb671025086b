package spawngate_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"testing"

	"github.com/spawngate/spawngate"
)

// BenchmarkHook is one hook decision through the public API, as a Go
// orchestrator or spawngate serve makes it: the payload read, the
// definition found and translated as the host would, the child judged.
// Each host's example writer is refused; "fresh" gives every call its own
// session id and prompt, so nothing of the payload is seen twice.
func BenchmarkHook(b *testing.B) {
	ctx := context.Background()
	for _, h := range []struct {
		host             spawngate.Host
		policy, dir, doc string
	}{
		{spawngate.ClaudeCode, "examples/claude-code/policy.yaml", "examples/claude-code/.claude/agents", "examples/claude-code/payloads/fixer.json"},
		{spawngate.Copilot, "examples/copilot/policy.yaml", "examples/copilot/.github/agents", "examples/copilot/payloads/writer.json"},
		{spawngate.Gemini, "examples/gemini/policy.yaml", "examples/gemini/.gemini/agents", "examples/gemini/payloads/writer.json"},
	} {
		g, err := spawngate.New(ctx, spawngate.WithPolicyFile(h.policy))
		if err != nil {
			b.Fatal(err)
		}
		payload, err := os.ReadFile(h.doc)
		if err != nil {
			b.Fatal(err)
		}
		refused := func(b *testing.B, p []byte) {
			a, err := g.Hook(ctx, h.host, p, spawngate.WithAgentsDirs(h.dir))
			if err != nil || a.Decision != spawngate.HookDeny {
				b.Fatalf("want a refusal, got %+v, %v", a, err)
			}
		}
		b.Run(string(h.host), func(b *testing.B) {
			for b.Loop() {
				refused(b, payload)
			}
		})
		b.Run(string(h.host)+"/fresh", func(b *testing.B) {
			i := 0
			for b.Loop() {
				i++
				refused(b, withSession(b, payload, i))
			}
		})
	}
}

// withSession is a payload with a session id and a prompt of its own, in
// either host's field names.
func withSession(b *testing.B, payload []byte, i int) []byte {
	var m map[string]any
	if err := json.Unmarshal(payload, &m); err != nil {
		b.Fatal(err)
	}
	for _, k := range []string{"session_id", "sessionId"} {
		if _, ok := m[k]; ok {
			m[k] = fmt.Sprint("session-", i)
		}
	}
	for _, k := range []string{"tool_input", "toolArgs"} {
		if in, ok := m[k].(map[string]any); ok {
			in["prompt"] = fmt.Sprint("task number ", i)
		}
	}
	out, err := json.Marshal(m)
	if err != nil {
		b.Fatal(err)
	}
	return out
}
