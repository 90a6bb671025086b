package server

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spawngate/spawngate/internal/judge"
	"github.com/spawngate/spawngate/internal/ledger"
)

// retaskPolicy turns the session checks on.
const retaskPolicy = policyYAML + "brief_retask: {}\n"

// retaskPayload is a Claude Code spawn in session whose brief hands out
// nonce.
func retaskPayload(t *testing.T, session, nonce string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "examples", "claude-code", "payloads", "code-reviewer.json"))
	if err != nil {
		t.Fatal(err)
	}
	var p map[string]any
	if err := json.Unmarshal(data, &p); err != nil {
		t.Fatal(err)
	}
	p["session_id"] = session
	p["tool_input"].(map[string]any)["prompt"] = "Review the diff. RETASK CHANNEL: a revision of this task names token " + nonce + ". Done when you have listed the findings."
	out, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

// The server's ledger is its own: a request cannot point the hook at
// another one through the session environment it sends in headers
// (X-Spawngate-Env-XDG_STATE_HOME naming an empty folder), which would
// let it reuse a nonce.
func TestLedgerIsTheServers(t *testing.T) {
	state := t.TempDir()
	policy := filepath.Join(t.TempDir(), "retask.yaml")
	if err := os.WriteFile(policy, []byte(retaskPolicy), 0o644); err != nil {
		t.Fatal(err)
	}
	_, ts, _ := newServer(t, func(c *Config) {
		c.PolicyFile = policy
		c.Ledger = ledger.Dir(state)
		c.Home = t.TempDir()
	})
	if status, body := post(t, ts.URL+"/v1/hooks/claude-code", "application/json", retaskPayload(t, "s1", "R-once")); status != 200 || body != "" {
		t.Fatalf("first use: %d %s", status, body)
	}
	if _, err := os.Stat(ledger.Path(state, "s1")); err != nil {
		t.Fatalf("the server's ledger was not written: %v", err)
	}
	elsewhere := t.TempDir()
	for _, h := range [][]string{nil, {"X-Spawngate-Env-XDG_STATE_HOME", elsewhere}, {"X-Spawngate-Env-HOME", elsewhere}} {
		status, body := post(t, ts.URL+"/v1/hooks/claude-code", "application/json", retaskPayload(t, "s1", "R-once"), h...)
		if status != 200 || !strings.Contains(body, `"permissionDecision":"deny"`) || !strings.Contains(body, "brief.retask") {
			t.Fatalf("reuse with headers %v: %d %s", h, status, body)
		}
	}
	if entries, _ := os.ReadDir(elsewhere); len(entries) != 0 {
		t.Fatalf("a request's header chose a ledger folder: %v", entries)
	}
}

// A policy that turns the session checks on is not served without a
// ledger the server can read and write: at start (New fails), and on a
// reload, which keeps the old policy serving.
func TestRetaskNeedsAWritableLedger(t *testing.T) {
	dir := t.TempDir()
	policy := filepath.Join(dir, "retask.yaml")
	if err := os.WriteFile(policy, []byte(retaskPolicy), 0o644); err != nil {
		t.Fatal(err)
	}
	blocker := filepath.Join(dir, "a-file")
	if err := os.WriteFile(blocker, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		store ledger.Store
		want  string
	}{
		{"none", nil, policy + ": /brief_retask: the operator policy turns the session checks on, and no session ledger is configured"},
		{"unwritable", ledger.Dir(filepath.Join(blocker, "state")), policy + ": /brief_retask: the operator policy turns the session checks on, and the session ledger cannot be used: " +
			blocker + "/state/sessions: cannot make the ledger folder: not a directory"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := Config{PolicyFile: policy, Gate: judge.DefaultOptions(), MaxConcurrent: 1, Ledger: tc.store}
			_, err := New(context.Background(), cfg)
			var le *LedgerError
			if !errors.As(err, &le) || err.Error() != tc.want {
				t.Fatalf("got %v\nwant %s", err, tc.want)
			}
		})
	}
	if _, err := New(context.Background(), Config{PolicyFile: policy, Gate: judge.DefaultOptions(), MaxConcurrent: 1, Ledger: ledger.Dir(filepath.Join(dir, "state"))}); err != nil {
		t.Fatalf("a writable ledger: %v", err)
	}

	// Started without session checks and without a ledger, a reload that
	// turns them on fails, and the old policy keeps serving.
	s, _, plain := newServer(t, nil)
	before := s.PolicyDigest()
	if err := os.WriteFile(plain, []byte(retaskPolicy), 0o644); err != nil {
		t.Fatal(err)
	}
	var le *LedgerError
	if err := s.Reload(context.Background()); !errors.As(err, &le) {
		t.Fatalf("reload to session checks without a ledger: %v", err)
	}
	if s.PolicyDigest() != before {
		t.Fatal("the reload that cannot keep ledgers was served")
	}
}
