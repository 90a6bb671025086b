// Package hook judges the spawn a host's PreToolUse hook payload asks for
// (Claude Code's Agent tool, Codex's spawn_agent), and says the answer in
// the host's protocol. It reads the payload strictly, finds the agent
// definition the spawn names, translates both into a plan (package agent)
// and has the same pipeline as spawngate check judge it (package judge).
// It knows nothing of exit codes or HTTP: Decide returns a Decision, and
// each front end says it its own way.
//
// When the caller is itself a sub-agent (agent_id in the payload), its own
// definition, found like the child's, becomes the plan's parent block, so
// that the child is judged as a child of it (checks tree.*); a caller
// whose definition cannot be found is refused (agent.definition). When the
// operator policy sets brief_retask, the session's ledger (package ledger)
// is locked for the whole decision: the nonces already handed out in the
// session go into the parent block, and a passed spawn's nonce is added.
package hook

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/spawngate/spawngate/internal/agent"
	"github.com/spawngate/spawngate/internal/judge"
	"github.com/spawngate/spawngate/internal/ledger"
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
	// StateDir is the folder the session ledgers are kept in (package
	// ledger), used only when the operator policy sets brief_retask; ""
	// means ledger.DefaultDir, from Getenv and Home.
	StateDir string
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
	sp, isSpawn, err := readPayload(ctx, g, cfg.Host, payload)
	if err != nil {
		return Decision{Kind: Fail, Err: err}
	}
	if !isSpawn {
		return Decision{Kind: Ignore}
	}
	call := sp.call
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
	if sp.unreadable != "" {
		t.Child["brief_unreadable"] = sp.unreadable
	}
	var parent map[string]any
	if call.Caller != "" {
		var problem string
		parent, problem = callerParent(call, sp.callerType, catalog)
		if problem != "" {
			refuseCaller(t, problem)
		}
	}
	var led *ledger.Ledger
	var nonce *regexp.Regexp
	if retask, on := g.Operator()["brief_retask"]; on {
		if nonce, err = noncePattern(g.Sources().Policy, retask); err != nil {
			return Decision{Kind: Fail, Err: err}
		}
		if led, err = openLedger(ctx, g, cfg, sp.session); err != nil {
			return Decision{Kind: Fail, Err: err}
		}
		defer led.Close()
		if parent == nil {
			parent = map[string]any{}
		}
		parent["session_nonces_sha256"] = led.Hashes()
	}
	d := Decision{Plan: planOf(t, parent), Translation: t}
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
	if d.Kind == Pass && led != nil {
		// Only a spawn that goes ahead hands its nonce out. A ledger that
		// cannot keep it cannot catch its reuse later, so the spawn cannot
		// go ahead either.
		if err := record(ctx, led, nonce, call.Brief); err != nil {
			d.Kind, d.Err = Fail, err
		}
	}
	return d
}

// refuseCaller makes the child one the gate refuses (agent.definition):
// without the caller's own definition, nothing bounds what it hands on.
// The child's definition is then not the one that decides, so the child
// is written as having none the gate can judge it by, and check refuses
// the printed plan the same way.
func refuseCaller(t agent.Translation, problem string) {
	facts, _ := t.Child["agent"].(map[string]any)
	if own, ok := facts["problem"].(string); ok && own != "" {
		problem += "; and " + own
	}
	facts["definition"] = nil
	facts["problem"] = problem
}

// callerParent is the plan's parent block for a spawn whose caller is
// itself a sub-agent: its own definition translated like a child's, at
// depth 1. It says why, when that definition cannot be found (or the
// payload does not say the caller's type); the block then bounds nothing
// but the depth and the paths.
func callerParent(call agent.Call, typ string, c *agent.Catalog) (map[string]any, string) {
	parent := map[string]any{"depth": 1, "paths": []any{call.Cwd}}
	if typ == "" {
		return parent, fmt.Sprintf("the caller (agent_id %q) is a sub-agent, and the payload does not name its agent_type, so its own definition cannot be found: the gate cannot bound what it hands on", call.Caller)
	}
	parent["role"] = typ
	def, problem := c.Resolve(typ)
	if def == nil {
		return parent, fmt.Sprintf("the caller's own definition cannot be found (agent_id %q): %s", call.Caller, problem)
	}
	ct := agent.Translate(agent.Call{Host: call.Host, Type: typ, Cwd: call.Cwd, SessionMode: call.SessionMode}, def, "")
	parent["role"] = ct.Child["role"]
	parent["paths"] = ct.Child["paths"]
	if b, ok := ct.Child["budget_tokens"]; ok {
		parent["budget_tokens"] = b
	}
	facts, _ := ct.Child["agent"].(map[string]any)
	switch {
	case facts["inherits_tools"] == true:
		// A Claude Code caller without tools: holds whatever its own parent
		// gave it, which the hook cannot see. The operator policy still
		// bounds the child.
	case call.Host == agent.Codex && facts["sandbox_mode"] == nil:
		// A Codex caller without sandbox_mode runs in the session's sandbox,
		// which the hook cannot see either.
	default:
		// As the definition gives them: tree.tools knows that a Codex
		// sandbox holds every narrower one.
		parent["tools"] = ct.Child["tools"]
	}
	return parent, ""
}

