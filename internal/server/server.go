package server

import (
	"bytes"
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"net/url"
	"path"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/spawngate/spawngate/internal/decisionlog"
	"github.com/spawngate/spawngate/internal/hook"
	"github.com/spawngate/spawngate/internal/host"
	"github.com/spawngate/spawngate/internal/hosts"
	"github.com/spawngate/spawngate/internal/judge"
	"github.com/spawngate/spawngate/internal/ledger"
	"github.com/spawngate/spawngate/internal/report"
	"github.com/spawngate/spawngate/internal/report/render"
)

// Config is how a server judges and answers.
type Config struct {
	// PolicyFile is the operator's policy, read at start and on Reload.
	PolicyFile string
	Gate       judge.Options
	// MaxListed bounds the violations one answer lists.
	MaxListed int
	// MaxConcurrent bounds the decisions evaluated at once, and the bodies
	// held in memory at once (MaxConcurrent of Gate.Limits.MaxBytes): a
	// request reserves its body's bytes before it reads them. A request
	// that waits past its timeout for memory or a turn is answered busy.
	MaxConcurrent int
	// MaxWaiting bounds the requests that wait for memory or a turn; one
	// more is answered busy at once, its body unread. 0: DefaultMaxWaiting.
	MaxWaiting int
	// ReadTimeout, when set, is how long a request may take to send its
	// body once the server is ready to read it: the wait for memory does
	// not count against the connection's read deadline.
	ReadTimeout time.Duration
	// AgentsDirs, Home and Budget are the hooks' (see hook.Config). The
	// environment a hook reads is the session's, which an HTTP hook sends
	// in headers (sessionEnv), never the server's own.
	AgentsDirs []string
	Home       string
	Budget     json.Number
	// Ledger keeps the session ledgers when the operator policy sets
	// brief_retask: a policy that does cannot be served without one the
	// server can read and write (LedgerError). Replicas that serve one
	// session must share it (ledger.Redis). A request never chooses it.
	Ledger ledger.Store
	// Token, when set, must come as "Authorization: Bearer <token>" on
	// the decision endpoints, and on /metrics too when MetricsAuth is set.
	// The probes (/healthz, /readyz) never ask for it.
	Token       []byte
	MetricsAuth bool
	// DecisionLog, when set, gets one JSON line per decision; LogInput adds
	// the request body to each line.
	DecisionLog io.Writer
	LogInput    bool
	// Wording phrases why a document could not be judged, or the gate
	// could not be built, as the command line the server was started from
	// would (a limit with its flag); the zero Wording names no flag.
	Wording judge.Wording
	Logger  *slog.Logger
	// Version and Checks name what judges: the spawngate version and the
	// digest of the embedded checks and schemas.
	Version, Checks string
}

// Server answers decisions. Build one with New; Handler serves it.
type Server struct {
	cfg      Config
	state    atomic.Pointer[state]
	draining atomic.Bool
	turns    chan struct{}
	admit    *admission
	held     atomic.Int64 // bytes of request bodies read and not yet answered
	peakHeld atomic.Int64 // the most held at once (tests read it)
	metrics  *metrics
	log      *decisionlog.Log // nil without a decision log
	reloadMu sync.Mutex
	tried    string // the fingerprint of the sources last loaded, or tried (judge.Fingerprint); under reloadMu
}

// decision is what the decision log records of one answer.
type decision struct {
	path        string
	requestedBy string
	policy      string
	checks      string // the digest of the checks that judged it
	input       []byte
	verdict     report.Verdict
	report      *report.Report
	err         string
}

// logDecision writes the decision's line, when there is a log.
func (s *Server) logDecision(d decision, took time.Duration) {
	if s.log == nil {
		return
	}
	err := s.log.Write(decisionlog.Decision{Path: d.path, RequestedBy: d.requestedBy, Policy: d.policy, Checks: d.checks, Input: d.input,
		Verdict: d.verdict, Report: d.report, Err: d.err, Took: took})
	if err != nil {
		s.metrics.errors.WithLabelValues("decision-log").Inc()
		s.cfg.Logger.Error("writing the decision log", "error", err.Error())
	}
}

