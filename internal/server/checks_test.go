package server

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spawngate/spawngate/internal/report"
)

// A check of the operator's own that refuses the tool fs.read, or, with
// the word changed, another tool.
func readCheck(tool string) string {
	return `# METADATA
# title: No ` + tool + `
# description: Not here.
# custom:
#   id: org.no-read
#   severity: high
package spawngate.checks.no_read

import data.spawngate.lib

deny contains lib.violation(i, "/tools", "no ` + tool + ` here") if {
	some i, child in lib.children
	"` + tool + `" in child.tools
}
`
}

// Reloading reads the operator's checks again, as it reads the policy: a
// changed check serves from the next request, a broken one keeps the old
// ones serving (and is not tried again until it changes), and the decision
// log names the checks that judged.
func TestReloadCustomChecks(t *testing.T) {
	dir := t.TempDir()
	check := filepath.Join(dir, "checks", "no_read.rego")
	if err := os.MkdirAll(filepath.Dir(check), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(check, []byte(readCheck("fs.read")), 0o644); err != nil {
		t.Fatal(err)
	}
	var log syncBuffer
	s, ts, _ := newServer(t, func(c *Config) {
		c.Gate.Checks = []string{filepath.Dir(check)}
		c.DecisionLog, c.Checks = &log, "sha256:embedded"
	})
	reads := `{"plan": [{"role": "r", "tools": ["fs.read"], "paths": [], "budget_tokens": 1}]}`
	verdict := func() report.Verdict {
		t.Helper()
		status, body := post(t, ts.URL+"/v1/check", "application/json", reads)
		if status != 200 {
			t.Fatalf("status %d: %s", status, body)
		}
		return verdictOf(t, body)
	}
	if v := verdict(); v != report.Block {
		t.Fatalf("with the check: %s", v)
	}
	first := s.ChecksDigest()
	if first == "sha256:embedded" || !strings.HasPrefix(first, "sha256:") {
		t.Fatalf("checks digest %q", first)
	}
	if tried, err := s.ReloadIfChanged(context.Background()); tried || err != nil {
		t.Fatalf("nothing changed, and it reloaded: %v %v", tried, err)
	}
	// Broken: the old check keeps serving, and it is tried once.
	if err := os.WriteFile(check, []byte("package spawngate.lib\n\nallows(policy, tool) if true\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if tried, err := s.ReloadIfChanged(context.Background()); !tried || err == nil || !strings.Contains(err.Error(), "no_read.rego:1: package spawngate.lib is built in") {
		t.Fatalf("a broken check: tried %v, err %v", tried, err)
	}
	if tried, _ := s.ReloadIfChanged(context.Background()); tried {
		t.Fatal("an unchanged broken check was tried again")
	}
	if v := verdict(); v != report.Block || s.ChecksDigest() != first {
		t.Fatalf("after a broken reload: %s", v)
	}
	// Changed: the new check serves.
	if err := os.WriteFile(check, []byte(readCheck("fs.write")), 0o644); err != nil {
		t.Fatal(err)
	}
	if tried, err := s.ReloadIfChanged(context.Background()); !tried || err != nil {
		t.Fatalf("a changed check: tried %v, err %v", tried, err)
	}
	if v := verdict(); v != report.Pass || s.ChecksDigest() == first {
		t.Fatalf("after the reload: %s", v)
	}
	lines := strings.Split(strings.TrimSpace(log.String()), "\n")
	var checks []string
	for _, l := range lines {
		var ev struct{ Checks string }
		if err := json.Unmarshal([]byte(l), &ev); err != nil {
			t.Fatal(err)
		}
		checks = append(checks, ev.Checks)
	}
	if len(checks) != 3 || checks[0] != first || checks[1] != first || checks[2] != s.ChecksDigest() {
		t.Fatalf("the log's checks: %v", checks)
	}
}
