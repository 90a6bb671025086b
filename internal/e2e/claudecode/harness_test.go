package claudecode

import (
	"bufio"
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
	"github.com/spawngate/spawngate/internal/host/hosttest"
)

// runTimeout bounds one client run, hooks and children included.
const runTimeout = 90 * time.Second

// readmeHook is the hook block of docs/claude-code.md,
// with the policy path filled in.
func readmeHook(matcher, policy string) map[string]any {
	return map[string]any{
		"matcher": matcher,
		"hooks": []any{map[string]any{
			"type":    "command",
			"command": "spawngate hook claude-code --policy " + policy + " --timeout 20s",
			"timeout": 30,
		}},
	}
}

// readmeMatcher is the README's matcher: every tool that can start a
// sub-agent.
const readmeMatcher = "Agent|Task|Skill|Workflow"

// settingsWithHook is a settings file holding the README's hook block.
// It also holds the README's UserPromptExpansion hook (the same command,
// no matcher), which judges a prompt's /command.
func settingsWithHook(matcher, policy string) string {
	expansion := readmeHook("", policy)
	delete(expansion, "matcher")
	b, _ := json.MarshalIndent(map[string]any{
		"hooks": map[string]any{"PreToolUse": []any{readmeHook(matcher, policy)}, "UserPromptExpansion": []any{expansion}},
	}, "", "  ")
	return string(b) + "\n"
}

// noWritePolicy is examples/claude-code/policy.yaml with the scratch
// repository as its workspace root.
func noWritePolicy(root string) string {
	return `allowed_tools: [Read, Grep, Glob, WebFetch, WebSearch, TodoWrite]
workspace_root: ` + root + `
budget_cap_tokens: 200000
allowed_models: [sonnet, haiku, "claude-sonnet-*", "claude-haiku-*"]
`
}

// spawnPolicy is noWritePolicy that also lets an agent spawn, for the
// nested scenarios.
func spawnPolicy(root string) string {
	return `allowed_tools: [Read, Grep, Glob, WebFetch, WebSearch, TodoWrite, Agent]
allow_spawn: true
workspace_root: ` + root + `
budget_cap_tokens: 200000
allowed_models: [sonnet, haiku, "claude-sonnet-*", "claude-haiku-*"]
`
}

// agentDef writes an agent definition whose body carries marker.
func agentDef(frontmatter, marker string) string {
	return "---\n" + strings.TrimSpace(frontmatter) + "\n---\nYou are an e2e test agent. " + marker + "\n"
}

// scenario is one client run: a scratch repository with files, a script
// for the model, and how to start the client.
type scenario struct {
	// Files to write, relative to the repository; a name starting with "~/"
	// goes under the isolated HOME instead. Every file's text may use
	// {{ROOT}}, {{HOME}} and {{POLICY}}.
	Files map[string]string
	// Symlinks, link name to target, named like Files.
	Symlinks map[string]string
	// Settings is .claude/settings.json; empty means the README's hook
	// with matcher "Agent|Task".
	Settings string
	// NoSettings leaves .claude/settings.json out altogether.
	NoSettings bool
	// Policy is the policy file's text; empty means noWritePolicy. With
	// NoPolicy the file is not written at all.
	Policy   string
	NoPolicy bool
	// PolicyAt is where the policy file goes, named like Files ("~/..."
	// under HOME); empty is beside the repository, where the session
	// cannot write.
	PolicyAt string
	// Stream, when set, drives the client as the Agent SDK does: the
	// prompt comes on standard input after these lines (--input-format
	// stream-json), the first of them the SDK's initialize request.
	Stream []map[string]any
	// Args come after `-p PROMPT --output-format stream-json --verbose`.
	Args []string
	// Dir is the folder, relative to the repository, the client starts in.
	Dir string
	// Managed is the text of managed settings
	// (/etc/claude-code/managed-settings.json). The client then runs in a
	// mount namespace of its own over an overlay of /etc, so the file is
	// seen by this run alone and the machine's /etc is never written.
	Managed string
	// Trusted records in ~/.claude.json that the repository's workspace
	// trust dialog was accepted, as it is on a machine where someone ran
	// Claude Code there interactively once. Headless runs treat the folder
	// as trusted for settings, but some features of project agents
	// (frontmatter hooks, mcpServers) look for this record.
	Trusted bool
	// Doctor runs spawngate doctor claude-code on the installation (the
	// Managed settings, the repository, HOME) before the client, and fails
	// the scenario unless it passes. {{SPAWNGATE}} in the settings is the
	// absolute path of the hook's executable.
	Doctor bool
	// DoctorFails, with Doctor, is the finding doctor must fail the
	// installation with, instead of passing it.
	DoctorFails string
	// Serve, when set, starts what the settings' hooks call (an HTTP hook's
	// server): it runs once the policy file is written and before any
	// other file, and what it returns fills {{SERVER}} in every file's text.
	Serve func(t *testing.T, root, home, policy string) string
	// Launch goes before the client's command line: a launcher that execs
	// the client, so that its process is the client's.
	Launch []string
	// Env adds to the client's environment.
	Env    []string
	Prompt string
	Main   []step
	Sub    map[string][]step
}

