package codex

import (
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// modelRequest is one POST /v1/responses the client made, reduced to what
// the scenarios look at. Raw keeps the whole body for the payload record.
type modelRequest struct {
	Model string
	// Thread is the thread (agent) the request is for; Parent is set for a
	// sub-agent's requests, as is Subagent (the x-openai-subagent header,
	// "collab_spawn" for spawn_agent children).
	Thread, Parent, Subagent string
	// Meta is the x-codex-turn-metadata header: Codex states the turn's
	// sandbox_mode there, per thread, which is how a test reads the sandbox
	// a child really got without trusting the hook's view.
	Meta map[string]any
	// Tools are the offered tool names, namespaced ones as "ns.name".
	Tools []string
	// Text is every text the request carries (instructions and input
	// messages), for marker lookups.
	Text string
	// Outputs are the function_call_output texts, in order, and OutputIDs
	// their call_ids; Calls the names of the function calls already in the
	// history.
	Outputs   []string
	OutputIDs []string
	Calls     []string
	Raw       map[string]any
	// At is when the request arrived, for timing a run.
	At time.Time
}

// step is how many results of its own calls (call_ids starting with
// prefix) a script has had so far, which is where it is in its sequence. A
// forked child's history also holds its parent's calls; counting only its
// own keeps it at step 0 on its first request.
func (r *modelRequest) step(prefix string) int {
	n := 0
	for _, id := range r.OutputIDs {
		if strings.HasPrefix(id, prefix+"_") {
			n++
		}
	}
	return n
}

// output is the result of the call with this call_id, "" if none.
func (r *modelRequest) output(callID string) string {
	for i, id := range r.OutputIDs {
		if id == callID {
			return r.Outputs[i]
		}
	}
	return ""
}

// sandboxMode is what Codex put in the request's turn metadata.
func (r *modelRequest) sandboxMode() string {
	s, _ := r.Meta["sandbox_mode"].(string)
	return s
}

// hasTool reports whether the request offered the tool (as "ns.name" for a
// namespaced one).
func (r *modelRequest) hasTool(name string) bool {
	for _, t := range r.Tools {
		if t == name {
			return true
		}
	}
	return false
}

// item is one Responses API output item the script answers with.
type item map[string]any

// call is a function_call output item; ns is the tool's namespace ("" for
// a top-level function tool), since Codex routes a namespaced tool only when
// the call names its namespace.
func call(ns, name, id string, args any) item {
	b, err := json.Marshal(args)
	if err != nil {
		panic(err)
	}
	it := item{"type": "function_call", "name": name, "call_id": id, "arguments": string(b)}
	if ns != "" {
		it["namespace"] = ns
	}
	return it
}

// say is a final assistant message, which ends the thread's turn.
func say(text string) item {
	return item{"type": "message", "role": "assistant", "content": []any{map[string]any{"type": "output_text", "text": text}}}
}

// modelServer is a scripted Responses API on 127.0.0.1. script answers each
// request with the items of one response.
type modelServer struct {
	URL    string
	script func(*modelRequest) []item

	ln  net.Listener
	srv *http.Server

	mu   sync.Mutex
	reqs []*modelRequest
	errs []string
}

func startModel(t *testing.T, script func(*modelRequest) []item) *modelServer {
	t.Helper()
	// 127.0.0.1 only, never a wildcard address: the client is the only
	// caller and nothing else on the machine should reach the script.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("listen on 127.0.0.1: %v", err)
	}
	m := &modelServer{URL: "http://" + ln.Addr().String() + "/v1", script: script, ln: ln}
	m.srv = &http.Server{Handler: http.HandlerFunc(m.serve), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = m.srv.Serve(ln) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = m.srv.Shutdown(ctx)
	})
	return m
}

func (m *modelServer) requests() []*modelRequest {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]*modelRequest(nil), m.reqs...)
}

// problems are requests the server could not read; a scenario reports them
// because a silently failed request looks just like a child that never ran.
func (m *modelServer) problems() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]string(nil), m.errs...)
}

func (m *modelServer) fail(w http.ResponseWriter, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	m.mu.Lock()
	m.errs = append(m.errs, msg)
	m.mu.Unlock()
	http.Error(w, msg, http.StatusBadRequest)
}

