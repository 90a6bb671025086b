package cli

import (
	"context"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"runtime"
	"strings"
	"time"

	"github.com/spawngate/spawngate/internal/judge"
	"github.com/spawngate/spawngate/internal/playground"
	"github.com/spawngate/spawngate/internal/report"
	"github.com/spawngate/spawngate/internal/server"
)

// playgroundOptions are the flags of spawngate playground.
type playgroundOptions struct {
	gate          judge.Options
	addr          string
	allowRemote   bool
	hosts         string
	tokenFile     string
	maxListed     int
	maxConcurrent int
	maxWaiting    int
	shutdown      time.Duration
	readTimeout   time.Duration
	writeTimeout  time.Duration
	idleTimeout   time.Duration
	tlsCert       string
	tlsKey        string
	maxChecks     int64
}

// DefaultPlaygroundAddr is where spawngate playground listens unless told
// otherwise: loopback only, beside serve's port.
const DefaultPlaygroundAddr = "127.0.0.1:8322"

func parsePlayground(args []string, help io.Writer) (*playgroundOptions, error) {
	opts := &playgroundOptions{gate: judge.DefaultOptions()}
	c := newCommand("spawngate playground", printPlaygroundHelp)
	c.limitFlags(&opts.gate)
	c.judgingFlags(&opts.gate)
	fs := c.fs
	fs.StringVar(&opts.addr, "addr", DefaultPlaygroundAddr, "the `host:port` to listen on (loopback by default; another address needs --allow-remote)")
	fs.BoolVar(&opts.allowRemote, "allow-remote", false, "listen on an address that is not loopback (needs --auth-token-file, --tls-cert and --tls-key): anyone who can reach it and holds the token judges with this process")
	fs.StringVar(&opts.tlsCert, "tls-cert", "", "serve HTTPS with this certificate `FILE` (PEM); --allow-remote needs it, since the token and the policies pasted would otherwise cross the network in clear")
	fs.StringVar(&opts.tlsKey, "tls-key", "", "the private key `FILE` of --tls-cert (PEM)")
	fs.Int64Var(&opts.maxChecks, "max-checks-bytes", playground.DefaultMaxChecksBytes, "largest checks field, in `bytes`: compiling pasted Rego costs many times its size in memory")
	fs.StringVar(&opts.hosts, "host", "", "with --allow-remote, the `names` (comma-separated, host or host:port) the page is reached by; any other Host header is refused")
	fs.StringVar(&opts.tokenFile, "auth-token-file", "", "a `FILE` holding the bearer token every judgement must carry; the page asks for it and keeps it for the tab's session")
	fs.IntVar(&opts.maxListed, "max-listed", report.DefaultMaxListed, "most `violations` one report lists; the rest are counted per child")
	fs.IntVar(&opts.maxConcurrent, "max-concurrent", runtime.GOMAXPROCS(0), "most `decisions` evaluated at once, as serve's")
	fs.IntVar(&opts.maxWaiting, "max-waiting", server.DefaultMaxWaiting, "most `requests` that wait for memory or a turn; one more is answered busy at once, its body unread")
	fs.DurationVar(&opts.shutdown, "shutdown-timeout", 10*time.Second, "how long a SIGTERM waits for the requests in flight, as a `duration`")
	fs.DurationVar(&opts.readTimeout, "read-timeout", 10*time.Second, "longest time to read one request, as a `duration`")
	fs.DurationVar(&opts.writeTimeout, "write-timeout", 0, "longest time to answer one request, as a `duration` (default: --timeout plus 5s)")
	fs.DurationVar(&opts.idleTimeout, "idle-timeout", 60*time.Second, "longest time an idle keep-alive connection stays open, as a `duration`")
	args, err := c.parse(args, help)
	if err != nil {
		return opts, err
	}
	switch {
	case len(args) > 0:
		return opts, &usageError{fmt.Sprintf("playground takes no arguments, only flags (got %q): paste or drop the plan and the policy into the page", args[0])}
	case opts.maxConcurrent <= 0:
		return opts, &usageError{"--max-concurrent must be positive"}
	case opts.maxWaiting <= 0:
		return opts, &usageError{"--max-waiting must be positive"}
	case opts.maxListed < 0:
		return opts, &usageError{"--max-listed must not be negative"}
	case opts.shutdown <= 0 || opts.readTimeout <= 0 || opts.writeTimeout < 0 || opts.idleTimeout <= 0:
		return opts, &usageError{"durations must be positive"}
	case opts.allowRemote && opts.tokenFile == "":
		return opts, &usageError{"--allow-remote needs --auth-token-file: a playground others can reach judges only for those who hold the token"}
	case (opts.tlsCert == "") != (opts.tlsKey == ""):
		return opts, &usageError{"--tls-cert and --tls-key go together"}
	case opts.allowRemote && opts.tlsCert == "":
		return opts, &usageError{"--allow-remote needs --tls-cert and --tls-key: the token and the policies pasted would cross the network in clear"}
	case opts.maxChecks <= 0:
		return opts, &usageError{"--max-checks-bytes must be positive"}
	case opts.hosts != "" && !opts.allowRemote:
		return opts, &usageError{"--host needs --allow-remote: on loopback the page is reached by localhost's names alone"}
	}
	host, _, err := net.SplitHostPort(opts.addr)
	if err != nil {
		return opts, &usageError{fmt.Sprintf("--addr %q: %v", opts.addr, err)}
	}
	if opts.allowRemote && opts.hosts == "" && (host == "" || net.ParseIP(host) != nil && net.ParseIP(host).IsUnspecified()) {
		return opts, &usageError{fmt.Sprintf("--addr %q listens on every address: --host must name the names the page is reached by, since any other Host header is refused", opts.addr)}
	}
	if !opts.allowRemote && !loopback(host) {
		return opts, &usageError{fmt.Sprintf("--addr %q is not a loopback address: the playground judges by any policy it is sent, so it listens on this machine alone unless --allow-remote (with --auth-token-file) says otherwise", opts.addr)}
	}
	if opts.writeTimeout == 0 {
		opts.writeTimeout = opts.gate.Timeout + 5*time.Second
	}
	return opts, c.checkGate("", &opts.gate)
}

