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
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/spawngate/spawngate/internal/agent"
	"github.com/spawngate/spawngate/internal/document"
	"github.com/spawngate/spawngate/internal/host"
	"github.com/spawngate/spawngate/internal/judge"
	"github.com/spawngate/spawngate/internal/ledger"
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
	// Event is the hook event the payload came from ("" when the payload
	// could not be read that far): the host's answer depends on it.
	Event string
	// Reason is the permissionDecisionReason of a Deny.
	Reason string
	// Err is why a Fail could not judge: a *judge.Error, for the front end
	// to say.
	Err error
	// Plan is the plan the spawn was translated into and judged, when one
	// was built; Result is its result, Children how each child was built.
	Plan     []byte
	Result   report.Result
	Children []agent.Translation
}

// Config is the host a hook answers for, and how it finds definitions,
// budgets and session ledgers.
type Config struct {
	Host host.Adapter
	// AgentsDirs are the folders to find definitions in, in order; nil
	// means the host's own.
	AgentsDirs []string
	Home       string
	// Budget is the budget a spawn is granted when its definition states
	// none; "" grants the operator policy's cap.
	Budget json.Number
	// Getenv reads the environment the host started the hook in.
	Getenv func(string) string
	// CommandLine reads a host process's arguments; nil reads the
	// system's (see host.Env).
	CommandLine func(pid int) ([]string, error)
	// Root stands in for the machine's root in the machine-wide paths a
	// host reads; "" is /.
	Root string
	// Transcript is a session transcript to read instead of the
	// payload's (see host.Env).
	Transcript string
	// Owners, when set, are who may own the files the gate is read from
	// (judge.Gate.OnDisk): a spawn of a session that could change one is
	// not judged, since the session could widen the policy first. Its
	// Dirs gain the home folder and the spawn's own (host.Spawn.Folders).
	// nil checks nothing: a server's files are not its clients'.
	Owners *host.Owners
	// Ledger is where the session ledgers are kept (package ledger), used
	// only when the operator policy sets brief_retask; nil means the
	// folder StateDir, and "" there ledger.DefaultDir, from Getenv and
	// Home. A server sets it: its ledger is never chosen by a request.
	Ledger   ledger.Store
	StateDir string
}

// payloadSource names the payload in messages.
const payloadSource = host.PayloadSource

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
	obj, event, err := readPayload(ctx, g, cfg.Host, payload)
	if err != nil {
		return Decision{Kind: Fail, Event: event, Err: err}
	}
	env := host.Env{Getenv: cfg.Getenv, Home: cfg.Home, AgentsDirs: cfg.AgentsDirs, Budget: g.Budget(cfg.Budget), Limits: g.Options().Limits, CommandLine: cfg.CommandLine, Root: cfg.Root, Transcript: cfg.Transcript}
	sp, err := cfg.Host.Spawn(ctx, obj, env)
	if err != nil {
		return Decision{Kind: Fail, Event: event, Err: judge.AsError(payloadSource, err)}
	}
	if sp == nil {
		return Decision{Kind: Ignore, Event: event}
	}
	if len(sp.Children) == 0 {
		return Decision{Kind: Fail, Event: event, Err: &judge.Error{Kind: judge.Internal, Source: payloadSource, Msg: "internal error: a spawn was translated into no child"}}
	}
	if err := guard(g, cfg, sp); err != nil {
		return Decision{Kind: Fail, Event: event, Err: err}
	}
	retask, on := g.Operator()["brief_retask"]
	if !on {
		d, _ := judgeSpawn(ctx, g, event, sp, nil, nil)
		return d
	}
	nonce, err := noncePattern(g.Sources().Policy, retask)
	if err != nil {
		return Decision{Kind: Fail, Event: event, Err: err}
	}
	store, err := ledgerStore(cfg)
	if err != nil {
		return Decision{Kind: Fail, Event: event, Err: err}
	}
	if cfg.Ledger == nil {
		defer store.Close()
	}
	// A ledger shared by replicas is not locked against them: a nonce
	// claimed by another replica between the read and the write makes the
	// decision be taken again on what the ledger holds now, where
	// brief.retask refuses the reuse. A round is taken again only when
	// another of its nonces was claimed meanwhile, so a few rounds end any
	// honest race; more is a Fail.
	for range maxClaims {
		if d, claimed := judgeSpawn(ctx, g, event, sp, store, nonce); !claimed {
			return d
		}
	}
	return Decision{Kind: Fail, Event: event, Err: &judge.Error{Kind: judge.Document, Source: store.String(),
		Msg: fmt.Sprintf("the session's nonces were claimed by other decisions %d times while this one was judged", maxClaims)}}
}