// hookCall is one run of the hook, as the wrapper on PATH recorded it.
type hookCall struct {
	Stdin   string
	Payload map[string]any
	Env     map[string]string
	Args    []string
	Parents []string // command lines of the hook's ancestors, nearest first
	Stdout  string
	Stderr  string
	Exit    string
}

// outcome is everything one run left behind.
type outcome struct {
	Root, Home string
	Requests   []*fakemodel.Request
	Hooks      []hookCall
	Stream     []map[string]any // the client's stream-json lines
	Stdout     string
	Stderr     string
	Err        error
}

// run sets the scenario up and runs the client once.
func (sc scenario) run(t *testing.T) *outcome {
	t.Helper()
	client := clientPath(t)
	base := t.TempDir()
	root := filepath.Join(base, "repo")
	home := filepath.Join(base, "home")
	bin := filepath.Join(base, "bin")
	capture := filepath.Join(base, "hooks")
	for _, d := range []string{root, home, bin, capture} {
		must(t, os.MkdirAll(d, 0o755))
	}
	where := func(name string) string {
		if rest, ok := strings.CutPrefix(name, "~/"); ok {
			return filepath.Join(home, rest)
		}
		return filepath.Join(root, name)
	}
	policy := filepath.Join(base, "policy.yaml")
	if sc.PolicyAt != "" {
		policy = where(sc.PolicyAt)
		must(t, os.MkdirAll(filepath.Dir(policy), 0o755))
	}
	vars := []string{"{{ROOT}}", root, "{{HOME}}", home, "{{POLICY}}", policy, "{{SPAWNGATE}}", filepath.Join(bin, "spawngate")}
	subst := strings.NewReplacer(vars...)

	gitInit(t, root)
	if !sc.NoPolicy {
		text := sc.Policy
		if text == "" {
			text = noWritePolicy(root)
		}
		must(t, os.WriteFile(policy, []byte(subst.Replace(text)), 0o644))
	}
	if sc.Serve != nil {
		subst = strings.NewReplacer(append(vars, "{{SERVER}}", sc.Serve(t, root, home, policy))...)
	}
	files := map[string]string{}
	for k, v := range sc.Files {
		files[k] = v
	}
	if !sc.NoSettings {
		s := sc.Settings
		if s == "" {
			s = settingsWithHook(readmeMatcher, policy)
		}
		files[".claude/settings.json"] = s
	}
	for name, text := range files {
		p := where(subst.Replace(name))
		must(t, os.MkdirAll(filepath.Dir(p), 0o755))
		mode := os.FileMode(0o644)
		if strings.HasPrefix(text, "#!") {
			mode = 0o755
		}
		must(t, os.WriteFile(p, []byte(subst.Replace(text)), mode))
	}
	for name, target := range sc.Symlinks {
		p := where(subst.Replace(name))
		must(t, os.MkdirAll(filepath.Dir(p), 0o755))
		must(t, os.Symlink(subst.Replace(target), p))
	}
	gitCommit(t, root)
	if sc.Trusted {
		b, _ := json.Marshal(map[string]any{"projects": map[string]any{root: map[string]any{"hasTrustDialogAccepted": true}}})
		must(t, os.WriteFile(filepath.Join(home, ".claude.json"), b, 0o600))
	}
	writeHookWrapper(t, filepath.Join(bin, "spawngate"), capture)

	main := substSteps(sc.Main, subst)
	sub := map[string][]step{}
	for k, v := range sc.Sub {
		sub[k] = substSteps(v, subst)
	}
	api := startModelAPI(t, main, sub)
	prompt := sc.Prompt
	if prompt == "" {
		prompt = "Run the e2e task."
	}
	args := append([]string{"-p", prompt, "--output-format", "stream-json", "--verbose"}, sc.Args...)
	var stdin bytes.Buffer
	if sc.Stream != nil {
		args = append([]string{"-p", "--output-format", "stream-json", "--verbose", "--input-format", "stream-json"}, sc.Args...)
		enc := json.NewEncoder(&stdin)
		for _, line := range sc.Stream {
			must(t, enc.Encode(line))
		}
		must(t, enc.Encode(map[string]any{"type": "user", "message": map[string]any{"role": "user", "content": prompt}}))
	}
	for i := range args {
		args[i] = subst.Replace(args[i])
	}
	debugLog := filepath.Join(base, "client-debug.log")
	if os.Getenv(envKeep) != "" {
		// The client's own account of the run, kept with the evidence.
		args = append(args, "--debug-file", debugLog)
	}

	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	defer cancel()
	argv := append(append(append([]string(nil), sc.Launch...), client), args...)
	if sc.Doctor {
		runDoctor(t, base, subst.Replace(sc.Managed), root, home, sc.DoctorFails)
	}
	if sc.Managed != "" {
		argv = withManagedSettings(t, base, subst.Replace(sc.Managed), argv)
	}
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir = filepath.Join(root, sc.Dir)
	cmd.Env = append([]string{
		"PATH=" + bin + string(os.PathListSeparator) + os.Getenv("PATH"),
		"HOME=" + home,
		"TMPDIR=" + base,
		"LANG=C.UTF-8",
		"ANTHROPIC_BASE_URL=" + api.URL(),
		"ANTHROPIC_API_KEY=test",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
		"DISABLE_TELEMETRY=1",
		"DISABLE_AUTOUPDATER=1",
		// As root the bypass modes are refused without it.
		"IS_SANDBOX=1",
	}, envSubst(sc.Env, subst)...)
	// The client starts helpers (shells, hooks): end them with it.
	cmd.WaitDelay = 5 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if sc.Stream != nil {
		cmd.Stdin = &stdin
	}
	err := cmd.Run()
	if ctx.Err() != nil {
		err = fmt.Errorf("the client did not finish within %v: %w", runTimeout, ctx.Err())
	}

	out := &outcome{Root: root, Home: home, Requests: api.Requests(), Stdout: stdout.String(), Stderr: stderr.String(), Err: err}
	sc2 := bufio.NewScanner(strings.NewReader(out.Stdout))
	sc2.Buffer(make([]byte, 0, 1<<20), 64<<20)
	for sc2.Scan() {
		var line map[string]any
		if json.Unmarshal(sc2.Bytes(), &line) == nil {
			out.Stream = append(out.Stream, line)
		}
	}
	out.Hooks = readHookCalls(t, capture)
	keepEvidence(t, out, debugLog)
	return out
}