// planOf is the plan document the gate judges: the translated child and,
// when there is one, the parent block. Keys are in order, so the same
// spawn always gives the same bytes.
func planOf(t agent.Translation, parent map[string]any) []byte {
	if parent == nil {
		return t.Plan()
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(map[string]any{"parent": parent, "plan": []any{t.Child}}); err != nil {
		// Only JSON-shaped values are ever put in a plan.
		panic("hook: a translated plan is not JSON: " + err.Error())
	}
	return b.Bytes()
}

// DefaultNoncePattern finds the re-task nonce in a brief (its group 1)
// when the operator policy's brief_retask sets no pattern.
const DefaultNoncePattern = `RETASK CHANNEL\b[^\n]*?\btoken (R-[A-Za-z0-9_-]+)`

// noncePattern is the pattern the operator policy's brief_retask finds
// nonces with; source names the policy in messages.
func noncePattern(source string, retask any) (*regexp.Regexp, error) {
	pattern := DefaultNoncePattern
	if m, ok := retask.(map[string]any); ok {
		if p, ok := m["pattern"].(string); ok && p != "" {
			pattern = p
		}
	}
	re, err := regexp.Compile(pattern)
	if err == nil && re.NumSubexp() < 1 {
		err = fmt.Errorf("it has no group: its first group must be the nonce")
	}
	if err != nil {
		if source == "" {
			source = "operator policy"
		}
		return nil, &judge.Error{Kind: judge.Document, Source: source, Pointer: "/brief_retask/pattern", Msg: "the re-task pattern cannot be used: " + plan.OneLine(err.Error())}
	}
	return re, nil
}

// openLedger locks and reads the session's ledger, within the hook's
// deadline.
func openLedger(ctx context.Context, g *judge.Gate, cfg Config, session string) (*ledger.Ledger, error) {
	if session == "" {
		return nil, &judge.Error{Kind: judge.Document, Source: payloadSource, Pointer: "/session_id", Msg: "session_id is missing, and the operator policy sets brief_retask: the nonces a session handed out are kept by session"}
	}
	dir := cfg.StateDir
	if dir == "" {
		var err error
		if dir, err = ledger.DefaultDir(cfg.Getenv, cfg.Home); err != nil {
			return nil, &judge.Error{Kind: judge.Document, Source: "session ledger", Msg: err.Error() + ", and the operator policy sets brief_retask"}
		}
	}
	l, err := ledger.Open(ctx, dir, session, g.Options().Limits.MaxBytes)
	if err != nil {
		return nil, ledgerError(err, g.Options().Timeout)
	}
	return l, nil
}

// record adds the nonces of a brief that goes ahead to the ledger.
func record(ctx context.Context, led *ledger.Ledger, nonce *regexp.Regexp, brief string) error {
	found := false
	for _, m := range nonce.FindAllStringSubmatch(brief, -1) {
		if m[1] != "" {
			led.Add(m[1])
			found = true
		}
	}
	if !found {
		return nil
	}
	if err := ctx.Err(); err != nil {
		return err // too late: the spawn is blocked, so its nonce is not handed out
	}
	if err := led.Commit(); err != nil {
		return ledgerError(err, 0)
	}
	return nil
}

// ledgerError is a ledger's error as the gate reports it: which file,
// where, and which limit when one was reached.
func ledgerError(err error, timeout time.Duration) error {
	var le *ledger.Error
	if !errors.As(err, &le) {
		return judge.AsError("session ledger", err)
	}
	e := &judge.Error{Kind: judge.Document, Source: le.File, Line: le.Line, Column: le.Column, Pointer: le.Pointer, Msg: le.Msg}
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		e.Kind, e.Limit = judge.Timeout, "timeout"
		e.Msg = fmt.Sprintf("the ledger is locked by another hook: timed out after %s waiting for it", timeout)
	case errors.Is(err, context.Canceled):
		e.Kind = judge.Interrupted
	case errors.Is(err, ledger.ErrTooLarge):
		e.Kind, e.Limit = judge.Limit, "max-bytes"
	}
	return e
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

// spawn is what a payload says about the spawn it asks for.
type spawn struct {
	call agent.Call
	// session is the host's session id, "" when the payload has none.
	session string
	// callerType is the agent_type of a caller that is itself a sub-agent.
	callerType string
	// unreadable says why the brief cannot be read, when it cannot.
	unreadable string
}

// readPayload reads a payload strictly and returns the spawn it asks for,
// or whether it is no spawn at all.
func readPayload(ctx context.Context, g *judge.Gate, host agent.Host, data []byte) (spawn, bool, error) {
	bad := func(pointer, format string, args ...any) (spawn, bool, error) {
		return spawn{}, false, &judge.Error{Kind: judge.Document, Source: payloadSource, Pointer: pointer, Msg: fmt.Sprintf(format, args...)}
	}
	lim := g.Options().Limits
	if int64(len(data)) > lim.MaxBytes {
		return spawn{}, false, &judge.Error{Kind: judge.Limit, Source: payloadSource, Msg: fmt.Sprintf("payload is larger than %d bytes", lim.MaxBytes), Limit: "max-bytes"}
	}
	v, err := plan.Decode(ctx, payloadSource, data, plan.JSON, lim)
	if err != nil {
		return spawn{}, false, err
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
	isSpawn := false
	for _, t := range SpawnTools(host) {
		isSpawn = isSpawn || name == t
	}
	if !isSpawn {
		return spawn{}, false, nil
	}
	input, ok := p["tool_input"].(map[string]any)
	if !ok {
		return bad("/tool_input", "tool_input is missing or not an object")
	}
	sp := spawn{call: agent.Call{Host: host}}
	call := &sp.call
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
	get(&sp.callerType, p, "agent_type", "/agent_type")
	get(&sp.session, p, "session_id", "/session_id")
	get(&call.ID, p, "tool_use_id", "/tool_use_id")
	get(&call.Model, input, "model", "/tool_input/model")
	if host == agent.Codex {
		get(&call.Type, input, "agent_type", "/tool_input/agent_type")
		sp.unreadable = codexUnreadable(input)
		if sp.unreadable == "" {
			get(&call.Brief, input, "message", "/tool_input/message")
		}
		if sp.unreadable == "" && call.Brief == "" {
			call.Brief, sp.unreadable = itemsText(input["items"])
		}
	} else {
		get(&call.Type, input, "subagent_type", "/tool_input/subagent_type")
		get(&call.Brief, input, "prompt", "/tool_input/prompt")
	}
	if len(errs) > 0 {
		return spawn{}, false, errs[0]
	}
	if call.Cwd == "" || !filepath.IsAbs(call.Cwd) {
		return bad("/cwd", "cwd must be the session's absolute working directory, not %s", show(p["cwd"]))
	}
	return sp, true, nil
}

// codexUnreadable says why a Codex spawn's brief cannot be read when any
// part of its arguments is ciphertext (encrypted_content, which Codex
// uses for content only the model can read); "" otherwise. The readable
// rest is not taken for the brief: the part that cannot be read may be
// the one that matters.
func codexUnreadable(input map[string]any) string {
	if carries(input, "encrypted_content") {
		return "the Codex message is encrypted"
	}
	return ""
}

// carries tells whether v holds key at any depth (bounded by the limits
// the payload was read under).
func carries(v any, key string) bool {
	switch v := v.(type) {
	case map[string]any:
		if _, ok := v[key]; ok {
			return true
		}
		for _, e := range v {
			if carries(e, key) {
				return true
			}
		}
	case []any:
		for _, e := range v {
			if carries(e, key) {
				return true
			}
		}
	}
	return false
}

// itemsText is the text of a Codex v1 items list, the parts joined, or,
// when the list holds items and none of them plain text (images, or what
// the gate cannot read), why the brief cannot be read.
func itemsText(items any) (string, string) {
	if items == nil {
		return "", ""
	}
	list, ok := items.([]any)
	if !ok {
		return "", "the Codex message's items are not a list"
	}
	var parts []string
	for _, it := range list {
		obj, _ := it.(map[string]any)
		if text, ok := obj["text"].(string); ok && text != "" {
			parts = append(parts, text)
		}
	}
	if len(parts) == 0 && len(list) > 0 {
		return "", "the Codex message's items carry no plain text"
	}
	return strings.Join(parts, "\n\n"), ""
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
