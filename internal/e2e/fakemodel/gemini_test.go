package fakemodel

import (
	"fmt"
	"strings"
	"testing"
)

// geminiRequest is a generateContent request the way Gemini CLI 0.61.0
// sends the main session's second turn (research: copilot-gemini.md §2.1):
// a system instruction, the session context and the user's prompt as two
// parts of one message, an invoke_agent call it answered with an error (a
// hook's deny) beside a read_file call it answered with output, a thought
// part, and the tools as function declarations.
const geminiRequest = `{
  "contents": [
    {"role": "user", "parts": [{"text": "<session_context>\nThis is the Gemini CLI.\n</session_context>"}, {"text": "Run the e2e task."}]},
    {"role": "model", "parts": [
      {"text": "thinking it over", "thought": true},
      {"text": "Spawning."},
      {"functionCall": {"id": "main_spawn", "name": "invoke_agent", "args": {"agent_name": "writer", "prompt": "E2E-CHILD do the task"}}, "thoughtSignature": "skip_thought_signature_validator"},
      {"functionCall": {"id": "main_read", "name": "read_file", "args": {"file_path": "README.md"}}}
    ]},
    {"role": "user", "parts": [
      {"functionResponse": {"id": "main_spawn", "name": "invoke_agent", "response": {"error": "Tool execution blocked: R"}}},
      {"functionResponse": {"id": "read_file__main_read", "name": "read_file", "response": {"output": "# e2e"}}}
    ]}
  ],
  "systemInstruction": {"role": "user", "parts": [{"text": "You are Gemini CLI."}, {"text": "Be brief."}]},
  "tools": [{"functionDeclarations": [{"name": "read_file", "parametersJsonSchema": {}}, {"name": "invoke_agent"}]}],
  "generationConfig": {"temperature": 1}
}`

func TestGeminiAPI(t *testing.T) {
	answer := Turn{Text: "Spawning again.", Calls: []Call{
		{ID: "main_spawn2", Name: "invoke_agent", Args: map[string]any{"agent_name": "reader", "prompt": "E2E-CHILD do the task"}},
		{Name: "read_file", Args: nil},
	}}
	wantBack := Turn{Text: "Spawning again.", Calls: []Call{
		{ID: "main_spawn2", Name: "invoke_agent", Args: map[string]any{"agent_name": "reader", "prompt": "E2E-CHILD do the task"}},
		{ID: "e2e-call-0001-1", Name: "read_file", Args: map[string]any{}},
	}}
	for _, method := range []string{"streamGenerateContent?alt=sse", "generateContent"} {
		stream := method != "generateContent"
		t.Run(fmt.Sprintf("stream=%t", stream), func(t *testing.T) {
			s := Start(t, Host{API: GeminiAPI}, Scripts{Main: Steps(Say("first"), answer)})
			// The base URL's path is kept: one server serves parallel runs.
			resp := ask(t, s, "/s/run-1/v1beta/models/gemini-2.5-flash:"+method, geminiRequest)
			if resp.StatusCode != 200 {
				t.Fatalf("status %d", resp.StatusCode)
			}
			var back Turn
			var finish string
			if stream {
				back, finish = geminiStream(t, readEvents(t, resp))
			} else {
				back, finish = geminiCandidate(t, readJSON(t, resp))
			}
			r := only(t, s)
			// The model is the path's; the thought is no text; a result's
			// id is the call's own, without the tool-name prefix the client
			// may put before it.
			same(t, "the request as read", parsedOf(r), parsed{Kind: Main, Model: "gemini-2.5-flash", Stream: stream,
				System: "You are Gemini CLI.\nBe brief.",
				Texts:  []string{"<session_context>\nThis is the Gemini CLI.\n</session_context>", "Run the e2e task.", "Spawning."},
				Tools:  []string{"read_file", "invoke_agent"}, Turns: 1, Calls: []string{"invoke_agent", "read_file"},
				Results: []Result{{CallID: "main_spawn", Text: "Tool execution blocked: R", IsError: true}, {CallID: "main_read", Text: "# e2e"}}})
			if r.Path != "/s/run-1/v1beta/models/gemini-2.5-flash:"+strings.TrimSuffix(method, "?alt=sse") {
				t.Errorf("path %q", r.Path)
			}
			same(t, "the answer read back", back, wantBack)
			if finish != "STOP" {
				t.Errorf("finishReason %q, want STOP", finish)
			}
		})
	}
}

