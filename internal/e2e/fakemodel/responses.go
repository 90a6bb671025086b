package fakemodel

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// OpenAIResponses is the OpenAI Responses API (POST …/responses) as Codex
// speaks it: always streamed, the smallest stream the client accepts
// (response.created, one response.output_item.done per item,
// response.completed with usage; without response.completed the client
// takes the stream for broken). Anything else gets a 404, which the client
// copes with without retrying.
var OpenAIResponses API = openAIResponses{}

type openAIResponses struct{}

func (openAIResponses) isTurn(r *http.Request) bool { return pathEnds(r, "/responses") }

func (openAIResponses) serveOther(w http.ResponseWriter, r *http.Request) { http.NotFound(w, r) }

func (openAIResponses) refuse(w http.ResponseWriter, msg string) {
	http.Error(w, msg, http.StatusBadRequest)
}

func (openAIResponses) read(body []byte, req *Request) error {
	if err := json.Unmarshal(body, &req.JSON); err != nil {
		return err
	}
	in := req.JSON
	req.Model, _ = in["model"].(string)
	req.Stream, _ = in["stream"].(bool)
	var system []string
	if s, ok := in["instructions"].(string); ok {
		system = append(system, s)
	}
	tools, _ := in["tools"].([]any)
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
	input, _ := in["input"].([]any)
	modelsTurn := false
	for _, it := range input {
		im, _ := it.(map[string]any)
		typ, _ := im["type"].(string)
		role, _ := im["role"].(string)
		// The model's own items of one turn come in a run: a message, its
		// reasoning, its calls.
		own := role == "assistant" || typ == "reasoning" || strings.HasSuffix(typ, "_call")
		if own && !modelsTurn {
			req.Turns++
		}
		modelsTurn = own
		switch {
		case strings.HasSuffix(typ, "_call_output"):
			id, _ := im["call_id"].(string)
			req.Results = append(req.Results, Result{CallID: id, Text: outputText(im["output"])})
		case typ == "function_call" || typ == "custom_tool_call":
			name, _ := im["name"].(string)
			if ns, _ := im["namespace"].(string); ns != "" {
				name = ns + "." + name
			}
			req.Calls = append(req.Calls, name)
		default:
			content, _ := im["content"].([]any)
			for _, c := range content {
				cm, _ := c.(map[string]any)
				s, ok := cm["text"].(string)
				switch {
				case !ok:
				case role == "developer" || role == "system":
					system = append(system, s)
				default:
					req.Texts = append(req.Texts, s)
				}
			}
		}
	}
	req.System = strings.Join(system, "\n")
	return nil
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

func (openAIResponses) callID(n, i int) string { return fmt.Sprintf("call_e2e%04d_%d", n, i) }

// write answers with the items of one response: a message for the text,
// then a function_call per call.
func (openAIResponses) write(w http.ResponseWriter, req *Request, t Turn, n int) {
	var items []map[string]any
	if t.Text != "" {
		items = append(items, map[string]any{"type": "message", "role": "assistant", "id": fmt.Sprintf("msg_%d_%d", n, len(items)),
			"content": []any{map[string]any{"type": "output_text", "text": t.Text}}})
	}
	for _, c := range t.Calls {
		it := map[string]any{"type": "function_call", "name": c.Name, "call_id": c.ID, "arguments": string(args(c))}
		if c.Namespace != "" {
			it["namespace"] = c.Namespace
		}
		items = append(items, it)
	}
	id := fmt.Sprintf("resp_%d", n)
	var s sse
	s.event("response.created", map[string]any{"type": "response.created", "response": map[string]any{"id": id}})
	for i, it := range items {
		s.event("response.output_item.done", map[string]any{"type": "response.output_item.done", "output_index": i, "item": it})
	}
	s.event("response.completed", map[string]any{"type": "response.completed", "response": map[string]any{
		"id":    id,
		"usage": map[string]any{"input_tokens": 10, "output_tokens": 5, "total_tokens": 15},
	}})
	s.send(w)
}
