package codex

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"sync"
	"time"
)

// appServer drives `codex app-server` over stdio: JSON-RPC 2.0, one JSON
// object per line. codex exec always runs with approval "never"; sessions
// with another approval policy (on-request, untrusted) exist only through
// this protocol (or the TUI), so the suite speaks its smallest part:
//
//	-> initialize {clientInfo}            <- result
//	-> initialized (notification)
//	-> thread/start {cwd, approvalPolicy, sandbox}   <- {thread: {id, path}}
//	-> turn/start {threadId, input: [{type: text}]}  <- {turn}
//	<- ... notifications; server requests for approvals, answered "accept"
//	<- turn/completed {threadId, turn}  (for the main thread: done)
//
// and hooks/list {cwds} for the hook trust hashes.
type appServer struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stderr bytes.Buffer

	wmu sync.Mutex // one writer at a time on stdin

	mu        sync.Mutex
	nextID    int
	pending   map[int]chan rpcReply
	notes     []rpcMessage
	noteCh    chan struct{} // pulsed on every notification
	approvals []string
	done      chan struct{} // closed when stdout ends
}

type rpcMessage struct {
	ID     json.RawMessage `json:"id,omitempty"`
	Method string          `json:"method,omitempty"`
	Params json.RawMessage `json:"params,omitempty"`
	Result json.RawMessage `json:"result,omitempty"`
	Error  *rpcError       `json:"error,omitempty"`
}

type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

type rpcReply struct {
	result json.RawMessage
	err    *rpcError
}

func (w *world) startAppServer(ctx context.Context, args ...string) (*appServer, error) {
	cmd := w.command(ctx, append([]string{"app-server"}, args...)...)
	cmd.Dir = w.repo
	cmd.Env = w.env()
	cmd.WaitDelay = 5 * time.Second
	a := &appServer{cmd: cmd, pending: map[int]chan rpcReply{}, noteCh: make(chan struct{}, 1), done: make(chan struct{})}
	cmd.Stderr = &a.stderr
	var err error
	if a.stdin, err = cmd.StdinPipe(); err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	go a.read(stdout)
	if _, err := a.call(ctx, "initialize", map[string]any{
		"clientInfo":   map[string]any{"name": "spawngate-e2e", "version": "0"},
		"capabilities": map[string]any{"experimentalApi": true},
	}); err != nil {
		a.close()
		return nil, fmt.Errorf("initialize: %w (stderr: %s)", err, tail(a.stderr.String(), 2000))
	}
	if err := a.send(map[string]any{"jsonrpc": "2.0", "method": "initialized"}); err != nil {
		a.close()
		return nil, err
	}
	return a, nil
}

func (a *appServer) send(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	a.wmu.Lock()
	defer a.wmu.Unlock()
	_, err = a.stdin.Write(append(b, '\n'))
	return err
}

func (a *appServer) call(ctx context.Context, method string, params any) (json.RawMessage, error) {
	a.mu.Lock()
	a.nextID++
	id := a.nextID
	ch := make(chan rpcReply, 1)
	a.pending[id] = ch
	a.mu.Unlock()
	if err := a.send(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params}); err != nil {
		return nil, err
	}
	select {
	case r := <-ch:
		if r.err != nil {
			return nil, fmt.Errorf("%s: %d %s", method, r.err.Code, r.err.Message)
		}
		return r.result, nil
	case <-a.done:
		return nil, fmt.Errorf("%s: app-server exited (stderr: %s)", method, tail(a.stderr.String(), 2000))
	case <-ctx.Done():
		return nil, fmt.Errorf("%s: %w", method, ctx.Err())
	}
}

// read dispatches every line the server writes: replies to their callers,
// approval requests answered at once, notifications kept for waitNote.
func (a *appServer) read(r io.Reader) {
	defer close(a.done)
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		var m rpcMessage
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			continue
		}
		switch {
		case m.Method != "" && len(m.ID) > 0:
			a.answer(m)
		case m.Method != "":
			a.mu.Lock()
			a.notes = append(a.notes, m)
			a.mu.Unlock()
			select {
			case a.noteCh <- struct{}{}:
			default:
			}
		case len(m.ID) > 0:
			var id int
			if json.Unmarshal(m.ID, &id) != nil {
				continue
			}
			a.mu.Lock()
			ch := a.pending[id]
			delete(a.pending, id)
			a.mu.Unlock()
			if ch != nil {
				ch <- rpcReply{result: m.Result, err: m.Error}
			}
		}
	}
}

// answer plays the user who approves everything: the scenarios ask what a
// child can do when its session lets it, not whether a person would agree.
func (a *appServer) answer(m rpcMessage) {
	var result any
	switch m.Method {
	case "item/commandExecution/requestApproval", "item/fileChange/requestApproval":
		result = map[string]any{"decision": "accept"}
	case "execCommandApproval", "applyPatchApproval":
		result = map[string]any{"decision": "approved"}
	case "item/permissions/requestApproval":
		var p struct {
			Permissions json.RawMessage `json:"permissions"`
		}
		_ = json.Unmarshal(m.Params, &p)
		result = map[string]any{"permissions": p.Permissions, "scope": "turn"}
	default:
		_ = a.send(map[string]any{"jsonrpc": "2.0", "id": m.ID, "error": map[string]any{"code": -32601, "message": "not supported by the e2e client"}})
		return
	}
	a.mu.Lock()
	a.approvals = append(a.approvals, m.Method+" "+string(m.Params))
	a.mu.Unlock()
	_ = a.send(map[string]any{"jsonrpc": "2.0", "id": m.ID, "result": result})
}

