package copilot

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/spawngate/spawngate/internal/e2e/fakemodel"
	"github.com/spawngate/spawngate/internal/e2e/suite"
)

const (
	// runTimeout bounds one client run, hooks and children included.
	runTimeout = 90 * time.Second
	// sessionModel is the session's model (COPILOT_MODEL).
	sessionModel = "gpt-4.1"
	// childTag starts the prompt of every spawn the scripts make: a
	// built-in child, which carries no marker of ours, is known by it (its
	// first user message is the spawn's prompt).
	childTag = "E2E-CHILD"
	// userPrompt is the user's one message; it never holds childTag.
	userPrompt = "Run the e2e task."
)

// isolatedEnv is what every client start gets besides PATH: its own HOME
// and caches, every proxy variable pointed at a port nothing listens on
// (127.0.0.1:9, the discard port) and the scripted model kept
// off them, the client told to stay offline and never update itself.
func isolatedEnv(home, cache string) []string {
	env := []string{
		"HOME=" + home,
		"XDG_CACHE_HOME=" + cache,
		"XDG_CONFIG_HOME=" + filepath.Join(home, ".config"),
		"XDG_DATA_HOME=" + filepath.Join(home, ".local", "share"),
		"XDG_STATE_HOME=" + filepath.Join(home, ".local", "state"),
		"LANG=C.UTF-8",
		"COPILOT_OFFLINE=true",
		"COPILOT_AUTO_UPDATE=false",
		"NO_PROXY=127.0.0.1,localhost",
		"no_proxy=127.0.0.1,localhost",
	}
	for _, v := range []string{"HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"} {
		env = append(env, v+"=http://127.0.0.1:9")
	}
	return env
}

// copilotHost is how the Copilot CLI talks to its model: OpenAI Chat
// Completions. A child of ours carries its definition's marker in its
// system prompt; a built-in child carries none, and is known by its
// first user message, the spawn's prompt.
var copilotHost = fakemodel.Host{
	API: fakemodel.OpenAIChat,
	IsSub: func(r *fakemodel.Request) bool {
		return strings.Contains(r.System, suite.MarkerPrefix) || len(r.Texts) > 0 && strings.Contains(r.Texts[0], childTag)
	},
}

// agentDef is a definition of name in .github/agents: frontmatter lines
// after name and description, and a body carrying its marker. The
// description never holds the marker: the main agent is shown it.
func agentDef(name, frontmatter string) string {
	fm := "name: " + name + "\ndescription: E2E agent " + name + "\n"
	if frontmatter != "" {
		fm += strings.TrimSpace(frontmatter) + "\n"
	}
	return "---\n" + fm + "---\nYou are an e2e test agent. " + suite.Marker(name) + "\n"
}

// defPath is where agentDef's text goes in the repository.
func defPath(name string) string { return ".github/agents/" + name + ".agent.md" }

// turn is one scripted model turn.
type turn = fakemodel.Turn

// spawn is a turn that calls the task tool under call id id, with the
// arguments the tool's schema asks for, in the order a model writes them;
// extra adds to them (model, mode), in its order, as "key", value pairs.
func spawn(id, agentType string, extra ...any) turn {
	return spawnNamed(id, "e2e", agentType, extra...)
}

// spawnNamed is spawn with the call's name argument.
func spawnNamed(id, name, agentType string, extra ...any) turn {
	kv := append([]any{"name", name, "description", "e2e task", "prompt", childTag + " do the task", "agent_type", agentType}, extra...)
	return turn{Calls: []fakemodel.Call{{ID: id, Name: "task", Args: suite.OrderedJSON(kv...)}}}
}

func jsonUnmarshal(s string, v any) error { return json.Unmarshal([]byte(s), v) }

// call is a turn that calls one tool under call id id.
func call(id, name string, args map[string]any) turn {
	return turn{Calls: []fakemodel.Call{{ID: id, Name: name, Args: args}}}
}

