package fakemodel

import "testing"

// The questions a script asks of a request, on a forked child's: its
// history holds its parent's call (main_spawn) besides its own two.
func TestRequestQuestions(t *testing.T) {
	r := &Request{
		System: "SYSTEM",
		Texts:  []string{"one", "two"},
		Tools:  []string{"exec_command", "multi_agent_v1.spawn_agent"},
		Results: []Result{
			{CallID: "main_spawn", Text: `{"agent_id":"x"}`},
			{CallID: "reader_cmd", Text: "exit 0"},
			{CallID: "reader_more", Text: ""},
		},
	}
	if got := r.Text(); got != "SYSTEM\none\ntwo" {
		t.Errorf("Text() = %q", got)
	}
	for tool, want := range map[string]bool{"exec_command": true, "multi_agent_v1.spawn_agent": true, "spawn_agent": false} {
		if r.HasTool(tool) != want {
			t.Errorf("HasTool(%q) = %v", tool, !want)
		}
	}
	for id, want := range map[string]bool{"reader_more": true, "reader_wait": false} {
		if r.HasResult(id) != want {
			t.Errorf("HasResult(%q) = %v", id, !want)
		}
	}
	if got := r.Output("reader_cmd"); got != "exit 0" {
		t.Errorf(`Output("reader_cmd") = %q`, got)
	}
	// "read" is not the reader's prefix: only a whole prefix and its "_"
	// count.
	for prefix, want := range map[string]int{"reader": 2, "main": 1, "read": 0} {
		if got := r.Step(prefix); got != want {
			t.Errorf("Step(%q) = %d, want %d", prefix, got, want)
		}
	}
}
