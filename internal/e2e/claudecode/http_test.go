package claudecode

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The HTTP hook: `spawngate serve` answering Claude Code's "type": "http"
// hook at /v1/hooks/claude-code, wired as docs/claude-code.md#over-http says.
// Each scenario starts a server of its own, on a free port of 127.0.0.1,
// judging by the scenario's policy file; its decision log, with every
// payload, is the evidence of what the server was asked and answered.

// serveTimeout bounds a server's start (until /readyz answers) and its stop.
const serveTimeout = 15 * time.Second

// envHeaders are the variables the README's HTTP hook sends, each in the
// header X-Spawngate-Env-NAME. The prefix is spelled out rather than taken
// from the server package: it is the contract between the settings and
// the server, and a rename on one side only must fail here.
var envHeaders = []string{"CLAUDE_PROJECT_DIR", "CLAUDE_PID", "CLAUDE_CODE_SUBAGENT_MODEL", "CLAUDE_CODE_EXPERIMENTAL_OBSERVER_AGENTS"}

// httpHook is the README's HTTP hook block (Over HTTP) posting to the
// server at base. With auth it sends the README's Authorization header,
// filled from $SPAWNGATE_TOKEN; without, no Authorization header at all.
func httpHook(base string, auth bool) map[string]any {
	headers := map[string]any{}
	var allowed []any
	if auth {
		headers["Authorization"] = "Bearer $SPAWNGATE_TOKEN"
		allowed = append(allowed, "SPAWNGATE_TOKEN")
	}
	for _, name := range envHeaders {
		headers["X-Spawngate-Env-"+name] = "$" + name
		allowed = append(allowed, name)
	}
	return map[string]any{
		"type": "http", "url": base + "/v1/hooks/claude-code", "timeout": 30,
		"headers": headers, "allowedEnvVars": allowed,
	}
}

// httpSettings is the README's installation with the HTTP hook in place
// of the command hook, under both events and with the same matchers; the
// server's URL is {{SERVER}}.
func httpSettings(auth bool) string {
	hook := httpHook("{{SERVER}}", auth)
	b, _ := json.MarshalIndent(map[string]any{"hooks": map[string]any{
		"PreToolUse":          []any{map[string]any{"matcher": readmeMatcher, "hooks": []any{hook}}},
		"UserPromptExpansion": []any{map[string]any{"hooks": []any{hook}}},
	}}, "", "  ")
	return string(b) + "\n"
}

// sessionLauncher starts the client the way the HTTP hook needs. Claude
// Code 2.1.332 fills an HTTP hook's headers from its own environment, in
// which CLAUDE_PROJECT_DIR and CLAUDE_PID are not set (it sets them in a
// command hook's environment only), so the README's headers arrive empty
// and the server refuses every spawn (http-session-env-unset-refused). A
// launcher that exports the folder it starts in and its own PID, then
// execs the client (the same process, so the same PID), fills them. The
// exec matters: the client passes on whatever CLAUDE_PID it inherits, and
// the server believes it, so a PID naming another process (the shell, an
// outer session) makes the server read that command line and miss the
// session's --agents.
var sessionLauncher = []string{"sh", "-c", `CLAUDE_PROJECT_DIR=$(pwd) CLAUDE_PID=$$; export CLAUDE_PROJECT_DIR CLAUDE_PID; exec "$@"`, "sh"}

// gateServer is one scenario's `spawngate serve`, for its checks to read.
type gateServer struct {
	// token, when set, is the bearer token the server requires
	// (--auth-token-file).
	token string
	// log is the decision log, one JSON line per request the hook made.
	log string
}

// serve is a scenario's Serve: it starts `spawngate serve` on the
// scenario's policy.
func (g *gateServer) serve(t *testing.T, root, home, policy string) string {
	var flags []string
	if g.token != "" {
		p := filepath.Join(t.TempDir(), "token")
		must(t, os.WriteFile(p, []byte(g.token+"\n"), 0o600))
		flags = append(flags, "--auth-token-file", p)
	}
	url, log := startServe(t, home, policy, flags...)
	g.log = log
	return url
}

