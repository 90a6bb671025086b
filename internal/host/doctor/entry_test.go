//go:build unix

package doctor

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestCheckEntryTimeoutUnit: a hook's timeout is compared with
// spawngate's --timeout as a duration, and the fix is written in the
// unit the host counts its timeout in (seconds unless the host says).
func TestCheckEntryTimeoutUnit(t *testing.T) {
	dir := t.TempDir()
	bin, policy := filepath.Join(dir, "spawngate"), filepath.Join(dir, "policy.yaml")
	must(t, os.WriteFile(bin, staticELF(), 0o755))
	must(t, os.WriteFile(policy, []byte("allowed_tools: [Read]\n"), 0o644))
	owners := Options{Owners: nil}.OwnersFor()
	owners.Trusted = append(owners.Trusted, os.Geteuid())
	readHook := func(context.Context, string, []string, string) (HookLine, error) {
		return HookLine{Timeout: 20 * time.Second, Files: []string{policy}}, nil
	}
	for _, tc := range []struct {
		name    string
		unit    time.Duration
		value   string
		timeout time.Duration
		fix     string
	}{
		{"seconds", 0, "20", 20 * time.Second, `set "timeout": 21 or more (such as 30)`},
		{"milliseconds", time.Millisecond, "20000", 20 * time.Second, `set "timeout": 20001 or more (such as 30000)`},
		{"above", time.Millisecond, "30000", 30 * time.Second, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			file := &File{Path: filepath.Join(dir, "settings.json")}
			e := &Entry{File: file, Pointer: "/hooks/0", CommandKey: "command", Command: bin + " hook gemini --policy " + policy,
				Timeout: tc.timeout, TimeoutSet: true, Keys: map[string]any{"timeout": tc.value}}
			var r Run
			r.CheckEntry(context.Background(), e, Command{Host: "gemini", Title: "Gemini CLI", Project: dir, Owners: owners,
				TimeoutKey: "timeout", TimeoutUnit: tc.unit, ReadHook: readHook})
			var fixes []string
			for _, f := range r.Findings {
				fixes = append(fixes, f.Fix)
			}
			got := strings.Join(fixes, "\n")
			if tc.fix == "" && got != "" || !strings.Contains(got, tc.fix) {
				t.Fatalf("fixes %q, want one starting %q", got, tc.fix)
			}
		})
	}
}