// runDoctor runs spawngate doctor claude-code on the installation the
// client is about to run with: managed settings text (under a root of its
// own standing in for /), the repository and HOME. It fails the test
// unless doctor passes, or, with fails set, unless doctor fails the
// installation with that finding.
func runDoctor(t *testing.T, base, managed, root, home, fails string) {
	t.Helper()
	fake := filepath.Join(base, "doctor-root")
	hosttest.MirrorRoot(t, fake) // the binary and policy the hook names are the machine's
	must(t, os.MkdirAll(filepath.Join(fake, "etc", "claude-code"), 0o755))
	must(t, os.WriteFile(filepath.Join(fake, "etc", "claude-code", "managed-settings.json"), []byte(managed), 0o644))
	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	defer cancel()
	args := []string{"doctor", "claude-code", "--project", root, "--home", home, "--root", fake}
	if fails != "" {
		args = append(args, "--format", "json")
	}
	cmd := exec.CommandContext(ctx, spawngateBin, args...)
	out, err := cmd.CombinedOutput()
	if fails != "" {
		var ee *exec.ExitError
		var diag struct{ Findings []struct{ ID string } }
		found := false
		if json.Unmarshal(out, &diag) == nil {
			for _, f := range diag.Findings {
				found = found || f.ID == fails
			}
		}
		if !errors.As(err, &ee) || ee.ExitCode() != 1 || !found {
			t.Fatalf("spawngate doctor claude-code does not fail the installation with %s: %v\n%s", fails, err, out)
		}
		t.Logf("doctor fails it, as it must: %s", bytes.TrimSpace(out))
		return
	}
	if err != nil {
		t.Fatalf("spawngate doctor claude-code does not pass the installation: %v\n%s", err, out)
	}
	t.Logf("doctor: %s", bytes.TrimSpace(out))
}

