package gemini

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
var payloadDir = filepath.Join("..", "..", "..", "examples", "gemini", "payloads")

// The stand-ins the anonymised payloads use for this run's folders, its
// session and its time.
const (
	fixtureRoot    = "/home/dev/repo"
	fixtureHome    = "/home/dev"
	fixtureSession = "3accb15f-7673-4335-a4b4-3d18241e4800"
	fixtureTime    = "2026-12-07T10:09:04.770Z"
)

var (
	uuidRE = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)
	isoRE  = regexp.MustCompile(`"timestamp":"[0-9T:.Z-]+"`)
	// The transcript's file is named for the session's start and the
	// session id's first eight digits.
	transcriptRE = regexp.MustCompile(`session-[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}-[0-9]{2}-[0-9a-f]{8}\.jsonl`)
)

// anonymise replaces the run's folders, its session id and its times
// with fixed stand-ins of the same shape, so that a refreshed fixture
// differs only where the client changed. Everything else is the client's
// bytes.
func anonymise(o *outcome, payload string) string {
	payload = strings.NewReplacer(o.Root, fixtureRoot, o.Home, fixtureHome).Replace(strings.TrimSpace(payload))
	payload = uuidRE.ReplaceAllString(payload, fixtureSession)
	payload = transcriptRE.ReplaceAllString(payload, "session-2026-12-07T10-09-"+fixtureSession[:8]+".jsonl")
	return isoRE.ReplaceAllString(payload, `"timestamp":"`+fixtureTime+`"`)
}

// payloadIs: the first payload the hook labelled label saw is, anonymised,
// examples/gemini/payloads/NAME.json (rewritten instead under
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

// payloadFor is payloadIs for the hook's invoke_agent call for agent.
func payloadFor(label, agent, name string) check {
	return func(t *testing.T, o *outcome) error {
		for _, h := range o.hooks(label, "invoke_agent") {
			if toolInput(h.Payload)["agent_name"] == agent {
				return matchPayload(t, o, h, name)
			}
		}
		return fmt.Errorf("the %s hook never ran for %s: no payload for %s.json", label, agent, name)
	}
}

// matchPayload compares (or writes) one fixture with hook call h's stdin.
func matchPayload(t *testing.T, o *outcome, h hookCall, name string) error {
	return suite.MatchPayload(t, payloadDir, name, anonymise(o, h.Stdin)+"\n")
}
