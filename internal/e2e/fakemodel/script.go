package fakemodel

import (
	"slices"
	"strings"
)

// Turn is one answer of the model: a text, tool calls, or both (the text
// first). A Turn with neither says "done".
type Turn struct {
	Text  string
	Calls []Call
}

// Call is one tool call of a Turn.
type Call struct {
	// ID is the call's id; "" lets the codec make one up. A script that
	// looks for its call's result later (Request.Output) names it.
	ID string
	// Namespace is the tool's namespace in the Responses API ("" for a
	// top-level tool): Codex routes a namespaced tool only when the call
	// names it. Other codecs ignore it.
	Namespace string
	Name      string
	// Args are the call's arguments, sent as a JSON object; nil sends {}.
	Args any
}

// Say is a turn of text alone, which ends the agent's turn.
func Say(text string) Turn { return Turn{Text: text} }

// CallTool is a turn that calls one tool, under an id the codec makes up.
func CallTool(name string, args any) Turn {
	return Turn{Calls: []Call{{Name: name, Args: args}}}
}

// Script answers the requests of one agent.
type Script func(*Request) Turn

// Steps is a script that answers an agent's n-th turn with turns[n], n
// being how many assistant turns its request replays, and says "done"
// past the end. There is no waiting for children: clients keep a headless
// session open until its sub-agents end, and replay their results.
func Steps(turns ...Turn) Script {
	return func(r *Request) Turn {
		if r.Turns < len(turns) {
			return turns[r.Turns]
		}
		return Say("done")
	}
}

// Scripts are the scripts of every agent of a run.
type Scripts struct {
	// Main answers the main agent; nil says "done".
	Main Script
	// Subs answer the sub-agents, each by the marker its system prompt
	// carries: the first in sorted order, if it carries several.
	Subs map[string]Script
	// Other answers a sub-agent whose system prompt carries no scripted
	// marker (a built-in type, a fork); nil says "sub-agent done".
	Other Script
}

// marker is the first scripted marker the request's system prompt
// carries, "" if none.
func (s Scripts) marker(r *Request) string {
	keys := make([]string, 0, len(s.Subs))
	for k := range s.Subs {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if strings.Contains(r.System, k) {
			return k
		}
	}
	return ""
}

// answer is the turn for a classified request.
func (s Scripts) answer(r *Request) Turn {
	var t Turn
	switch {
	case r.Kind == Side:
		t = Say("ok")
	case r.Kind == Main && s.Main != nil:
		t = s.Main(r)
	case r.Kind == Main:
		t = Say("done")
	case r.Marker != "":
		t = s.Subs[r.Marker](r)
	case s.Other != nil:
		t = s.Other(r)
	default:
		t = Say("sub-agent done")
	}
	if t.Text == "" && len(t.Calls) == 0 {
		t = Say("done")
	}
	return t
}
