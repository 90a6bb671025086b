// Package host is what the pipeline knows of the orchestrators whose
// hooks spawngate answers: one Adapter per host, each in a package of its
// own (claudecode, codex), listed once in package hosts. The hook, the
// agents check, the server and the public API ask an Adapter; none of
// them branches on a host's name.
//
// An Adapter reads its host's hook payload, knows every tool of its host
// that starts a sub-agent, finds the definitions the host would run and
// resolves a name as the host does, learns what the child really
// inherits from the session, and translates all of it into plan children
// (package agent holds the shapes). It decides nothing: what the gate
// cannot bound becomes a fact in the child's agent block, and the Rego
// checks refuse it.
package host

import (
	"bytes"
	"context"
	"encoding/json"

	"github.com/spawngate/spawngate/internal/agent"
	"github.com/spawngate/spawngate/internal/document"
)

// Adapter is one host.
type Adapter interface {
	// Name is the host's name in commands, URLs and plans: claude-code.
	Name() string
	// SpawnTools are the tool names under which this host's PreToolUse
	// payload can start a sub-agent. A hook's matcher must cover every
	// one; the README and doctor say so.
	SpawnTools() []string
	// Spawn reads one hook payload (already decoded, a JSON object) and
	// translates the spawn it asks for. It returns nil, nil for a call
	// that starts no sub-agent, and an error (a *document.Error naming the
	// payload field) for a payload it cannot read.
	Spawn(ctx context.Context, payload map[string]any, env Env) (*Spawn, error)
	// DefinitionsFolder is where a project keeps this host's agent
	// definitions, relative to the project: .claude/agents.
	DefinitionsFolder() string
	// Audit translates every definition in one agents folder as a spawn of
	// its own type would be translated, for spawngate agents.
	Audit(ctx context.Context, folder string, env Env) ([]Audited, error)
	// Events are the hook events whose payloads this host's hook may
	// judge, PreToolUse first.
	Events() []string
	// Deny is the answer that refuses what a payload of the hook event
	// asks for, in the host's protocol: one JSON document for stdout or
	// an HTTP body. event "" is a payload the hook could not read (an
	// HTTP hook refused before its body): the answer must refuse on
	// every event the host sends.
	Deny(event, reason string) []byte
}

// Help is what the command line's help and errors say of a host, so that
// none of them names one: every adapter implements it (internal/hosts'
// conformance test holds each to it).
type Help interface {
	// Title is the host's name for people: Claude Code.
	Title() string
	// Refusal is the host's refusal as help shows it, one line:
	// {"permissionDecision": "deny", ...}.
	Refusal() string
	// Example is a payload tried by hand from a checkout: the arguments
	// that follow spawngate hook NAME, with the payload on stdin.
	Example() string
	// Page is the host's page of the documentation: docs/codex.md.
	Page() string
}

// Env is what an adapter may read beside the payload: the environment the
// host started the hook in, the machine's files, and the gate's settings.
type Env struct {
	// Getenv reads the environment the host started the hook in (for an
	// HTTP hook, what the request's headers carry).
	Getenv func(string) string
	// Home is the user's home directory, "" for none.
	Home string
	// AgentsDirs, when set, replace the host's own folders of definitions
	// (the order is the caller's: first wins).
	AgentsDirs []string
	// Budget is the budget a spawn is granted when its definition states
	// none.
	Budget json.Number
	// Cwd is the directory spawngate agents takes the agents to work in.
	Cwd    string
	Limits document.Limits
	// CommandLine reads the command line of a process of the host (by its
	// pid), for what the host was started with; nil reads the system's.
	CommandLine func(pid int) ([]string, error)
	// Transcript, when set, is a session transcript to read instead of
	// the one the payload names (for trying payloads by hand: spawngate
	// hook codex --session FILE); its last turn stands for the payload's.
	Transcript string
	// Root is prepended to the machine-wide paths an adapter reads
	// (/etc/...), so that a test can stand in a folder for them; "" is the
	// real root.
	Root string
}

// Spawn is a hook payload's spawn, translated.
type Spawn struct {
	// Event is the hook event the payload came from (PreToolUse, or
	// another of the adapter's Events).
	Event string
	// Session is the host's session id, "" when the payload has none.
	Session string
	// Brief is what the spawned child is told, for the session ledger.
	Brief string
	// Children are what the call starts: usually one; a spawn that starts
	// more than one sub-agent (observers, say) lists each.
	Children []agent.Translation
	// Parent is the plan's parent block when the caller is itself a
	// sub-agent, else nil.
	Parent map[string]any
	// Folders are the folders the session works in (its project, its
	// current directory), which it writes as a matter of course: a hook
	// refuses to judge by a policy there (Owners.Dirs).
	Folders []string
	// ByHand says the payload is judged without a live session (a
	// payload tried by hand, with folders or a transcript given on the
	// hook's command line): no session can change the gate's files.
	ByHand bool
}

// Audited is one definition translated for spawngate agents.
type Audited struct {
	File        string
	Translation agent.Translation
	// Line is where the definition stops parsing, when it does not.
	Line int
}

// DenyPreToolUse is the PreToolUse answer that refuses a tool call, which
// Claude Code and Codex both read: hookSpecificOutput with
// permissionDecision deny.
func DenyPreToolUse(reason string) []byte {
	return Document(map[string]any{"hookSpecificOutput": map[string]any{
		"hookEventName":            "PreToolUse",
		"permissionDecision":       "deny",
		"permissionDecisionReason": reason,
	}})
}

// DenyAnyEvent is the answer that refuses on every hook event: the
// top-level decision "block" with its reason. Claude Code reads it as a
// refusal on every event (a deny on PreToolUse); Codex reads it on
// PreToolUse (read from its output parser, which refuses "approve" and a
// reason without a decision, and takes "block"). It stands where the
// event is not known: a request to an address that names no host.
func DenyAnyEvent(reason string) []byte {
	return Document(map[string]any{"decision": "block", "reason": reason})
}

// Document is v as one line of JSON with a newline, HTML left unescaped:
// an answer for a host.
func Document(v any) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.Encode(v)
	return b.Bytes()
}
