package fakemodel

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// GeminiAPI is the Gemini API's generateContent as Gemini CLI speaks it:
// POST …/v1beta/models/MODEL:streamGenerateContent?alt=sse for a turn
// (streamed as server-sent events of GenerateContentResponse, data lines
// alone), or …:generateContent for one answer whole. The model is the
// path's, not the body's. Any path prefix before /models/ is the client's
// base URL (GOOGLE_GEMINI_BASE_URL) and is kept, so one server can serve
// runs under /s/NAME. A token count (…:countTokens) gets a small count;
// anything else a 404 in the API's error shape.
var GeminiAPI API = geminiAPI{}

type geminiAPI struct{}

// geminiMethod is the method of a Gemini API path (…/models/MODEL:METHOD)
// and its model, or "" when the path is none.
func geminiMethod(r *http.Request) (model, method string) {
	if r.Method != http.MethodPost {
		return "", ""
	}
	_, rest, ok := strings.Cut(r.URL.Path, "/models/")
	if !ok {
		return "", ""
	}
	model, method, ok = strings.Cut(rest, ":")
	if !ok || model == "" || strings.Contains(model, "/") {
		return "", ""
	}
	return model, method
}

func (geminiAPI) isTurn(r *http.Request) bool {
	_, m := geminiMethod(r)
	return m == "streamGenerateContent" || m == "generateContent"
}

func (geminiAPI) serveOther(w http.ResponseWriter, r *http.Request) {
	if _, m := geminiMethod(r); m == "countTokens" {
		writeJSON(w, http.StatusOK, map[string]any{"totalTokens": 10})
		return
	}
	writeJSON(w, http.StatusNotFound, map[string]any{"error": map[string]any{
		"code": 404, "message": "not scripted", "status": "NOT_FOUND"}})
}

func (geminiAPI) refuse(w http.ResponseWriter, msg string) {
	writeJSON(w, http.StatusBadRequest, map[string]any{"error": map[string]any{
		"code": 400, "message": msg, "status": "INVALID_ARGUMENT"}})
}

// geminiContent is one Content of a request: a role and its parts.
type geminiContent struct {
	Role  string `json:"role"`
	Parts []struct {
		Text         *string `json:"text"`
		Thought      bool    `json:"thought"`
		FunctionCall *struct {
			ID   string `json:"id"`
			Name string `json:"name"`
		} `json:"functionCall"`
		FunctionResponse *struct {
			ID       string          `json:"id"`
			Name     string          `json:"name"`
			Response json.RawMessage `json:"response"`
		} `json:"functionResponse"`
	} `json:"parts"`
}

func (geminiAPI) read(body []byte, req *Request) error {
	var in struct {
		Contents          []geminiContent `json:"contents"`
		SystemInstruction *geminiContent  `json:"systemInstruction"`
		Tools             []struct {
			FunctionDeclarations []struct {
				Name string `json:"name"`
			} `json:"functionDeclarations"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(body, &in); err != nil {
		return err
	}
	if err := json.Unmarshal(body, &req.JSON); err != nil {
		return err
	}
	// read is called for turns alone, whose path names the model; the
	// server hands the body only, so the path is read from what it kept.
	req.Model, req.Stream = geminiModelOf(req.Path)
	for _, t := range in.Tools {
		for _, f := range t.FunctionDeclarations {
			req.Tools = append(req.Tools, f.Name)
		}
	}
	if in.SystemInstruction != nil {
		var system []string
		for _, p := range in.SystemInstruction.Parts {
			if p.Text != nil {
				system = append(system, *p.Text)
			}
		}
		req.System = strings.Join(system, "\n")
	}
	for _, c := range in.Contents {
		if c.Role == "model" {
			req.Turns++
		}
		for _, p := range c.Parts {
			switch {
			case p.FunctionCall != nil:
				req.Calls = append(req.Calls, p.FunctionCall.Name)
			case p.FunctionResponse != nil:
				// Gemini CLI hands back the id a call came with behind its
				// tool's name and "__" (handlePendingFunctionCall): the
				// script's own id is what a suite looks the result up by.
				id := strings.TrimPrefix(p.FunctionResponse.ID, p.FunctionResponse.Name+"__")
				req.Results = append(req.Results, geminiResult(id, p.FunctionResponse.Response))
			case p.Text != nil && !p.Thought:
				req.Texts = append(req.Texts, *p.Text)
			}
		}
	}
	return nil
}

// geminiModelOf is the model and streaming of a turn's path.
func geminiModelOf(path string) (model string, stream bool) {
	_, rest, _ := strings.Cut(path, "/models/")
	model, method, _ := strings.Cut(rest, ":")
	return model, method == "streamGenerateContent"
}

// geminiResult is a functionResponse as a Result: Gemini CLI answers
// {"output": TEXT} for a tool that ran and {"error": TEXT} for one that
// did not (a hook's deny among them); any other response is kept as its
// JSON.
func geminiResult(id string, raw json.RawMessage) Result {
	var r struct {
		Output *string `json:"output"`
		Error  *string `json:"error"`
	}
	_ = json.Unmarshal(raw, &r)
	switch {
	case r.Error != nil:
		return Result{CallID: id, Text: *r.Error, IsError: true}
	case r.Output != nil:
		return Result{CallID: id, Text: *r.Output}
	}
	return Result{CallID: id, Text: string(raw)}
}

func (geminiAPI) callID(n, i int) string { return fmt.Sprintf("e2e-call-%04d-%d", n, i) }

// write answers with one candidate whose parts are the text, then each
// call as a functionCall carrying its id (which the client hands back in
// the functionResponse). Streamed, the text comes in one chunk and the
// calls in the last, which also carries finishReason STOP and the usage,
// as the API ends a stream.
func (geminiAPI) write(w http.ResponseWriter, req *Request, t Turn, n int) {
	var calls []any
	for _, c := range t.Calls {
		calls = append(calls, map[string]any{"functionCall": map[string]any{
			"id": c.ID, "name": c.Name, "args": json.RawMessage(args(c))}})
	}
	usage := map[string]any{"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15}
	chunk := func(parts []any, last bool) map[string]any {
		cand := map[string]any{"content": map[string]any{"role": "model", "parts": parts}, "index": 0}
		c := map[string]any{"candidates": []any{cand}, "modelVersion": req.Model, "responseId": fmt.Sprintf("e2e-response-%04d", n)}
		if last {
			cand["finishReason"] = "STOP"
			c["usageMetadata"] = usage
		}
		return c
	}
	var text []any
	if t.Text != "" {
		text = []any{map[string]any{"text": t.Text}}
	}
	if !req.Stream {
		writeJSON(w, http.StatusOK, chunk(append(text, calls...), true))
		return
	}
	var s sse
	if text != nil && calls != nil {
		s.event("", chunk(text, false))
		text = nil
	}
	s.event("", chunk(append(text, calls...), true))
	s.send(w)
}