// withManagedSettings wraps argv so that it runs in a private mount
// namespace where /etc is an overlay holding claude-code/managed-settings.json
// with text; the test is skipped where that cannot be done (it needs root or
// user namespaces with overlay mounts).
func withManagedSettings(t *testing.T, base, text string, argv []string) []string {
	t.Helper()
	unshare, err := exec.LookPath("unshare")
	if err != nil || os.Geteuid() != 0 {
		t.Skip("managed settings need root and unshare -m to overlay /etc")
	}
	dir := filepath.Join(base, "etc-overlay")
	upper, work := filepath.Join(dir, "upper"), filepath.Join(dir, "work")
	must(t, os.MkdirAll(filepath.Join(upper, "claude-code"), 0o755))
	must(t, os.MkdirAll(work, 0o755))
	must(t, os.WriteFile(filepath.Join(upper, "claude-code", "managed-settings.json"), []byte(text), 0o644))
	// sh -c SCRIPT UPPER WORK ARGV...: $0 is UPPER, $1 WORK, the rest ARGV.
	script := `mount -t overlay overlay -o "lowerdir=/etc,upperdir=$0,workdir=$1" /etc || exit 97
shift; exec "$@"`
	return append([]string{unshare, "-m", "--propagation", "private", "--", "sh", "-c", script, upper, work}, argv...)
}

// substSteps fills the placeholders into every string of the steps' inputs.
func substSteps(steps []step, r *strings.Replacer) []step {
	var walk func(v any) any
	walk = func(v any) any {
		switch x := v.(type) {
		case string:
			return r.Replace(x)
		case map[string]any:
			m := make(map[string]any, len(x))
			for k, e := range x {
				m[k] = walk(e)
			}
			return m
		case []any:
			l := make([]any, len(x))
			for i, e := range x {
				l[i] = walk(e)
			}
			return l
		}
		return v
	}
	out := make([]step, len(steps))
	for i, s := range steps {
		out[i] = step{Text: r.Replace(s.Text)}
		for _, c := range s.Calls {
			c.Args = walk(c.Args)
			out[i].Calls = append(out[i].Calls, c)
		}
	}
	return out
}

func envSubst(env []string, r *strings.Replacer) []string {
	out := make([]string, len(env))
	for i, e := range env {
		out[i] = r.Replace(e)
	}
	return out
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func gitInit(t *testing.T, dir string) {
	t.Helper()
	cmd := exec.Command("git", "init", "-q", dir)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git init: %v\n%s", err, b)
	}
}

// gitCommit commits everything, so that the repository has a HEAD (a
// worktree needs one) and a clean status.
func gitCommit(t *testing.T, dir string) {
	t.Helper()
	for _, args := range [][]string{
		{"add", "-A"},
		{"-c", "user.name=e2e", "-c", "user.email=e2e@example.invalid", "commit", "-q", "--allow-empty", "--no-verify", "-m", "e2e"},
	} {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, b)
		}
	}
}

