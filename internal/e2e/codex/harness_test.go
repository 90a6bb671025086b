package codex

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/spawngate/spawngate/internal/e2e/fakemodel"
	"github.com/spawngate/spawngate/internal/e2e/spawngatebin"
	"github.com/spawngate/spawngate/internal/e2e/suite"
	"github.com/spawngate/spawngate/internal/longtests"
)

// The environment the suite reads. SPAWNGATE_E2E_CODEX is the native codex
// binary install.sh prints; SPAWNGATE_E2E=require turns a missing client into
// a failure (CI that means to run the suite), anything else into a skip.
const (
	envCodex     = "SPAWNGATE_E2E_CODEX"
	envRequire   = "SPAWNGATE_E2E"
	envSpawngate = "SPAWNGATE_E2E_SPAWNGATE" // a prebuilt spawngate, else built once here
	envNetns     = "SPAWNGATE_E2E_NETNS"     // "off": stay in the host's network namespace
	envInNetns   = "SPAWNGATE_E2E_IN_NETNS"  // set on the re-executed copy inside unshare -n
	apiKeyEnv    = "SPAWNGATE_E2E_KEY"       // the provider's env_key; any value does
	sessionModel = "main-model"
	// readmeMatcher is the matcher of docs/codex.md's hook
	// block (and the README's), kept verbatim so the suite tests the wiring users copy.
	readmeMatcher = `^(Agent|.*spawn_agent|.*resume_agent)$`
	// scenarioTimeout bounds one client run, so a wedged client fails its
	// scenario instead of the whole go test timeout.
	scenarioTimeout = 90 * time.Second
	// userPrompt is the user's one message; its tag shows up in a child
	// only if the child was given the parent's history.
	userPrompt = "Start the task (e2e prompt tag 5c1e)."
)

var (
	codexBin     string // the client, "" when not configured
	spawngateBin string // the spawngate built for this run
	selfBin      string // this test binary, which doubles as the recording hook
	inNetns      bool
)

func TestMain(m *testing.M) {
	// The recording hook: Codex runs this same binary as a PreToolUse
	// command. It must answer before anything else happens in TestMain.
	if len(os.Args) >= 3 && os.Args[1] == "record-hook" {
		os.Exit(recordHook(os.Args[2]))
	}
	os.Exit(mainRun(m))
}

func mainRun(m *testing.M) int {
	codexBin = os.Getenv(envCodex)
	if !longtests.On() {
		codexBin = "" // the long tests are off: every test skips (needCodex)
	}
	if codexBin == "" {
		// Every test skips (or fails under SPAWNGATE_E2E=require) through
		// needCodex; there is nothing to build for them.
		return m.Run()
	}
	self, err := os.Executable()
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e/codex: cannot find the test binary:", err)
		return 1
	}
	selfBin = self
	inNetns = os.Getenv(envInNetns) != ""

	spawngateBin = os.Getenv(envSpawngate)
	if spawngateBin == "" && !inNetns {
		// Built outside the network namespace, where the module proxy can
		// still be reached if the module cache lacks something.
		dir, err := os.MkdirTemp("", "spawngate-e2e-bin-")
		if err != nil {
			fmt.Fprintln(os.Stderr, "e2e/codex:", err)
			return 1
		}
		defer os.RemoveAll(dir)
		spawngateBin = filepath.Join(dir, "spawngate")
		if err := spawngatebin.Build(spawngateBin); err != nil {
			fmt.Fprintln(os.Stderr, "e2e/codex: building spawngate:", err)
			return 1
		}
		os.Setenv(envSpawngate, spawngateBin)
	}

	if !inNetns && os.Getenv(envNetns) != "off" {
		if code, ok := reexecInNetns(); ok {
			return code
		}
	}
	if inNetns {
		if err := loopbackUp(); err != nil {
			fmt.Fprintln(os.Stderr, "e2e/codex: bringing up lo in the new network namespace:", err)
			return 1
		}
	}
	suite.MoreParallel()
	return m.Run()
}