// state is one policy version: a request is judged entirely by the one it
// loaded when it started.
type state struct {
	gate   *judge.Gate
	digest string // sha256 of the policy document's bytes
	checks string // the digest of the checks that judge when the operator's own do too; "" for Config.Checks
	loaded time.Time
}

// New builds a server and reads the policy. An error is a policy the
// server cannot start with.
func New(ctx context.Context, cfg Config) (*Server, error) {
	s, err := build(cfg)
	if err != nil {
		return nil, err
	}
	st, err := s.load(ctx)
	if err != nil {
		return nil, err
	}
	s.state.Store(st)
	return s, nil
}

// NewWithoutPolicy builds a server that serves no operator policy of its
// own: its decisions are judged by the gates its caller's Deciders choose
// per request (Decisions), with its limits, admission, timeouts, token and
// statuses. Config.PolicyFile and Config.Gate's checks are not read;
// Handler is not for it (it has no /v1/check to serve, and a hook it
// answered would have no policy to judge by): Handler panics.
func NewWithoutPolicy(cfg Config) (*Server, error) { return build(cfg) }

func build(cfg Config) (*Server, error) {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewJSONHandler(io.Discard, nil))
	}
	if cfg.MaxConcurrent <= 0 {
		cfg.MaxConcurrent = 1
	}
	if cfg.MaxWaiting <= 0 {
		cfg.MaxWaiting = DefaultMaxWaiting
	}
	if cfg.MetricsAuth && cfg.Token == nil {
		return nil, errors.New("metrics are to require the bearer token, and no token is set")
	}
	if cfg.Gate.Limits.MaxBytes <= 0 {
		return nil, errors.New("no limit on the size of a body: the server could not bound its memory")
	}
	s := &Server{cfg: cfg, turns: make(chan struct{}, cfg.MaxConcurrent), metrics: newMetrics(),
		admit: newAdmission(cfg.MaxConcurrent+cfg.MaxWaiting, int64(cfg.MaxConcurrent)*cfg.Gate.Limits.MaxBytes)}
	if cfg.DecisionLog != nil {
		s.log = decisionlog.New(cfg.DecisionLog, decisionlog.NewID(), cfg.Version, cfg.Checks, cfg.LogInput)
	}
	return s, nil
}

// load builds the gate from the policy, the operator's checks and the
// bundle as they are now.
func (s *Server) load(ctx context.Context) (*state, error) {
	s.tried = judge.Fingerprint(s.cfg.Gate, s.cfg.PolicyFile)
	opts := s.cfg.Gate
	opts.CompileAll = true // start-up is paid once; no request waits for a compile
	g, err := judge.New(ctx, opts, s.cfg.PolicyFile)
	if je := (*judge.Error)(nil); errors.As(err, &je) && je.Kind == judge.NoPolicy {
		// Only a bundle that carries none can leave the gate without one
		// (serve needs a policy file or a bundle): it says so in the
		// server's words.
		said := *je
		said.Msg = "the bundle carries no operator policy, and no policy file is given: the server judges every decision by the operator's policy"
		err = &said
	}
	if err != nil {
		return nil, errors.New(s.gateLine(err))
	}
	if err := g.Ready(); err != nil {
		return nil, err
	}
	if err := s.checkLedger(ctx, g); err != nil {
		return nil, err
	}
	src := g.Sources()
	st := &state{gate: g, digest: src.PolicyDigest, loaded: time.Now()}
	if len(src.Modules) > 0 {
		st.checks = src.ChecksDigest // else the log's, Config.Checks
	}
	return st, nil
}

// gateLine phrases why the gate could not be built (a policy, a folder of
// checks, a module or a bundle that cannot be used), naming the setting
// that gave it as the Wording spells it.
func (s *Server) gateLine(err error) string {
	line, _ := s.cfg.Wording.Gate(err, s.cfg.Gate, s.cfg.PolicyFile)
	return line
}

