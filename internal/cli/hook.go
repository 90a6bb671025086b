package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spawngate/spawngate/internal/document"
	"github.com/spawngate/spawngate/internal/hook"
	"github.com/spawngate/spawngate/internal/host"
	"github.com/spawngate/spawngate/internal/hosts"
	"github.com/spawngate/spawngate/internal/judge"
	"github.com/spawngate/spawngate/internal/report"
	"github.com/spawngate/spawngate/internal/spelling"
)

// hookOptions are the flags of spawngate hook HOST.
type hookOptions struct {
	host       host.Adapter
	policy     string
	gate       judge.Options
	agentDirs  dirsFlag
	transcript string
	budget     string
	printPlan  string
	ledger     ledgerFlags
	log        logFlags
}

// runHook is spawngate hook HOST: one hook payload on stdin, the answer in
// the host's protocol. Both hosts block a spawn on exit 0 with the deny
// JSON (a refusal) and on exit 2 with a reason on stderr (cannot judge);
// anything else lets it through. So a hook says nothing and exits 0 to
// pass, and never exits 1: Claude Code reads exit 1 as a non-blocking
// error and spawns the child, and so does Codex. Even its help exits 2, so
// that a hook wired with -h blocks rather than passes.
func runHook(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fail := func(msg string) int {
		fmt.Fprintf(stderr, "spawngate: %s\n", report.Clean(document.OneLine(msg)))
		return exitError
	}
	if len(args) == 0 {
		return fail("hook needs the host it answers for: spawngate hook " + strings.Join(hosts.Names(), "|") + " (see spawngate help hook)")
	}
	adapter, ok := hosts.Lookup(args[0])
	if !ok {
		if len(args) == 1 && (args[0] == "-h" || args[0] == "--help" || args[0] == "-help") {
			printHookHelp(stderr)
			return exitError
		}
		return fail(fmt.Sprintf("hook: unknown host %q: %s", args[0], choose(args[0], hosts.Names())))
	}
	// The help goes to stderr, with exit 2: a hook wired with -h blocks,
	// and says why, where the host shows a blocking hook's reason.
	opts, err := parseHook(adapter, args[1:], stderr)
	if errors.Is(err, flag.ErrHelp) {
		return exitError
	}
	if err != nil {
		return fail(err.Error() + " (see spawngate help hook)")
	}
	for _, f := range []struct{ flag, name string }{{"--print-plan", opts.printPlan}, {"--decision-log", opts.log.file}} {
		if namesStdout(f.name, stdout) {
			return fail(fmt.Sprintf("%s %s: names the hook's standard output, which carries the host's answer alone: give - for stderr, or a file", f.flag, f.name))
		}
	}
	log, err := openDecisionLog(opts.log, opts.policy, stderr)
	if err != nil {
		return fail(err.Error())
	}
	if log != nil {
		defer log.close()
	}
	start := time.Now()
	// The payload is read first (the host has written it before it waits):
	// a caller that is itself a sub-agent makes the spawn a nested plan,
	// and then every check is compiled at once. A problem with the gate is
	// still told before one with the payload, and at a terminal, where
	// someone may still be typing the payload, the gate is built first.
	readPayload := func() ([]byte, error) {
		return judge.Within(ctx, opts.gate.Timeout, "hook payload", func(ctx context.Context) ([]byte, error) {
			return judge.Read(ctx, judge.Stdin, "hook payload", opts.gate.Limits.MaxBytes, stdin)
		})
	}
	var payload []byte
	var payloadErr error
	early := !isTerminal(stdin)
	if early {
		payload, payloadErr = readPayload()
		if payloadErr == nil && bytes.Contains(payload, []byte(`"agent_id"`)) {
			opts.gate.ExpectNested = true
		}
	}
	g, err := newGate(ctx, "hook", opts.gate, opts.policy)
	if err != nil {
		return fail(err.Error())
	}
	if log != nil {
		log.useGate(g)
	}
	if !early {
		payload, payloadErr = readPayload()
	}
	if payloadErr != nil {
		line, _ := say(payloadErr)
		return fail(line)
	}
	home, _ := os.UserHomeDir()
	// The hook runs as the session's user: what its gate is read from
	// must be beyond that user's reach (host.Owners).
	owners := host.HookOwners()
	cfg := hook.Config{Host: adapter, Home: home, Budget: json.Number(opts.budget), Getenv: os.Getenv, StateDir: opts.ledger.stateDir, Owners: &owners}
	if opts.ledger.url != "" {
		store, err := opts.ledger.store()
		if err != nil {
			return fail("--ledger " + err.Error())
		}
		defer store.Close()
		cfg.Ledger = store
	}
	if opts.transcript != "" {
		abs, err := filepath.Abs(opts.transcript)
		if err != nil {
			return fail("--transcript: " + err.Error())
		}
		cfg.Transcript = abs
	}
	if len(opts.agentDirs) > 0 {
		cfg.AgentsDirs = opts.agentDirs
	}
	d := hook.Decide(ctx, g, cfg, payload)
	if log != nil && d.Kind != hook.Ignore {
		res := d.Result
		switch d.Kind {
		case hook.Fail:
			line, _ := say(d.Err)
			res = report.Failed("hook payload", line, nil)
		case hook.Pass, hook.Deny:
			if res.Verdict == "" {
				res.Verdict = report.Pass
			}
		}
		log.read("hook payload", payload)
		log.write("hook "+adapter.Name(), "hook payload", res, time.Since(start), stderr)
	}
	if opts.printPlan != "" && d.Plan != nil {
		if err := writePlan(opts.printPlan, d.Plan, stderr); err != nil {
			fmt.Fprintf(stderr, "spawngate: --print-plan: %s\n", report.Clean(document.OneLine(err.Error())))
		}
	}
	switch d.Kind {
	case hook.Ignore, hook.Pass:
		return exitPass
	case hook.Deny:
		if _, err := stdout.Write(adapter.Deny(d.Event, d.Reason)); err != nil {
			return fail("writing the answer: " + err.Error())
		}
		return exitPass
	}
	line, _ := say(d.Err)
	return fail(line)
}