// waitNote waits for a notification that match accepts, from the first one
// on; bounded by ctx.
func (a *appServer) waitNote(ctx context.Context, match func(rpcMessage) bool) (rpcMessage, error) {
	seen := 0
	for {
		a.mu.Lock()
		notes := a.notes[seen:]
		seen = len(a.notes)
		a.mu.Unlock()
		for _, n := range notes {
			if match(n) {
				return n, nil
			}
		}
		select {
		case <-a.noteCh:
		case <-a.done:
			return rpcMessage{}, fmt.Errorf("app-server exited (stderr: %s)", tail(a.stderr.String(), 2000))
		case <-ctx.Done():
			return rpcMessage{}, ctx.Err()
		}
	}
}

func (a *appServer) close() {
	_ = a.stdin.Close()
	select {
	case <-a.done:
	case <-time.After(5 * time.Second):
	}
	if a.cmd.Process != nil {
		_ = a.cmd.Process.Kill()
	}
	_ = a.cmd.Wait()
}

// appSession runs one turn of a session started with the given approval
// policy and sandbox mode through the app-server, approving everything.
func (w *world) appSession(approval, sandbox string, args ...string) *result {
	w.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), scenarioTimeout)
	defer cancel()
	if w.setup.hook == hookReadme || w.setup.hook == hookNone {
		// The app-server has no --dangerously-bypass-hook-trust; its
		// sessions run hooks only once trusted.
		w.trustHooksComputed()
	}
	res := &result{start: time.Now()}
	a, err := w.startAppServer(ctx, args...)
	if err != nil {
		res.err = err
		return w.finish(res)
	}
	defer a.close()
	fail := func(err error) *result {
		res.err = err
		res.end = time.Now()
		res.stderr = a.stderr.String()
		return w.finish(res)
	}
	raw, err := a.call(ctx, "thread/start", map[string]any{"cwd": w.repo, "approvalPolicy": approval, "sandbox": sandbox})
	if err != nil {
		return fail(err)
	}
	var started struct {
		Thread struct {
			ID string `json:"id"`
		} `json:"thread"`
	}
	if err := json.Unmarshal(raw, &started); err != nil || started.Thread.ID == "" {
		return fail(fmt.Errorf("thread/start answered %s", raw))
	}
	if _, err := a.call(ctx, "turn/start", map[string]any{
		"threadId": started.Thread.ID,
		"input":    []any{map[string]any{"type": "text", "text": userPrompt}},
	}); err != nil {
		return fail(err)
	}
	if _, err := a.waitNote(ctx, func(m rpcMessage) bool {
		if m.Method != "turn/completed" {
			return false
		}
		var p struct {
			ThreadID string `json:"threadId"`
		}
		return json.Unmarshal(m.Params, &p) == nil && p.ThreadID == started.Thread.ID
	}); err != nil {
		return fail(fmt.Errorf("waiting for turn/completed: %w", err))
	}
	a.mu.Lock()
	res.approvals = append([]string(nil), a.approvals...)
	a.mu.Unlock()
	res.stderr = a.stderr.String()
	res.end = time.Now()
	return w.finish(res)
}

// hookEntry is one hooks/list entry, the fields the trust check needs.
type hookEntry struct {
	Key         string `json:"key"`
	EventName   string `json:"eventName"`
	Matcher     string `json:"matcher"`
	Command     string `json:"command"`
	TimeoutSec  int    `json:"timeoutSec"`
	CurrentHash string `json:"currentHash"`
	TrustStatus string `json:"trustStatus"`
	Enabled     bool   `json:"enabled"`
	SourcePath  string `json:"sourcePath"`
}

// listHooks asks a fresh app-server what hooks the repo's sessions load.
func (w *world) listHooks(ctx context.Context) ([]hookEntry, error) {
	a, err := w.startAppServer(ctx)
	if err != nil {
		return nil, err
	}
	defer a.close()
	raw, err := a.call(ctx, "hooks/list", map[string]any{"cwds": []string{w.repo}})
	if err != nil {
		return nil, err
	}
	var resp struct {
		Data []struct {
			Hooks []hookEntry `json:"hooks"`
		} `json:"data"`
	}
	if err := json.Unmarshal(raw, &resp); err != nil {
		return nil, fmt.Errorf("hooks/list answered %s: %w", raw, err)
	}
	var out []hookEntry
	for _, d := range resp.Data {
		out = append(out, d.Hooks...)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("hooks/list listed no hooks: %s", raw)
	}
	return out, nil
}

// trustHooks does what accepting the hooks in /hooks does: it writes each
// hook's current hash as its trusted_hash into config.toml.
func (w *world) trustHooks(ctx context.Context) []hookEntry {
	w.t.Helper()
	entries, err := w.listHooks(ctx)
	if err != nil {
		w.t.Fatalf("hooks/list: %v", err)
	}
	var extra bytes.Buffer
	for _, e := range entries {
		fmt.Fprintf(&extra, "\n[hooks.state.%q]\ntrusted_hash = %q\n", e.Key, e.CurrentHash)
	}
	mustWrite(w.t, w.codexHome+"/config.toml", w.configTOML(extra.String()))
	return entries
}