// reexecInNetns runs this same test binary, with the same arguments, under
// `unshare -n`: a network namespace with nothing but a loopback interface.
// ok is false when unshare is missing or not permitted, and the suite then
// runs in place (still on 127.0.0.1 only).
func reexecInNetns() (code int, ok bool) {
	unshare, err := exec.LookPath("unshare")
	if err != nil {
		return 0, false
	}
	if err := exec.Command(unshare, "-n", "true").Run(); err != nil {
		return 0, false
	}
	cmd := exec.Command(unshare, append([]string{"-n", "--", selfBin}, os.Args[1:]...)...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.Env = append(os.Environ(), envInNetns+"=1")
	if err := cmd.Run(); err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return ee.ExitCode(), true
		}
		fmt.Fprintln(os.Stderr, "e2e/codex: unshare -n:", err)
		return 1, true
	}
	return 0, true
}

// needCodex skips (or fails, under SPAWNGATE_E2E=require) a test when no
// client is configured.
func needCodex(t *testing.T) {
	t.Helper()
	longtests.Need(t, "the real Codex client's suite")
	if codexBin != "" {
		if _, err := os.Stat(codexBin); err != nil {
			t.Fatalf("%s=%s: %v", envCodex, codexBin, err)
		}
		return
	}
	msg := "no Codex client: run `export " + envCodex + "=\"$(internal/e2e/codex/install.sh)\"` " +
		"(npm installs @openai/codex@0.171.0 into ~/.cache/spawngate/e2e) and go test ./internal/e2e/codex/"
	if os.Getenv(envRequire) == "require" {
		t.Fatal(msg)
	}
	t.Skip(msg)
}

// hookMode is how the spawngate hook is wired and trusted in a scenario.
type hookMode int

const (
	// hookReadme: the README's block, run with --dangerously-bypass-hook-trust.
	hookReadme hookMode = iota
	// hookUntrusted: the README's block with no trust at all: Codex skips it.
	hookUntrusted
	// hookTrustedHash: the README's block trusted the way /hooks does, by
	// [hooks.state."KEY"] trusted_hash in config.toml.
	hookTrustedHash
	// hookNone: no spawngate, only the recorder (what Codex does alone).
	hookNone
	// hookManaged: no hooks.json in CODEX_HOME; the hooks are managed, in
	// the requirements.toml the scenario puts before the client
	// (installed_test.go), and need no trust.
	hookManaged
)

// setup is what a scenario's scratch world is made of.
type setup struct {
	// defs are agent definitions by name: the extra TOML lines after name,
	// description and developer_instructions (which carries the marker).
	defs map[string]string
	// matcher replaces the README's matcher for spawngate ("" keeps it).
	matcher string
	hook    hookMode
	// policy is the operator policy's text; "" writes the default one and
	// "-" writes none (a missing policy file).
	policy string
	// projectConfig is .codex/config.toml in the (trusted) scratch repo.
	projectConfig string
	// sandboxWorkspaceWrite is added to the [sandbox_workspace_write]
	// table of $CODEX_HOME/config.toml (network_access, writable_roots):
	// the session's own settings, which its children get.
	sandboxWorkspaceWrite string
}

// world is one scenario's scratch: a git repo, an isolated HOME and
// CODEX_HOME, a folder outside every writable root, the scripted model.
type world struct {
	t                                    *testing.T
	base, repo, home, codexHome, outside string
	records                              string // the recording hook's folder
	policyPath                           string
	model                                *fakemodel.Server
	setup                                setup
	// launch, when set, goes before codex on every command line that
	// starts the client (a mount namespace of its own, withRequirements).
	launch []string
}

func marker(name string) string { return "SPAWNGATE-E2E-MARK-" + strings.ToUpper(name) }

const defaultPolicy = `# The e2e operator policy: read-only agents may run; workspace-write also
# needs allow_write, which this policy does not set.
allowed_tools: ["sandbox:read-only", "sandbox:workspace-write"]
workspace_root: %s
budget_cap_tokens: 400000
`