// writePlan writes the plan a hook judged, for an operator to read or to
// give to spawngate check: to a file, or to stderr for "-". Never to stdout,
// which is the host's.
// namesStdout tells whether a file flag names the process's standard
// output: by a name that always does, or as the same file when stdout is
// one.
func namesStdout(name string, stdout io.Writer) bool {
	switch filepath.Clean(name) {
	case "", ".":
		return false
	case "/dev/stdout", "/dev/fd/1", "/proc/self/fd/1", "/proc/thread-self/fd/1":
		return true
	}
	if o, ok := stdout.(*output); ok {
		stdout = o.w
	}
	f, ok := stdout.(*os.File)
	if !ok {
		return false
	}
	out, err := f.Stat()
	if err != nil {
		return false
	}
	target, err := os.Stat(name)
	return err == nil && os.SameFile(out, target)
}

func writePlan(name string, data []byte, stderr io.Writer) error {
	if name == "-" {
		_, err := stderr.Write(data)
		return err
	}
	return os.WriteFile(name, data, 0o644)
}

func parseHook(adapter host.Adapter, args []string, help io.Writer) (*hookOptions, error) {
	opts := &hookOptions{host: adapter, gate: judge.DefaultOptions()}
	c := newCommand("spawngate hook "+adapter.Name(), func(w io.Writer, fs *flag.FlagSet) { printHookFlags(w, adapter, fs) })
	c.gateFlags(&opts.policy, &opts.gate)
	c.fs.StringVar(&opts.transcript, "transcript", "", "a session transcript `FILE` to read instead of the payload's transcript_path, its last turn standing for the payload's, for trying payloads by hand (Codex reads the sandbox, approval and model the child gets from it)")
	c.fs.Var(&opts.agentDirs, "agents-dir", "a `DIR` of agent definitions to look in, before any other; repeat it to give several, in order (default: the host's own folders, found as the host finds them: for Claude Code from CLAUDE_PROJECT_DIR, for Codex from the payload's cwd)")
	c.budgetFlag(&opts.budget)
	c.logFlags(&opts.log)
	c.ledgerFlags(&opts.ledger)
	c.fs.StringVar(&opts.printPlan, "print-plan", "", "also write the plan the hook judged to `FILE` (- for stderr), to read it or give it to spawngate check; the answer is the same")
	args, err := c.parse(args, help)
	if err != nil {
		return opts, err
	}
	if len(args) > 0 {
		return opts, &usageError{fmt.Sprintf("hook takes no arguments, only flags: the payload comes on standard input (got %q)", args[0])}
	}
	if opts.policy == "" && opts.gate.Bundle == "" {
		return opts, &usageError{"hook needs --policy FILE (or a --bundle carrying the policy): a spawn call carries no policy of its own"}
	}
	if err := c.checkGate(opts.policy, &opts.gate); err != nil {
		return opts, err
	}
	if err := c.checkLedger(&opts.ledger); err != nil {
		return opts, err
	}
	if err := checkBudget(opts.budget); err != nil {
		return opts, err
	}
	return opts, nil
}

