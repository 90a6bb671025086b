package suite

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/spawngate/spawngate/internal/e2e/fakemodel"
)

// MarkerPrefix starts every marker a suite writes into a definition's
// body: a child of that definition carries it in its system prompt.
const MarkerPrefix = "E2E-MARKER-"

// Marker is the marker of the definition named name.
func Marker(name string) string { return MarkerPrefix + strings.ToUpper(name) }

// HookCall is one run of a hook, as the recording wrapper saw it.
type HookCall struct {
	Label   string // the wrapper's first argument: which hook this was
	Stdin   string
	Payload map[string]any
	Env     map[string]string
	Cwd     string // the hook process's working folder
	Stdout  string
	Stderr  string
	Exit    string
}

// Outcome is everything one client run left behind that every suite
// records alike; a suite's own outcome type embeds it and adds what its
// client leaves besides.
type Outcome struct {
	Root, Home string
	Requests   []*fakemodel.Request
	Hooks      []HookCall
	Stdout     string
	Stderr     string
	Err        error
}

// A Run is a suite's own outcome type, which embeds Outcome: what the
// checks and Judge take.
type Run interface{ Base() *Outcome }

// Base is the Outcome itself, for a type that embeds it.
func (o *Outcome) Base() *Outcome { return o }

// Started says whether the child on name's definition really ran: a model
// request's system prompt carries its marker.
func (o *Outcome) Started(name string) bool { return len(o.ChildRequests(name)) > 0 }

// Mentions says whether any model request carries name's marker anywhere:
// a refused child's must never reach the model at all.
func (o *Outcome) Mentions(name string) bool {
	for _, r := range o.Requests {
		if bytes.Contains(r.Body, []byte(Marker(name))) {
			return true
		}
	}
	return false
}

// ChildRequests are the requests of the child on name's definition.
func (o *Outcome) ChildRequests(name string) []*fakemodel.Request {
	var out []*fakemodel.Request
	for _, r := range o.Requests {
		if strings.Contains(r.System, Marker(name)) {
			out = append(out, r)
		}
	}
	return out
}

// BuiltinRequests are the requests of children with no marker of ours.
func (o *Outcome) BuiltinRequests() []*fakemodel.Request {
	var out []*fakemodel.Request
	for _, r := range o.Requests {
		if r.Kind == fakemodel.Sub && r.Marker == "" && !strings.Contains(r.System, MarkerPrefix) {
			out = append(out, r)
		}
	}
	return out
}

// Result is the text of the tool result of callID in any request's
// history (the last one holding it), "" when none does.
func (o *Outcome) Result(callID string) string {
	var out string
	for _, r := range o.Requests {
		if x := r.Output(callID); x != "" {
			out = x
		}
	}
	return out
}

// Describe is a short account of the run for failure messages.
func (o *Outcome) Describe() string {
	var b strings.Builder
	fmt.Fprintf(&b, "client error: %v\n", o.Err)
	for _, r := range o.Requests {
		fmt.Fprintf(&b, "request %d %s %s kind=%s marker=%q model=%s tools=%v calls=%v\n", r.Seq, r.Method, r.Path, r.Kind, r.Marker, r.Model, r.Tools, r.Calls)
		for _, x := range r.Results {
			fmt.Fprintf(&b, "  result %s: %q\n", x.CallID, Trim(x.Text, 300))
		}
	}
	for _, h := range o.Hooks {
		fmt.Fprintf(&b, "hook %s: %s exit=%s stdout=%q stderr=%q\n", h.Label, Trim(h.Stdin, 400), h.Exit, Trim(h.Stdout, 300), Trim(h.Stderr, 300))
	}
	fmt.Fprintf(&b, "client stdout: %s\n", Trim(o.Stdout, 1500))
	if o.Stderr != "" {
		fmt.Fprintf(&b, "client stderr: %s\n", Trim(o.Stderr, 1500))
	}
	return b.String()
}

// Trim is s cut to n bytes, with "..." where it was cut.
func Trim(s string, n int) string {
	if len(s) > n {
		return s[:n] + "..."
	}
	return s
}