func newWorld(t *testing.T, s setup) *world {
	t.Helper()
	needCodex(t)
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	w := &world{
		t: t, base: base, setup: s,
		repo:      filepath.Join(base, "repo"),
		home:      filepath.Join(base, "home"),
		codexHome: filepath.Join(base, "home", ".codex"),
		outside:   filepath.Join(base, "outside"),
		records:   filepath.Join(base, "records"),
	}
	for _, d := range []string{w.repo, w.codexHome, w.outside, w.records, filepath.Join(w.repo, ".codex", "agents")} {
		mustMkdir(t, d)
	}
	if out, err := exec.Command("git", "init", "-q", w.repo).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}
	for name, extra := range s.defs {
		body := fmt.Sprintf("name = %q\ndescription = %q\ndeveloper_instructions = %q\n%s",
			name, "E2E agent "+name+".", marker(name)+": follow the task.", extra)
		mustWrite(t, filepath.Join(w.repo, ".codex", "agents", name+".toml"), body)
	}
	if s.projectConfig != "" {
		mustWrite(t, filepath.Join(w.repo, ".codex", "config.toml"), s.projectConfig)
	}
	w.policyPath = filepath.Join(base, "policy.yaml")
	switch s.policy {
	case "":
		mustWrite(t, w.policyPath, fmt.Sprintf(defaultPolicy, w.repo))
	case "-":
	default:
		// %REPO% stands for the scratch repository, which a case cannot
		// know when it is written.
		mustWrite(t, w.policyPath, strings.ReplaceAll(s.policy, "%REPO%", w.repo))
	}
	w.model = fakemodel.Start(t, codexHost, fakemodel.Scripts{})
	mustWrite(t, filepath.Join(w.codexHome, "config.toml"), w.configTOML(""))
	if s.hook != hookManaged {
		mustWrite(t, filepath.Join(w.codexHome, "hooks.json"), w.hooksJSON())
	}
	return w
}

// configTOML is $CODEX_HOME/config.toml; extra is appended (hook trust).
func (w *world) configTOML(extra string) string {
	return fmt.Sprintf(`model = %q
model_provider = "local"

[model_providers.local]
name = "local"
base_url = %q
wire_api = "responses"
env_key = %q
request_max_retries = 0
stream_max_retries = 0

# /tmp and $TMPDIR are writable roots of workspace-write by default; the
# scratch folders live under /tmp, so without this every "outside" write
# would succeed and prove nothing.
[sandbox_workspace_write]
exclude_slash_tmp = true
exclude_tmpdir_env_var = true
%s

[projects.%q]
trust_level = "trusted"

# Analytics would be flushed at exit towards a host that is unreachable
# here; in the network namespace that flush waits out a timeout (~5 s) on
# every run.
[analytics]
enabled = false

[agents]
max_depth = 2
%s`, sessionModel, w.model.URL()+"/v1", apiKeyEnv, w.setup.sandboxWorkspaceWrite, w.repo, extra)
}

// hookGroup is one matcher group of hooks.json with its one command.
type hookGroup struct {
	Matcher string        `json:"matcher"`
	Hooks   []hookHandler `json:"hooks"`
}

type hookHandler struct {
	Type    string `json:"type"`
	Command string `json:"command"`
	Timeout int    `json:"timeout"`
}

// hookGroups are the PreToolUse groups of $CODEX_HOME/hooks.json: the
// README's block for spawngate (unless hookNone) and, after it, a
// catch-all group for the recorder.
func (w *world) hookGroups() []hookGroup {
	var groups []hookGroup
	if w.setup.hook != hookNone {
		matcher := readmeMatcher
		if w.setup.matcher != "" {
			matcher = w.setup.matcher
		}
		groups = append(groups, hookGroup{Matcher: matcher, Hooks: []hookHandler{{
			Type:    "command",
			Command: "spawngate hook codex --policy " + w.policyPath + " --timeout 20s",
			Timeout: 30,
		}}})
	}
	return append(groups, hookGroup{Matcher: "", Hooks: []hookHandler{{
		Type:    "command",
		Command: shellQuote(selfBin) + " record-hook " + shellQuote(w.records),
		Timeout: 30,
	}}})
}

