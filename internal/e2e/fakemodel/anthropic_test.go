package fakemodel

import (
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
)

// anthropicRequest is a Messages API request the way Claude Code sends one
// a turn into a sub-agent: system blocks, a tool already called and
// answered, the tools it may use.
const anthropicRequest = `{
  "model": "claude-haiku-4-5",
  "system": [{"type": "text", "text": "You are Claude Code."}, {"type": "text", "text": "MARKER-reader-2c9d: read files."}],
  "messages": [
    {"role": "user", "content": "Do the e2e task."},
    {"role": "assistant", "content": [{"type": "text", "text": "Reading."}, {"type": "tool_use", "id": "toolu_1", "name": "Read", "input": {"file_path": "/a"}}]},
    {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": [{"type": "text", "text": "line 1"}, {"type": "text", "text": "line 2"}]},
                                 {"type": "tool_result", "tool_use_id": "toolu_2", "is_error": true, "content": "denied"}]}
  ],
  "tools": [{"name": "Read", "input_schema": {}}, {"name": "Grep", "input_schema": {}, "defer_loading": true}],
  "stream": %t
}`

func TestAnthropicMessages(t *testing.T) {
	answer := Turn{Text: "Spawning.", Calls: []Call{
		{ID: "toolu_mine", Name: "Agent", Args: map[string]any{"subagent_type": "writer", "prompt": "Do it."}},
		{Name: "Bash", Args: map[string]any{"command": "true"}},
	}}
	wantRead := parsed{Kind: Sub, Model: "claude-haiku-4-5", System: "You are Claude Code.\nMARKER-reader-2c9d: read files.",
		Texts: []string{"Do the e2e task.", "Reading."}, Tools: []string{"Read", "Grep"}, Turns: 1, Calls: []string{"Read"},
		Results: []Result{{CallID: "toolu_1", Text: "line 1\nline 2"}, {CallID: "toolu_2", Text: "denied", IsError: true}}}
	wantBack := Turn{Text: "Spawning.", Calls: []Call{
		{ID: "toolu_mine", Name: "Agent", Args: map[string]any{"subagent_type": "writer", "prompt": "Do it."}},
		{ID: "toolu_e2e0001_1", Name: "Bash", Args: map[string]any{"command": "true"}},
	}}
	for _, stream := range []bool{true, false} {
		t.Run(fmt.Sprintf("stream=%t", stream), func(t *testing.T) {
			s := Start(t, Host{API: AnthropicMessages}, Scripts{Subs: map[string]Script{"MARKER-reader-2c9d": Steps(Say("first"), answer)}})
			resp := ask(t, s, "/v1/messages?beta=true", fmt.Sprintf(anthropicRequest, stream))
			if resp.StatusCode != 200 {
				t.Fatalf("status %d", resp.StatusCode)
			}
			var back Turn
			var stop string
			if stream {
				back, stop = anthropicStream(t, readEvents(t, resp))
			} else {
				back, stop = anthropicMessage(t, readJSON(t, resp))
			}
			req := only(t, s)
			want := wantRead
			want.Stream = stream
			same(t, "the request as read", parsedOf(req), want)
			same(t, "the answer read back", back, wantBack)
			if stop != "tool_use" {
				t.Errorf("stop_reason %q, want tool_use", stop)
			}
			if req.Marker != "MARKER-reader-2c9d" {
				t.Errorf("Marker %q", req.Marker)
			}
		})
	}
}

func TestAnthropicMessagesText(t *testing.T) {
	s := Start(t, Host{API: AnthropicMessages}, Scripts{Main: Steps(Say("all done"))})
	resp := ask(t, s, "/v1/messages", `{"model":"m","messages":[{"role":"user","content":"hi"}],"tools":[{"name":"Read"}],"stream":true}`)
	back, stop := anthropicStream(t, readEvents(t, resp))
	same(t, "the answer read back", back, Turn{Text: "all done"})
	if stop != "end_turn" {
		t.Errorf("stop_reason %q, want end_turn", stop)
	}
}