// LedgerError is why a policy that sets brief_retask cannot be served:
// no session ledger is configured, or the one configured cannot be read
// and written now.
type LedgerError struct {
	// Policy names the operator policy; Err is the ledger's error, nil
	// when none is configured.
	Policy string
	Err    error
}

func (e *LedgerError) Error() string {
	if e.Err == nil {
		return e.Policy + ": /brief_retask: the operator policy turns the session checks on, and no session ledger is configured"
	}
	return e.Policy + ": /brief_retask: the operator policy turns the session checks on, and the session ledger cannot be used: " + e.Err.Error()
}

func (e *LedgerError) Unwrap() error { return e.Err }

// checkLedger makes sure that a policy that keeps session ledgers has one
// it can read and write, within the decision timeout.
func (s *Server) checkLedger(ctx context.Context, g *judge.Gate) error {
	if _, on := g.Operator()["brief_retask"]; !on {
		return nil
	}
	policy := g.Sources().Policy
	if policy == "" {
		policy = "operator policy"
	}
	if s.cfg.Ledger == nil {
		return &LedgerError{Policy: policy}
	}
	ctx, cancel := context.WithTimeout(ctx, s.cfg.Gate.Timeout)
	defer cancel()
	if err := s.cfg.Ledger.Check(ctx); err != nil {
		return &LedgerError{Policy: policy, Err: err}
	}
	return nil
}

// noLedger is the store of a server given none: it serves no policy that
// sets brief_retask (checkLedger), and if one came it would refuse, never
// let a request's headers choose a folder.
type noLedger struct{}

func (noLedger) Open(context.Context, string, int64) (ledger.Session, error) {
	return nil, errors.New("no session ledger is configured")
}
func (noLedger) Check(context.Context) error { return errors.New("no session ledger is configured") }
func (noLedger) Close() error                { return nil }
func (noLedger) String() string              { return "session ledger" }

// Reload reads the policy again and, if it can be judged with, serves it
// from the next request on. A policy that breaks keeps the old one
// serving; the failure is logged and counted, and returned.
func (s *Server) Reload(ctx context.Context) error {
	s.reloadMu.Lock()
	defer s.reloadMu.Unlock()
	st, err := s.load(ctx)
	if err != nil {
		s.metrics.reloadFailures.Inc()
		s.cfg.Logger.Error("reload failed; the old policy keeps serving", "error", err.Error())
		return err
	}
	old := s.state.Swap(st)
	s.metrics.reloads.Inc()
	if old == nil || old.digest != st.digest || old.checks != st.checks {
		s.cfg.Logger.Info("policy reloaded", "policy", st.gate.Sources().Policy, "digest", st.digest, "checks", st.checks)
	}
	return nil
}

// ReloadIfChanged reloads when what the gate is built from (the policy
// file, the folders of checks, the bundle) changed on disk since it was
// last loaded or tried: a broken change is not tried again until it
// changes once more. It tells whether it tried.
func (s *Server) ReloadIfChanged(ctx context.Context) (bool, error) {
	s.reloadMu.Lock()
	changed := judge.Fingerprint(s.cfg.Gate, s.cfg.PolicyFile) != s.tried
	s.reloadMu.Unlock()
	if !changed {
		return false, nil
	}
	return true, s.Reload(ctx)
}

// ChecksDigest is the digest of the checks serving now: the embedded
// ones, with the operator's own when there are any.
func (s *Server) ChecksDigest() string {
	if c := s.state.Load().checks; c != "" {
		return c
	}
	return s.cfg.Checks
}

// PolicyDigest is the digest of the policy serving now.
func (s *Server) PolicyDigest() string { return s.state.Load().digest }

// Drain makes the server refuse new decisions (503) and report itself not
// ready, while those in flight finish.
func (s *Server) Drain() { s.draining.Store(true) }

