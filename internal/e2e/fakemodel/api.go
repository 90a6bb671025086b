package fakemodel

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
)

// API is one wire API a client speaks to its model: AnthropicMessages,
// OpenAIResponses, OpenAIChat or GeminiAPI. Its methods are the package's own: a new
// API is a new codec here, beside its unit test.
type API interface {
	// isTurn reports whether the request asks the model for a turn.
	isTurn(r *http.Request) bool
	// read fills req's host-neutral fields from a turn request's body.
	read(body []byte, req *Request) error
	// write answers a turn request with t, as a stream when req.Stream
	// (or always, for an API only ever streamed); n numbers the answer
	// for the ids it needs.
	write(w http.ResponseWriter, req *Request, t Turn, n int)
	// callID makes up the id of call i of answer n.
	callID(n, i int) string
	// serveOther answers a request that asks for no turn: what the API
	// serves beside turns (a token count), else its "not found".
	serveOther(w http.ResponseWriter, r *http.Request)
	// refuse answers a request the server could not read.
	refuse(w http.ResponseWriter, msg string)
}

// args is a call's arguments as a JSON object.
func args(c Call) []byte {
	b, err := json.Marshal(c.Args)
	if err != nil {
		panic(fmt.Sprintf("fake model: arguments of %s: %v", c.Name, err))
	}
	if string(b) == "null" {
		// nil, or a nil map: a call without arguments.
		return []byte("{}")
	}
	return b
}

// sse is a server-sent event stream being written.
type sse struct{ buf bytes.Buffer }

// event adds one event; a name of "" writes a data line alone, as the
// OpenAI Chat API does.
func (s *sse) event(name string, data any) {
	b, err := json.Marshal(data)
	if err != nil {
		panic(err)
	}
	s.raw(name, b)
}

func (s *sse) raw(name string, data []byte) {
	if name != "" {
		fmt.Fprintf(&s.buf, "event: %s\n", name)
	}
	fmt.Fprintf(&s.buf, "data: %s\n\n", data)
}

// send writes the stream in one go: the clients read a whole answer, so
// nothing is gained by pacing it.
func (s *sse) send(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	_, _ = w.Write(s.buf.Bytes())
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// texts are the texts of a content that is a plain string or a list of
// parts: each part's "text", for the parts that have one.
func texts(raw json.RawMessage) []string {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return []string{s}
	}
	var parts []struct {
		Text *string `json:"text"`
	}
	_ = json.Unmarshal(raw, &parts)
	var out []string
	for _, p := range parts {
		if p.Text != nil {
			out = append(out, *p.Text)
		}
	}
	return out
}