func TestAnthropicMessagesBesideTurns(t *testing.T) {
	s := Start(t, Host{API: AnthropicMessages}, Scripts{})
	if got := readJSON(t, ask(t, s, "/v1/messages/count_tokens", `{}`)); got["input_tokens"] != float64(100) {
		t.Errorf("count_tokens answered %v", got)
	}
	resp := ask(t, s, "/api/claude_cli_feedback", `{}`)
	if resp.StatusCode != 404 || readJSON(t, resp)["type"] != "error" {
		t.Errorf("an unscripted path answered %d", resp.StatusCode)
	}
	// Only a POST asks for a turn.
	get, err := http.Get(s.URL() + "/v1/messages")
	if err != nil {
		t.Fatal(err)
	}
	get.Body.Close()
	if get.StatusCode != 404 {
		t.Errorf("GET /v1/messages answered %d", get.StatusCode)
	}
	var got []string
	for _, r := range s.Requests() {
		got = append(got, fmt.Sprintf("%s %s %q", r.Method, r.Path, r.Kind))
	}
	same(t, "recorded", got, []string{`POST /v1/messages/count_tokens ""`, `POST /api/claude_cli_feedback ""`, `GET /v1/messages ""`})
}

// anthropicStream rebuilds the message from its events as the client's
// SDK does, checking their order on the way.
func anthropicStream(t *testing.T, evs []event) (Turn, string) {
	t.Helper()
	var turn Turn
	var stop string
	partial := map[int]string{}
	var order, blocks []string
	for _, ev := range evs {
		d := decode(t, []byte(ev.Data))
		if d["type"] != ev.Name {
			t.Errorf("event %s carries type %v", ev.Name, d["type"])
		}
		order = append(order, ev.Name)
		i := 0
		if f, ok := d["index"].(float64); ok {
			i = int(f)
			blocks = append(blocks, fmt.Sprint(ev.Name, " ", i))
		}
		switch ev.Name {
		case "content_block_start":
			b := d["content_block"].(map[string]any)
			if b["type"] == "tool_use" {
				turn.Calls = append(turn.Calls, Call{ID: b["id"].(string), Name: b["name"].(string)})
			}
		case "content_block_delta":
			delta := d["delta"].(map[string]any)
			switch delta["type"] {
			case "text_delta":
				turn.Text += delta["text"].(string)
			case "input_json_delta":
				partial[i] += delta["partial_json"].(string)
			}
		case "message_delta":
			stop = d["delta"].(map[string]any)["stop_reason"].(string)
		}
	}
	first := 0
	if turn.Text != "" {
		first = 1
	}
	for i := range turn.Calls {
		turn.Calls[i].Args = argsOf(t, partial[first+i])
	}
	if len(order) < 2 || order[0] != "message_start" || order[len(order)-1] != "message_stop" {
		t.Errorf("events in order %v", order)
	}
	// Each block, by its index in order, opens, gets its delta and closes
	// before the next opens.
	var want []string
	for i := 0; i < first+len(turn.Calls); i++ {
		want = append(want, fmt.Sprint("content_block_start ", i), fmt.Sprint("content_block_delta ", i), fmt.Sprint("content_block_stop ", i))
	}
	same(t, "the blocks' events", blocks, want)
	return turn, stop
}

// anthropicMessage reads the message of a response that is not streamed.
func anthropicMessage(t *testing.T, m map[string]any) (Turn, string) {
	t.Helper()
	var turn Turn
	for _, b := range m["content"].([]any) {
		b := b.(map[string]any)
		switch b["type"] {
		case "text":
			turn.Text += b["text"].(string)
		case "tool_use":
			in, _ := json.Marshal(b["input"])
			turn.Calls = append(turn.Calls, Call{ID: b["id"].(string), Name: b["name"].(string), Args: argsOf(t, string(in))})
		}
	}
	if m["type"] != "message" || m["role"] != "assistant" {
		t.Errorf("not an assistant message: %v", m)
	}
	return turn, m["stop_reason"].(string)
}
