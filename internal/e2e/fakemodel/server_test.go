package fakemodel

import (
	"fmt"
	"strings"
	"testing"
)

// The server tells the agents apart the same way whatever the API: a
// scripted marker in the system prompt or the host's own sign makes a
// sub-agent, tools offered make the main agent, and the rest is a side
// request that never reaches a script.
func TestServerTellsAgentsApart(t *testing.T) {
	scripts := Scripts{
		Main:  Steps(CallTool("Agent", map[string]any{"subagent_type": "lead"})),
		Subs:  map[string]Script{"MARKER-b": Steps(Say("b")), "MARKER-a": Steps(Say("a"))},
		Other: func(*Request) Turn { return Say("other") },
	}
	isSub := func(r *Request) bool { return strings.Contains(r.System, "cc_is_subagent=true") }
	s := Start(t, Host{API: AnthropicMessages, IsSub: isSub}, scripts)
	if !strings.HasPrefix(s.URL(), "http://127.0.0.1:") {
		t.Errorf("the server listens on %s, want 127.0.0.1 alone", s.URL())
	}
	body := func(system string, tools bool) string {
		t := ""
		if tools {
			t = `,"tools":[{"name":"Read"}]`
		}
		return fmt.Sprintf(`{"model":"m","system":%q,"messages":[{"role":"user","content":"go"}]%s}`, system, t)
	}
	cases := []struct {
		system string
		tools  bool
		kind   Kind
		marker string
		answer Turn
	}{
		{"main agent", true, Main, "", Turn{Calls: []Call{{ID: "toolu_e2e0001", Name: "Agent", Args: map[string]any{"subagent_type": "lead"}}}}},
		// Two markers: the first in sorted order picks the script, so a
		// run never depends on map order.
		{"MARKER-b and MARKER-a", true, Sub, "MARKER-a", Say("a")},
		{"MARKER-b, no tools", false, Sub, "MARKER-b", Say("b")},
		{"cc_is_subagent=true", true, Sub, "", Say("other")},
		{"a title", false, Side, "", Say("ok")},
	}
	for i, c := range cases {
		back, _ := anthropicMessage(t, readJSON(t, ask(t, s, "/v1/messages", body(c.system, c.tools))))
		r := s.Requests()[i]
		if r.Seq != i+1 || r.Kind != c.kind || r.Marker != c.marker {
			t.Errorf("%q: seq %d kind %q marker %q, want %d %q %q", c.system, r.Seq, r.Kind, r.Marker, i+1, c.kind, c.marker)
		}
		same(t, c.system, back, c.answer)
	}
}

// Without a script, an agent is told it is done: the main agent and a
// sub-agent alike end at once instead of waiting on an answer.
func TestUnscriptedAgentsEnd(t *testing.T) {
	isSub := func(r *Request) bool { return strings.Contains(r.System, "cc_is_subagent=true") }
	s := Start(t, Host{API: AnthropicMessages, IsSub: isSub}, Scripts{})
	main, _ := anthropicMessage(t, readJSON(t, ask(t, s, "/v1/messages", `{"messages":[],"tools":[{"name":"Read"}]}`)))
	sub, _ := anthropicMessage(t, readJSON(t, ask(t, s, "/v1/messages", `{"system":"cc_is_subagent=true","messages":[],"tools":[{"name":"Read"}]}`)))
	same(t, "the answers", []Turn{main, sub}, []Turn{Say("done"), Say("sub-agent done")})
}

// One scripted turn answered twice (two agents at the same step, or a
// retry) gets fresh call ids each time, and the script's turn is left as
// it was.
func TestCallIDsAreEachAnswers(t *testing.T) {
	turn := CallTool("Read", nil)
	s := Start(t, Host{API: AnthropicMessages}, Scripts{Main: Steps(turn)})
	req := `{"messages":[],"tools":[{"name":"Read"}]}`
	a, _ := anthropicMessage(t, readJSON(t, ask(t, s, "/v1/messages", req)))
	b, _ := anthropicMessage(t, readJSON(t, ask(t, s, "/v1/messages", req)))
	same(t, "the ids", []string{a.Calls[0].ID, b.Calls[0].ID}, []string{"toolu_e2e0001", "toolu_e2e0002"})
	if turn.Calls[0].ID != "" {
		t.Errorf("the script's turn was given the id %q", turn.Calls[0].ID)
	}
}

func TestStepsWalkByTurns(t *testing.T) {
	steps := Steps(Say("one"), CallTool("Read", nil))
	for turns, want := range []Turn{Say("one"), CallTool("Read", nil), Say("done"), Say("done")} {
		same(t, fmt.Sprint("turn ", turns), steps(&Request{Turns: turns}), want)
	}
}

// Play swaps the scripts between two runs of a client against one server.
func TestPlay(t *testing.T) {
	s := Start(t, Host{API: AnthropicMessages}, Scripts{Main: Steps(Say("first"))})
	req := `{"model":"m","messages":[],"tools":[{"name":"Read"}]}`
	a, _ := anthropicMessage(t, readJSON(t, ask(t, s, "/v1/messages", req)))
	next := s.Scripts()
	next.Main = Steps(Say("second"))
	s.Play(next)
	b, _ := anthropicMessage(t, readJSON(t, ask(t, s, "/v1/messages", req)))
	same(t, "the answers", []Turn{a, b}, []Turn{Say("first"), Say("second")})
}

// An empty turn would leave the client waiting on nothing: it says done.
func TestEmptyTurnSaysDone(t *testing.T) {
	s := Start(t, Host{API: AnthropicMessages}, Scripts{Main: func(*Request) Turn { return Turn{} }})
	back, _ := anthropicMessage(t, readJSON(t, ask(t, s, "/v1/messages", `{"messages":[],"tools":[{"name":"Read"}]}`)))
	same(t, "the answer", back, Say("done"))
}

func TestUnreadableJSONIsAProblem(t *testing.T) {
	s := Start(t, Host{API: AnthropicMessages}, Scripts{})
	if resp := ask(t, s, "/v1/messages", `{`); resp.StatusCode != 400 {
		t.Errorf("status %d, want 400", resp.StatusCode)
	}
	if p := s.Problems(); len(p) != 1 || !strings.HasPrefix(p[0], "POST /v1/messages: ") {
		t.Errorf("problems %q", p)
	}
	if r := only(t, s); r.Kind != "" || string(r.Body) != "{" {
		t.Errorf("recorded %+v", r)
	}
}