// guard refuses to judge a live session's spawn by a policy, checks or
// bundle that the session itself could change (Config.Owners).
func guard(g *judge.Gate, cfg Config, sp *host.Spawn) error {
	if cfg.Owners == nil || sp.ByHand {
		return nil
	}
	o := *cfg.Owners
	o.Dirs = append(slices.Clone(o.Dirs), sp.Folders...)
	if cfg.Home != "" {
		o.Dirs = append(o.Dirs, cfg.Home)
	}
	for _, f := range g.OnDisk() {
		if err := o.Check(f); err != nil {
			return &judge.Error{Kind: judge.Document, Source: f, Msg: document.OneLine(strings.TrimPrefix(err.Error(), f+" ")) +
				"; a session that can change what judges it can widen it, so nothing is judged by it: keep it where only root can write, such as /etc/spawngate"}
		}
	}
	return nil
}

// maxClaims bounds how many times one decision is taken again because
// another replica claimed one of its nonces meanwhile.
const maxClaims = 4

// judgeSpawn judges a translated spawn, with the session's ledger from
// store when it is not nil: its nonces go into the parent block, and a
// passed spawn's nonce is kept. claimed says another decision claimed one
// of its nonces meanwhile: the Decision is then a Fail, to be taken again.
func judgeSpawn(ctx context.Context, g *judge.Gate, event string, sp *host.Spawn, store ledger.Store, nonce *regexp.Regexp) (d Decision, claimed bool) {
	parent := sp.Parent
	var led ledger.Session
	if store != nil {
		var err error
		if led, err = openLedger(ctx, g, store, sp.Session); err != nil {
			return Decision{Kind: Fail, Event: event, Err: err}, false
		}
		defer led.Close()
		parent = maps.Clone(parent)
		if parent == nil {
			parent = map[string]any{}
		}
		parent["session_nonces_sha256"] = led.Hashes()
	}
	d = Decision{Event: event, Plan: agent.Plan(sp.Children, parent), Children: sp.Children}
	res, err := g.JudgeSpawn(ctx, spawnSource, d.Plan, maxReasons)
	if err != nil {
		d.Kind, d.Err = Fail, err
		return d, false
	}
	d.Result = res
	switch res.Verdict {
	case report.Pass:
		d.Kind = Pass
	case report.Block:
		d.Kind, d.Reason = Deny, reason(sp.Children, res)
	default:
		d.Kind, d.Err = Fail, &judge.Error{Kind: judge.Internal, Source: spawnSource, Msg: "internal error: the spawn was neither passed nor refused"}
	}
	if d.Kind == Pass && led != nil {
		// Only a spawn that goes ahead hands its nonce out. A ledger that
		// cannot keep it cannot catch its reuse later, so the spawn cannot
		// go ahead either.
		if err := record(ctx, led, nonce, sp.Brief); err != nil {
			d.Kind, d.Err = Fail, ledgerError(err, g.Options().Timeout)
			claimed = errors.Is(err, ledger.ErrClaimed)
		}
	}
	return d, claimed
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
		return nil, &judge.Error{Kind: judge.Document, Source: source, Pointer: "/brief_retask/pattern", Msg: "the re-task pattern cannot be used: " + document.OneLine(err.Error())}
	}
	return re, nil
}

// ledgerStore is where the session ledgers are kept: the Config's store,
// else the folder it names or the default one.
func ledgerStore(cfg Config) (ledger.Store, error) {
	if cfg.Ledger != nil {
		return cfg.Ledger, nil
	}
	if cfg.StateDir != "" {
		return ledger.Dir(cfg.StateDir), nil
	}
	dir, err := ledger.DefaultDir(cfg.Getenv, cfg.Home)
	if err != nil {
		return nil, &judge.Error{Kind: judge.Document, Source: "session ledger", Msg: err.Error() + ", and the operator policy sets brief_retask"}
	}
	return ledger.Dir(dir), nil
}

