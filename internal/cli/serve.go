package cli

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/spawngate/spawngate/internal/hosts"
	"github.com/spawngate/spawngate/internal/judge"
	"github.com/spawngate/spawngate/internal/report"
	"github.com/spawngate/spawngate/internal/server"
)

// serveOptions are the flags of spawngate serve.
type serveOptions struct {
	policy          string
	gate            judge.Options
	addr            string
	maxListed       int
	maxConcurrent   int
	maxWaiting      int
	metricsAuth     bool
	agentDirs       dirsFlag
	budget          string
	tokenFile       string
	tlsCert, tlsKey string
	tlsClientCA     string
	decisionLog     string
	logInput        bool
	watch           time.Duration
	shutdown        time.Duration
	readTimeout     time.Duration
	writeTimeout    time.Duration
	idleTimeout     time.Duration
	ledger          ledgerFlags
}

// DefaultAddr is where spawngate serve listens unless told otherwise:
// loopback only.
const DefaultAddr = "127.0.0.1:8321"

func parseServe(args []string, help io.Writer) (*serveOptions, error) {
	opts := &serveOptions{gate: judge.DefaultOptions()}
	c := newCommand("spawngate serve", printServeHelp)
	c.gateFlags(&opts.policy, &opts.gate)
	fs := c.fs
	fs.StringVar(&opts.addr, "addr", DefaultAddr, "the `host:port` to listen on (loopback by default)")
	fs.IntVar(&opts.maxListed, "max-listed", report.DefaultMaxListed, "most `violations` one answer lists; the rest are counted per child")
	fs.IntVar(&opts.maxConcurrent, "max-concurrent", runtime.GOMAXPROCS(0), "most `decisions` evaluated at once, one per core by default (a decision never waits on I/O, so more only lengthens the tail); the others wait their turn within their timeout")
	fs.IntVar(&opts.maxWaiting, "max-waiting", server.DefaultMaxWaiting, "most `requests` that wait for memory or a turn; one more is answered busy at once, its body unread")
	fs.Var(&opts.agentDirs, "agents-dir", "a `DIR` of agent definitions the hook endpoints look in first; repeat it for several")
	fs.StringVar(&opts.budget, "budget-tokens", "", "the token `budget` a hook spawn is granted when its definition states none (default: the policy's cap)")
	fs.StringVar(&opts.tokenFile, "auth-token-file", "", "a `FILE` holding the bearer token every request must carry (Authorization: Bearer ...)")
	fs.BoolVar(&opts.metricsAuth, "metrics-auth", false, "require the bearer token of --auth-token-file on /metrics too (default: /metrics is open, for scrapers that carry no token)")
	fs.StringVar(&opts.tlsCert, "tls-cert", "", "serve HTTPS with this certificate `FILE` (PEM)")
	fs.StringVar(&opts.tlsKey, "tls-key", "", "the private key `FILE` of --tls-cert (PEM)")
	fs.StringVar(&opts.tlsClientCA, "tls-client-ca", "", "require client certificates signed by the CAs in this `FILE` (PEM)")
	fs.StringVar(&opts.decisionLog, "decision-log", "", "append one JSON line per decision to `FILE` (- for stdout)")
	fs.BoolVar(&opts.logInput, "decision-log-input", false, "also write each request body into the decision log (briefs and prompts can carry secrets)")
	fs.DurationVar(&opts.watch, "watch", 0, "look at the policy file, the folders of checks and the bundle every `interval`, and reload when one changes (0: only on SIGHUP)")
	fs.DurationVar(&opts.shutdown, "shutdown-timeout", 10*time.Second, "how long a SIGTERM waits for the requests in flight, as a `duration`")
	fs.DurationVar(&opts.readTimeout, "read-timeout", 10*time.Second, "longest time to read one request, as a `duration`")
	fs.DurationVar(&opts.writeTimeout, "write-timeout", 0, "longest time to answer one request, as a `duration` (default: --timeout plus 5s)")
	fs.DurationVar(&opts.idleTimeout, "idle-timeout", 60*time.Second, "longest time an idle keep-alive connection stays open, as a `duration`")
	c.ledgerFlags(&opts.ledger)
	args, err := c.parse(args, help)
	if err != nil {
		return opts, err
	}
	switch {
	case len(args) > 0:
		return opts, &usageError{fmt.Sprintf("serve takes no arguments, only flags (got %q)", args[0])}
	case opts.policy == "" && opts.gate.Bundle == "":
		return opts, &usageError{"serve needs --policy FILE (or a --bundle carrying the policy): every decision is judged by the operator's policy"}
	case opts.maxConcurrent <= 0:
		return opts, &usageError{"--max-concurrent must be positive"}
	case opts.maxWaiting <= 0:
		return opts, &usageError{"--max-waiting must be positive"}
	case opts.metricsAuth && opts.tokenFile == "":
		return opts, &usageError{"--metrics-auth needs --auth-token-file"}
	case opts.maxListed < 0:
		return opts, &usageError{"--max-listed must not be negative"}
	case (opts.tlsCert == "") != (opts.tlsKey == ""):
		return opts, &usageError{"--tls-cert and --tls-key go together"}
	case opts.tlsClientCA != "" && opts.tlsCert == "":
		return opts, &usageError{"--tls-client-ca needs --tls-cert and --tls-key"}
	case opts.watch < 0 || opts.shutdown <= 0 || opts.readTimeout <= 0 || opts.writeTimeout < 0 || opts.idleTimeout <= 0:
		return opts, &usageError{"durations must be positive"}
	}
	if opts.writeTimeout == 0 {
		opts.writeTimeout = opts.gate.Timeout + 5*time.Second
	}
	if opts.budget != "" {
		if n, err := strconv.ParseInt(opts.budget, 10, 64); err != nil || n <= 0 || strconv.FormatInt(n, 10) != opts.budget {
			return opts, &usageError{fmt.Sprintf("--budget-tokens %q: not a positive whole number", opts.budget)}
		}
	}
	if err := c.checkGate(opts.policy, &opts.gate); err != nil {
		return opts, err
	}
	return opts, c.checkLedger(&opts.ledger)
}