// scenario is one client run: a scratch repository with files, the hooks
// and policy, a script for the model, and how to start the client.
type scenario struct {
	// Files to write, relative to the repository; a name starting with
	// "~/" goes under the isolated HOME instead. Every text may use the
	// placeholders of run's replacer ({{ROOT}}, {{HOME}}, {{POLICY}},
	// {{BIN}}).
	Files map[string]string
	// UserHook is ~/.copilot/hooks/spawngate.json; "" is gateHookFile()
	// (the README's user-level block), "-" writes none.
	UserHook string
	// PolicyD is /etc/github-copilot/policy.d/spawngate.json and Managed
	// /etc/github-copilot/managed-settings.json. With either, the client
	// runs in a mount namespace of its own over an overlay of /etc, so the
	// files are this run's alone and the machine's /etc is never written;
	// without root the scenario is skipped.
	PolicyD, Managed string
	// Installed are more files of the machine, by absolute path under /etc
	// (the policy of the docs' installation): with it, spawngate is
	// installed as /usr/local/bin/spawngate in the overlay too.
	Installed map[string]string
	// Doctor, when set, runs before the client on the same overlay
	// (spawngate doctor copilot), and fails the test unless it judges
	// the installation as the scenario says.
	Doctor func(t *testing.T, ov overlay, root, home string)
	// Policy is the operator policy's text; "" is readOnlyPolicy.
	Policy string
	// Untrusted leaves --trust-folder off.
	Untrusted bool
	// Args come after the harness's own flags.
	Args []string
	// Main scripts the main agent; Sub each child by its definition's name.
	Main []turn
	Sub  map[string][]turn
	// Other scripts a child with no marker of ours (a built-in).
	Other []turn
}

// hookCall is one run of a hook, as the recording wrapper saw it.
type hookCall = suite.HookCall

// outcome is everything one run left behind.
type outcome struct {
	suite.Outcome
	Log string // the client's debug log (--log-level all)
}

// gateHookFile is the README's user-level hook file,
// ~/.copilot/hooks/spawngate.json, with the recording wrapper in front of
// spawngate.
func gateHookFile() string {
	return hookFile("{{BIN}}/record gate {{SPAWNGATE}} hook copilot --policy {{POLICY}}", 30, "task")
}

// hookFile is a hook file ({"version":1,...}) with one camelCase
// preToolUse command hook.
func hookFile(bash string, timeoutSec int, matcher string) string {
	h := map[string]any{"type": "command", "bash": bash, "timeoutSec": timeoutSec}
	if matcher != "" {
		h["matcher"] = matcher
	}
	b, _ := json.MarshalIndent(map[string]any{"version": 1, "hooks": map[string]any{"preToolUse": []any{h}}}, "", "  ")
	return string(b) + "\n"
}

// pascalHookFile is a hook file with one PascalCase PreToolUse command
// hook (Claude Code's event name, which Copilot also runs).
func pascalHookFile(bash, matcher string) string {
	return strings.Replace(hookFile(bash, 30, matcher), `"preToolUse"`, `"PreToolUse"`, 1)
}

// denyStub is a hook command that records its call and denies with reason.
func denyStub(label, reason string) string {
	return "{{BIN}}/record " + label + " {{BIN}}/deny " + shellQuote(reason)
}