// Handler is the server's routes. A request is routed by its path exactly
// as it was sent, never cleaned: http.ServeMux answers a path it would
// clean (/v1/hooks//codex, /v1/hooks/./codex, /v1/hooks/x/../codex) with
// a redirect, and no host reads a redirect as a refusal. A path that is
// not exactly an endpoint's is answered as unknown: refused as a hook
// when it is, or would be once decoded or cleaned, /v1/hooks or a path
// below it (hookPath), and 404 otherwise.
func (s *Server) Handler() http.Handler {
	if s.state.Load() == nil {
		// A hook answered without a policy would panic on the request,
		// and a dropped connection is a pass to Claude Code's HTTP hook:
		// refuse to be served at all.
		panic("server: Handler of a server built without a policy (NewWithoutPolicy): serve its Decisions instead")
	}
	routes := map[string]http.HandlerFunc{"/v1/check": s.check}
	for _, a := range hosts.All {
		routes["/v1/hooks/"+a.Name()] = s.hook(a)
	}
	routes["/healthz"] = func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		io.WriteString(w, "ok\n")
	}
	routes["/readyz"] = func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		if s.draining.Load() || s.state.Load() == nil {
			w.WriteHeader(http.StatusServiceUnavailable)
			io.WriteString(w, "draining\n")
			return
		}
		io.WriteString(w, "ready\n")
	}
	metrics := s.metrics.handler()
	routes["/metrics"] = func(w http.ResponseWriter, r *http.Request) {
		if s.cfg.MetricsAuth && !s.authorized(r) {
			w.Header().Set("WWW-Authenticate", `Bearer realm="spawngate"`)
			http.Error(w, "a bearer token is required", http.StatusUnauthorized)
			return
		}
		metrics.ServeHTTP(w, r)
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if serve, ok := routes[r.URL.EscapedPath()]; ok {
			serve(w, r)
			return
		}
		if hookPath(r.URL) {
			// A typo, a trailing slash, another case, a path a client
			// or proxy may clean into a hook's: still answered as a
			// hook, refused. A 404 would let Claude Code's HTTP hook
			// spawn the child.
			s.unknownHook(w, r)
			return
		}
		http.NotFound(w, r)
	})
}

// hookPath tells whether a path is /v1/hooks or below it as sent, once
// decoded, or once decoded and cleaned: a client or a proxy on the way
// might send any of them for a hook's.
func hookPath(u *url.URL) bool {
	for _, p := range []string{u.EscapedPath(), u.Path, path.Clean(u.Path)} {
		if p == "/v1/hooks" || strings.HasPrefix(p, "/v1/hooks/") {
			return true
		}
	}
	return false
}

// authorized tells whether a request carries the token, compared in
// constant time.
func (s *Server) authorized(r *http.Request) bool {
	if s.cfg.Token == nil {
		return true
	}
	got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	return ok && subtle.ConstantTimeCompare([]byte(got), s.cfg.Token) == 1
}

// DefaultMaxWaiting is how many requests may wait for memory or a turn
// unless told otherwise.
const DefaultMaxWaiting = 64

// rejection is why a request was not judged: its status on /v1/check, its
// kind for the metrics and the log, and the reason.
type rejection struct {
	status int
	kind   string
	msg    string
}