func (m *modelServer) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, "/responses") {
		// Model listings and the like: nothing to offer, and a 404 is an
		// answer the client copes with without retrying.
		http.NotFound(w, r)
		return
	}
	var body io.Reader = r.Body
	switch r.Header.Get("Content-Encoding") {
	case "":
	case "gzip":
		gz, err := gzip.NewReader(r.Body)
		if err != nil {
			m.fail(w, "gzip body: %v", err)
			return
		}
		body = gz
	default:
		m.fail(w, "request body in %q encoding, which the script does not read", r.Header.Get("Content-Encoding"))
		return
	}
	raw, err := io.ReadAll(io.LimitReader(body, 64<<20))
	if err != nil {
		m.fail(w, "read body: %v", err)
		return
	}
	req, err := parseRequest(raw, r.Header)
	if err != nil {
		m.fail(w, "parse body: %v", err)
		return
	}
	m.mu.Lock()
	m.reqs = append(m.reqs, req)
	n := len(m.reqs)
	m.mu.Unlock()

	items := m.script(req)
	if len(items) == 0 {
		items = []item{say("done")}
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	id := fmt.Sprintf("resp_%d", n)
	// The smallest stream the client accepts: response.created, one
	// output_item.done per item, response.completed with usage. Without
	// response.completed the client treats the stream as broken.
	events := []map[string]any{{"type": "response.created", "response": map[string]any{"id": id}}}
	for i, it := range items {
		if it["type"] == "message" {
			it["id"] = fmt.Sprintf("msg_%d_%d", n, i)
		}
		events = append(events, map[string]any{"type": "response.output_item.done", "output_index": i, "item": it})
	}
	events = append(events, map[string]any{"type": "response.completed", "response": map[string]any{
		"id":    id,
		"usage": map[string]any{"input_tokens": 10, "output_tokens": 5, "total_tokens": 15},
	}})
	for _, ev := range events {
		b, err := json.Marshal(ev)
		if err != nil {
			panic(err)
		}
		if _, err := fmt.Fprintf(w, "event: %s\ndata: %s\n\n", ev["type"], b); err != nil {
			return
		}
	}
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
}

func parseRequest(raw []byte, h http.Header) (*modelRequest, error) {
	var body map[string]any
	if err := json.Unmarshal(raw, &body); err != nil {
		return nil, err
	}
	req := &modelRequest{
		Thread:   h.Get("thread-id"),
		Parent:   h.Get("x-codex-parent-thread-id"),
		Subagent: h.Get("x-openai-subagent"),
		Raw:      body,
		At:       time.Now(),
	}
	req.Model, _ = body["model"].(string)
	if meta := h.Get("x-codex-turn-metadata"); meta != "" {
		if err := json.Unmarshal([]byte(meta), &req.Meta); err != nil {
			return nil, fmt.Errorf("x-codex-turn-metadata: %w", err)
		}
	}
	if req.Thread == "" {
		if cm, ok := body["client_metadata"].(map[string]any); ok {
			req.Thread, _ = cm["thread_id"].(string)
		}
	}
	tools, _ := body["tools"].([]any)
	for _, t := range tools {
		tm, _ := t.(map[string]any)
		name, _ := tm["name"].(string)
		if sub, ok := tm["tools"].([]any); ok {
			for _, s := range sub {
				sm, _ := s.(map[string]any)
				sn, _ := sm["name"].(string)
				req.Tools = append(req.Tools, name+"."+sn)
			}
			continue
		}
		if name == "" {
			name, _ = tm["type"].(string)
		}
		req.Tools = append(req.Tools, name)
	}
	var text strings.Builder
	if s, ok := body["instructions"].(string); ok {
		text.WriteString(s)
		text.WriteByte('\n')
	}
	input, _ := body["input"].([]any)
	for _, in := range input {
		im, _ := in.(map[string]any)
		switch im["type"] {
		case "function_call_output", "custom_tool_call_output":
			req.Outputs = append(req.Outputs, outputText(im["output"]))
			id, _ := im["call_id"].(string)
			req.OutputIDs = append(req.OutputIDs, id)
		case "function_call", "custom_tool_call":
			name, _ := im["name"].(string)
			if ns, _ := im["namespace"].(string); ns != "" {
				name = ns + "." + name
			}
			req.Calls = append(req.Calls, name)
		default:
			content, _ := im["content"].([]any)
			for _, c := range content {
				cm, _ := c.(map[string]any)
				if s, ok := cm["text"].(string); ok {
					text.WriteString(s)
					text.WriteByte('\n')
				}
			}
		}
	}
	req.Text = text.String()
	return req, nil
}

// outputText flattens a tool output, which is a string or a list of content
// items.
func outputText(v any) string {
	switch o := v.(type) {
	case string:
		return o
	case []any:
		var b strings.Builder
		for _, c := range o {
			if cm, ok := c.(map[string]any); ok {
				if s, ok := cm["text"].(string); ok {
					b.WriteString(s)
				}
			}
		}
		return b.String()
	case nil:
		return ""
	default:
		b, _ := json.Marshal(o)
		return string(b)
	}
}

// agentID pulls the child's id out of a spawn_agent result (v1:
// {"agent_id": ...}); "" when the spawn did not happen.
func agentID(output string) string {
	var v map[string]any
	if err := json.Unmarshal([]byte(output), &v); err != nil {
		return ""
	}
	for _, k := range []string{"agent_id", "id", "thread_id"} {
		if s, ok := v[k].(string); ok && s != "" {
			return s
		}
	}
	return ""
}
