package spawngate

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strconv"

	"github.com/spawngate/spawngate/internal/hook"
	"github.com/spawngate/spawngate/internal/hosts"
)

// Host is an orchestrator whose hook payloads a Gate answers.
type Host string

// The hosts.
const (
	ClaudeCode Host = "claude-code"
	Codex      Host = "codex"
	Copilot    Host = "copilot"
	Gemini     Host = "gemini"
)

// HookDecision is what a hook answers.
type HookDecision int

// The answers of a hook.
const (
	// HookIgnore: the call is not a spawn; let it through.
	HookIgnore HookDecision = iota + 1
	// HookPass: the child may be dispatched; answer nothing.
	HookPass
	// HookDeny: the child is refused; answer with HookAnswer.Body.
	HookDeny
)

// HookAnswer is a hook's answer to one payload.
type HookAnswer struct {
	// Decision is HookIgnore, HookPass or HookDeny; 0 beside an error.
	Decision HookDecision
	// Reason says why a spawn is refused, one line per violation.
	Reason string
	// Body is what to answer the host with: the deny JSON for a refusal
	// (stdout of a command hook, the body of an HTTP hook), nothing
	// otherwise.
	Body []byte
	// Plan is the plan document (JSON) the spawn was translated into and
	// judged, when a spawn was judged.
	Plan []byte
	// Result is the plan's result, when a spawn was judged: its
	// violations point into Plan. With an error, Result has the verdict
	// NotJudged and the error's line.
	Result Result
}

// HookOption changes how Hook finds agent definitions and budgets.
type HookOption func(*hookSettings)

// hookSettings is what the HookOptions of one call set.
type hookSettings struct{ cfg hook.Config }

// WithAgentsDirs makes the hook look for agent definitions in these
// folders, in order, instead of the host's own (the project's from the
// payload's cwd up to the repository root, then the user's).
func WithAgentsDirs(dirs ...string) HookOption {
	return func(s *hookSettings) { s.cfg.AgentsDirs = dirs }
}

// WithBudget is the token budget a spawn is granted when its definition
// states none (the operator policy's cap unless given).
func WithBudget(tokens int64) HookOption {
	return func(s *hookSettings) { s.cfg.Budget = json.Number(strconv.FormatInt(tokens, 10)) }
}

// Hook judges the spawn one host hook payload asks for: Claude Code's
// PreToolUse payload for its Agent tool, or Codex's for spawn_agent. An
// error means the spawn cannot be judged, and the host must be told to
// refuse it (a command hook exits 2 with the error on stderr; an HTTP
// hook answers the deny JSON: a non-2xx answer lets Claude Code spawn).
// A host other than ClaudeCode and Codex, spelt exactly so, is an error,
// never HookIgnore; so is a nil ctx (Kind ErrOption).
func (g *Gate) Hook(ctx context.Context, host Host, payload []byte, opts ...HookOption) (HookAnswer, error) {
	if ctx == nil {
		return hookFailed(nil, nilContext("Hook"))
	}
	adapter, ok := hosts.Lookup(string(host))
	if !ok {
		// An unknown host is never "not a spawn": the caller would let it
		// through.
		return hookFailed(nil, &Error{Kind: ErrDocument, Source: "hook", Msg: fmt.Sprintf("unknown host %q: use ClaudeCode or Codex", string(host))})
	}
	if g == nil || g.g == nil {
		return hookFailed(nil, notBuilt("hook"))
	}
	home, _ := os.UserHomeDir()
	s := hookSettings{cfg: hook.Config{Host: adapter, Home: home, Getenv: os.Getenv}}
	for i, o := range opts {
		if o == nil {
			return hookFailed(nil, optionError("Hook", "option %d of %d is nil", i+1, len(opts)))
		}
		o(&s)
	}
	d := hook.Decide(ctx, g.g, s.cfg, payload)
	a := HookAnswer{Reason: d.Reason, Plan: d.Plan, Result: resultOf(d.Result)}
	switch d.Kind {
	case hook.Ignore:
		a.Decision = HookIgnore
	case hook.Pass:
		a.Decision = HookPass
	case hook.Deny:
		a.Decision, a.Body = HookDeny, adapter.Deny(d.Event, d.Reason)
	default:
		err := d.Err
		if err == nil {
			err = &Error{Kind: ErrInternal, Source: "hook", Msg: "internal error: the spawn was neither ignored, passed nor refused"}
		}
		return hookFailed(d.Plan, err)
	}
	return a, nil
}

// hookFailed is the answer that comes back with an error: no decision, and
// a Result whose verdict is NotJudged.
func hookFailed(plan []byte, err error) (HookAnswer, error) {
	source := "hook"
	if e := errorOf(source, err); e.Source != "" {
		source = e.Source
	}
	res, err := notJudged(source, err)
	return HookAnswer{Plan: plan, Result: res}, err
}
