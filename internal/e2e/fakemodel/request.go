package fakemodel

import (
	"net/http"
	"slices"
	"strings"
	"time"
)

// Kind is who a request is for, as the server told it.
type Kind string

// The kinds of request. The zero Kind marks a request that asked for no
// model turn (a model listing, a token count) or one the codec could not
// read: it is recorded, never scripted.
const (
	// Main is the session's own agent: offered tools, and not a sub-agent.
	Main Kind = "main"
	// Sub is a sub-agent: its system prompt carries a scripted marker, or
	// the client marked it so (Host.IsSub).
	Sub Kind = "sub"
	// Side is anything else the client asks the model, with no tools
	// offered: a title, a summary, a classifier. It gets a harmless answer.
	Side Kind = "side"
)

// Request is one request the client made, kept whole, with what a codec
// read from it in terms no host owns.
type Request struct {
	Seq    int       // 1 for the first request, in the order they arrived
	At     time.Time // when it arrived, for timing a run
	Method string
	Path   string
	Header http.Header
	Body   []byte // as sent, decompressed

	// The rest is set for a model turn only.

	Kind Kind
	// Marker is the scripted marker that chose a sub-agent's script, ""
	// when none did.
	Marker string
	Model  string
	Stream bool
	// System is the system prompt: every text of it, one a line (the
	// Messages API's system blocks; the Responses API's instructions and
	// developer messages; the Chat API's system and developer messages).
	System string
	// Texts are the other messages' texts, one per block, in order; tool
	// results are in Results instead.
	Texts []string
	// Tools are the names of the tools offered, in order; a namespaced
	// tool of the Responses API as "namespace.name".
	Tools []string
	// Turns is how many assistant turns the history replays: how far into
	// its script the agent is.
	Turns int
	// Calls are the names of the tool calls the history holds, in order.
	Calls []string
	// Results are the tool results the history holds, in order.
	Results []Result
	// JSON is the body decoded, for what one host alone reads.
	JSON map[string]any
}

// Result is one tool result a request carries.
type Result struct {
	CallID  string
	Text    string // its visible text
	IsError bool
}

// Text is every text the request carries but tool results: the system
// prompt, then the messages.
func (r *Request) Text() string {
	return strings.Join(append([]string{r.System}, r.Texts...), "\n")
}

// HasTool reports whether the request offered the tool.
func (r *Request) HasTool(name string) bool { return slices.Contains(r.Tools, name) }

// HasResult reports whether the history holds the result of the call.
func (r *Request) HasResult(callID string) bool {
	return slices.ContainsFunc(r.Results, func(x Result) bool { return x.CallID == callID })
}

// Output is the text of the call's result, "" if there is none.
func (r *Request) Output(callID string) string {
	for _, x := range r.Results {
		if x.CallID == callID {
			return x.Text
		}
	}
	return ""
}

// Step is how many results of its own calls an agent whose call ids start
// with prefix+"_" has had: where it is in a script that names its calls. A
// forked child's history also holds its parent's calls, so counting only
// its own keeps it at step 0 on its first request, where Turns would not.
func (r *Request) Step(prefix string) int {
	n := 0
	for _, x := range r.Results {
		if strings.HasPrefix(x.CallID, prefix+"_") {
			n++
		}
	}
	return n
}
