package cli

import (
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"os/signal"
	"runtime/debug"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/spawngate/spawngate/internal/document"
	"github.com/spawngate/spawngate/internal/hosts"
	"github.com/spawngate/spawngate/internal/judge"
	"github.com/spawngate/spawngate/internal/report"
	"github.com/spawngate/spawngate/internal/spelling"
)

// Main runs spawngate with the process's arguments and streams and returns
// the exit code.
func Main() int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// A write to a closed pipe is an error the command reports (exit 2,
	// one line on stderr), and a server counts and keeps serving: unless
	// SIGPIPE is handled, Go's runtime lets it end the process, with no
	// word and no exit code, at a failed write to stdout or stderr.
	// Notify, not Ignore: an ignored signal stays ignored in whatever the
	// process would start.
	pipe := make(chan os.Signal, 1)
	signal.Notify(pipe, syscall.SIGPIPE)
	defer signal.Stop(pipe)
	if len(os.Args) > 1 && (os.Args[1] == "serve" || os.Args[1] == "playground") {
		// A server stops gracefully on the first signal, within its own
		// --shutdown-timeout, and collects garbage as any long-lived
		// process does. It never ends itself for one stuck request: a
		// refused connection lets Claude Code's HTTP hook spawn the child.
		return Run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	}
	tuneGC()
	judge.Stuck = func(name string, timeout time.Duration) {
		fmt.Fprintf(os.Stderr, "spawngate: %s: timed out after %s (limit --timeout), and did not stop; exiting\n", report.Clean(oneLine(name)), timeout)
		os.Exit(exitError)
	}
	finished := make(chan struct{})
	defer close(finished)
	go func() {
		// The first signal cancels the run, which then exits 2; a second
		// one finds the default handler and ends the process at once.
		select {
		case <-ctx.Done():
		case <-finished:
			return
		}
		stop()
		// Every step stops soon after its context ends. Should one not,
		// the process ends anyway, a second after the signal, with exit 2:
		// a signal is never ignored, and never a pass.
		select {
		case <-finished:
		case <-time.After(time.Second):
			fmt.Fprintln(os.Stderr, "spawngate: interrupted, and the run did not stop within a second; exiting")
			os.Exit(exitError)
		}
	}()
	return Run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
}

// tuneGC sets the garbage collector for a short-lived process. Until a
// large document arrives there is no collection at all, only a 64 MiB
// ceiling: a check of a small plan, the hook's case, stays under it (about
// 40 MiB resident) and spends nothing on collecting (a fifth of its time
// otherwise), while a check of many small files collects near the ceiling
// instead of touching fresh pages (at 128 MiB, 1,000 two-child files took
// 31,700 page faults and 0.68 s; at 64 MiB, 17,500 and 0.61 s, on a
// machine where a fault costs some 10 µs). A large document switches to
// collecting when the heap has grown by half (GOGC=50), which keeps the
// peak near one and a half times what is live; a fixed ceiling would make
// the collector run without pause once a plan needs more than it. A
// server is not short-lived: serve collects as Go does by default
// (longLived), so that a large request cannot hold its heap at the
// ceiling, collecting without pause (measured, its throughput was the
// same). GOGC or GOMEMLIMIT in the environment win.
func tuneGC() {
	if os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" {
		return
	}
	debug.SetGCPercent(-1)
	debug.SetMemoryLimit(gcCeiling)
	largeDocumentSeen = sync.OnceFunc(func() {
		debug.SetGCPercent(50)
		debug.SetMemoryLimit(math.MaxInt64)
	})
	longLived = func() {
		debug.SetGCPercent(100)
		debug.SetMemoryLimit(math.MaxInt64)
	}
}

// longLived is called by a command that serves until it is stopped. Main
// sets it; run in process, Run leaves the collector alone.
var longLived = func() {}

// gcCeiling is the heap a process may grow to before it collects at all.
const gcCeiling = 64 << 20

// largeDocumentSeen is called when a document of more than largeDocument
// bytes has been read. Main sets it; run in process, Run leaves the
// collector alone.
var largeDocumentSeen = func() {}

const largeDocument = 1 << 20

// Run runs spawngate with args (without the program name) and returns the
// exit code. A panic anywhere below is reported as an internal error and
// exits 2: the gate never crashes into an ambiguous state.
func Run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) (code int) {
	defer func() {
		if r := recover(); r != nil {
			msg := "internal error: " + oneLine(fmt.Sprint(r))
			fmt.Fprintf(stderr, "spawngate: %s\n", msg)
			if os.Getenv("SPAWNGATE_TRACEBACK") != "" {
				stderr.Write(debug.Stack())
			}
			if len(args) > 0 && args[0] == "check" && wantsJSON(args[1:]) {
				// The report is written in one piece at the very end, so
				// nothing of it is on stdout yet: say the error in JSON.
				writeJSONError(stdout, msg)
			}
			code = exitError
		}
	}()
	if len(args) == 0 {
		fmt.Fprintf(stderr, usage, strings.Join(hosts.Names(), ", "))
		return exitError
	}
	if args[0] == "serve" {
		// Its standard output carries the decision log alone, if anything,
		// whose failures the server counts and logs as they come.
		return runServe(ctx, args[1:], stdout, stderr)
	}
	if args[0] == "playground" {
		return runPlayground(ctx, args[1:], stdout, stderr)
	}
	out := &output{w: stdout}
	code = runCommand(ctx, args, stdin, out, stderr)
	if err := out.failed(); err != nil && code != exitError {
		// The command did not look: its output is lost all the same, and
		// an answer that did not arrive is no verdict.
		fmt.Fprintf(stderr, "spawngate: writing to standard output: %s\n", oneLine(err.Error()))
		code = exitError
	}
	return code
}