// take brings a request to the point where it may be judged: admitted,
// its body's bytes reserved, its body read, and a turn to evaluate, in
// that order, each wait within ctx. done gives everything back; it is
// nil when take refuses.
func (s *Server) take(ctx context.Context, w http.ResponseWriter, r *http.Request) (body []byte, done func(), why *rejection) {
	max := s.cfg.Gate.Limits.MaxBytes
	if r.ContentLength > max { // refused unread
		return nil, nil, &rejection{http.StatusRequestEntityTooLarge, "limit", fmt.Sprintf("the body is larger than %d bytes (limit --max-bytes)", max)}
	}
	if !s.admit.admit() {
		w.Header().Set("Retry-After", "1")
		return nil, nil, &rejection{http.StatusServiceUnavailable, "busy", "the server is busy: as many requests as it holds are waiting already"}
	}
	s.metrics.waiting.Inc()
	n := r.ContentLength
	if n < 0 { // chunked: it may be as large as allowed
		n = max
	}
	var turn bool
	undo := func() {
		if turn {
			<-s.turns
			s.metrics.inFlight.Dec()
		} else {
			s.metrics.waiting.Dec()
		}
		s.held.Add(-int64(len(body)))
		s.admit.leave()
	}
	waited := func() *rejection {
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			w.Header().Set("Retry-After", "1")
			return &rejection{http.StatusServiceUnavailable, "busy", "the server is busy: no turn to evaluate came within the request's timeout"}
		}
		return &rejection{http.StatusServiceUnavailable, "interrupted", "the request ended, or the server is stopping, before a turn to evaluate came"}
	}
	if err := s.admit.reserve(ctx, n); err != nil {
		undo()
		return nil, nil, waited()
	}
	undo = func(undo func()) func() { return func() { undo(); s.admit.release(n) } }(undo)
	if s.cfg.ReadTimeout > 0 {
		// The wait was the server's: the client has its whole read
		// timeout from now to send what it was holding back.
		http.NewResponseController(w).SetReadDeadline(time.Now().Add(s.cfg.ReadTimeout))
	}
	body, err := s.read(w, r, n)
	var tooLarge *http.MaxBytesError
	switch {
	case errors.As(err, &tooLarge):
		undo()
		return nil, nil, &rejection{http.StatusRequestEntityTooLarge, "limit", fmt.Sprintf("the body is larger than %d bytes (limit --max-bytes)", max)}
	case err != nil:
		undo()
		return nil, nil, &rejection{http.StatusBadRequest, "document", "the body cannot be read: " + err.Error()}
	}
	select {
	case s.turns <- struct{}{}:
		turn = true
		s.metrics.waiting.Dec()
		s.metrics.inFlight.Inc()
	case <-ctx.Done():
		undo()
		return nil, nil, waited()
	}
	return body, undo, nil
}

// read reads a request body of n bytes, or of at most n bytes when its
// length is not known, counting what it holds. A body of known length
// is read into one buffer of its size, never grown.
func (s *Server) read(w http.ResponseWriter, r *http.Request, n int64) ([]byte, error) {
	var b []byte
	var err error
	if r.ContentLength >= 0 {
		b = make([]byte, n)
		var got int
		got, err = io.ReadFull(heldReader{r.Body, s}, b)
		b = b[:got]
	} else {
		b, err = io.ReadAll(heldReader{http.MaxBytesReader(w, r.Body, n), s})
	}
	if err != nil {
		s.held.Add(-int64(len(b)))
		return nil, err
	}
	return b, nil
}

// heldReader counts the bytes read into the server's memory.
type heldReader struct {
	r io.Reader
	s *Server
}

func (h heldReader) Read(p []byte) (int, error) {
	n, err := h.r.Read(p)
	if held := h.s.held.Add(int64(n)); n > 0 {
		for peak := h.s.peakHeld.Load(); held > peak && !h.s.peakHeld.CompareAndSwap(peak, held); peak = h.s.peakHeld.Load() {
		}
	}
	return n, err
}

// deadline bounds a request from its arrival to its answer by the gate's
// timeout: the waits for memory and a turn, the reading and the judging
// together, so that the answer comes before --write-timeout cuts it off.
func (s *Server) deadline(r *http.Request) (context.Context, context.CancelFunc) {
	if s.cfg.Gate.Timeout <= 0 {
		return context.WithCancel(r.Context())
	}
	return context.WithTimeout(r.Context(), s.cfg.Gate.Timeout)
}

// sourceFor names a request body by its media type, so that its syntax is
// read as declared: JSON, or YAML.
func sourceFor(contentType string) (string, bool) {
	mt, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		return "", false
	}
	switch mt {
	case "application/json":
		return "request.json", true
	case "application/yaml", "application/x-yaml", "text/yaml", "text/x-yaml":
		return "request.yaml", true
	}
	return "", false
}