// run sets the scenario up and runs the client once.
func (sc scenario) run(t *testing.T) *outcome {
	t.Helper()
	client := clientPath(t)
	base, err := filepath.EvalSymlinks(t.TempDir())
	must(t, err)
	root := filepath.Join(base, "repo")
	home := filepath.Join(base, "home")
	cache := filepath.Join(base, "cache")
	bin := filepath.Join(base, "bin")
	capture := filepath.Join(base, "hooks")
	logs := filepath.Join(base, "logs")
	for _, d := range []string{root, home, bin, capture, logs} {
		must(t, os.MkdirAll(d, 0o755))
	}
	// The client's unpacked code, hard-linked from the suite's warm cache.
	if out, err := exec.Command("cp", "-al", warmCache, cache).CombinedOutput(); err != nil {
		t.Fatalf("cp -al %s: %v\n%s", warmCache, err, out)
	}
	policy := filepath.Join(base, "policy.yaml")
	subst := strings.NewReplacer("{{ROOT}}", root, "{{HOME}}", home, "{{POLICY}}", policy,
		"{{BIN}}", bin, "{{SPAWNGATE}}", spawngateBin)
	where := func(name string) string {
		if rest, ok := strings.CutPrefix(name, "~/"); ok {
			return filepath.Join(home, rest)
		}
		return filepath.Join(root, name)
	}

	gitInit(t, root)
	text := sc.Policy
	if text == "" {
		text = readOnlyPolicy
	}
	must(t, os.WriteFile(policy, []byte(subst.Replace(text)), 0o644))
	files := map[string]string{"README.md": "# e2e\n\nA scratch repository.\n"}
	for k, v := range sc.Files {
		files[k] = v
	}
	switch sc.UserHook {
	case "":
		files["~/.copilot/hooks/spawngate.json"] = gateHookFile()
	case "-":
	default:
		files["~/.copilot/hooks/spawngate.json"] = sc.UserHook
	}
	for name, text := range files {
		p := where(name)
		must(t, os.MkdirAll(filepath.Dir(p), 0o755))
		must(t, os.WriteFile(p, []byte(subst.Replace(text)), 0o644))
	}
	gitCommit(t, root)
	writeHookTools(t, bin, capture)

	subs := map[string]fakemodel.Script{}
	for name, turns := range sc.Sub {
		subs[suite.Marker(name)] = fakemodel.Steps(turns...)
	}
	scripts := fakemodel.Scripts{Main: fakemodel.Steps(sc.Main...), Subs: subs}
	if sc.Other != nil {
		scripts.Other = fakemodel.Steps(sc.Other...)
	}
	api := fakemodel.Start(t, copilotHost, scripts)

	args := []string{"-p", userPrompt, "--allow-all-tools", "--no-auto-update", "--output-format", "json",
		"--log-dir", logs, "--log-level", "all"}
	if !sc.Untrusted {
		args = append(args, "--trust-folder")
	}
	args = append(args, sc.Args...)
	argv := append([]string{client}, args...)
	if sc.PolicyD != "" || sc.Managed != "" || sc.Installed != nil {
		ov := overlay{base: base, files: map[string]string{}}
		if sc.PolicyD != "" {
			ov.files["/etc/github-copilot/policy.d/spawngate.json"] = subst.Replace(sc.PolicyD)
		}
		if sc.Managed != "" {
			ov.files["/etc/github-copilot/managed-settings.json"] = subst.Replace(sc.Managed)
		}
		for k, v := range sc.Installed {
			ov.files[k] = subst.Replace(v)
		}
		if sc.Installed != nil {
			// The docs' installation: spawngate in /usr/local/bin.
			ov.files["/usr/local/bin/spawngate"] = "@" + spawngateBin
		}
		if sc.Doctor != nil {
			sc.Doctor(t, ov, root, home)
		}
		argv = ov.wrap(t, argv)
	}

	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir = root
	cmd.Env = append(isolatedEnv(home, cache),
		"PATH="+os.Getenv("PATH"),
		"TMPDIR="+base,
		"COPILOT_PROVIDER_BASE_URL="+api.URL()+"/v1",
		"COPILOT_PROVIDER_API_KEY=e2e",
		"COPILOT_MODEL="+sessionModel,
	)
	// The client starts helpers (shells, hooks): end them with it.
	cmd.WaitDelay = 5 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = cmd.Run()
	if ctx.Err() != nil {
		err = fmt.Errorf("the client did not finish within %v: %w", runTimeout, ctx.Err())
	}
	o := &outcome{Outcome: suite.Outcome{Root: root, Home: home, Requests: api.Requests(), Stdout: stdout.String(), Stderr: stderr.String(), Err: err}}
	for _, p := range api.Problems() {
		t.Errorf("model server: %s", p)
	}
	if names, _ := filepath.Glob(filepath.Join(logs, "*")); len(names) > 0 {
		var b strings.Builder
		for _, n := range names {
			if data, err := os.ReadFile(n); err == nil {
				b.Write(data)
			}
		}
		o.Log = b.String()
	}
	o.Hooks = readHookCalls(capture)
	keepEvidence(t, o)
	return o
}

// overlay is a private mount namespace in which folders of the machine
// (/etc, /usr/local/bin) are overlays holding a scenario's files: they are
// seen by what runs there alone, and the machine's folders are never
// written.
type overlay struct {
	base string
	// files are by absolute path; a value starting with "@" copies the
	// file it names (a binary), anything else is the file's text.
	files map[string]string
}

// wrap is argv run in a fresh mount namespace with the overlays mounted.
// Without root and unshare the test is skipped. Each call mounts anew, so
// doctor and the client can run one after the other on the same files.
func (ov overlay) wrap(t *testing.T, argv []string) []string {
	t.Helper()
	unshare, err := exec.LookPath("unshare")
	if err != nil || os.Geteuid() != 0 {
		t.Skip("files in /etc/github-copilot need root and unshare -m to overlay /etc")
	}
	var script strings.Builder
	var mounts []string
	for path, content := range ov.files {
		top := "/etc"
		if strings.HasPrefix(path, "/usr/local/bin/") {
			top = "/usr/local/bin"
		}
		if !strings.HasPrefix(path, top+"/") {
			t.Fatalf("overlay: %s is under neither /etc nor /usr/local/bin", path)
		}
		upper := filepath.Join(ov.base, "overlay", strings.ReplaceAll(strings.Trim(top, "/"), "/", "-"))
		p := filepath.Join(upper, "upper", strings.TrimPrefix(path, top+"/"))
		must(t, os.MkdirAll(filepath.Dir(p), 0o755))
		if src, ok := strings.CutPrefix(content, "@"); ok {
			b, err := os.ReadFile(src)
			must(t, err)
			must(t, os.WriteFile(p, b, 0o755))
		} else {
			must(t, os.WriteFile(p, []byte(content), 0o644))
		}
		if !slices.Contains(mounts, top) {
			mounts = append(mounts, top)
			must(t, os.MkdirAll(filepath.Join(upper, "work"), 0o755))
		}
	}
	slices.Sort(mounts)
	for _, top := range mounts {
		dir := filepath.Join(ov.base, "overlay", strings.ReplaceAll(strings.Trim(top, "/"), "/", "-"))
		// A work folder left by an earlier mount of the same overlay is
		// emptied by the kernel's own rules; a fresh one per mount avoids
		// relying on that.
		fmt.Fprintf(&script, "rm -rf %[1]s/work && mkdir %[1]s/work && mount -t overlay overlay -o lowerdir=%[2]s,upperdir=%[1]s/upper,workdir=%[1]s/work %[2]s || exit 97\n",
			shellQuote(dir), top)
	}
	script.WriteString(`exec "$@"`)
	return append([]string{unshare, "-m", "--propagation", "private", "--", "sh", "-c", script.String(), "sh"}, argv...)
}

