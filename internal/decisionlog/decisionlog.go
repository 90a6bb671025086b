// Package decisionlog writes the audit trail of decisions: one JSON line
// per decision, with what judged it (the digest of the policy, and of the
// checks and schemas) and what it found (each child's verdict and rule
// IDs), but never the document itself unless asked to, since briefs and
// prompts can carry secrets and nonces. Field names are those of OPA's
// decision log events where they mean the same thing (decision_id, path,
// input, result, requested_by, timestamp, labels, metrics, error).
package decisionlog

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"slices"
	"sync"
	"time"

	"github.com/spawngate/spawngate/internal/report"
)

// Log writes decision lines to a writer, one whole line per Write, safe
// for concurrent use.
type Log struct {
	w         io.Writer
	withInput bool
	labels    map[string]string
	checks    string
	mu        sync.Mutex
}

// Sum is the digest Write records of a document.
func Sum(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// New returns a log that writes to w. id names whoever writes it (a
// server instance), version the spawngate version, checks the digest of
// the checks and schemas; withInput adds each document to its line.
func New(w io.Writer, id, version, checks string, withInput bool) *Log {
	return &Log{w: w, withInput: withInput, labels: map[string]string{"id": id, "version": version}, checks: checks}
}

// Decision is what a line records.
type Decision struct {
	Path        string // what answered: /v1/check, /v1/hooks/codex, check, hook claude-code
	RequestedBy string // a remote address, or "" on the command line
	Policy      string // the digest of the operator policy that judged it
	// Checks is the digest of the checks that judged it, when they are
	// not the log's: the operator's own checks beside the built-in ones.
	Checks      string
	Input       []byte // the document; nil when none was read, or when only its digest is kept
	InputSHA256 string // the document's digest, when Input is nil
	Verdict     report.Verdict
	Report      *report.Report // nil when nothing was judged
	Err         string
	Took        time.Duration
}

type event struct {
	Labels      map[string]string `json:"labels"`
	DecisionID  string            `json:"decision_id"`
	Path        string            `json:"path"`
	Timestamp   string            `json:"timestamp"`
	RequestedBy string            `json:"requested_by,omitempty"`
	InputSHA256 string            `json:"input_sha256,omitempty"`
	Policy      string            `json:"policy"`
	Checks      string            `json:"checks"`
	Input       json.RawMessage   `json:"input,omitempty"`
	Result      result            `json:"result"`
	Error       string            `json:"error,omitempty"`
	Metrics     map[string]int64  `json:"metrics"`
}

// result is a report.Report as a decision line keeps it: the verdict and
// the rule IDs, never a message, a role or a path, which quote the
// document.
type result struct {
	Verdict report.Verdict `json:"verdict"`
	// Rules are those the plan as a whole broke (plan.children, ...).
	Rules    []string `json:"rules,omitempty"`
	Children []child  `json:"children,omitempty"`
	// Exceptions are the operator's exceptions that expired or matched
	// nothing, by their place in the policy.
	Exceptions []note `json:"exceptions,omitempty"`
}

// note is a report.ExceptionNote by its place in the policy alone.
type note struct {
	Exception int    `json:"exception"`
	Status    string `json:"status"`
}

func noteOf(n report.ExceptionNote) note { return note{n.Index, n.Status} }

// child is one child's outcome: its verdict and the rule IDs it broke,
// never the messages, which quote the document.
type child struct {
	Index   int            `json:"index"`
	Verdict report.Verdict `json:"verdict"`
	Rules   []string       `json:"rules,omitempty"`
	// Excepted are the rules an operator exception let through, with the
	// exception's place in the policy.
	Excepted []excepted `json:"excepted,omitempty"`
}

// excepted is a violation an exception let through: its rule, and the
// exception (report.Exception) by its place in the policy.
type excepted struct {
	Rule      string `json:"rule"`
	Exception int    `json:"exception"`
}

// childOf is a report.Child as a decision line keeps it: each rule that
// refuses it once, and each rule an exception let through once per
// exception, in report order.
func childOf(c report.Child) child {
	lc := child{Index: c.Index, Verdict: c.Verdict}
	for _, v := range c.Violations {
		if !v.Blocks() {
			if x := (excepted{v.Rule, v.Excepted.Index}); !slices.Contains(lc.Excepted, x) {
				lc.Excepted = append(lc.Excepted, x)
			}
		} else if !slices.Contains(lc.Rules, v.Rule) {
			lc.Rules = append(lc.Rules, v.Rule)
		}
	}
	return lc
}

// Write writes one decision's line.
func (l *Log) Write(d Decision) error {
	ev := event{
		Labels:      l.labels,
		DecisionID:  NewID(),
		Path:        d.Path,
		Timestamp:   time.Now().UTC().Format(time.RFC3339Nano),
		RequestedBy: d.RequestedBy,
		Policy:      d.Policy,
		Checks:      l.checks,
		Result:      result{Verdict: d.Verdict},
		Error:       d.Err,
		Metrics:     map[string]int64{"timer_decision_ns": d.Took.Nanoseconds()},
	}
	if d.Checks != "" {
		ev.Checks = d.Checks
	}
	ev.InputSHA256 = d.InputSHA256
	if d.Input != nil {
		sum := sha256.Sum256(d.Input)
		ev.InputSHA256 = hex.EncodeToString(sum[:])
		if l.withInput {
			if json.Valid(d.Input) {
				ev.Input = d.Input
			} else {
				text, _ := json.Marshal(string(d.Input))
				ev.Input = text
			}
		}
	}
	if d.Report != nil {
		for _, res := range d.Report.Results {
			for _, v := range res.Violations {
				if !slices.Contains(ev.Result.Rules, v.Rule) {
					ev.Result.Rules = append(ev.Result.Rules, v.Rule)
				}
			}
			for _, n := range res.Exceptions {
				ev.Result.Exceptions = append(ev.Result.Exceptions, noteOf(n))
			}
			for _, c := range res.Children {
				ev.Result.Children = append(ev.Result.Children, childOf(c))
			}
		}
	}
	line, err := json.Marshal(ev)
	if err != nil {
		return err
	}
	line = append(line, '\n')
	l.mu.Lock()
	defer l.mu.Unlock()
	_, err = l.w.Write(line)
	return err
}

// NewID is a random (version 4) UUID, for decision and instance ids.
func NewID() string {
	var b [16]byte
	rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b[:])
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}