// writeHookWrapper puts a `spawngate` on PATH that records what the client
// hands the hook (stdin, environment, the command lines above it) and then
// runs the real spawngate on the same input, passing its answer and exit
// code through unchanged. The hook block itself stays the README's.
func writeHookWrapper(t *testing.T, path, capture string) {
	t.Helper()
	script := `#!/bin/sh
f=$(mktemp '` + capture + `/call.XXXXXXXX') || exit 2
cat > "$f.stdin"
env > "$f.env"
for a in "$@"; do printf '%s\n' "$a"; done > "$f.args"
p=$PPID; i=0
while [ "$p" -gt 1 ] && [ $i -lt 6 ]; do
	tr '\0' ' ' < /proc/$p/cmdline 2>/dev/null; echo
	p=$(awk '{print $4}' /proc/$p/stat 2>/dev/null || echo 0); i=$((i+1))
done > "$f.parents"
'` + spawngateBin + `' "$@" < "$f.stdin" > "$f.stdout" 2> "$f.stderr"
rc=$?
cat "$f.stdout"; cat "$f.stderr" >&2
echo $rc > "$f.exit"
exit $rc
`
	must(t, os.WriteFile(path, []byte(script), 0o755))
}

func readHookCalls(t *testing.T, dir string) []hookCall {
	t.Helper()
	names, _ := filepath.Glob(filepath.Join(dir, "call.*.stdin"))
	sort.Strings(names)
	var calls []hookCall
	for _, n := range names {
		stem := strings.TrimSuffix(n, ".stdin")
		read := func(ext string) string { b, _ := os.ReadFile(stem + ext); return string(b) }
		c := hookCall{Stdin: read(".stdin"), Stdout: read(".stdout"), Stderr: read(".stderr"), Exit: strings.TrimSpace(read(".exit"))}
		_ = json.Unmarshal([]byte(c.Stdin), &c.Payload)
		c.Env = map[string]string{}
		for _, l := range strings.Split(read(".env"), "\n") {
			if k, v, ok := strings.Cut(l, "="); ok {
				c.Env[k] = v
			}
		}
		c.Args = strings.Fields(read(".args"))
		c.Parents = strings.Split(strings.TrimSpace(read(".parents")), "\n")
		calls = append(calls, c)
	}
	// Hooks run in parallel; order them as the client called them.
	sort.SliceStable(calls, func(i, j int) bool {
		return fmt.Sprint(calls[i].Payload["tool_use_id"]) < fmt.Sprint(calls[j].Payload["tool_use_id"])
	})
	return calls
}

// keepEvidence copies what the run left into $SPAWNGATE_E2E_KEEP/<test>,
// for reading findings after the temporary folders are gone.
func keepEvidence(t *testing.T, o *outcome, debugLog string) {
	dir := os.Getenv(envKeep)
	if dir == "" {
		return
	}
	dir = filepath.Join(dir, strings.ReplaceAll(t.Name(), "/", "__"))
	_ = os.RemoveAll(dir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Logf("keep: %v", err)
		return
	}
	write := func(name string, b []byte) { _ = os.WriteFile(filepath.Join(dir, name), b, 0o644) }
	write("stdout.jsonl", []byte(o.Stdout))
	write("stderr.txt", []byte(o.Stderr))
	write("paths.txt", []byte("root="+o.Root+"\nhome="+o.Home+"\n"))
	if b, err := os.ReadFile(debugLog); err == nil {
		write("client-debug.log", b)
	}
	for i, r := range o.Requests {
		head, _ := json.MarshalIndent(map[string]any{"seq": r.Seq, "method": r.Method, "path": r.Path, "kind": r.Kind,
			"model": r.Model, "tools": r.Tools, "deferred": deferred(r), "header": r.Header}, "", "  ")
		write(fmt.Sprintf("req%03d.%s.meta.json", i+1, r.Kind), head)
		write(fmt.Sprintf("req%03d.%s.body.json", i+1, r.Kind), r.Body)
	}
	for i, h := range o.Hooks {
		b, _ := json.MarshalIndent(h, "", "  ")
		write(fmt.Sprintf("hook%02d.json", i+1), b)
	}
	_ = filepath.Walk(o.Root, func(p string, info os.FileInfo, err error) error {
		if err == nil && info.Mode().IsRegular() && !strings.Contains(p, "/.git/") {
			rel, _ := filepath.Rel(o.Root, p)
			b, _ := os.ReadFile(p)
			write("repo__"+strings.ReplaceAll(rel, "/", "__"), b)
		}
		return nil
	})
}