func (s *Server) check(w http.ResponseWriter, r *http.Request) {
	st := s.state.Load() // the one policy version this request is judged by
	s.decide(w, r, st, Decider{
		Path: "/v1/check",
		Judge: func(ctx context.Context, source string, body []byte) (report.Result, error) {
			return st.gate.JudgeBytes(ctx, source, body, s.cfg.MaxListed)
		},
		Answer: answerJSON,
	})
}

// answerJSON is /v1/check's answer: the JSON report.
func answerJSON(w http.ResponseWriter, status int, rep *report.Report) {
	var b bytes.Buffer
	render.JSON{}.Render(&b, rep)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(b.Bytes())
}

// Decider is a decision endpoint that judges as /v1/check does, by a gate
// its Judge chooses for each request: spawngate playground's, whose
// requests bring their own policy.
type Decider struct {
	// Path names the endpoint in the metrics and the decision log.
	Path string
	// Judge judges the request's body, named source by its media type
	// (request.json or request.yaml), within ctx, the request's deadline.
	// An error is reported as /v1/check reports the gate's.
	Judge func(ctx context.Context, source string, body []byte) (report.Result, error)
	// Answer writes the answer: status is /v1/check's for the same
	// outcome, rep the report it would carry, finished.
	Answer func(w http.ResponseWriter, status int, rep *report.Report)
	// JSONOnly refuses a YAML body as another media type (415), for an
	// endpoint whose request is a JSON object of its own.
	JSONOnly bool
}

// Decisions serves d with /v1/check's rules: the same refusals in the
// same order (not a POST, no token, shutting down, another media type),
// the same admission, memory reservation, turns and timeout, and the same
// status for every outcome.
func (s *Server) Decisions(d Decider) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) { s.decide(w, r, s.state.Load(), d) }
}

// decide answers one decision request judged by dec, the operator policy
// of st (nil for a server that serves none) named in the log.
func (s *Server) decide(w http.ResponseWriter, r *http.Request, st *state, dec Decider) {
	start := time.Now()
	d := decision{path: dec.Path, requestedBy: r.RemoteAddr}
	if st != nil {
		d.policy, d.checks = st.digest, st.checks
	}
	answer := func(status int, rep *report.Report, kind string) {
		rep.Finish()
		dec.Answer(w, status, rep)
		s.metrics.observe(string(rep.Verdict), kind, rep, time.Since(start))
		d.verdict, d.report = rep.Verdict, rep
		s.logDecision(d, time.Since(start))
	}
	fail := func(status int, kind, msg string) {
		d.err = msg
		answer(status, &report.Report{Error: msg, Results: []report.Result{}}, kind)
	}
	switch {
	case r.Method != http.MethodPost:
		w.Header().Set("Allow", http.MethodPost)
		fail(http.StatusMethodNotAllowed, "usage", "POST a plan document to "+dec.Path)
		return
	case !s.authorized(r):
		w.Header().Set("WWW-Authenticate", `Bearer realm="spawngate"`)
		fail(http.StatusUnauthorized, "unauthorized", "a bearer token is required")
		return
	case s.draining.Load():
		fail(http.StatusServiceUnavailable, "draining", "the server is shutting down")
		return
	}
	source, ok := sourceFor(r.Header.Get("Content-Type"))
	switch {
	case dec.JSONOnly && source != "request.json":
		fail(http.StatusUnsupportedMediaType, "media-type", "the body must be application/json")
		return
	case !ok:
		fail(http.StatusUnsupportedMediaType, "media-type", "the body must be application/json or application/yaml")
		return
	}
	ctx, cancel := s.deadline(r)
	defer cancel()
	body, done, why := s.take(ctx, w, r)
	if why != nil {
		fail(why.status, why.kind, why.msg)
		return
	}
	d.input = body
	type judged struct {
		res report.Result
		err error
	}
	out, inTime, free := onTime(ctx, done, func() judged {
		res, err := dec.Judge(ctx, source, body)
		return judged{res, err}
	}, func(p any) judged { return judged{err: internalError(p)} })
	defer free() // after the answer: the body is held until it is written
	if !inTime {
		out.err = s.lateError(ctx, source)
	}
	res, err := out.res, out.err
	if err != nil {
		var e *judge.Error
		kind, status := "internal", http.StatusInternalServerError
		if errors.As(err, &e) {
			kind = e.Kind.String()
			switch e.Kind {
			case judge.Document, judge.Limit, judge.NoPolicy:
				status = http.StatusUnprocessableEntity
			case judge.Timeout:
				status = http.StatusGatewayTimeout
			case judge.Interrupted:
				status = http.StatusServiceUnavailable
			}
		}
		line := s.cfg.Wording.Line(err)
		d.err = line
		answer(status, &report.Report{Results: []report.Result{report.Failed(source, line, nil)}}, kind)
		return
	}
	answer(http.StatusOK, &report.Report{Results: []report.Result{res}}, "")
}

