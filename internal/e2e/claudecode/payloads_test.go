package claudecode

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// envUpdatePayloads makes the scenarios that capture a real payload write
// it, anonymised, to testdata/payloads (go test ... with it set to 1), for
// refreshing the fixtures of the hook's unit tests when the pinned client
// moves.
const envUpdatePayloads = "SPAWNGATE_E2E_UPDATE_PAYLOADS"

// The stand-ins the anonymised payloads use for this run's folders.
const (
	fixtureRoot = "/home/dev/project"
	fixtureHome = "/home/dev"
)

var (
	uuidRE    = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)
	agentIDRE = regexp.MustCompile(`"agent_id":"a[0-9a-f]{16}"`)
)

// anonymise replaces the run's folders (also in the dashed form the client
// names its transcript folder by) and its random ids with fixed stand-ins
// of the same shape, so a refreshed fixture differs only where the client
// changed.
func anonymise(o *outcome, payload string) string {
	dashed := func(p string) string {
		return strings.Map(func(r rune) rune {
			if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
				return r
			}
			return '-'
		}, p)
	}
	r := strings.NewReplacer(o.Root, fixtureRoot, o.Home, fixtureHome, dashed(o.Root), dashed(fixtureRoot))
	payload = r.Replace(payload)
	ids := map[string]string{}
	payload = uuidRE.ReplaceAllStringFunc(payload, func(id string) string {
		if _, ok := ids[id]; !ok {
			ids[id] = []string{
				"00000000-0000-4000-8000-000000000001", "00000000-0000-4000-8000-000000000002",
				"00000000-0000-4000-8000-000000000003", "00000000-0000-4000-8000-000000000004",
			}[len(ids)%4]
		}
		return ids[id]
	})
	return agentIDRE.ReplaceAllString(payload, `"agent_id":"a0123456789abcdef"`)
}

// savePayload writes a hook's stdin as testdata/payloads/NAME.json when
// asked to (see envUpdatePayloads).
func savePayload(t *testing.T, o *outcome, h hookCall, name string) {
	t.Helper()
	if os.Getenv(envUpdatePayloads) != "1" {
		return
	}
	// Indented in place, so the keys keep the client's order.
	var b bytes.Buffer
	if err := json.Indent(&b, []byte(strings.TrimSpace(anonymise(o, h.Stdin))), "", "  "); err != nil {
		t.Fatalf("payload %s: %v", name, err)
	}
	dir := filepath.Join("testdata", "payloads")
	must(t, os.MkdirAll(dir, 0o755))
	must(t, os.WriteFile(filepath.Join(dir, name+".json"), append(b.Bytes(), '\n'), 0o644))
}