func (w *world) hooksJSON() string {
	b, err := json.MarshalIndent(map[string]any{"hooks": map[string]any{"PreToolUse": w.hookGroups()}}, "", "  ")
	if err != nil {
		panic(err)
	}
	return string(b)
}

// trustHooksComputed trusts every hook the way accepting it in /hooks
// does, with the hash computed here rather than asked of an app-server:
// one client start less per scenario. TestHost/trust_hash keeps the
// computation equal to the client's.
func (w *world) trustHooksComputed() {
	var extra strings.Builder
	for i, g := range w.hookGroups() {
		m := g.Matcher
		key := fmt.Sprintf("%s:pre_tool_use:%d:0", filepath.Join(w.codexHome, "hooks.json"), i)
		fmt.Fprintf(&extra, "\n[hooks.state.%q]\ntrusted_hash = %q\n", key,
			hookTrustHash("pre_tool_use", &m, g.Hooks[0].Command, g.Hooks[0].Timeout, nil))
	}
	mustWrite(w.t, filepath.Join(w.codexHome, "config.toml"), w.configTOML(extra.String()))
}

// env is the client's whole environment: nothing is inherited but PATH, so
// whatever else a hook sees came from Codex.
func (w *world) env() []string {
	return []string{
		"PATH=" + filepath.Dir(spawngateBin) + string(os.PathListSeparator) + os.Getenv("PATH"),
		"HOME=" + w.home,
		"CODEX_HOME=" + w.codexHome,
		apiKeyEnv + "=e2e",
		"LANG=C.UTF-8",
	}
}

// contextFor bounds one step of a scenario outside a client run.
func contextFor() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), scenarioTimeout)
}

// result is one client run.
type result struct {
	stdout, stderr string
	err            error
	reqs           []*fakemodel.Request // the model turns asked for
	hooks          []hookRecord
	approvals      []string // app-server approval requests answered
	start, end     time.Time
}

// execCodex runs `codex exec` headless in the repo with args before the
// prompt. Hook trust is bypassed unless the scenario tests trust itself.
func (w *world) execCodex(args ...string) *result {
	w.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), scenarioTimeout)
	defer cancel()
	full := []string{"exec", "--skip-git-repo-check"}
	if w.setup.hook == hookReadme || w.setup.hook == hookNone {
		full = append(full, "--dangerously-bypass-hook-trust")
	}
	full = append(full, args...)
	full = append(full, userPrompt)
	cmd := w.command(ctx, full...)
	cmd.Dir = w.repo
	cmd.Env = w.env()
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.WaitDelay = 5 * time.Second
	start := time.Now()
	err := cmd.Run()
	end := time.Now()
	if ctx.Err() != nil {
		err = fmt.Errorf("codex exec did not finish within %v: %w", scenarioTimeout, ctx.Err())
	}
	return w.finish(&result{stdout: stdout.String(), stderr: stderr.String(), err: err, start: start, end: end})
}

// command is the client with args, started under w.launch.
func (w *world) command(ctx context.Context, args ...string) *exec.Cmd {
	argv := append(append(append([]string(nil), w.launch...), codexBin), args...)
	return exec.CommandContext(ctx, argv[0], argv[1:]...)
}

func (w *world) finish(r *result) *result {
	for _, q := range w.model.Requests() {
		if q.Kind == "" {
			continue // a model listing and the like: no turn
		}
		if _, err := turnMetadata(q); err != nil {
			w.t.Errorf("model server: x-codex-turn-metadata: %v", err)
		}
		if q.Kind == fakemodel.Sub && !subHeaders(q) {
			// The fake model also takes a definition's marker in the
			// system prompt for a sub-agent's sign; Codex's headers are
			// the word this suite trusts, and a main agent taken for a
			// child would play a child's script and pass as one.
			w.t.Errorf("model server: request %d carries a definition's marker but no sub-agent header", q.Seq)
		}
		r.reqs = append(r.reqs, q)
	}
	r.hooks = w.hookRecords()
	for _, p := range w.model.Problems() {
		w.t.Errorf("model server: %s", p)
	}
	return r
}