// runServe is spawngate serve. It answers until the first SIGINT or
// SIGTERM (or ctx ends), then stops accepting, answers every request in
// flight, and exits 0; SIGHUP reloads the policy. It exits 2 when it cannot
// start, or when the requests in flight outlive --shutdown-timeout.
func runServe(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fail := func(msg string) int {
		fmt.Fprintf(stderr, "spawngate: %s\n", report.Clean(oneLine(msg)))
		return exitError
	}
	opts, err := parseServe(args, stdout)
	if errors.Is(err, flag.ErrHelp) {
		return exitPass
	}
	if err != nil {
		return fail(err.Error() + " (see spawngate serve -h)")
	}
	longLived()
	logger := slog.New(slog.NewJSONHandler(stderr, nil))
	cfg := server.Config{
		PolicyFile: opts.policy, Gate: opts.gate, MaxListed: opts.maxListed, MaxConcurrent: opts.maxConcurrent,
		MaxWaiting: opts.maxWaiting, ReadTimeout: opts.readTimeout, MetricsAuth: opts.metricsAuth,
		AgentsDirs: opts.agentDirs, Budget: json.Number(opts.budget), Logger: logger,
		LogInput: opts.logInput, Checks: judge.ChecksDigest(),
		Wording: wording,
	}
	cfg.Version, _ = judge.Versions()
	cfg.Home, _ = os.UserHomeDir()
	if cfg.Ledger, err = opts.ledger.serverStore(cfg.Home); err != nil {
		return fail("--ledger " + err.Error())
	}
	if cfg.Ledger != nil {
		defer cfg.Ledger.Close()
	}
	if opts.tokenFile != "" {
		token, err := os.ReadFile(opts.tokenFile)
		if err != nil {
			return fail("--auth-token-file: " + err.Error())
		}
		if cfg.Token = []byte(strings.TrimSpace(string(token))); len(cfg.Token) == 0 {
			return fail("--auth-token-file " + opts.tokenFile + ": the file holds no token")
		}
	}
	if opts.decisionLog != "" {
		w, closeLog, err := openLog(opts.decisionLog, stdout)
		if err != nil {
			return fail("--decision-log: " + err.Error())
		}
		defer closeLog()
		cfg.DecisionLog = w
	}
	s, err := server.New(ctx, cfg)
	var noLedger *server.LedgerError
	if errors.As(err, &noLedger) {
		return fail(err.Error() + ledgerHint(&opts.ledger))
	}
	if err != nil {
		return fail(err.Error())
	}
	// Every request's context ends when the requests in flight outlive
	// --shutdown-timeout, so that each is still answered (503, or a
	// hook's deny) before the process exits: a connection closed with no
	// answer lets Claude Code's HTTP hook spawn.
	requests, endRequests := context.WithCancel(context.Background())
	defer endRequests()
	srv := &http.Server{
		Handler:           s.Handler(),
		BaseContext:       func(net.Listener) context.Context { return requests },
		ReadTimeout:       opts.readTimeout,
		ReadHeaderTimeout: opts.readTimeout,
		WriteTimeout:      opts.writeTimeout,
		IdleTimeout:       opts.idleTimeout,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
	}
	if opts.tlsCert != "" {
		cert, err := tls.LoadX509KeyPair(opts.tlsCert, opts.tlsKey)
		if err != nil {
			return fail("--tls-cert/--tls-key: " + err.Error())
		}
		srv.TLSConfig = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
		if opts.tlsClientCA != "" {
			pem, err := os.ReadFile(opts.tlsClientCA)
			if err != nil {
				return fail("--tls-client-ca: " + err.Error())
			}
			pool := x509.NewCertPool()
			if !pool.AppendCertsFromPEM(pem) {
				return fail("--tls-client-ca " + opts.tlsClientCA + ": no PEM certificate in it")
			}
			srv.TLSConfig.ClientCAs, srv.TLSConfig.ClientAuth = pool, tls.RequireAndVerifyClientCert
		}
	}
	ln, err := net.Listen("tcp", opts.addr)
	if err != nil {
		return fail("--addr: " + err.Error())
	}
	if srv.TLSConfig != nil {
		ln = tls.NewListener(ln, srv.TLSConfig)
	}
	logger.Info("serving", "addr", ln.Addr().String(), "policy", opts.policy, "digest", s.PolicyDigest(), "checks", s.ChecksDigest(), "tls", srv.TLSConfig != nil, "ledger", ledgerName(cfg.Ledger))
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()

	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	var tick <-chan time.Time
	if opts.watch > 0 {
		t := time.NewTicker(opts.watch)
		defer t.Stop()
		tick = t.C
	}
	for {
		select {
		case <-hup:
			s.Reload(context.Background())
		case <-tick:
			// The policy file, the folders of checks and the bundle, as
			// they are on disk: a broken change is not tried again until
			// it changes.
			s.ReloadIfChanged(context.Background())
		case err := <-served:
			return fail("serving: " + err.Error())
		case <-ctx.Done():
			return stop(srv, s.Drain, endRequests, opts.shutdown, logger, fail)
		}
	}
}

