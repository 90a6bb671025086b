package fakemodel

import (
	"fmt"
	"strings"
	"testing"
)

// chatRequest is a Chat Completions request the way GitHub Copilot CLI
// sends one a turn into the main session (research: copilot-gemini.md
// §1.1): system prompt, a task call already answered, function tools,
// streamed with usage.
const chatRequest = `{
  "model": "gpt-4.1",
  "messages": [
    {"role": "system", "content": "You are the GitHub Copilot CLI."},
    {"role": "user", "content": [{"type": "text", "text": "Run the e2e task."}]},
    {"role": "assistant", "content": "Spawning the reader.", "refusal": null, "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "task", "arguments": "{\"agent_type\":\"reader\"}"}}]},
    {"role": "tool", "tool_call_id": "call_1", "content": "Denied by preToolUse hook"}
  ],
  "tools": [{"type": "function", "function": {"name": "task", "parameters": {}}}, {"type": "function", "function": {"name": "view"}}],
  "stream": %t,
  "stream_options": {"include_usage": true}
}`

func TestOpenAIChat(t *testing.T) {
	answer := Turn{Text: "Spawning.", Calls: []Call{
		{Name: "task", Args: map[string]any{"agent_type": "writer", "prompt": "E2E-CHILD do the task", "mode": "background"}},
		{ID: "call_mine", Name: "view", Args: nil},
	}}
	wantBack := Turn{Text: "Spawning.", Calls: []Call{
		{ID: "call_e2e0001_0", Name: "task", Args: map[string]any{"agent_type": "writer", "prompt": "E2E-CHILD do the task", "mode": "background"}},
		{ID: "call_mine", Name: "view", Args: map[string]any{}},
	}}
	for _, stream := range []bool{true, false} {
		t.Run(fmt.Sprintf("stream=%t", stream), func(t *testing.T) {
			s := Start(t, Host{API: OpenAIChat}, Scripts{Main: Steps(Say("first"), answer)})
			// The base URL's path is kept: one server serves parallel runs.
			resp := ask(t, s, "/s/run-1/v1/chat/completions", fmt.Sprintf(chatRequest, stream))
			if resp.StatusCode != 200 {
				t.Fatalf("status %d", resp.StatusCode)
			}
			var back Turn
			var finish string
			if stream {
				back, finish = chatStream(t, readEvents(t, resp))
			} else {
				back, finish = chatMessage(t, readJSON(t, resp))
			}
			r := only(t, s)
			same(t, "the request as read", parsedOf(r), parsed{Kind: Main, Model: "gpt-4.1", Stream: stream,
				System: "You are the GitHub Copilot CLI.", Texts: []string{"Run the e2e task.", "Spawning the reader."}, Tools: []string{"task", "view"},
				Turns: 1, Calls: []string{"task"}, Results: []Result{{CallID: "call_1", Text: "Denied by preToolUse hook"}}})
			if r.Path != "/s/run-1/v1/chat/completions" {
				t.Errorf("path %q", r.Path)
			}
			same(t, "the answer read back", back, wantBack)
			if finish != "tool_calls" {
				t.Errorf("finish_reason %q, want tool_calls", finish)
			}
		})
	}
}

// A sub-agent's request is told by the marker its system prompt carries;
// a request offered no tools is a side request and gets a plain answer.
func TestOpenAIChatAgents(t *testing.T) {
	s := Start(t, Host{API: OpenAIChat}, Scripts{Subs: map[string]Script{"E2E-MARKER-writer": Steps(Say("writer here"))}})
	sub := `{"model":"gpt-5-mini","messages":[{"role":"system","content":"E2E-MARKER-writer"},{"role":"user","content":"E2E-CHILD do the task"}],"tools":[{"type":"function","function":{"name":"view"}}],"stream":true}`
	back, finish := chatStream(t, readEvents(t, ask(t, s, "/v1/chat/completions", sub)))
	same(t, "the sub-agent's answer", back, Turn{Text: "writer here"})
	if finish != "stop" {
		t.Errorf("finish_reason %q, want stop", finish)
	}
	side := `{"model":"gpt-4.1","messages":[{"role":"user","content":"Title this session."}],"stream":true}`
	back, _ = chatStream(t, readEvents(t, ask(t, s, "/v1/chat/completions", side)))
	same(t, "the side answer", back, Turn{Text: "ok"})
	if resp := ask(t, s, "/v1/models", ``); resp.StatusCode != 404 || readJSON(t, resp)["error"] == nil {
		t.Errorf("an unscripted path answered %d", resp.StatusCode)
	}
	var kinds []Kind
	for _, r := range s.Requests() {
		kinds = append(kinds, r.Kind)
	}
	same(t, "the kinds", kinds, []Kind{Sub, Side, ""})
}

// chatStream rebuilds the message from its chunks as the OpenAI SDK does:
// tool calls by index, their arguments concatenated.
func chatStream(t *testing.T, evs []event) (Turn, string) {
	t.Helper()
	if len(evs) == 0 || evs[len(evs)-1].Data != "[DONE]" {
		t.Fatalf("the stream does not end with [DONE]: %v", evs)
	}
	var turn Turn
	var finish string
	var usage bool
	argsAt := map[int]*strings.Builder{}
	for _, ev := range evs[:len(evs)-1] {
		if ev.Name != "" {
			t.Errorf("a named event %q", ev.Name)
		}
		c := decode(t, []byte(ev.Data))
		if c["object"] != "chat.completion.chunk" || c["id"] == "" {
			t.Errorf("not a chunk: %v", c)
		}
		if c["usage"] != nil {
			usage = true
		}
		for _, ch := range c["choices"].([]any) {
			ch := ch.(map[string]any)
			if f, ok := ch["finish_reason"].(string); ok {
				finish = f
			}
			d := ch["delta"].(map[string]any)
			if s, ok := d["content"].(string); ok {
				turn.Text += s
			}
			tcs, _ := d["tool_calls"].([]any)
			for _, tc := range tcs {
				tc := tc.(map[string]any)
				i := int(tc["index"].(float64))
				if _, ok := argsAt[i]; !ok {
					argsAt[i] = &strings.Builder{}
					turn.Calls = append(turn.Calls, Call{})
				}
				if id, ok := tc["id"].(string); ok {
					turn.Calls[i].ID = id
				}
				f := tc["function"].(map[string]any)
				if n, ok := f["name"].(string); ok {
					turn.Calls[i].Name += n
				}
				argsAt[i].WriteString(f["arguments"].(string))
			}
		}
	}
	for i := range turn.Calls {
		turn.Calls[i].Args = argsOf(t, argsAt[i].String())
	}
	if !usage {
		t.Errorf("no chunk carried usage")
	}
	return turn, finish
}

// chatMessage reads the message of a completion that is not streamed.
func chatMessage(t *testing.T, m map[string]any) (Turn, string) {
	t.Helper()
	if m["object"] != "chat.completion" {
		t.Errorf("not a completion: %v", m)
	}
	ch := m["choices"].([]any)[0].(map[string]any)
	msg := ch["message"].(map[string]any)
	var turn Turn
	turn.Text, _ = msg["content"].(string)
	tcs, _ := msg["tool_calls"].([]any)
	for _, tc := range tcs {
		tc := tc.(map[string]any)
		f := tc["function"].(map[string]any)
		turn.Calls = append(turn.Calls, Call{ID: tc["id"].(string), Name: f["name"].(string), Args: argsOf(t, f["arguments"].(string))})
	}
	return turn, ch["finish_reason"].(string)
}