// dirsFlag is a flag that may be given many times, in order.
type dirsFlag []string

func (d *dirsFlag) String() string { return fmt.Sprint(*d) }

// repeatable keeps --agents-dir a list: each use adds a folder.
func (d *dirsFlag) repeatable() bool { return true }

func (d *dirsFlag) Set(s string) error {
	if s == "" {
		return errors.New("is empty: name a folder of agent definitions")
	}
	*d = append(*d, s)
	return nil
}

func printHookHelp(w io.Writer) {
	names := hosts.Names()
	fmt.Fprintf(w, `Usage: spawngate hook %s --policy FILE [flags] < PAYLOAD

Reads one hook payload on standard input (a tool call's, and each event a
host can start a sub-agent on), finds what the host will run for it as the
host finds it, translates that into a plan and judges it like spawngate
check. It answers in the host's protocol:

  pass            no output, exit 0
  refused         exit 0 with the host's refusal on stdout (below)
  cannot judge    exit 2 with one line on stderr (every host blocks on it)
  not a spawn     no output, exit 0 (the matcher was wider than needed)

It never exits 1, which hosts read as "go ahead". Its help exits 2, so
that a hook wired with -h blocks rather than passes.

The refusals:
`, strings.Join(names, "|"))
	var pages []string
	for _, a := range hosts.All {
		h := a.(host.Help)
		fmt.Fprintf(w, "  %-12s  %s\n", a.Name(), h.Refusal())
		pages = append(pages, h.Page())
	}
	fmt.Fprintf(w, "\nRun 'spawngate hook HOST -h' for the flags; %s give the\nsettings that wire it in.\n", orList(pages, "and"))
}

func printHookFlags(w io.Writer, adapter host.Adapter, fs *flag.FlagSet) {
	fmt.Fprintf(w, "Usage: spawngate hook %s --policy FILE [flags] < PAYLOAD\n\n", adapter.Name())
	fmt.Fprint(w, "Judges the spawn one hook payload asks for. Pass: no output, exit 0.\n"+
		"Refused: the host's refusal JSON on stdout, exit 0. Cannot judge: one line on\n"+
		"stderr, exit 2. Never exit 1. (This help exits 2.)\n\nFlags:\n")
	printFlags(w, fs)
	fmt.Fprintf(w, "\nExample (a payload tried by hand; the host writes one on stdin):\n  spawngate hook %s %s\n", adapter.Name(), adapter.(host.Help).Example())
}

// orList joins words as a sentence lists them: a, b and c.
// choose says which names a command takes in place of typed: the one
// typed meant first, when it looks like a slip for one.
func choose(typed string, names []string) string {
	list := orList(names, "or")
	if s := spelling.Closest(typed, names); s != "" {
		return fmt.Sprintf("did you mean %s? (choose %s)", s, list)
	}
	return "choose " + list
}

func orList(words []string, and string) string {
	if len(words) < 2 {
		return strings.Join(words, "")
	}
	return strings.Join(words[:len(words)-1], ", ") + " " + and + " " + words[len(words)-1]
}

// isTerminal tells whether r is a terminal, where a person types.
func isTerminal(r io.Reader) bool {
	f, ok := r.(*os.File)
	if !ok {
		return false
	}
	info, err := f.Stat()
	return err == nil && info.Mode()&os.ModeCharDevice != 0
}