// stop ends a server that ctx told to stop: drain refuses new decisions,
// the requests in flight are answered within shutdown, and those still
// running then are told to stop (endRequests) and have answerGrace to
// answer as interrupted. It exits 0 when every request was answered in
// time, 2 (through fail) otherwise.
func stop(srv *http.Server, drain, endRequests func(), shutdown time.Duration, logger *slog.Logger, fail func(string) int) int {
	logger.Info("stopping: answering the requests in flight", "timeout", shutdown.String())
	drain()
	sctx, cancel := context.WithTimeout(context.Background(), shutdown)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		endRequests()
		actx, cancel := context.WithTimeout(context.Background(), answerGrace)
		defer cancel()
		msg := "stopping: requests were still in flight after --shutdown-timeout " + shutdown.String()
		if srv.Shutdown(actx) != nil { // each answers as its context ends
			return fail(msg + "; some could not be answered")
		}
		return fail(msg + "; they were answered as interrupted")
	}
	logger.Info("stopped")
	return exitPass
}

// answerGrace is how long the requests still in flight at
// --shutdown-timeout have to write their answer once told to stop: every
// step of a decision looks at its context often.
const answerGrace = 2 * time.Second

// openLog opens a decision log for appending: a file, or stdout for "-".
func openLog(name string, stdout io.Writer) (io.Writer, func(), error) {
	if name == "-" {
		return stdout, func() {}, nil
	}
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return nil, nil, err
	}
	return f, func() { f.Close() }, nil
}

func printServeHelp(w io.Writer, fs *flag.FlagSet) {
	fmt.Fprintf(w, `Usage: spawngate serve --policy FILE|--bundle FILE [flags]

Answers decisions over HTTP, judged by the same checks as spawngate check:

  POST /v1/check              a plan document (Content-Type application/json
                              or application/yaml); the answer is the JSON
                              report check --format json prints: 200 with a
                              verdict, 422 a document error, 413 too large,
                              415 another media type, 504 timed out, 503
                              shutting down or busy, 500 internal, 401 no token
  POST /v1/hooks/HOST         a hook payload of HOST (%s);
                              always 200: an empty body to pass, the host's
                              deny JSON to refuse and whenever it cannot
                              judge (a non-2xx answer would let a host
                              spawn the child)
  GET  /healthz /readyz       alive; ready (policy loaded, not draining)
  GET  /metrics               Prometheus metrics (the token only with
                              --metrics-auth)

A request reserves memory for its body before it is read (at most
--max-concurrent bodies of --max-bytes at once); at most --max-waiting
wait, one more is answered busy at once; --timeout bounds each request
from its arrival. SIGHUP (or --watch) reloads the policy, the operator's
checks and the bundle; a broken one keeps the old ones serving. SIGTERM
stops accepting, answers what is in flight, exits 0; what outlives
--shutdown-timeout is answered as interrupted, and the exit is 2.

Flags:
`, strings.Join(hosts.Names(), ", "))
	printFlags(w, fs)
}

// runVersion is spawngate version: the module version, the OPA version,
// and the digest of the embedded checks and schemas that the decision log
// records.
func runVersion(args []string, stdout, stderr io.Writer) int {
	if len(args) == 1 && (args[0] == "-h" || args[0] == "-help" || args[0] == "--help") {
		fmt.Fprint(stdout, "Usage: spawngate version\n\n"+
			"Prints spawngate's version, the version of OPA it embeds, and the\n"+
			"digest of its built-in checks (which a decision log records), and\n"+
			"exits 0.\n")
		return exitPass
	}
	if len(args) > 0 {
		fmt.Fprintf(stderr, "spawngate: version takes no arguments\n")
		return exitError
	}
	v, opa := judge.Versions()
	fmt.Fprintf(stdout, "spawngate %s\nopa %s\nchecks %s\n", v, opa, judge.ChecksDigest())
	return exitPass
}
