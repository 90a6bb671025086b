// Package hook judges the spawn a host's PreToolUse hook payload asks for
// (Claude Code's Agent tool, Codex's spawn_agent), and says the answer in
// the host's protocol. It reads the payload strictly, finds the agent
// definition the spawn names, translates both into a plan (package agent)
// and has the same pipeline as spawngate check judge it (package judge).
// It knows nothing of exit codes or HTTP: Decide returns a Decision, and
// each front end says it its own way.
package hook

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/spawngate/spawngate/internal/agent"
	"github.com/spawngate/spawngate/internal/judge"
	"github.com/spawngate/spawngate/internal/plan"
	"github.com/spawngate/spawngate/internal/report"
)

// Kind is what a hook answers.
type Kind int

const (
	// Ignore: the call is not a spawn (the hook's matcher was wider than
	// needed): say nothing and let it through.
	Ignore Kind = iota + 1
	// Pass: the child may be dispatched: say nothing. A hook never answers
	// "allow", which would skip the permission rules the user set.
	Pass
	// Deny: the child is refused: answer with the host's deny JSON.
	Deny
	// Fail: the spawn cannot be judged: block it, with Err as the reason.
	Fail
)

// Decision is a hook's answer to one payload.
type Decision struct {
	Kind Kind
	// Reason is the permissionDecisionReason of a Deny.
	Reason string
	// Err is why a Fail could not judge: a *judge.Error, for the front end
	// to say.
	Err error
	// Plan is the plan the spawn was translated into and judged, when one
	// was built; Result is its result, Translation how it was built.
	Plan        []byte
	Result      report.Result
	Translation agent.Translation
}

// Config is how a hook finds definitions and budgets.
type Config struct {
	Host agent.Host
	// AgentsDirs are the folders to find definitions in, in order; nil
	// means the host's own: the project's from the payload's cwd up to the
	// repository root, then Home's.
	AgentsDirs []string
	Home       string
	// Budget is the budget a spawn is granted when its definition states
	// none; "" grants the operator policy's cap.
	Budget json.Number
	// Getenv reads the environment the host started the hook in.
	Getenv func(string) string
}

// SpawnTools are the tool names a host's spawn call arrives under: Claude
// Code's Agent (Task before v2.1.63), Codex's spawn_agent (also under its
// namespaced and aliased names).
func SpawnTools(host agent.Host) []string {
	if host == agent.Codex {
		return []string{"spawn_agent", "collaboration.spawn_agent", "Agent"}
	}
	return []string{"Agent", "Task"}
}

// payloadSource names the payload in messages.
const payloadSource = "hook payload"

// Decide judges the spawn one payload asks for, within the gate's
// timeout: reading the payload and the definitions included.
func Decide(ctx context.Context, g *judge.Gate, cfg Config, payload []byte) Decision {
	var d Decision
	_, err := judge.Within(ctx, g.Options().Timeout, payloadSource, func(ctx context.Context) (struct{}, error) {
		d = decide(ctx, g, cfg, payload)
		return struct{}{}, d.Err
	})
	if err != nil {
		d.Kind, d.Err = Fail, err // the plan, when there is one, stays for --print-plan
	}
	return d
}

func decide(ctx context.Context, g *judge.Gate, cfg Config, payload []byte) Decision {
	call, isSpawn, err := readPayload(ctx, g, cfg.Host, payload)
	if err != nil {
		return Decision{Kind: Fail, Err: err}
	}
	if !isSpawn {
		return Decision{Kind: Ignore}
	}
	if g.Operator() == nil {
		return Decision{Kind: Fail, Err: &judge.Error{Kind: judge.NoPolicy, Source: payloadSource, Msg: "no policy applies"}}
	}
	if cfg.Getenv != nil && cfg.Host == agent.ClaudeCode {
		call.EnvModel = cfg.Getenv("CLAUDE_CODE_SUBAGENT_MODEL")
	}
	call.Budget = cfg.Budget
	if call.Budget == "" {
		call.Budget, _ = g.Operator()["budget_cap_tokens"].(json.Number)
	}
	dirs := cfg.AgentsDirs
	if dirs == nil {
		dirs = agent.SearchDirs(cfg.Host, call.Cwd, cfg.Home)
	}
	catalog, err := agent.Load(ctx, cfg.Host, dirs, g.Options().Limits)
	if err != nil {
		return Decision{Kind: Fail, Err: judge.AsError("", err)}
	}
	typ := call.Type
	if typ == "" {
		typ = agent.DefaultType(cfg.Host)
	}
	def, problem := catalog.Resolve(typ)
	t := agent.Translate(call, def, problem)
	d := Decision{Plan: t.Plan(), Translation: t}
	res, err := g.JudgeSpawn(ctx, spawnSource, d.Plan, maxReasons)
	if err != nil {
		d.Kind, d.Err = Fail, err
		return d
	}
	d.Result = res
	switch res.Verdict {
	case report.Pass:
		d.Kind = Pass
	case report.Block:
		d.Kind, d.Reason = Deny, reason(t, res)
	default:
		d.Kind, d.Err = Fail, &judge.Error{Kind: judge.Internal, Source: spawnSource, Msg: "internal error: the spawn was neither passed nor refused"}
	}
	return d
}

// spawnSource names a translated spawn in results and messages.
const spawnSource = "spawn"

// maxReasons bounds how many violations a deny reason names.
const maxReasons = 20