// hook answers a host's hook payload in the host's protocol. Every answer
// is 200: a pass is an empty body; a refusal, and anything the server
// cannot judge (a bad payload, a missing token, a timeout, shutting
// down), is the deny JSON, because Claude Code lets the spawn through on
// an answer that is not 2xx, and Codex on anything but a deny.
func (s *Server) hook(adapter host.Adapter) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		d := decision{path: "/v1/hooks/" + adapter.Name(), requestedBy: r.RemoteAddr, policy: s.state.Load().digest, checks: s.state.Load().checks}
		event := "" // until the payload says
		deny := func(kind, reason string) {
			w.Header().Set("Content-Type", "application/json")
			w.Write(adapter.Deny(event, reason))
			d.verdict = report.Block
			if kind != "" {
				d.err, d.verdict = reason, report.NotJudged
			}
			s.metrics.observe(string(d.verdict), kind, d.report, time.Since(start))
			s.logDecision(d, time.Since(start))
		}
		cannot := func(kind, why string) { deny(kind, "spawngate could not judge this sub-agent, so it is refused: "+why) }
		switch {
		case r.Method != http.MethodPost:
			cannot("usage", "the hook must POST its payload")
			return
		case !s.authorized(r):
			cannot("unauthorized", "the hook's request carries no valid bearer token")
			return
		case s.draining.Load():
			cannot("draining", "the server is shutting down")
			return
		}
		st := s.state.Load()
		d.policy, d.checks = st.digest, st.checks
		ctx, cancel := s.deadline(r)
		defer cancel()
		body, done, why := s.take(ctx, w, r)
		if why != nil {
			if why.kind == "limit" || why.kind == "document" {
				cannot("limit", fmt.Sprintf("the payload cannot be read or is larger than %d bytes", s.cfg.Gate.Limits.MaxBytes))
				return
			}
			cannot(why.kind, why.msg)
			return
		}
		d.input = body
		store := s.cfg.Ledger
		if store == nil {
			store = noLedger{}
		}
		cfg := hook.Config{Host: adapter, AgentsDirs: s.cfg.AgentsDirs, Home: s.cfg.Home, Budget: s.cfg.Budget, Getenv: sessionEnv(r), Ledger: store}
		dec, inTime, free := onTime(ctx, done, func() hook.Decision {
			return hook.Decide(ctx, st.gate, cfg, body)
		}, func(p any) hook.Decision { return hook.Decision{Kind: hook.Fail, Err: internalError(p)} })
		defer free()
		if !inTime {
			dec = hook.Decision{Kind: hook.Fail, Err: s.lateError(ctx, host.PayloadSource)}
		}
		event = dec.Event
		if dec.Plan != nil {
			d.report = &report.Report{Results: []report.Result{dec.Result}}
		}
		switch dec.Kind {
		case hook.Ignore, hook.Pass:
			d.verdict = report.Pass
			if dec.Kind == hook.Ignore {
				d.verdict = "ignored"
			}
			w.WriteHeader(http.StatusOK)
			s.metrics.observe(string(report.Pass), "", d.report, time.Since(start))
			s.logDecision(d, time.Since(start))
		case hook.Deny:
			deny("", dec.Reason)
		default:
			kind := "internal"
			var e *judge.Error
			if errors.As(dec.Err, &e) {
				kind = e.Kind.String()
			}
			cannot(kind, s.cfg.Wording.Line(dec.Err))
		}
	}
}

