package copilot

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/spawngate/spawngate/internal/e2e/suite"
)

// payloadDir holds the real payloads, anonymised, that the adapter's unit
// tests and docs use: each scenario that captures one checks the client
// still sends it, and rewrites it under SPAWNGATE_E2E_UPDATE_PAYLOADS=1
// (suite.MatchPayload).
var payloadDir = filepath.Join("..", "..", "..", "examples", "copilot", "payloads")

// The stand-ins the anonymised payloads use for this run's folders.
const (
	fixtureRoot = "/home/dev/repo"
	fixtureHome = "/home/dev"
)

var (
	uuidRE   = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)
	msRE     = regexp.MustCompile(`"timestamp":[0-9]+`)
	isoRE    = regexp.MustCompile(`"timestamp":"[0-9T:.Z-]+"`)
	fixedIDs = []string{
		"d4487cf9-d28f-40ba-a20a-077e3a2aa47e", "03bb5854-1dd5-4086-98f2-deecf0d7f2c5",
		"22e31ba6-d9e5-4753-ae71-3b6c89a8e2fb", "0c1d00b9-0497-4bb8-900d-fcc0c20ac207",
	}
)

// anonymise replaces the run's folders and its random ids and times with
// fixed stand-ins of the same shape, so that a refreshed fixture differs
// only where the client changed. Everything else is the client's bytes.
func anonymise(o *outcome, payload string) string {
	payload = strings.NewReplacer(o.Root, fixtureRoot, o.Home, fixtureHome).Replace(strings.TrimSpace(payload))
	ids := map[string]string{}
	payload = uuidRE.ReplaceAllStringFunc(payload, func(id string) string {
		if _, ok := ids[id]; !ok {
			ids[id] = fixedIDs[len(ids)%len(fixedIDs)]
		}
		return ids[id]
	})
	payload = msRE.ReplaceAllString(payload, `"timestamp":1796637096961`)
	return isoRE.ReplaceAllString(payload, `"timestamp":"2026-12-07T09:54:29.926Z"`)
}

// payloadIs: the first payload the hook labelled label saw is, anonymised,
// examples/copilot/payloads/NAME.json (rewritten instead under
// SPAWNGATE_E2E_UPDATE_PAYLOADS=1).
func payloadIs(label, name string) check {
	return func(t *testing.T, o *outcome) error {
		for _, h := range o.Hooks {
			if h.Label == label {
				return matchPayload(t, o, h, name)
			}
		}
		return fmt.Errorf("the %s hook never ran: no payload for %s.json", label, name)
	}
}

// matchPayload compares (or writes) one fixture with hook call h's stdin.
func matchPayload(t *testing.T, o *outcome, h hookCall, name string) error {
	return suite.MatchPayload(t, payloadDir, name, anonymise(o, h.Stdin)+"\n")
}