// servingAt finds the address serve listens on in its log.
var servingAt = regexp.MustCompile(`"msg":"serving","addr":"([^"]+)"`)

// startServe runs `spawngate serve --policy policy` on a port of
// 127.0.0.1 the system picks, as a user whose HOME is home (the client's,
// so that the server finds the same user agents), with a decision log
// that holds every payload. It returns once /readyz answers, with the
// base URL and the decision log's path; the server is stopped when the
// test ends.
func startServe(t *testing.T, home, policy string, flags ...string) (string, string) {
	t.Helper()
	dir := t.TempDir()
	log := filepath.Join(dir, "decisions.jsonl")
	args := []string{"serve", "--policy", policy, "--addr", "127.0.0.1:0",
		// Below the hook's timeout of 30 s, as the README says, so that a
		// deny arrives before the client stops waiting.
		"--timeout", "20s", "--decision-log", log, "--decision-log-input"}
	args = append(args, flags...)
	cmd := exec.Command(spawngateBin, args...)
	cmd.Env = append(os.Environ(), "HOME="+home)
	r, w, err := os.Pipe()
	must(t, err)
	cmd.Stderr = w
	if err := cmd.Start(); err != nil {
		r.Close()
		w.Close()
		t.Fatalf("spawngate serve: %v", err)
	}
	w.Close()

	// Everything serve logs is kept; the first "serving" line names the
	// address.
	logged := filepath.Join(dir, "serve.log")
	addr := make(chan string, 1)
	drained := make(chan struct{})
	go func() {
		defer close(drained)
		f, _ := os.Create(logged)
		defer f.Close()
		sc := bufio.NewScanner(r)
		sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
		for sc.Scan() {
			fmt.Fprintln(f, sc.Text())
			if m := servingAt.FindStringSubmatch(sc.Text()); m != nil {
				select {
				case addr <- m[1]:
				default:
				}
			}
		}
	}()
	// exited is closed once serve has ended, with its error in waitErr.
	exited := make(chan struct{})
	var waitErr error
	go func() { <-drained; waitErr = cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
			if waitErr != nil {
				t.Errorf("spawngate serve did not stop cleanly: %v", waitErr)
			}
		case <-time.After(serveTimeout):
			_ = cmd.Process.Kill()
			<-exited
			t.Errorf("spawngate serve did not stop within %v of SIGTERM", serveTimeout)
		}
		keepServerEvidence(t, log, logged)
	})

	deadline := time.NewTimer(serveTimeout)
	defer deadline.Stop()
	var base string
	select {
	case a := <-addr:
		base = "http://" + a
	case <-exited:
		b, _ := os.ReadFile(logged)
		t.Fatalf("spawngate serve exited before serving: %v\n%s", waitErr, b)
	case <-deadline.C:
		t.Fatalf("spawngate serve did not say where it serves within %v", serveTimeout)
	}
	// It reads the policy before it listens, so /readyz normally answers
	// 200 at once; it is asked again, briefly, until the deadline.
	client := &http.Client{Timeout: 2 * time.Second}
	var last string
	for {
		resp, err := client.Get(base + "/readyz")
		if err != nil {
			last = err.Error()
		} else {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return base, log
			}
			last = resp.Status
		}
		select {
		case <-exited:
			t.Fatalf("spawngate serve exited before it was ready: %v", waitErr)
		case <-deadline.C:
			t.Fatalf("spawngate serve at %s was not ready within %v (last answer: %s)", base, serveTimeout, last)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// closedPort is a URL on 127.0.0.1 where nothing listens: a port the
// system handed out and that was closed at once. (Nothing else in the
// test's network namespace takes ports but these tests' own servers.)
func closedPort(t *testing.T, root, home, policy string) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	must(t, err)
	url := "http://" + ln.Addr().String()
	must(t, ln.Close())
	return url
}