// writeHookTools puts the hook programs in bin: record LABEL CMD... saves
// what the client hands a hook (stdin, environment) under LABEL, runs CMD
// on the same input and passes its answer and exit code through; deny
// REASON answers the camelCase deny; slow-deny SECONDS REASON denies
// after a wait the hook's timeoutSec cuts short; deny-type TYPE REASON
// denies a task call for agent_type TYPE alone.
func writeHookTools(t *testing.T, bin, capture string) {
	t.Helper()
	record := suite.RecordScript(capture)
	deny := `#!/bin/sh
printf '{"permissionDecision":"deny","permissionDecisionReason":"%s"}\n' "$1"
`
	slowDeny := `#!/bin/sh
sleep "$1"
printf '{"permissionDecision":"deny","permissionDecisionReason":"%s"}\n' "$2"
`
	denyType := `#!/bin/sh
if grep -q "\"agent_type\":\"$1\""; then
	printf '{"permissionDecision":"deny","permissionDecisionReason":"%s"}\n' "$2"
fi
`
	for name, text := range map[string]string{"record": record, "deny": deny, "slow-deny": slowDeny, "deny-type": denyType} {
		must(t, os.WriteFile(filepath.Join(bin, name), []byte(text), 0o755))
	}
}

// readHookCalls reads the hooks' runs, in the order the client called
// them: Copilot stamps each payload with milliseconds.
func readHookCalls(dir string) []hookCall {
	return suite.ReadHookCalls(dir, func(a, b hookCall) bool {
		ta, _ := a.Payload["timestamp"].(float64)
		tb, _ := b.Payload["timestamp"].(float64)
		return ta < tb
	})
}

// keepEvidence copies what the run left into $SPAWNGATE_E2E_KEEP/<test>,
// for reading findings after the temporary folders are gone.
func keepEvidence(t *testing.T, o *outcome) {
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
	write("client.log", []byte(o.Log))
	write("paths.txt", []byte("root="+o.Root+"\nhome="+o.Home+"\n"))
	for i, r := range o.Requests {
		head, _ := json.MarshalIndent(map[string]any{"seq": r.Seq, "method": r.Method, "path": r.Path, "kind": r.Kind,
			"marker": r.Marker, "model": r.Model, "tools": r.Tools, "header": r.Header}, "", "  ")
		write(fmt.Sprintf("req%03d.%s.meta.json", i+1, r.Kind), head)
		write(fmt.Sprintf("req%03d.%s.body.json", i+1, r.Kind), r.Body)
	}
	for i, h := range o.Hooks {
		b, _ := json.MarshalIndent(h, "", "  ")
		write(fmt.Sprintf("hook%02d.json", i+1), b)
	}
}

// hooks lists the recorded calls of the hook labelled label for tool.
func (o *outcome) hooks(label, tool string) []hookCall {
	var out []hookCall
	for _, h := range o.Hooks {
		if h.Label == label && toolName(h.Payload) == tool {
			out = append(out, h)
		}
	}
	return out
}

// toolName is a payload's tool, in either event's spelling.
func toolName(p map[string]any) string {
	if s, ok := p["toolName"].(string); ok {
		return s
	}
	s, _ := p["tool_name"].(string)
	return s
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func gitInit(t *testing.T, dir string) {
	t.Helper()
	if b, err := exec.Command("git", "init", "-q", dir).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v\n%s", err, b)
	}
}

// gitCommit commits everything, so that the repository has a HEAD and a
// clean status.
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

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
