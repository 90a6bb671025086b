package suite

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
)

// Check is one assertion on the outcome of a run: nil when it holds.
type Check[R Run] = func(t *testing.T, o R) error

// All holds when every one of checks holds, and reports the first that
// does not.
func All[R Run](checks ...Check[R]) Check[R] {
	return func(t *testing.T, o R) error {
		for _, c := range checks {
			if err := c(t, o); err != nil {
				return err
			}
		}
		return nil
	}
}

// NeverCalled: the hook labelled label never ran.
func NeverCalled[R Run](label string) Check[R] {
	return func(t *testing.T, o R) error {
		for _, h := range o.Base().Hooks {
			if h.Label == label {
				return fmt.Errorf("the %s hook ran: %s", label, Trim(h.Stdin, 300))
			}
		}
		return nil
	}
}

// ResultIs: the tool result of callID is exactly want.
func ResultIs[R Run](callID, want string) Check[R] {
	return func(t *testing.T, o R) error {
		if got := o.Base().Result(callID); got != want {
			return fmt.Errorf("%s's result is %q, want %q", callID, got, want)
		}
		return nil
	}
}

// ResultHas: the tool result of callID holds want.
func ResultHas[R Run](callID, want string) Check[R] {
	return func(t *testing.T, o R) error {
		if got := o.Base().Result(callID); !strings.Contains(got, want) {
			return fmt.Errorf("%s's result is %q, want it to hold %q", callID, got, want)
		}
		return nil
	}
}

// NeedRoot skips a scenario that needs root (why says what for) when the
// test does not run as root.
func NeedRoot(t *testing.T, why string) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip(why + ": needs root")
	}
}

// Judge holds the outcome o of a scenario to check. A run that timed out
// or never reached the model fails whatever the check says. hostFact,
// when set, says the scenario pins down a known fact of the client that
// no hook can change, as it was seen: a failure then says the client
// changed. open, when set, says why today's spawngate gets the scenario
// wrong: the check's failure becomes a skip naming it, and a pass fails,
// so that the mark is removed once the adapter is fixed.
func Judge[R Run](t *testing.T, o R, check Check[R], hostFact, open string) {
	t.Helper()
	base := o.Base()
	if errors.Is(base.Err, context.DeadlineExceeded) || len(base.Requests) == 0 {
		t.Fatalf("the run itself failed: %s", base.Describe())
	}
	if hostFact != "" {
		t.Logf("known host fact: %s", hostFact)
	}
	err := check(t, o)
	switch {
	case open != "" && err != nil:
		t.Skipf("known open, %s: %v", open, err)
	case open != "":
		t.Fatalf("marked open (%s) but passes now: remove the mark", open)
	}
	if err != nil {
		if hostFact != "" {
			err = fmt.Errorf("the client no longer behaves as recorded (%s): re-check docs and research: %w", hostFact, err)
		}
		t.Fatalf("%v\n%s", err, base.Describe())
	}
}

// ChildTools: the child on name's definition was offered exactly tools.
func ChildTools[R Run](name string, tools ...string) Check[R] {
	return func(t *testing.T, o R) error {
		rs := o.Base().ChildRequests(name)
		if len(rs) == 0 {
			return fmt.Errorf("the %s child never started", name)
		}
		if !slices.Equal(rs[0].Tools, tools) {
			return fmt.Errorf("the %s child was offered %v, want %v", name, rs[0].Tools, tools)
		}
		return nil
	}
}