// reason says, one short line per violation, why the spawn is refused,
// for the model that asked for it and the person reading the transcript.
func reason(t agent.Translation, res report.Result) string {
	var b strings.Builder
	role, _ := t.Child["role"].(string)
	fmt.Fprintf(&b, "spawngate refused this sub-agent: %s", report.Clean(role))
	if t.File != "" {
		fmt.Fprintf(&b, " (%s)", report.Clean(t.File))
	}
	b.WriteByte('\n')
	for _, c := range res.Children {
		for _, v := range c.Violations {
			field := strings.TrimPrefix(v.Path, "/plan/0")
			if field == "" {
				field = "/"
			}
			fmt.Fprintf(&b, "- %s %s", v.Rule, report.Clean(field))
			if line := t.LineOf(strings.TrimPrefix(v.Path, "/plan/0")); line > 0 && t.File != "" {
				fmt.Fprintf(&b, " (line %d)", line)
			}
			fmt.Fprintf(&b, ": %s\n", report.Clean(v.Message))
		}
		if c.Unlisted > 0 {
			fmt.Fprintf(&b, "- and %d more\n", c.Unlisted)
		}
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// DenyJSON is the answer that refuses a tool call in both hosts' protocol
// (Claude Code reads it on any exit code, Codex only on exit 0): one JSON
// object on stdout.
func DenyJSON(reason string) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.Encode(map[string]any{"hookSpecificOutput": map[string]any{
		"hookEventName":            "PreToolUse",
		"permissionDecision":       "deny",
		"permissionDecisionReason": reason,
	}})
	return b.Bytes()
}

// readPayload reads a payload strictly and returns the spawn it asks for,
// or whether it is no spawn at all.
func readPayload(ctx context.Context, g *judge.Gate, host agent.Host, data []byte) (agent.Call, bool, error) {
	bad := func(pointer, format string, args ...any) (agent.Call, bool, error) {
		return agent.Call{}, false, &judge.Error{Kind: judge.Document, Source: payloadSource, Pointer: pointer, Msg: fmt.Sprintf(format, args...)}
	}
	lim := g.Options().Limits
	if int64(len(data)) > lim.MaxBytes {
		return agent.Call{}, false, &judge.Error{Kind: judge.Limit, Source: payloadSource, Msg: fmt.Sprintf("payload is larger than %d bytes", lim.MaxBytes), Limit: "max-bytes"}
	}
	v, err := plan.Decode(ctx, payloadSource, data, plan.JSON, lim)
	if err != nil {
		return agent.Call{}, false, err
	}
	p, ok := v.(map[string]any)
	if !ok {
		return bad("", "the payload must be a JSON object")
	}
	if ev, present := p["hook_event_name"]; present {
		if s, ok := ev.(string); !ok || s != "PreToolUse" {
			return bad("/hook_event_name", "the hook runs on %s, and only a PreToolUse hook can stop a spawn: wire it to PreToolUse", show(ev))
		}
	}
	name, ok := p["tool_name"].(string)
	if !ok {
		return bad("/tool_name", "tool_name is missing or not a string")
	}
	spawn := false
	for _, t := range SpawnTools(host) {
		spawn = spawn || name == t
	}
	if !spawn {
		return agent.Call{}, false, nil
	}
	input, ok := p["tool_input"].(map[string]any)
	if !ok {
		return bad("/tool_input", "tool_input is missing or not an object")
	}
	call := agent.Call{Host: host}
	str := func(obj map[string]any, key, at string) (string, error) {
		v, present := obj[key]
		if !present || v == nil {
			return "", nil
		}
		s, ok := v.(string)
		if !ok {
			_, _, err := bad(at, "%s must be a string, not %s", key, show(v))
			return "", err
		}
		return s, nil
	}
	var errs []error
	get := func(dst *string, obj map[string]any, key, at string) {
		s, err := str(obj, key, at)
		*dst = s
		if err != nil {
			errs = append(errs, err)
		}
	}
	get(&call.Cwd, p, "cwd", "/cwd")
	get(&call.SessionMode, p, "permission_mode", "/permission_mode")
	get(&call.Caller, p, "agent_id", "/agent_id")
	get(&call.ID, p, "tool_use_id", "/tool_use_id")
	get(&call.Model, input, "model", "/tool_input/model")
	if host == agent.Codex {
		get(&call.Type, input, "agent_type", "/tool_input/agent_type")
		get(&call.Brief, input, "message", "/tool_input/message")
		if call.Brief == "" {
			call.Brief = itemsText(input["items"])
		}
	} else {
		get(&call.Type, input, "subagent_type", "/tool_input/subagent_type")
		get(&call.Brief, input, "prompt", "/tool_input/prompt")
	}
	if len(errs) > 0 {
		return agent.Call{}, false, errs[0]
	}
	if call.Cwd == "" || !filepath.IsAbs(call.Cwd) {
		return bad("/cwd", "cwd must be the session's absolute working directory, not %s", show(p["cwd"]))
	}
	return call, true, nil
}

// itemsText is the text of a Codex v1 items list, the parts joined.
func itemsText(items any) string {
	list, _ := items.([]any)
	var parts []string
	for _, it := range list {
		obj, _ := it.(map[string]any)
		if text, ok := obj["text"].(string); ok {
			parts = append(parts, text)
		}
	}
	return strings.Join(parts, "\n\n")
}

func show(v any) string {
	switch v := v.(type) {
	case nil:
		return "null"
	case string:
		if len(v) > 60 {
			v = v[:60] + "..."
		}
		return fmt.Sprintf("%q", v)
	case map[string]any:
		return "an object"
	case []any:
		return "a list"
	}
	return fmt.Sprint(v)
}