// A sub-agent's request is told by the marker its system instruction
// carries; a request offered no tools is a side request and gets a plain
// answer; a token count is answered, any other path is not found.
func TestGeminiAPIAgents(t *testing.T) {
	s := Start(t, Host{API: GeminiAPI}, Scripts{Subs: map[string]Script{"E2E-MARKER-WRITER": Steps(CallTool("complete_task", map[string]any{"result": "done"}))}})
	sub := `{"contents":[{"role":"user","parts":[{"text":"E2E-CHILD do the task"}]}],"systemInstruction":{"parts":[{"text":"E2E-MARKER-WRITER"}]},"tools":[{"functionDeclarations":[{"name":"complete_task"}]}]}`
	back, _ := geminiStream(t, readEvents(t, ask(t, s, "/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse", sub)))
	same(t, "the sub-agent's answer", back, Turn{Calls: []Call{{ID: "e2e-call-0001-0", Name: "complete_task", Args: map[string]any{"result": "done"}}}})
	side := `{"contents":[{"role":"user","parts":[{"text":"Is the model done?"}]}]}`
	back, _ = geminiCandidate(t, readJSON(t, ask(t, s, "/v1beta/models/gemini-2.5-flash:generateContent", side)))
	same(t, "the side answer", back, Turn{Text: "ok"})
	if m := readJSON(t, ask(t, s, "/v1beta/models/gemini-2.5-flash:countTokens", `{"contents":[]}`)); m["totalTokens"] == nil {
		t.Errorf("a token count answered %v", m)
	}
	if resp := ask(t, s, "/v1beta/models", ``); resp.StatusCode != 404 || readJSON(t, resp)["error"] == nil {
		t.Errorf("an unscripted path answered %d", resp.StatusCode)
	}
	if resp := ask(t, s, "/v1beta/models/gemini-2.5-flash:streamGenerateContent", `{"contents":`); resp.StatusCode != 400 || len(s.Problems()) != 1 {
		t.Errorf("a broken body answered %d, problems %v", resp.StatusCode, s.Problems())
	}
	var kinds []Kind
	var models []string
	for _, r := range s.Requests() {
		kinds = append(kinds, r.Kind)
		models = append(models, r.Model)
	}
	same(t, "the kinds", kinds, []Kind{Sub, Side, "", "", ""})
	same(t, "the models", models, []string{"gemini-2.5-pro", "gemini-2.5-flash", "", "", ""})
}

// geminiStream rebuilds the answer from its chunks as the client does:
// the parts of every chunk's candidate, in order; data lines alone.
func geminiStream(t *testing.T, evs []event) (Turn, string) {
	t.Helper()
	var turn Turn
	var finish string
	usage := false
	for i, ev := range evs {
		if ev.Name != "" {
			t.Errorf("a named event %q", ev.Name)
		}
		c := decode(t, []byte(ev.Data))
		if c["usageMetadata"] != nil {
			usage = true
		}
		part, f := geminiCandidate(t, c)
		if f != "" && i != len(evs)-1 {
			t.Errorf("chunk %d of %d carries finishReason %q", i+1, len(evs), f)
		}
		finish = f
		turn.Text += part.Text
		turn.Calls = append(turn.Calls, part.Calls...)
	}
	if !usage {
		t.Errorf("no chunk carried usageMetadata")
	}
	return turn, finish
}

// geminiCandidate reads a GenerateContentResponse's one candidate.
func geminiCandidate(t *testing.T, m map[string]any) (Turn, string) {
	t.Helper()
	cands, _ := m["candidates"].([]any)
	if len(cands) != 1 {
		t.Fatalf("want one candidate: %v", m)
	}
	cand := cands[0].(map[string]any)
	content := cand["content"].(map[string]any)
	if content["role"] != "model" {
		t.Errorf("role %v", content["role"])
	}
	var turn Turn
	for _, p := range content["parts"].([]any) {
		p := p.(map[string]any)
		if s, ok := p["text"].(string); ok {
			turn.Text += s
		}
		if fc, ok := p["functionCall"].(map[string]any); ok {
			turn.Calls = append(turn.Calls, Call{ID: fc["id"].(string), Name: fc["name"].(string), Args: fc["args"]})
		}
	}
	f, _ := cand["finishReason"].(string)
	return turn, f
}