// mainReqs are the main agent's requests; childReqs the requests of the
// sub-agent whose definition carries name's marker.
func (r *result) mainReqs() []*fakemodel.Request {
	var out []*fakemodel.Request
	for _, q := range r.reqs {
		if q.Kind != fakemodel.Sub {
			out = append(out, q)
		}
	}
	return out
}

func (r *result) childReqs(name string) []*fakemodel.Request {
	var out []*fakemodel.Request
	for _, q := range r.reqs {
		if q.Kind == fakemodel.Sub && strings.Contains(q.Text(), marker(name)) {
			out = append(out, q)
		}
	}
	return out
}

// anyChild reports whether any sub-agent made a request at all.
func (r *result) anyChild() bool {
	for _, q := range r.reqs {
		if q.Kind == fakemodel.Sub {
			return true
		}
	}
	return false
}

// spawnOutput is the tool result the main agent got for its spawn call.
func (r *result) spawnOutput() string {
	for _, q := range r.mainReqs() {
		if out := q.Output("main_spawn"); out != "" {
			return out
		}
	}
	return ""
}

// childOutput is the result of the command the sub-agent marked name ran
// (call_id name_cmd, as runs scripts it): "" when it never ran one.
func (r *result) childOutput(name string) string {
	var out string
	for _, q := range r.childReqs(name) {
		if o := q.Output(name + "_cmd"); o != "" {
			out = o
		}
	}
	return out
}

// mainSpawnHook is the recorded payload of the main agent's own spawn (no
// agent_id), or nil when the recorder saw none.
func (r *result) mainSpawnHook() *hookRecord {
	for _, h := range r.spawnHooks() {
		if h.Payload["agent_id"] == nil {
			h := h
			return &h
		}
	}
	return nil
}

// sandboxPolicy is the sandbox_policy of a recorded turn_context.
func (tr transcriptRecord) sandboxPolicy() map[string]any {
	sp, _ := tr.TurnContext["sandbox_policy"].(map[string]any)
	return sp
}

// dump is what a failing scenario prints: enough to see what happened.
func (r *result) dump() string {
	var b strings.Builder
	fmt.Fprintf(&b, "run error: %v (took %v)\n", r.err, r.end.Sub(r.start).Round(time.Millisecond))
	fmt.Fprintf(&b, "stderr (tail):\n%s\n", tail(r.stderr, 2500))
	for i, q := range r.reqs {
		fmt.Fprintf(&b, "request %d at +%v: model=%s thread=%s parent=%s subagent=%q sandbox=%s outputs=%q\n",
			i, q.At.Sub(r.start).Round(time.Millisecond), q.Model, thread(q), q.Header.Get("x-codex-parent-thread-id"), q.Header.Get("x-openai-subagent"), sandboxMode(q), outputs(q))
	}
	for _, h := range r.hooks {
		fmt.Fprintf(&b, "hook: tool_name=%v agent_id=%v permission_mode=%v input=%s\n", h.Payload["tool_name"], h.Payload["agent_id"], h.Payload["permission_mode"], mustJSON(h.Payload["tool_input"]))
		if h.Transcript.TurnContext != nil {
			fmt.Fprintf(&b, "  turn_context (for this turn: %v): approval_policy=%v model=%v sandbox_policy=%s\n", h.Transcript.TurnContextForTurn,
				h.Transcript.TurnContext["approval_policy"], h.Transcript.TurnContext["model"], mustJSON(h.Transcript.TurnContext["sandbox_policy"]))
		}
	}
	return b.String()
}

// hookRecord is what the recording hook saw: the payload, its own
// environment, its parent's command line, and the session transcript as it
// stood when the hook ran.
type hookRecord struct {
	Payload       map[string]any   `json:"payload"`
	Env           []string         `json:"env"`
	ParentCmdline []string         `json:"parent_cmdline"`
	Transcript    transcriptRecord `json:"transcript"`
}

