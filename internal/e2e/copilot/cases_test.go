package copilot

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
			if c.needsRoot && os.Geteuid() != 0 {
				t.Skip("writes /etc/github-copilot in a mount namespace of its own: needs root")
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

// starts: the child on name's definition really ran, and the spawn call
// callID came back with its answer, not a denial.
func starts(callID, name string) check {
	return func(t *testing.T, o *outcome) error {
		if !o.started(name) {
			return fmt.Errorf("the %s child never started (no request carried %s); %s's result: %q", name, marker(name), callID, o.result(callID))
		}
		if r := o.result(callID); strings.HasPrefix(r, "Denied") || r == "" {
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
		if name != "" && o.mentions(name) {
			return fmt.Errorf("the refused %s child reached the model (a request carried %s)", name, marker(name))
		}
		if name == "" && o.builtinStarted() {
			return errors.New("a refused built-in child reached the model")
		}
		reason, err := o.denyReason(label, callID)
		if err != nil {
			return err
		}
		if want := "Denied by preToolUse hook: " + reason; o.result(callID) != want {
			return fmt.Errorf("%s's result is %q, want %q", callID, o.result(callID), want)
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

// resultIs: the tool result of callID is exactly want.
func resultIs(callID, want string) check {
	return func(t *testing.T, o *outcome) error {
		if got := o.result(callID); got != want {
			return fmt.Errorf("%s's result is %q, want %q", callID, got, want)
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
