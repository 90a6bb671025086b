package fakemodel

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// AnthropicMessages is the Anthropic Messages API (POST …/v1/messages),
// streamed or not as the request asks, as Claude Code and the Agent SDK
// speak it. It also counts tokens (…/v1/messages/count_tokens); model
// lists, account look-ups and feature flags get a 404, which a headless
// client carries on from.
var AnthropicMessages API = anthropicMessages{}

type anthropicMessages struct{}

func (anthropicMessages) isTurn(r *http.Request) bool { return pathEnds(r, "/v1/messages") }

func (anthropicMessages) serveOther(w http.ResponseWriter, r *http.Request) {
	if pathEnds(r, "/v1/messages/count_tokens") {
		writeJSON(w, http.StatusOK, map[string]any{"input_tokens": 100})
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusNotFound)
	_, _ = io.WriteString(w, `{"type":"error","error":{"type":"not_found_error","message":"not scripted"}}`)
}

func (anthropicMessages) refuse(w http.ResponseWriter, msg string) {
	writeJSON(w, http.StatusBadRequest, map[string]any{"type": "error",
		"error": map[string]any{"type": "invalid_request_error", "message": msg}})
}

// anthropicBlock is a content block of a message, of any type.
type anthropicBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	Name      string          `json:"name"`
	ToolUseID string          `json:"tool_use_id"`
	IsError   bool            `json:"is_error"`
	Content   json.RawMessage `json:"content"`
}

func (anthropicMessages) read(body []byte, req *Request) error {
	var in struct {
		Model    string          `json:"model"`
		System   json.RawMessage `json:"system"`
		Messages []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
		Tools []struct {
			Name string `json:"name"`
		} `json:"tools"`
		Stream bool `json:"stream"`
	}
	if err := json.Unmarshal(body, &in); err != nil {
		return err
	}
	if err := json.Unmarshal(body, &req.JSON); err != nil {
		return err
	}
	req.Model, req.Stream = in.Model, in.Stream
	req.System = strings.Join(texts(in.System), "\n")
	for _, t := range in.Tools {
		req.Tools = append(req.Tools, t.Name)
	}
	for _, m := range in.Messages {
		if m.Role == "assistant" {
			req.Turns++
		}
		var blocks []anthropicBlock
		if json.Unmarshal(m.Content, &blocks) != nil {
			req.Texts = append(req.Texts, texts(m.Content)...)
			continue
		}
		for _, b := range blocks {
			switch b.Type {
			case "text":
				req.Texts = append(req.Texts, b.Text)
			case "tool_use":
				req.Calls = append(req.Calls, b.Name)
			case "tool_result":
				req.Results = append(req.Results, Result{CallID: b.ToolUseID,
					Text: strings.Join(texts(b.Content), "\n"), IsError: b.IsError})
			}
		}
	}
	return nil
}

func (anthropicMessages) callID(n, i int) string {
	if i == 0 {
		return fmt.Sprintf("toolu_e2e%04d", n)
	}
	return fmt.Sprintf("toolu_e2e%04d_%d", n, i)
}

// write answers with one assistant message: the text block, then a
// tool_use block per call.
func (anthropicMessages) write(w http.ResponseWriter, req *Request, t Turn, n int) {
	var blocks []map[string]any
	if t.Text != "" {
		blocks = append(blocks, map[string]any{"type": "text", "text": t.Text})
	}
	for _, c := range t.Calls {
		blocks = append(blocks, map[string]any{"type": "tool_use", "id": c.ID, "name": c.Name, "input": json.RawMessage(args(c))})
	}
	stop := "end_turn"
	if len(t.Calls) > 0 {
		stop = "tool_use"
	}
	usage := map[string]any{"input_tokens": 10, "output_tokens": 5}
	msgID := fmt.Sprintf("msg_e2e%04d", n)
	if !req.Stream {
		writeJSON(w, http.StatusOK, map[string]any{
			"id": msgID, "type": "message", "role": "assistant", "model": req.Model,
			"content": blocks, "stop_reason": stop, "stop_sequence": nil, "usage": usage,
		})
		return
	}
	var s sse
	s.event("message_start", map[string]any{"type": "message_start", "message": map[string]any{
		"id": msgID, "type": "message", "role": "assistant", "model": req.Model,
		"content": []any{}, "stop_reason": nil, "stop_sequence": nil, "usage": usage,
	}})
	for i, b := range blocks {
		var start, delta map[string]any
		if b["type"] == "text" {
			start = map[string]any{"type": "text", "text": ""}
			delta = map[string]any{"type": "text_delta", "text": b["text"]}
		} else {
			start = map[string]any{"type": "tool_use", "id": b["id"], "name": b["name"], "input": map[string]any{}}
			delta = map[string]any{"type": "input_json_delta", "partial_json": string(b["input"].(json.RawMessage))}
		}
		s.event("content_block_start", map[string]any{"type": "content_block_start", "index": i, "content_block": start})
		s.event("content_block_delta", map[string]any{"type": "content_block_delta", "index": i, "delta": delta})
		s.event("content_block_stop", map[string]any{"type": "content_block_stop", "index": i})
	}
	s.event("message_delta", map[string]any{"type": "message_delta",
		"delta": map[string]any{"stop_reason": stop, "stop_sequence": nil}, "usage": map[string]any{"output_tokens": 5}})
	s.event("message_stop", map[string]any{"type": "message_stop"})
	s.send(w)
}
