package gemini

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
)

// e2eCase is one scenario and what must hold after it.
type e2eCase struct {
	name string
	sc   func(t *testing.T) scenario
	// check is what must hold after the run.
	check func(t *testing.T, o *outcome) error
	// hostFact, when set, says the scenario pins down a known fact of the
	// client that no hook can change (a way the gate fails open), as it
	// was seen: a client that changes fails it, and the docs that rely on
	// it must then be re-checked.
	hostFact string
	// open, when set, says why today's spawngate gets this scenario
	// wrong: the check keeps the right expectation, its failure becomes a
	// skip naming the reason, and a pass fails (so the mark is removed
	// once the adapter is fixed).
	open string
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
			if c.needsRoot && os.Geteuid() != 0 {
				t.Skip("writes /etc/gemini-cli in a mount namespace of its own: needs root")
			}
			o := c.sc(t).run(t)
			if errors.Is(o.Err, context.DeadlineExceeded) || len(o.Requests) == 0 {
				t.Fatalf("the run itself failed: %s", o.describe())
			}
			if c.hostFact != "" {
				t.Logf("known host fact: %s", c.hostFact)
			}
			err := c.check(t, o)
			switch {
			case c.open != "" && err != nil:
				t.Skipf("known open, %s: %v", c.open, err)
			case c.open != "":
				t.Fatalf("marked open (%s) but passes now: remove the mark", c.open)
			}
			if err != nil {
				if c.hostFact != "" {
					err = fmt.Errorf("the client no longer behaves as recorded (%s): re-check docs and research: %w", c.hostFact, err)
				}
				t.Fatalf("%v\n%s", err, o.describe())
			}
		})
	}
}

// check is one assertion on an outcome.
type check = func(t *testing.T, o *outcome) error

func all(checks ...check) check {
	return func(t *testing.T, o *outcome) error {
		for _, c := range checks {
			if err := c(t, o); err != nil {
				return err
			}
		}
		return nil
	}
}

// blocked is the tool result Gemini CLI hands the model for a call a
// BeforeTool hook denied with reason.
func blocked(reason string) string { return "Tool execution blocked: " + reason }

// starts: the child on name's definition really ran, and the spawn call
// callID came back with its answer, not an error.
func starts(callID, name string) check {
	return func(t *testing.T, o *outcome) error {
		if !o.started(name) {
			return fmt.Errorf("the %s child never started (no request carried %s); %s's result: %q", name, marker(name), callID, o.result(callID))
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
		if name != "" && o.mentions(name) {
			return fmt.Errorf("the refused %s child reached the model (a request carried %s)", name, marker(name))
		}
		if name == "" && len(o.builtinRequests()) > 0 {
			return errors.New("a refused built-in child reached the model")
		}
		return nil
	}
}

// neverCalled: the hook labelled label never ran.
func neverCalled(label string) check {
	return func(t *testing.T, o *outcome) error {
		for _, h := range o.Hooks {
			if h.Label == label {
				return fmt.Errorf("the %s hook ran: %s", label, trim(h.Stdin, 300))
			}
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

// resultIs: the tool result of callID is exactly want.
func resultIs(callID, want string) check {
	return func(t *testing.T, o *outcome) error {
		if got := o.result(callID); got != want {
			return fmt.Errorf("%s's result is %q, want %q", callID, got, want)
		}
		return nil
	}
}

// resultHas: the tool result of callID holds want.
func resultHas(callID, want string) check {
	return func(t *testing.T, o *outcome) error {
		if got := o.result(callID); !strings.Contains(got, want) {
			return fmt.Errorf("%s's result is %q, want it to hold %q", callID, got, want)
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
