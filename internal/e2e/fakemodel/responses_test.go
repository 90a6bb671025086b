package fakemodel

import (
	"net/http"
	"strings"
	"testing"
)

// responsesRequest is a Responses API request the way Codex sends one a
// turn into a spawned child: instructions, a developer message holding
// the definition's developer_instructions, a namespaced tool, a call of
// its own already answered.
const responsesRequest = `{
  "model": "gpt-5.1-codex",
  "instructions": "You are Codex.",
  "input": [
    {"type": "message", "role": "developer", "content": [{"type": "input_text", "text": "SPAWNGATE-E2E-MARK-READER: follow the task."}]},
    {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "Read."}]},
    {"type": "reasoning", "summary": []},
    {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Running."}]},
    {"type": "function_call", "name": "exec_command", "call_id": "reader_cmd", "arguments": "{\"cmd\":\"true\"}"},
    {"type": "function_call_output", "call_id": "reader_cmd", "output": "exit 0"},
    {"type": "function_call", "namespace": "multi_agent_v1", "name": "spawn_agent", "call_id": "reader_spawn", "arguments": "{}"},
    {"type": "function_call_output", "call_id": "reader_spawn", "output": [{"type": "input_text", "text": "{\"agent_id\":"}, {"type": "input_text", "text": "\"x\"}"}]}
  ],
  "tools": [{"type": "function", "name": "exec_command"}, {"type": "namespace", "name": "multi_agent_v1", "tools": [{"name": "spawn_agent"}, {"name": "wait_agent"}]}, {"type": "web_search"}],
  "stream": true
}`

func TestOpenAIResponses(t *testing.T) {
	answer := Turn{Text: "Spawning.", Calls: []Call{
		{ID: "lead_spawn", Namespace: "multi_agent_v1", Name: "spawn_agent", Args: map[string]any{"agent_type": "helper", "message": "Help."}},
		{Name: "exec_command", Args: map[string]any{"cmd": "true"}},
	}}
	s := Start(t, Host{API: OpenAIResponses, IsSub: func(r *Request) bool { return r.Header.Get("x-openai-subagent") != "" }},
		Scripts{Subs: map[string]Script{"SPAWNGATE-E2E-MARK-READER": func(r *Request) Turn {
			if r.Step("reader") == 2 && r.Output("reader_spawn") == `{"agent_id":"x"}` {
				return answer
			}
			return Say("lost")
		}}})
	req, _ := http.NewRequest("POST", s.URL()+"/v1/responses", gzipped(t, []byte(responsesRequest)))
	req.Header.Set("Content-Encoding", "gzip")
	req.Header.Set("x-openai-subagent", "collab_spawn")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	evs := readEvents(t, resp)

	r := only(t, s)
	same(t, "the request as read", parsedOf(r), parsed{Kind: Sub, Model: "gpt-5.1-codex", Stream: true,
		System: "You are Codex.\nSPAWNGATE-E2E-MARK-READER: follow the task.", Texts: []string{"Read.", "Running."},
		Tools: []string{"exec_command", "multi_agent_v1.spawn_agent", "multi_agent_v1.wait_agent", "web_search"}, Turns: 2,
		Calls:   []string{"exec_command", "multi_agent_v1.spawn_agent"},
		Results: []Result{{CallID: "reader_cmd", Text: "exit 0"}, {CallID: "reader_spawn", Text: `{"agent_id":"x"}`}}})

	var back Turn
	var names []string
	for _, ev := range evs {
		d := decode(t, []byte(ev.Data))
		if d["type"] != ev.Name {
			t.Errorf("event %s carries type %v", ev.Name, d["type"])
		}
		names = append(names, ev.Name)
		if ev.Name != "response.output_item.done" {
			continue
		}
		it := d["item"].(map[string]any)
		switch it["type"] {
		case "message":
			for _, c := range it["content"].([]any) {
				back.Text += c.(map[string]any)["text"].(string)
			}
		case "function_call":
			ns, _ := it["namespace"].(string)
			back.Calls = append(back.Calls, Call{ID: it["call_id"].(string), Namespace: ns, Name: it["name"].(string), Args: argsOf(t, it["arguments"].(string))})
		}
	}
	same(t, "the answer read back", back, Turn{Text: "Spawning.", Calls: []Call{
		{ID: "lead_spawn", Namespace: "multi_agent_v1", Name: "spawn_agent", Args: map[string]any{"agent_type": "helper", "message": "Help."}},
		{ID: "call_e2e0001_1", Name: "exec_command", Args: map[string]any{"cmd": "true"}},
	}})
	same(t, "the events", names, []string{"response.created", "response.output_item.done", "response.output_item.done", "response.output_item.done", "response.completed"})
	if last := decode(t, []byte(evs[len(evs)-1].Data)); last["response"].(map[string]any)["usage"] == nil {
		t.Errorf("response.completed has no usage: %v", last)
	}
}

// A body in an encoding the server does not read is a problem a suite
// reports, not a silent miss.
func TestOpenAIResponsesUnreadable(t *testing.T) {
	s := Start(t, Host{API: OpenAIResponses}, Scripts{})
	req, _ := http.NewRequest("POST", s.URL()+"/v1/responses", strings.NewReader("x"))
	req.Header.Set("Content-Encoding", "br")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 400 {
		t.Errorf("status %d, want 400", resp.StatusCode)
	}
	if p := s.Problems(); len(p) != 1 || !strings.Contains(p[0], `"br" encoding`) {
		t.Errorf("problems %q", p)
	}
	if r := only(t, s); r.Kind != "" {
		t.Errorf("an unreadable request was scripted as %q", r.Kind)
	}
	if resp := ask(t, s, "/v1/models", ``); resp.StatusCode != 404 {
		t.Errorf("GET-like path answered %d", resp.StatusCode)
	}
}