// started says whether a sub-agent whose definition carries marker asked
// the model anything: the proof that the client really ran it.
func (o *outcome) started(marker string) bool {
	return len(o.requestsWith(marker)) > 0
}

// requestsWith lists the requests whose text carries marker. Only an agent
// running on that definition is sent its body: the main agent sees a
// definition's name and description, never its body.
func (o *outcome) requestsWith(marker string) []*fakemodel.Request {
	var out []*fakemodel.Request
	for _, r := range o.Requests {
		if bytes.Contains(r.Body, []byte(marker)) {
			out = append(out, r)
		}
	}
	return out
}

// subTools is what the agent whose request first carries marker could use
// (see offered).
func (o *outcome) subTools(marker string) []string {
	if rs := o.requestsWith(marker); len(rs) > 0 {
		return offered(rs[0])
	}
	return nil
}

// subRequests lists the requests the client marked as a sub-agent's.
func (o *outcome) subRequests() []*fakemodel.Request {
	var out []*fakemodel.Request
	for _, r := range o.Requests {
		if r.Kind == fakemodel.Sub {
			out = append(out, r)
		}
	}
	return out
}

// initAgents is the agent types the client's init message lists.
func (o *outcome) initAgents() []string {
	for _, l := range o.Stream {
		if l["type"] == "system" && l["subtype"] == "init" {
			var out []string
			for _, a := range asList(l["agents"]) {
				if s, ok := a.(string); ok {
					out = append(out, s)
				}
			}
			return out
		}
	}
	return nil
}

func asList(v any) []any { l, _ := v.([]any); return l }

// agentResults are the tool results the main agent got back, by the tool
// use ids of the script's calls.
func (o *outcome) mainToolResults() []fakemodel.Result {
	var last *fakemodel.Request
	for _, r := range o.Requests {
		if r.Kind == fakemodel.Main {
			last = r
		}
	}
	if last == nil {
		return nil
	}
	return last.Results
}

// hooksFor lists the recorded hook calls for one tool name.
func (o *outcome) hooksFor(tool string) []hookCall {
	var out []hookCall
	for _, h := range o.Hooks {
		if h.Payload["tool_name"] == tool {
			out = append(out, h)
		}
	}
	return out
}

// describe is a short account of the run for failure messages.
func (o *outcome) describe() string {
	var b strings.Builder
	fmt.Fprintf(&b, "client error: %v\n", o.Err)
	for _, r := range o.Requests {
		fmt.Fprintf(&b, "request %d %s %s kind=%s tools=%v\n", r.Seq, r.Method, r.Path, r.Kind, r.Tools)
	}
	for _, h := range o.Hooks {
		fmt.Fprintf(&b, "hook tool=%v agent_type=%v exit=%s stdout=%q stderr=%q\n",
			h.Payload["tool_name"], h.Payload["agent_type"], h.Exit, trim(h.Stdout, 300), trim(h.Stderr, 300))
	}
	for _, r := range o.mainToolResults() {
		fmt.Fprintf(&b, "tool result error=%v: %q\n", r.IsError, trim(r.Text, 400))
	}
	if o.Stderr != "" {
		fmt.Fprintf(&b, "client stderr: %s\n", trim(o.Stderr, 800))
	}
	return b.String()
}

func trim(s string, n int) string {
	if len(s) > n {
		return s[:n] + "..."
	}
	return s
}