// keepServerEvidence copies a server's decision log and its own log next
// to the scenario's evidence under $SPAWNGATE_E2E_KEEP.
func keepServerEvidence(t *testing.T, files ...string) {
	dir := os.Getenv(envKeep)
	if dir == "" {
		return
	}
	dir = filepath.Join(dir, strings.ReplaceAll(t.Name(), "/", "__"))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return
	}
	for _, f := range files {
		if b, err := os.ReadFile(f); err == nil {
			_ = os.WriteFile(filepath.Join(dir, "serve-"+filepath.Base(f)), b, 0o644)
		}
	}
}

// served is one line of a server's decision log.
type served struct {
	Path   string          `json:"path"`
	Input  json.RawMessage `json:"input"`
	Result struct {
		Verdict  string `json:"verdict"`
		Children []struct {
			Rules []string `json:"rules"`
		} `json:"children"`
	} `json:"result"`
	Error string `json:"error"`
}

// event is the payload's hook_event_name, "" when the server did not read
// the payload.
func (d served) event() string {
	var p struct {
		Event string `json:"hook_event_name"`
	}
	_ = json.Unmarshal(d.Input, &p)
	return p.Event
}

func (d served) String() string {
	var rules []string
	for _, c := range d.Result.Children {
		rules = append(rules, c.Rules...)
	}
	return fmt.Sprintf("%s %s verdict=%s rules=%v error=%q input=%s", d.Path, d.event(), d.Result.Verdict, rules, d.Error, trim(string(d.Input), 400))
}

// decisions reads the decision log.
func (g *gateServer) decisions() ([]served, error) {
	if g.log == "" {
		return nil, errors.New("no server was started")
	}
	b, err := os.ReadFile(g.log)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	var out []served
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if l == "" {
			continue
		}
		var d served
		if err := json.Unmarshal([]byte(l), &d); err != nil {
			return nil, fmt.Errorf("decision log line %q: %v", l, err)
		}
		out = append(out, d)
	}
	return out, nil
}

// answer is what a server is expected to have answered one request: its
// verdict, the payload's event ("" for a request refused before the
// payload was read) and text its error holds ("" for any).
type answer struct{ verdict, event, err string }

// decided fails unless the server answered exactly these, in order.
func (g *gateServer) decided(want ...answer) func(*testing.T, *outcome) error {
	return func(t *testing.T, o *outcome) error {
		ds, err := g.decisions()
		if err != nil {
			return err
		}
		for _, d := range ds {
			t.Logf("server: %s", d)
		}
		if len(ds) != len(want) {
			return fmt.Errorf("the server answered %d requests, not %d", len(ds), len(want))
		}
		for i, w := range want {
			d := ds[i]
			if d.Result.Verdict != w.verdict || d.event() != w.event || !strings.Contains(d.Error, w.err) {
				return fmt.Errorf("request %d: the server answered %s, not verdict %s on %q with an error holding %q", i+1, d, w.verdict, w.event, w.err)
			}
		}
		return nil
	}
}

// toolResultSays fails unless some tool result the main agent got back
// holds text: how the client reports a hook's refusal to the model.
func toolResultSays(text string) func(*testing.T, *outcome) error {
	return func(t *testing.T, o *outcome) error {
		for _, r := range o.mainToolResults() {
			if strings.Contains(r.Text, text) {
				return nil
			}
		}
		return fmt.Errorf("no tool result says %q", text)
	}
}

// TestHTTPHook runs the README's HTTP hook against `spawngate serve`:
// what it lets start, what it refuses, and the host's fail-open when the
// server is down.
func TestHTTPHook(t *testing.T) {
	clientPath(t)
	runCases(t, httpCases())
}

