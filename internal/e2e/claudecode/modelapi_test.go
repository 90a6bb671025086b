package claudecode

import (
	"bytes"
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

// step is one scripted model turn: a call of Tool with Input, or, when Tool
// is empty, a final text answer.
type step struct {
	Tool  string
	Input map[string]any
	Text  string
}

// callTool is a turn that calls a tool.
func callTool(name string, input map[string]any) step { return step{Tool: name, Input: input} }

// spawn is a turn that calls the Agent tool the way the model does.
func spawn(subagentType string) step {
	in := map[string]any{"description": "e2e spawn", "prompt": "Do the e2e task."}
	if subagentType != "" {
		in["subagent_type"] = subagentType
	}
	return callTool("Agent", in)
}

// say is a final text turn.
func say(text string) step { return step{Text: text} }

// markerPrefix starts every marker a test writes into a definition's body.
const markerPrefix = "MARKER-"

// The kinds of request the client sends to the model.
const (
	kindMain = "main" // the session's own agent
	kindSub  = "sub"  // a sub-agent (marked cc_is_subagent=true, or running on a test's definition)
	kindSide = "side" // anything without tools: titles, summaries, classifiers
)

// apiRequest is one request the client made, kept whole for the findings.
type apiRequest struct {
	Seq    int
	Method string
	Path   string
	Header http.Header
	Body   []byte

	Kind     string
	Model    string
	System   string   // every text block of the system prompt, joined
	Tools    []string // tool names offered to the model, in order
	Deferred []string // of Tools, those sent with defer_loading
	// Listed are the tools the client names in a message as loadable
	// through ToolSearch: the agent holds them too.
	Listed   []string
	Messages []apiMessage
}

type apiMessage struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

type contentBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
	IsError   bool            `json:"is_error"`
	Content   json.RawMessage `json:"content"`
}

// blocks decodes a message's content, which may be a plain string.
func (m apiMessage) blocks() []contentBlock {
	var s string
	if json.Unmarshal(m.Content, &s) == nil {
		return []contentBlock{{Type: "text", Text: s}}
	}
	var bs []contentBlock
	_ = json.Unmarshal(m.Content, &bs)
	return bs
}

// text is the visible text of a tool result's content.
func (b contentBlock) resultText() string {
	var s string
	if json.Unmarshal(b.Content, &s) == nil {
		return s
	}
	var bs []contentBlock
	_ = json.Unmarshal(b.Content, &bs)
	var out []string
	for _, x := range bs {
		if x.Type == "text" {
			out = append(out, x.Text)
		}
	}
	return strings.Join(out, "\n")
}

// toolResults lists the tool results the request carries, in order.
func (r *apiRequest) toolResults() []contentBlock {
	var out []contentBlock
	for _, m := range r.Messages {
		for _, b := range m.blocks() {
			if b.Type == "tool_result" {
				out = append(out, b)
			}
		}
	}
	return out
}

// assistantTurns counts the assistant messages the request replays, which
// is how far into its script the agent is.
func (r *apiRequest) assistantTurns() int {
	n := 0
	for _, m := range r.Messages {
		if m.Role == "assistant" {
			n++
		}
	}
	return n
}

// modelAPI is a scripted Anthropic Messages API. Main-agent requests walk
// through Main; a sub-agent's requests walk through Sub[marker] for the
// first marker its request carries, else answer at once; everything else
// gets a harmless answer. Every request is recorded.
type modelAPI struct {
	Main []step
	Sub  map[string][]step

	url string
	srv *http.Server

	mu   sync.Mutex
	reqs []*apiRequest
	seq  int
	ids  int
}

// startModelAPI serves the script on 127.0.0.1:0 until the test ends.
func startModelAPI(t *testing.T, main []step, sub map[string][]step) *modelAPI {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("model API: %v", err)
	}
	m := &modelAPI{Main: main, Sub: sub, url: "http://" + ln.Addr().String()}
	m.srv = &http.Server{Handler: m, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = m.srv.Serve(ln) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = m.srv.Shutdown(ctx)
	})
	return m
}

// requests is a snapshot of what was asked so far.
func (m *modelAPI) requests() []*apiRequest {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]*apiRequest(nil), m.reqs...)
}

func (m *modelAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(io.LimitReader(r.Body, 64<<20))
	req := &apiRequest{Method: r.Method, Path: r.URL.Path, Header: r.Header.Clone(), Body: body}
	m.mu.Lock()
	m.seq++
	req.Seq = m.seq
	m.reqs = append(m.reqs, req)
	m.mu.Unlock()

	switch {
	case r.Method == http.MethodPost && r.URL.Path == "/v1/messages/count_tokens":
		writeJSON(w, map[string]any{"input_tokens": 100})
		return
	case r.Method == http.MethodPost && r.URL.Path == "/v1/messages":
	default:
		// Model lists, account look-ups, feature flags: none is needed for a
		// headless run, and a plain 404 makes the client carry on.
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		_, _ = io.WriteString(w, `{"type":"error","error":{"type":"not_found_error","message":"not scripted"}}`)
		return
	}

	var in struct {
		Model    string          `json:"model"`
		System   json.RawMessage `json:"system"`
		Messages []apiMessage    `json:"messages"`
		Tools    []struct {
			Name         string `json:"name"`
			DeferLoading bool   `json:"defer_loading"`
		} `json:"tools"`
		Stream bool `json:"stream"`
	}
	if err := json.Unmarshal(body, &in); err != nil {
		http.Error(w, `{"type":"error","error":{"type":"invalid_request_error","message":"bad json"}}`, http.StatusBadRequest)
		return
	}
	req.Model, req.Messages = in.Model, in.Messages
	req.System = systemText(in.System)
	for _, t := range in.Tools {
		req.Tools = append(req.Tools, t.Name)
		if t.DeferLoading {
			req.Deferred = append(req.Deferred, t.Name)
		}
	}
	req.Listed = listedTools(req.Messages)
	switch {
	// Observer agents and a fork started by a /skill prompt are not marked
	// as sub-agents, but their system prompt holds a definition's body.
	case strings.Contains(req.System, "cc_is_subagent=true"), strings.Contains(req.System, markerPrefix):
		req.Kind = kindSub
	case len(req.Tools) > 0:
		req.Kind = kindMain
	default:
		req.Kind = kindSide
	}

	var s step
	switch req.Kind {
	case kindMain:
		s = m.mainStep(req)
	case kindSub:
		s = m.subStep(req)
	default:
		s = say("ok")
	}
	m.answer(w, in.Model, in.Stream, s)
}