// runCommand runs one command but serve.
func runCommand(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	switch args[0] {
	case "check":
		return check(ctx, args[1:], stdin, stdout, stderr)
	case "rules":
		return rules(ctx, args[1:], stdout, stderr)
	case "hook":
		return runHook(ctx, args[1:], stdin, stdout, stderr)
	case "agents":
		return runAgents(ctx, args[1:], stdout, stderr)
	case "verify":
		return runVerify(ctx, args[1:], stdout, stderr)
	case "doctor":
		return runDoctor(ctx, args[1:], stdout, stderr)
	case "version", "--version", "-version":
		return runVersion(args[1:], stdout, stderr)
	case "help", "-h", "-help", "--help":
		return help(args, stdout, stderr)
	}
	if s := spelling.Closest(args[0], commands); s != "" {
		fmt.Fprintf(stderr, "spawngate: unknown command %q: did you mean %s? (see spawngate help)\n", args[0], s)
		return exitError
	}
	fmt.Fprintf(stderr, "spawngate: unknown command %q (see spawngate help)\n", args[0])
	return exitError
}

// output is a command's standard output, which remembers the first write
// that failed: whatever a command does with the error, the run that lost
// its output exits 2 (Run).
type output struct {
	w   io.Writer
	mu  sync.Mutex
	err error
}

func (o *output) Write(p []byte) (int, error) {
	n, err := o.w.Write(p)
	if err != nil {
		o.mu.Lock()
		if o.err == nil {
			o.err = err
		}
		o.mu.Unlock()
	}
	return n, err
}

// failed is the first write error, or nil.
func (o *output) failed() error {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.err
}

// commands are the command names, for a slip's suggestion.
var commands = []string{"check", "rules", "hook", "agents", "serve", "playground", "verify", "doctor", "version", "help"}

// help answers a help word. Help is an answer only when it is all that was
// asked: "help" or "help check" alone. Anything else after a help word (a
// policy, a plan, a flag) is a usage error, so that a command line that
// also names plans can never end in exit 0 without judging them.
func help(args []string, stdout, stderr io.Writer) int {
	switch {
	case len(args) == 1:
		fmt.Fprintf(stdout, usage, strings.Join(hosts.Names(), ", "))
		return exitPass
	case len(args) == 2 && args[0] == "help" && args[1] == "check":
		return check(context.Background(), []string{"-h"}, nil, stdout, stderr)
	case len(args) == 2 && args[0] == "help" && args[1] == "agents":
		return runAgents(context.Background(), []string{"-h"}, stdout, stderr)
	case len(args) == 2 && args[0] == "help" && args[1] == "hook":
		printHookHelp(stdout)
		return exitPass
	case len(args) == 2 && args[0] == "help" && args[1] == "serve":
		return runServe(context.Background(), []string{"-h"}, stdout, stderr)
	case len(args) == 2 && args[0] == "help" && args[1] == "playground":
		return runPlayground(context.Background(), []string{"-h"}, stdout, stderr)
	case len(args) == 2 && args[0] == "help" && args[1] == "verify":
		return runVerify(context.Background(), []string{"-h"}, stdout, stderr)
	case len(args) == 2 && args[0] == "help" && args[1] == "rules":
		return rules(context.Background(), []string{"-h"}, stdout, stderr)
	case len(args) == 2 && args[0] == "help" && args[1] == "doctor":
		return runDoctor(context.Background(), []string{"-h"}, stdout, stderr)
	case len(args) == 2 && args[0] == "help" && args[1] == "version":
		return runVersion([]string{"-h"}, stdout, stderr)
	}
	msg := fmt.Sprintf("%s takes no arguments but a command name (help COMMAND): nothing was checked", args[0])
	fmt.Fprintf(stderr, "spawngate: %s\n", msg)
	if len(args) > 2 && args[1] == "check" && wantsJSON(args[2:]) {
		writeJSONError(stdout, msg)
	}
	return exitError
}

const usage = `spawngate decides whether each child of a spawn plan may be dispatched.

Usage:
  spawngate check --policy FILE PLAN...
                                    judge spawn plans (PLAN: a .yaml, .yml or
                                    .json file, a folder of them, or - for
                                    standard input)
  spawngate hook HOST               answer a host's hook: judge the sub-agent
                                    its payload asks for
  spawngate agents [flags] [PATH]   judge every agent definition of every
                                    host in a repository (for CI)
  spawngate serve --policy FILE     answer decisions over HTTP (check and
                                    every host's hook), with metrics and
                                    reload
  spawngate playground              a local page to paste a plan and a
                                    policy into and see the HTML report
  spawngate verify [DIR...]         run the Rego tests of your own checks, with
                                    their coverage (for CI)
  spawngate doctor HOST             report every way a host's settings let
                                    a spawn past the hook
  spawngate version                 the version, OPA's, and the checks' digest
  spawngate rules                   list the rules a refusal can cite
  spawngate help [COMMAND]          show this help, or a command's

Exit codes (check, agents):
  0  every child of every plan may be dispatched
  1  at least one child is refused
  2  the gate could not evaluate (usage, unreadable or invalid plan or
     policy, internal error)
A hook answers in its host's protocol instead, and never exits 1.

HOST is one of the hosts: %s.

Example:
  spawngate check --policy examples/policy.yaml examples/refused-plan.yaml

Run 'spawngate help COMMAND' (check, hook, agents, serve, playground,
verify, rules, doctor, version) for its flags.
`

// oneLine keeps an error on one line of stderr.
func oneLine(s string) string { return document.OneLine(s) }
