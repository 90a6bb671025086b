package cli

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/spawngate/spawngate/internal/decisionlog"
	"github.com/spawngate/spawngate/internal/judge"
	"github.com/spawngate/spawngate/internal/report"
)

// logFlags are --decision-log and --decision-log-input, which check and the
// hooks share with serve.
type logFlags struct {
	file  string
	input bool
}

func (c *command) logFlags(l *logFlags) {
	c.fs.StringVar(&l.file, "decision-log", "", "append one JSON line per decision to `FILE`, as serve does")
	c.fs.BoolVar(&l.input, "decision-log-input", false, "also write each document into the decision log (briefs and prompts can carry secrets)")
}

// decisionLog is a command's decision log, and what it learned of the
// documents it read.
type decisionLog struct {
	log    *decisionlog.Log
	close  func()
	input  bool
	policy string // the digest of the operator policy file
	checks string // the digest of the checks, when the operator's own judge too
	mu     sync.Mutex
	seen   map[string]documentRead // by source
}

// documentRead is a document as the log saw it read: its digest, and
// its bytes when the log keeps documents.
type documentRead struct {
	sum  string
	data []byte // only when the log keeps documents
}

// openDecisionLog opens the log the flags ask for, or returns nil.
func openDecisionLog(l logFlags, policyFile string, stdout io.Writer) (*decisionLog, error) {
	if l.file == "" {
		return nil, nil
	}
	w, closeLog, err := openLog(l.file, stdout)
	if err != nil {
		return nil, fmt.Errorf("--decision-log: %w", err)
	}
	version, _ := judge.Versions()
	d := &decisionLog{
		log:   decisionlog.New(w, decisionlog.NewID(), version, judge.ChecksDigest(), l.input),
		close: closeLog, input: l.input, seen: map[string]documentRead{},
	}
	if data, err := os.ReadFile(policyFile); err == nil {
		d.policy = judge.Digest(data)
	}
	return d, nil
}

// useGate records what judges, once the gate is built: the digest of its
// policy (a bundle's too) and of its checks (the operator's own too).
func (d *decisionLog) useGate(g *judge.Gate) {
	src := g.Sources()
	if src.PolicyDigest != "" {
		d.policy = src.PolicyDigest
	}
	if len(src.Modules) > 0 {
		d.checks = src.ChecksDigest
	}
}

// read records a document as it is read (judge.Options.OnRead).
func (d *decisionLog) read(source string, data []byte) {
	doc := documentRead{sum: decisionlog.Sum(data)}
	if d.input {
		doc.data = append([]byte(nil), data...)
	}
	d.mu.Lock()
	d.seen[source] = doc
	d.mu.Unlock()
}

// write logs one decision about a document.
func (d *decisionLog) write(path, source string, res report.Result, took time.Duration, stderr io.Writer) {
	d.mu.Lock()
	doc := d.seen[source]
	delete(d.seen, source)
	d.mu.Unlock()
	rep := &report.Report{Results: []report.Result{res}}
	err := d.log.Write(decisionlog.Decision{Path: path, Policy: d.policy, Checks: d.checks, Input: doc.data, InputSHA256: doc.sum,
		Verdict: res.Verdict, Report: rep, Err: res.Error, Took: took})
	if err != nil {
		fmt.Fprintf(stderr, "spawngate: --decision-log: %s\n", report.Clean(oneLine(err.Error())))
	}
}