// openLedger locks and reads the session's ledger, within the hook's
// deadline.
func openLedger(ctx context.Context, g *judge.Gate, store ledger.Store, session string) (ledger.Session, error) {
	if session == "" {
		return nil, &judge.Error{Kind: judge.Document, Source: payloadSource, Pointer: "/session_id", Msg: "session_id is missing, and the operator policy sets brief_retask: the nonces a session handed out are kept by session"}
	}
	l, err := store.Open(ctx, session, g.Options().Limits.MaxBytes)
	if err != nil {
		return nil, ledgerError(err, g.Options().Timeout)
	}
	return l, nil
}

// record adds the nonces of a brief that goes ahead to the ledger.
func record(ctx context.Context, led ledger.Session, nonce *regexp.Regexp, brief string) error {
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
	return led.Commit(ctx)
}

// ledgerError is a session ledger's error as the gate reports it: its
// file and the place in it, and which limit when one was reached; any
// other error as judge.AsError says it. (The ledger sits beside the
// hosts, above the pipeline: the hook, which uses both, translates.)
func ledgerError(err error, timeout time.Duration) error {
	var le *ledger.Error
	if !errors.As(err, &le) {
		return judge.AsError("session ledger", err)
	}
	e := &judge.Error{Kind: judge.Document, Source: le.File, Line: le.Line, Column: le.Column, Pointer: le.Pointer, Msg: le.Msg}
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		e.Kind, e.Limit = judge.Timeout, "timeout"
		e.Msg = le.Msg + ": timed out waiting for it"
		if timeout > 0 {
			e.Msg = fmt.Sprintf("%s: timed out after %s waiting for it", le.Msg, timeout)
		}
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
// A spawn of several children names those refused.
func reason(children []agent.Translation, res report.Result) string {
	var b strings.Builder
	for i, c := range res.Children {
		if i >= len(children) || (len(children) > 1 && len(c.Violations) == 0) {
			continue
		}
		t := children[i]
		if b.Len() > 0 {
			b.WriteByte('\n')
		}
		role, _ := t.Child["role"].(string)
		fmt.Fprintf(&b, "spawngate refused this sub-agent: %s", report.Clean(role))
		if t.File != "" {
			fmt.Fprintf(&b, " (%s)", report.Clean(t.File))
		}
		b.WriteByte('\n')
		prefix := fmt.Sprintf("/plan/%d", i)
		for _, v := range c.Violations {
			field := strings.TrimPrefix(v.Path, prefix)
			if field == "" {
				field = "/"
			}
			fmt.Fprintf(&b, "- %s %s", v.Rule, report.Clean(field))
			if line := t.LineOf(strings.TrimPrefix(v.Path, prefix)); line > 0 && t.File != "" {
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

// readPayload reads a payload strictly: a JSON object, within the limits,
// from one of the host's hook events (PreToolUse when the payload does not
// say, as one typed by hand).
func readPayload(ctx context.Context, g *judge.Gate, h host.Adapter, data []byte) (map[string]any, string, error) {
	lim := g.Options().Limits
	if int64(len(data)) > lim.MaxBytes {
		return nil, "", &judge.Error{Kind: judge.Limit, Source: payloadSource, Msg: fmt.Sprintf("payload is larger than %d bytes", lim.MaxBytes), Limit: "max-bytes"}
	}
	v, err := document.Decode(ctx, payloadSource, data, document.JSON, lim)
	if err != nil {
		return nil, "", err
	}
	p, ok := v.(map[string]any)
	if !ok {
		return nil, "", judge.AsError(payloadSource, host.Bad("", "the payload must be a JSON object"))
	}
	events := h.Events()
	ev, present := p["hook_event_name"]
	if !present {
		return p, events[0], nil
	}
	if s, ok := ev.(string); ok && slices.Contains(events, s) {
		return p, s, nil
	}
	return nil, "", judge.AsError(payloadSource, host.Bad("/hook_event_name", "the hook runs on %s, and only %s can stop a spawn in %s: wire it to those", host.Show(ev), strings.Join(events, " and "), h.Name()))
}
