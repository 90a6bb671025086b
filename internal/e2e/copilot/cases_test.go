package copilot

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
	// needsRoot marks a scenario that writes /etc/github-copilot (in a
	// mount namespace of its own): skipped when not root.
	needsRoot bool
}

// runCases runs every case as a parallel subtest.
func runCases(t *testing.T, cases []e2eCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			if c.needsRoot {
				suite.NeedRoot(t, "writes /etc/github-copilot in a mount namespace of its own")
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

// starts: the child on name's definition really ran, and the spawn call
// callID came back with its answer, not a denial.
func starts(callID, name string) check {
	return func(t *testing.T, o *outcome) error {
		if !o.Started(name) {
			return fmt.Errorf("the %s child never started (no request carried %s); %s's result: %q", name, suite.Marker(name), callID, o.Result(callID))
		}
		if r := o.Result(callID); strings.HasPrefix(r, "Denied") || r == "" {
			return fmt.Errorf("the %s child started, yet %s's result is %q", name, callID, r)
		}
		return nil
	}
}

// refusedBy: the spawn call callID came back as the client's denial with
// the reason the hook labelled label gave (the reason reaches the tool
// result), and the child on name's definition never reached the model:
// its marker is in no request at all. name "" is a built-in child, of
// which no request may exist.
func refusedBy(callID, name, label string) check {
	return func(t *testing.T, o *outcome) error {
		if name != "" && o.Mentions(name) {
			return fmt.Errorf("the refused %s child reached the model (a request carried %s)", name, suite.Marker(name))
		}
		if name == "" && len(o.BuiltinRequests()) > 0 {
			return errors.New("a refused built-in child reached the model")
		}
		reason, err := o.denyReason(label, callID)
		if err != nil {
			return err
		}
		if want := "Denied by preToolUse hook: " + reason; o.Result(callID) != want {
			return fmt.Errorf("%s's result is %q, want %q", callID, o.Result(callID), want)
		}
		return nil
	}
}

// denyReason is the permissionDecisionReason the hook labelled label
// printed for the task call whose prompt carries callID's spawn: the one
// denial among its calls (a scenario makes one spawn per label at a time,
// or names them apart by agent_type, see denyReasonFor).
func (o *outcome) denyReason(label, callID string) (string, error) {
	var reasons []string
	for _, h := range o.Hooks {
		if h.Label != label {
			continue
		}
		if r, ok := denial(h); ok && matchesCall(o, h, callID) {
			reasons = append(reasons, r)
		}
	}
	if len(reasons) != 1 {
		return "", fmt.Errorf("the %s hook denied %s %d times (%q), want once", label, callID, len(reasons), reasons)
	}
	return reasons[0], nil
}

// matchesCall says whether the hook call h was for the spawn callID: the
// main agent's task call of that id, matched by its arguments.
func matchesCall(o *outcome, h hookCall, callID string) bool {
	args := spawnArgs(o, callID)
	if args == nil {
		return false
	}
	in := toolInput(h.Payload)
	return fmt.Sprint(in["agent_type"]) == fmt.Sprint(args["agent_type"]) && fmt.Sprint(in["name"]) == fmt.Sprint(args["name"])
}

// spawnArgs are the arguments of the task call callID as the model made
// it, from the first request whose history holds it.
func spawnArgs(o *outcome, callID string) map[string]any {
	for _, r := range o.Requests {
		msgs, _ := r.JSON["messages"].([]any)
		for _, m := range msgs {
			mm, _ := m.(map[string]any)
			calls, _ := mm["tool_calls"].([]any)
			for _, c := range calls {
				cm, _ := c.(map[string]any)
				if cm["id"] != callID {
					continue
				}
				fn, _ := cm["function"].(map[string]any)
				var args map[string]any
				if s, ok := fn["arguments"].(string); ok && jsonUnmarshal(s, &args) == nil {
					return args
				}
			}
		}
	}
	return nil
}

// denial is the reason of a deny the hook printed, if it did: the flat
// camelCase answer, or the PascalCase event's hookSpecificOutput.
func denial(h hookCall) (string, bool) {
	type decision struct {
		PermissionDecision       string `json:"permissionDecision"`
		PermissionDecisionReason string `json:"permissionDecisionReason"`
	}
	var out struct {
		decision
		HookSpecificOutput *decision `json:"hookSpecificOutput"`
	}
	if h.Exit != "0" || jsonUnmarshal(strings.TrimSpace(h.Stdout), &out) != nil {
		return "", false
	}
	d := out.decision
	if d.PermissionDecision == "" && out.HookSpecificOutput != nil {
		d = *out.HookSpecificOutput
	}
	return d.PermissionDecisionReason, d.PermissionDecision == "deny"
}

// toolInput is a payload's tool arguments, in either event's spelling.
func toolInput(p map[string]any) map[string]any {
	if m, ok := p["toolArgs"].(map[string]any); ok {
		return m
	}
	m, _ := p["tool_input"].(map[string]any)
	return m
}

// readOnlyPolicy is the policy of a scenario that names none: the
// child's read and search tools, no writes, no spawns.
const readOnlyPolicy = "allowed_tools: [view, grep, glob]\nworkspace_root: {{ROOT}}\nbudget_cap_tokens: 200000\n"