type transcriptRecord struct {
	Exists bool `json:"exists"`
	Lines  int  `json:"lines"`
	// TurnContext is the last turn_context line's payload, if any.
	TurnContext map[string]any `json:"turn_context,omitempty"`
	// TurnContextForTurn says whether that line belongs to the payload's
	// turn_id, i.e. was written before the hook for this very turn.
	TurnContextForTurn bool   `json:"turn_context_for_turn"`
	Mode               string `json:"mode"`
	Owner              int    `json:"owner_uid"`
}

// recordHook is the recording hook's whole program: read the payload, write
// one JSON record into dir, exit 0 with no output (a pass, never a block).
func recordHook(dir string) int {
	raw, err := readAllLimited(os.Stdin, 16<<20)
	if err != nil {
		fmt.Fprintln(os.Stderr, "record-hook:", err)
		return 0
	}
	rec := hookRecord{Env: os.Environ()}
	sort.Strings(rec.Env)
	if err := json.Unmarshal(raw, &rec.Payload); err != nil {
		rec.Payload = map[string]any{"unparsed": string(raw)}
	}
	if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", os.Getppid())); err == nil {
		rec.ParentCmdline = strings.Split(strings.TrimRight(string(b), "\x00"), "\x00")
	}
	if p, _ := rec.Payload["transcript_path"].(string); p != "" {
		rec.Transcript = readTranscript(p, rec.Payload["turn_id"])
	}
	b, err := json.MarshalIndent(rec, "", "  ")
	if err != nil {
		return 0
	}
	f, err := os.CreateTemp(dir, "hook-*.json")
	if err != nil {
		fmt.Fprintln(os.Stderr, "record-hook:", err)
		return 0
	}
	defer f.Close()
	_, _ = f.Write(b)
	return 0
}

func readTranscript(path string, turnID any) transcriptRecord {
	var tr transcriptRecord
	st, err := os.Stat(path)
	if err != nil {
		return tr
	}
	tr.Exists = true
	tr.Mode = st.Mode().Perm().String()
	tr.Owner = fileOwner(st)
	b, err := os.ReadFile(path)
	if err != nil {
		return tr
	}
	for _, line := range strings.Split(string(b), "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		tr.Lines++
		var l struct {
			Type    string         `json:"type"`
			Payload map[string]any `json:"payload"`
		}
		if json.Unmarshal([]byte(line), &l) == nil && l.Type == "turn_context" {
			tr.TurnContext = l.Payload
		}
	}
	if tr.TurnContext != nil {
		tr.TurnContextForTurn = tr.TurnContext["turn_id"] == turnID
	}
	return tr
}

func (w *world) hookRecords() []hookRecord {
	entries, err := os.ReadDir(w.records)
	if err != nil {
		w.t.Fatalf("read hook records: %v", err)
	}
	var out []hookRecord
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(w.records, e.Name()))
		if err != nil {
			w.t.Fatal(err)
		}
		var r hookRecord
		if err := json.Unmarshal(b, &r); err != nil {
			w.t.Fatalf("hook record %s: %v", e.Name(), err)
		}
		out = append(out, r)
	}
	return out
}

// spawnHooks are the recorded PreToolUse payloads whose tool is a spawn in
// any of its spellings.
func (r *result) spawnHooks() []hookRecord {
	var out []hookRecord
	for _, h := range r.hooks {
		if n, _ := h.Payload["tool_name"].(string); strings.HasSuffix(n, "spawn_agent") {
			out = append(out, h)
		}
	}
	return out
}

func mustMkdir(t *testing.T, d string) {
	t.Helper()
	if err := os.MkdirAll(d, 0o755); err != nil {
		t.Fatal(err)
	}
}

func mustWrite(t *testing.T, p, s string) {
	t.Helper()
	mustMkdir(t, filepath.Dir(p))
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "..." + s[len(s)-n:]
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// The suite's cached result follows the sources of the spawngate it
// drives: go test reruns it when any of them changes
// (spawngatebin.LookAtSources).
func TestTheCachedResultFollowsTheSources(t *testing.T) {
	if err := spawngatebin.LookAtSources(); err != nil {
		t.Fatal(err)
	}
}