func httpCases() []e2eCase {
	const token = "e2e-token-6b1f"
	// One server per scenario; its checks read what it was asked.
	reader, writer, unset, slash := new(gateServer), new(gateServer), new(gateServer), new(gateServer)
	missing, withToken := &gateServer{token: token}, &gateServer{token: token}
	return []e2eCase{{
		name: "http-reader-starts",
		sc: func(t *testing.T) scenario {
			return scenario{Settings: httpSettings(false), Serve: reader.serve, Launch: sessionLauncher,
				Files: map[string]string{".claude/agents/reader.md": readerDef},
				Main:  []step{spawn("reader")}}
		},
		check: all(starts(readerMarker), reader.decided(answer{"pass", "PreToolUse", ""})),
	}, {
		name: "http-writer-refused",
		sc: func(t *testing.T) scenario {
			return scenario{Settings: httpSettings(false), Serve: writer.serve, Launch: sessionLauncher,
				Files: map[string]string{".claude/agents/writer.md": writerDef},
				Main:  []step{spawn("writer")}}
		},
		// Refused by the policy (block), not because it could not be judged.
		check: all(neverStarts(writerMarker), writer.decided(answer{"block", "PreToolUse", ""})),
	}, {
		// The server wants a token and the hook sends none: the server
		// answers 200 with the deny that every event blocks on
		// ({"decision":"block"}), before it reads the payload.
		name: "http-token-missing-refused",
		sc: func(t *testing.T) scenario {
			return scenario{Settings: httpSettings(false), Launch: sessionLauncher,
				Serve: missing.serve,
				Files: map[string]string{".claude/agents/reader.md": readerDef, ".claude/agents/writer.md": writerDef},
				Main:  []step{spawn("writer"), spawn("reader")}}
		},
		check: all(neverStarts(writerMarker, readerMarker),
			missing.decided(answer{"error", "", "bearer token"}, answer{"error", "", "bearer token"})),
		facts: toolResultSays("bearer token"),
	}, {
		// The README's Authorization header, filled from the client's
		// environment: with the token the reader starts, so the refusal
		// above is the missing token's.
		name: "http-token-reader-starts",
		sc: func(t *testing.T) scenario {
			return scenario{Settings: httpSettings(true), Launch: sessionLauncher, Env: []string{"SPAWNGATE_TOKEN=" + token},
				Serve: withToken.serve,
				Files: map[string]string{".claude/agents/reader.md": readerDef},
				Main:  []step{spawn("reader")}}
		},
		check: all(starts(readerMarker), withToken.decided(answer{"pass", "PreToolUse", ""})),
	}, {
		// The README's block as it is, with the client started plainly: the
		// client sends CLAUDE_PROJECT_DIR and CLAUDE_PID empty, and the
		// server, unable to tell which definitions the session runs,
		// refuses even the reader.
		name: "http-session-env-unset-refused",
		sc: func(t *testing.T) scenario {
			return scenario{Settings: httpSettings(false), Serve: unset.serve,
				Files: map[string]string{".claude/agents/reader.md": readerDef},
				Main:  []step{spawn("reader")}}
		},
		check: neverStarts(readerMarker),
		facts: unset.decided(answer{"error", "PreToolUse", "CLAUDE_PROJECT_DIR is not set"}),
	}, {
		// The HTTP hook on UserPromptExpansion refuses the prompt itself.
		name: "http-slash-command-refused",
		sc: func(t *testing.T) scenario {
			return scenario{Settings: httpSettings(false), Serve: slash.serve, Launch: sessionLauncher, Prompt: "/wskill",
				Files: map[string]string{".claude/agents/writer.md": writerDef, ".claude/skills/wskill/SKILL.md": wskill}}
		},
		promptBlocked: true,
		check:         all(neverStarts(writerMarker), slash.decided(answer{"block", "UserPromptExpansion", ""})),
	}, {
		// A host fact, and the reason the README calls the command hook the
		// enforcing one: Claude Code lets the spawn through when the HTTP
		// hook's connection is refused, so while the server is down the
		// writer starts. No server can answer that; the check records the
		// host's behaviour, not spawngate's.
		name: "http-server-down-fails-open",
		sc: func(t *testing.T) scenario {
			return scenario{Settings: httpSettings(false), Serve: closedPort, Launch: sessionLauncher,
				Files: map[string]string{".claude/agents/writer.md": writerDef},
				Main:  []step{spawn("writer")}}
		},
		check: starts(writerMarker),
	}}
}