// answerGrace is how long past a request's deadline the server waits for
// the work to say itself that it ran out of time (every step looks at its
// context, and most stop at once) before it answers for it.
const answerGrace = 100 * time.Millisecond

// onTime runs work on a goroutine of its own, which holds the request's
// turn (release) until it returns, and waits for it until ctx ends and
// answerGrace after. inTime is false when the work did not return by
// then: the request is answered on time all the same, never dropped, and
// the work goes on to its end on its own, still holding its turn, so no
// more work runs at once than --max-concurrent allows (a step that cannot
// be interrupted, such as the schema validator on a huge document, ends
// when it ends). free, called once the answer is written, lets the turn
// go when the work has returned; panicked turns a panic in the work into
// its result.
func onTime[T any](ctx context.Context, release func(), work func() T, panicked func(any) T) (v T, inTime bool, free func()) {
	var once sync.Once
	let := func() { once.Do(release) }
	results := make(chan T, 1)
	go func() {
		defer func() {
			if p := recover(); p != nil {
				results <- panicked(p)
			}
		}()
		results <- work()
	}()
	select {
	case v = <-results:
		return v, true, let
	case <-ctx.Done():
	}
	grace := time.NewTimer(answerGrace)
	defer grace.Stop()
	select {
	case v = <-results:
		return v, true, let
	case <-grace.C:
		go func() {
			<-results
			let()
		}()
		return v, false, func() {}
	}
}

// lateError is why a request whose work outran its context is answered
// without it: the gate's own timeout, as the gate words it, or the
// request's end (the client gone, the server stopping).
func (s *Server) lateError(ctx context.Context, source string) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return &judge.Error{Kind: judge.Timeout, Source: source, Msg: fmt.Sprintf("timed out after %s", s.cfg.Gate.Timeout), Limit: "timeout"}
	}
	return &judge.Error{Kind: judge.Interrupted, Source: source, Msg: "the request ended before it was judged"}
}

// internalError is a panic in a request's work, as the error the answer
// gives.
func internalError(p any) error {
	return &judge.Error{Kind: judge.Internal, Msg: fmt.Sprintf("internal error: %v", p)}
}

// EnvHeader is the prefix of the headers that carry the session's
// environment to an HTTP hook: EnvHeader+"CLAUDE_PROJECT_DIR" carries
// CLAUDE_PROJECT_DIR (Claude Code fills a header from its environment
// when the hook's allowedEnvVars names the variable).
const EnvHeader = "X-Spawngate-Env-"

// sessionEnv reads the session's environment from a request's headers.
func sessionEnv(r *http.Request) func(string) string {
	return func(name string) string { return r.Header.Get(EnvHeader + name) }
}

// unknownHook answers a request under /v1/hooks/ that names no host the
// server knows: refused, in the form every host reads as a refusal on
// every event (the event is not known: a UserPromptExpansion hook does
// not block on PreToolUse's deny).
//
// The path is named as it was sent, escaped: it is what the operator
// wrote in the hook's settings, and it carries no byte of the client's
// into the reason unescaped.
func (s *Server) unknownHook(w http.ResponseWriter, r *http.Request) {
	sent := r.URL.EscapedPath()
	reason := fmt.Sprintf("spawngate could not judge this sub-agent, so it is refused: no hook is served at %s (the hooks are %s)", sent, "/v1/hooks/"+strings.Join(hosts.Names(), ", /v1/hooks/"))
	w.Header().Set("Content-Type", "application/json")
	w.Write(host.DenyAnyEvent(reason))
	s.metrics.observe(string(report.NotJudged), "usage", nil, 0)
	s.logDecision(decision{path: sent, requestedBy: r.RemoteAddr, err: reason, verdict: report.NotJudged, policy: s.state.Load().digest, checks: s.state.Load().checks}, 0)
}
