package gemini

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/spawngate/spawngate/internal/e2e/suite"
)

// e2eCase is one scenario and what must hold after it.
type e2eCase struct {
	name string
	sc   func(t *testing.T) scenario
	// check is what must hold after the run.
	check check
	// hostFact marks a scenario that pins down a known fact of the client,
	// open one that today's spawngate gets wrong (see suite.Judge).
	hostFact, open string
	// needsRoot marks a scenario that writes /etc/gemini-cli (in a mount
	// namespace of its own): skipped when not root.
	needsRoot bool
}

// runCases runs every case as a parallel subtest.
func runCases(t *testing.T, cases []e2eCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			if c.needsRoot {
				suite.NeedRoot(t, "writes /etc/gemini-cli in a mount namespace of its own")
			}
			suite.Judge(t, c.sc(t).run(t), c.check, c.hostFact, c.open)
		})
	}
}

// check is one assertion on an outcome.
type check = suite.Check[*outcome]

// The checks every suite makes alike, on this suite's outcome.
var (
	all         = suite.All[*outcome]
	neverCalled = suite.NeverCalled[*outcome]
	resultIs    = suite.ResultIs[*outcome]
	resultHas   = suite.ResultHas[*outcome]
	childTools  = suite.ChildTools[*outcome]
)

// blocked is the tool result Gemini CLI hands the model for a call a
// BeforeTool hook denied with reason.
func blocked(reason string) string { return "Tool execution blocked: " + reason }

// starts: the child on name's definition really ran, and the spawn call
// callID came back with its answer, not an error.
func starts(callID, name string) check {
	return func(t *testing.T, o *outcome) error {
		if !o.Started(name) {
			return fmt.Errorf("the %s child never started (no request carried %s); %s's result: %q", name, suite.Marker(name), callID, o.Result(callID))
		}
		return answered(callID)(t, o)
	}
}

// answered: the call callID came back as a result, not as an error.
func answered(callID string) check {
	return func(t *testing.T, o *outcome) error {
		for _, r := range o.Requests {
			for _, x := range r.Results {
				if x.CallID == callID {
					if x.IsError {
						return fmt.Errorf("%s came back as an error: %q", callID, x.Text)
					}
					return nil
				}
			}
		}
		return fmt.Errorf("%s never came back to the model", callID)
	}
}

// refusedBy: the spawn call callID came back as the client's block with
// the reason the hook labelled label gave, and the child on name's
// definition never reached the model: its marker is in no request at all.
// name "" is a built-in child, of which no request may exist.
func refusedBy(callID, name, label string) check {
	return func(t *testing.T, o *outcome) error {
		if err := neverRan(name)(t, o); err != nil {
			return err
		}
		reason, err := o.denyReason(label, callID)
		if err != nil {
			return err
		}
		return resultIs(callID, blocked(reason))(t, o)
	}
}

// neverRan: the child on name's definition ("" for a built-in) never
// reached the model.
func neverRan(name string) check {
	return func(t *testing.T, o *outcome) error {
		if name != "" && o.Mentions(name) {
			return fmt.Errorf("the refused %s child reached the model (a request carried %s)", name, suite.Marker(name))
		}
		if name == "" && len(o.BuiltinRequests()) > 0 {
			return errors.New("a refused built-in child reached the model")
		}
		return nil
	}
}

// calledFor: the hook labelled label ran n times for tool.
func calledFor(label, tool string, n int) check {
	return func(t *testing.T, o *outcome) error {
		if got := len(o.hooks(label, tool)); got != n {
			return fmt.Errorf("the %s hook ran %d times for %s, want %d", label, got, tool, n)
		}
		return nil
	}
}

// denyReason is the reason of the one deny the hook labelled label printed
// for the invoke_agent call callID (matched by the agent it names).
func (o *outcome) denyReason(label, callID string) (string, error) {
	agent := o.spawnAgent(callID)
	var reasons []string
	for _, h := range o.hooks(label, "invoke_agent") {
		if r, ok := denial(h); ok && toolInput(h.Payload)["agent_name"] == agent {
			reasons = append(reasons, r)
		}
	}
	if len(reasons) != 1 {
		return "", fmt.Errorf("the %s hook denied %s (%s) %d times (%q), want once", label, callID, agent, len(reasons), reasons)
	}
	return reasons[0], nil
}

// spawnAgent is the agent_name of the invoke_agent call callID as the
// model made it, from the first request whose history holds it.
func (o *outcome) spawnAgent(callID string) string {
	for _, r := range o.Requests {
		contents, _ := r.JSON["contents"].([]any)
		for _, c := range contents {
			cm, _ := c.(map[string]any)
			parts, _ := cm["parts"].([]any)
			for _, p := range parts {
				pm, _ := p.(map[string]any)
				fc, _ := pm["functionCall"].(map[string]any)
				if id, _ := fc["id"].(string); fc == nil || strings.TrimPrefix(id, "invoke_agent__") != callID {
					continue
				}
				args, _ := fc["args"].(map[string]any)
				s, _ := args["agent_name"].(string)
				return s
			}
		}
	}
	return ""
}

// denial is the reason of a deny the hook printed on stdout, if it did.
func denial(h hookCall) (string, bool) {
	var out struct {
		Decision string `json:"decision"`
		Reason   string `json:"reason"`
	}
	if json := strings.TrimSpace(h.Stdout); json == "" || jsonUnmarshal(json, &out) != nil {
		return "", false
	}
	return out.Reason, out.Decision == "deny"
}

// toolInput is a payload's tool arguments.
func toolInput(p map[string]any) map[string]any {
	m, _ := p["tool_input"].(map[string]any)
	return m
}
