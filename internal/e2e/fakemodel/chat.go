package fakemodel

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// OpenAIChat is the OpenAI Chat Completions API (POST …/chat/completions),
// streamed as GitHub Copilot CLI asks for it (stream: true), or not. Any
// path prefix before /chat/completions is the client's base URL and is
// kept, so one server can serve runs under /s/NAME/v1. Anything else gets
// a 404 in the API's error shape.
var OpenAIChat API = openAIChat{}

type openAIChat struct{}

func (openAIChat) isTurn(r *http.Request) bool { return pathEnds(r, "/chat/completions") }

func (openAIChat) serveOther(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusNotFound, map[string]any{"error": map[string]any{
		"message": "not scripted", "type": "invalid_request_error", "code": "not_found"}})
}

func (openAIChat) refuse(w http.ResponseWriter, msg string) {
	writeJSON(w, http.StatusBadRequest, map[string]any{"error": map[string]any{
		"message": msg, "type": "invalid_request_error"}})
}

func (openAIChat) read(body []byte, req *Request) error {
	var in struct {
		Model    string `json:"model"`
		Stream   bool   `json:"stream"`
		Messages []struct {
			Role       string          `json:"role"`
			Content    json.RawMessage `json:"content"`
			ToolCallID string          `json:"tool_call_id"`
			ToolCalls  []struct {
				Function struct {
					Name string `json:"name"`
				} `json:"function"`
			} `json:"tool_calls"`
		} `json:"messages"`
		Tools []struct {
			Function struct {
				Name string `json:"name"`
			} `json:"function"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(body, &in); err != nil {
		return err
	}
	if err := json.Unmarshal(body, &req.JSON); err != nil {
		return err
	}
	req.Model, req.Stream = in.Model, in.Stream
	for _, t := range in.Tools {
		req.Tools = append(req.Tools, t.Function.Name)
	}
	var system []string
	for _, m := range in.Messages {
		switch m.Role {
		case "system", "developer":
			system = append(system, texts(m.Content)...)
		case "tool":
			req.Results = append(req.Results, Result{CallID: m.ToolCallID, Text: strings.Join(texts(m.Content), "\n")})
		case "assistant":
			req.Turns++
			for _, c := range m.ToolCalls {
				req.Calls = append(req.Calls, c.Function.Name)
			}
			fallthrough
		default:
			req.Texts = append(req.Texts, texts(m.Content)...)
		}
	}
	req.System = strings.Join(system, "\n")
	return nil
}

func (openAIChat) callID(n, i int) string { return fmt.Sprintf("call_e2e%04d_%d", n, i) }

// write answers with one assistant message: its content is the text, its
// tool_calls the calls. Streamed, the role and text come in one chunk, each
// call whole in one chunk of its own, then the finish reason, the usage
// (with empty choices, as stream_options.include_usage has it) and [DONE].
func (openAIChat) write(w http.ResponseWriter, req *Request, t Turn, n int) {
	id := fmt.Sprintf("chatcmpl-e2e%04d", n)
	created := time.Now().Unix()
	finish := "stop"
	if len(t.Calls) > 0 {
		finish = "tool_calls"
	}
	var content any
	if t.Text != "" {
		content = t.Text
	}
	var calls []map[string]any
	for i, c := range t.Calls {
		calls = append(calls, map[string]any{"index": i, "id": c.ID, "type": "function",
			"function": map[string]any{"name": c.Name, "arguments": string(args(c))}})
	}
	usage := map[string]any{"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
	if !req.Stream {
		msg := map[string]any{"role": "assistant", "content": content}
		if len(calls) > 0 {
			msg["tool_calls"] = calls
		}
		writeJSON(w, http.StatusOK, map[string]any{
			"id": id, "object": "chat.completion", "created": created, "model": req.Model,
			"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": finish}},
			"usage":   usage,
		})
		return
	}
	chunk := func(choices []any, extra map[string]any) map[string]any {
		c := map[string]any{"id": id, "object": "chat.completion.chunk", "created": created, "model": req.Model, "choices": choices}
		for k, v := range extra {
			c[k] = v
		}
		return c
	}
	choice := func(delta map[string]any, finish any) []any {
		return []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}
	}
	var s sse
	first := map[string]any{"role": "assistant", "content": ""}
	if t.Text != "" {
		first["content"] = t.Text
	}
	s.event("", chunk(choice(first, nil), nil))
	for _, c := range calls {
		s.event("", chunk(choice(map[string]any{"tool_calls": []any{c}}, nil), nil))
	}
	s.event("", chunk(choice(map[string]any{}, finish), nil))
	s.event("", chunk([]any{}, map[string]any{"usage": usage}))
	s.raw("", []byte("[DONE]"))
	s.send(w)
}