// loopback tells whether a host names this machine alone.
func loopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// runPlayground is spawngate playground: the page and its endpoint, until
// the first SIGINT or SIGTERM (or ctx ends); then it stops accepting,
// answers what is in flight and exits 0, or 2 when that outlives
// --shutdown-timeout or it cannot start.
func runPlayground(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fail := func(msg string) int {
		fmt.Fprintf(stderr, "spawngate: %s\n", report.Clean(oneLine(msg)))
		return exitError
	}
	opts, err := parsePlayground(args, stdout)
	if errors.Is(err, flag.ErrHelp) {
		return exitPass
	}
	if err != nil {
		return fail(err.Error() + " (see spawngate playground -h)")
	}
	longLived()
	logger := slog.New(slog.NewJSONHandler(stderr, nil))
	cfg := server.Config{Gate: opts.gate, MaxListed: opts.maxListed, MaxConcurrent: opts.maxConcurrent,
		MaxWaiting: opts.maxWaiting, ReadTimeout: opts.readTimeout, Logger: logger, Wording: wording}
	if opts.tokenFile != "" {
		token, err := os.ReadFile(opts.tokenFile)
		if err != nil {
			return fail("--auth-token-file: " + err.Error())
		}
		if cfg.Token = []byte(strings.TrimSpace(string(token))); len(cfg.Token) == 0 {
			return fail("--auth-token-file " + opts.tokenFile + ": the file holds no token")
		}
	}
	var tlsConfig *tls.Config
	if opts.tlsCert != "" {
		cert, err := tls.LoadX509KeyPair(opts.tlsCert, opts.tlsKey)
		if err != nil {
			return fail("--tls-cert/--tls-key: " + err.Error())
		}
		tlsConfig = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	}
	ln, err := net.Listen("tcp", opts.addr)
	if err != nil {
		return fail("--addr: " + err.Error())
	}
	var extra []string
	if opts.hosts != "" {
		extra = strings.Split(opts.hosts, ",")
	}
	p, err := playground.New(playground.Config{Server: cfg, Hosts: playground.Hosts(ln.Addr().String(), extra...), MaxChecksBytes: opts.maxChecks})
	if err != nil {
		ln.Close()
		return fail(err.Error())
	}
	requests, endRequests := context.WithCancel(context.Background())
	defer endRequests()
	srv := &http.Server{
		Handler:           p.Handler(),
		BaseContext:       func(net.Listener) context.Context { return requests },
		ReadTimeout:       opts.readTimeout,
		ReadHeaderTimeout: opts.readTimeout,
		WriteTimeout:      opts.writeTimeout,
		IdleTimeout:       opts.idleTimeout,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
	}
	scheme := "http"
	if tlsConfig != nil {
		srv.TLSConfig, scheme = tlsConfig, "https"
		ln = tls.NewListener(ln, tlsConfig)
	}
	// The address, for a person to open (and a test to find): the port
	// may have been chosen by the system (--addr 127.0.0.1:0).
	fmt.Fprintf(stdout, "spawngate playground: %s://%s/\n", scheme, ln.Addr().String())
	logger.Info("serving the playground", "addr", ln.Addr().String(), "token", cfg.Token != nil, "tls", tlsConfig != nil)
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	select {
	case err := <-served:
		return fail("serving: " + err.Error())
	case <-ctx.Done():
	}
	return stop(srv, p.Drain, endRequests, opts.shutdown, logger, fail)
}

func printPlaygroundHelp(w io.Writer, fs *flag.FlagSet) {
	fmt.Fprint(w, `Usage: spawngate playground [flags]

Serves a page on this machine where you paste or drop a spawn plan, an
operator policy (its exceptions included) and your own Rego checks, and
see the HTML report of the same gate spawngate check uses; edit, and judge
again. The page's link keeps the fields after the #, which no server sees.

The policy comes with each request, so this is not serve: serve judges by
the operator's policy alone. The playground reads no file for a request (a
policy whose checks name a folder is refused: paste the checks), listens
on loopback unless --allow-remote (with a token and TLS), refuses requests
from other origins and for other hosts, and bounds each request as serve
does. A pasted check runs with the memory its evaluation takes until
--timeout: the playground is for the operator's own desk. SIGINT or
SIGTERM stops it, answering what is in flight.

  GET  /              the page
  GET  /examples      the examples of examples/, as JSON
  POST /v1/judge      {"plan", "policy", "checks"} as application/json;
                      the verdict, a summary line, the one-line error and
                      the HTML report, with /v1/check's statuses

Example:
  spawngate playground              # then open http://127.0.0.1:8322/

Flags:
`)
	printFlags(w, fs)
}