// mainStep picks the main agent's next turn by how many turns it has
// had. There is no waiting for children: in -p mode the client keeps the
// session open until its background agents end, and then gives the main
// agent one more turn with their notification.
func (m *modelAPI) mainStep(req *apiRequest) step {
	if i := req.assistantTurns(); i < len(m.Main) {
		return m.Main[i]
	}
	return say("done")
}

func (m *modelAPI) subStep(req *apiRequest) step {
	for marker, steps := range m.Sub {
		if !strings.Contains(string(req.Body), marker) {
			continue
		}
		if i := req.assistantTurns(); i < len(steps) {
			return steps[i]
		}
		break
	}
	return say("sub-agent done")
}

// deferredIntro opens the message in which the client lists the tools an
// agent can load through ToolSearch, one a line until a blank line.
const deferredIntro = "The following deferred tools are now available via ToolSearch"

func listedTools(msgs []apiMessage) []string {
	var out []string
	for _, m := range msgs {
		for _, b := range m.blocks() {
			i := strings.Index(b.Text, deferredIntro)
			if i < 0 {
				continue
			}
			lines := strings.Split(b.Text[i:], "\n")
			for _, l := range lines[1:] {
				if l = strings.TrimSpace(l); l == "" {
					break
				}
				out = append(out, l)
			}
		}
	}
	return out
}

// offered is every tool the agent that sent the request can use: the tool
// definitions it was sent, less the placeholders, and the tools listed as
// loadable.
func (r *apiRequest) offered() []string {
	var out []string
	for _, t := range r.Tools {
		if t != "DeferredToolPlaceholder" && t != "ToolSearch" {
			out = append(out, t)
		}
	}
	return append(out, r.Listed...)
}

func systemText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var bs []contentBlock
	_ = json.Unmarshal(raw, &bs)
	var out []string
	for _, b := range bs {
		out = append(out, b.Text)
	}
	return strings.Join(out, "\n")
}

// answer writes one assistant message, as an SSE stream when asked for.
func (m *modelAPI) answer(w http.ResponseWriter, model string, stream bool, s step) {
	m.mu.Lock()
	m.ids++
	id := m.ids
	m.mu.Unlock()
	var block map[string]any
	stop := "end_turn"
	if s.Tool != "" {
		input := s.Input
		if input == nil {
			input = map[string]any{}
		}
		block = map[string]any{"type": "tool_use", "id": fmt.Sprintf("toolu_e2e%04d", id), "name": s.Tool, "input": input}
		stop = "tool_use"
	} else {
		block = map[string]any{"type": "text", "text": s.Text}
	}
	usage := map[string]any{"input_tokens": 10, "output_tokens": 5}
	msgID := fmt.Sprintf("msg_e2e%04d", id)
	if !stream {
		writeJSON(w, map[string]any{
			"id": msgID, "type": "message", "role": "assistant", "model": model,
			"content": []any{block}, "stop_reason": stop, "stop_sequence": nil, "usage": usage,
		})
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	var buf bytes.Buffer
	event := func(name string, data map[string]any) {
		b, _ := json.Marshal(data)
		fmt.Fprintf(&buf, "event: %s\ndata: %s\n\n", name, b)
	}
	event("message_start", map[string]any{"type": "message_start", "message": map[string]any{
		"id": msgID, "type": "message", "role": "assistant", "model": model,
		"content": []any{}, "stop_reason": nil, "stop_sequence": nil, "usage": usage,
	}})
	if s.Tool != "" {
		start := map[string]any{"type": "tool_use", "id": block["id"], "name": s.Tool, "input": map[string]any{}}
		event("content_block_start", map[string]any{"type": "content_block_start", "index": 0, "content_block": start})
		args, _ := json.Marshal(block["input"])
		event("content_block_delta", map[string]any{"type": "content_block_delta", "index": 0,
			"delta": map[string]any{"type": "input_json_delta", "partial_json": string(args)}})
	} else {
		event("content_block_start", map[string]any{"type": "content_block_start", "index": 0,
			"content_block": map[string]any{"type": "text", "text": ""}})
		event("content_block_delta", map[string]any{"type": "content_block_delta", "index": 0,
			"delta": map[string]any{"type": "text_delta", "text": s.Text}})
	}
	event("content_block_stop", map[string]any{"type": "content_block_stop", "index": 0})
	event("message_delta", map[string]any{"type": "message_delta",
		"delta": map[string]any{"stop_reason": stop, "stop_sequence": nil}, "usage": map[string]any{"output_tokens": 5}})
	event("message_stop", map[string]any{"type": "message_stop"})
	_, _ = w.Write(buf.Bytes())
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}
