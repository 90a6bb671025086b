package judge_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/spawngate/spawngate/internal/judge"
)

// A step that ignores its deadline and reports success after it is still
// a timeout: what finished too late never counts as an answer. The step
// waits for its own context to end, so no timing margin is involved.
func TestWithinRefusesAnAnswerThatCameTooLate(t *testing.T) {
	got, err := judge.Within(context.Background(), time.Millisecond, "plan.yaml", func(ctx context.Context) (string, error) {
		<-ctx.Done()
		return "pass", nil
	})
	var e *judge.Error
	if !errors.As(err, &e) || e.Kind != judge.Timeout || e.Source != "plan.yaml" || e.Limit != "timeout" {
		t.Fatalf("a late success: %q, %v; want a timeout of plan.yaml", got, err)
	}
	if got != "" {
		t.Fatalf("a late success kept its value %q", got)
	}
}

// A step that finishes in time gives its value, and its own error keeps
// its meaning.
func TestWithinPassesOnWhatFinishedInTime(t *testing.T) {
	got, err := judge.Within(context.Background(), time.Hour, "plan.yaml", func(context.Context) (string, error) {
		return "pass", nil
	})
	if err != nil || got != "pass" {
		t.Fatalf("got %q, %v", got, err)
	}
	_, err = judge.Within(context.Background(), time.Hour, "plan.yaml", func(context.Context) (string, error) {
		return "", context.Canceled
	})
	var e *judge.Error
	if !errors.As(err, &e) || e.Kind == judge.Timeout {
		t.Fatalf("a cancelled step: %v, want an error that is not a timeout", err)
	}
}

// A day that is no date is the caller's option at fault, never the gate's
// own failure: New names the option, and builds nothing.
func TestNewRefusesATodayThatIsNoDay(t *testing.T) {
	for _, day := range []string{"tomorrow", "2026-02-30", "2026-2-1", "2026-02-01T00:00:00Z"} {
		opts := judge.DefaultOptions()
		opts.Today = day
		g, err := judge.New(context.Background(), opts, "")
		var e *judge.Error
		if !errors.As(err, &e) || e.Kind != judge.Option || e.Source != "Today" {
			t.Errorf("Today %q: %v (%T); want an error of Kind option about Today", day, err, err)
		}
		if g != nil {
			t.Errorf("Today %q: a gate was built", day)
		}
	}
	for _, day := range []string{"2026-02-28", "2024-02-29"} {
		if !judge.IsDay(day) {
			t.Errorf("IsDay(%q) = false", day)
		}
	}
}

// A spawn whose definition states no budget is granted the one a front
// end was given, else the operator policy's cap, else none.
func TestBudgetOfASpawn(t *testing.T) {
	for _, tc := range []struct {
		policy, given, want string
	}{
		{"allowed_tools: [fs.read]\nworkspace_root: /repo\nbudget_cap_tokens: 200000\n", "", "200000"},
		{"allowed_tools: [fs.read]\nworkspace_root: /repo\nbudget_cap_tokens: 200000\n", "5000", "5000"},
	} {
		g, err := judge.NewWithPolicy(context.Background(), judge.DefaultOptions(), "operator.yaml", []byte(tc.policy))
		if err != nil {
			t.Fatal(err)
		}
		if got := g.Budget(json.Number(tc.given)); string(got) != tc.want {
			t.Errorf("policy %q, given %q: budget %q, want %q", tc.policy, tc.given, got, tc.want)
		}
	}
}
