package gemini

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
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
	// sessionModel is the session's model (-m).
	sessionModel = "gemini-2.5-flash"
	// childTag starts the prompt of every spawn the scripts make: a
	// built-in child, which carries no marker of ours, is known by it.
	childTag = "E2E-CHILD"
	// userPrompt is the user's one message; it never holds childTag.
	userPrompt = "Run the e2e task."
)

// isolatedEnv is what every client start gets besides PATH: its own HOME,
// every proxy variable pointed at a port nothing listens on (127.0.0.1:9,
// the discard port) and the scripted model kept off them, the key the
// client needs to start (the scripted model ignores it), no relaunch into
// a child node, and the workspace trusted (headless refuses to start in an
// untrusted one).
func isolatedEnv(home string) []string {
	env := []string{
		"HOME=" + home,
		"XDG_CONFIG_HOME=" + filepath.Join(home, ".config"),
		"XDG_CACHE_HOME=" + filepath.Join(home, ".cache"),
		"LANG=C.UTF-8",
		"GEMINI_API_KEY=x",
		"GEMINI_CLI_NO_RELAUNCH=true",
		"GEMINI_CLI_TRUST_WORKSPACE=true",
		"NO_PROXY=127.0.0.1,localhost",
		"no_proxy=127.0.0.1,localhost",
	}
	for _, v := range []string{"HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"} {
		env = append(env, v+"=http://127.0.0.1:9")
	}
	return env
}

// geminiHost is how Gemini CLI talks to its model: the Gemini API. A
// child of ours carries its definition's marker in its system prompt; a
// built-in child carries none, and is known by the spawn's prompt among
// its first messages.
var geminiHost = fakemodel.Host{
	API: fakemodel.GeminiAPI,
	IsSub: func(r *fakemodel.Request) bool {
		if strings.Contains(r.System, suite.MarkerPrefix) {
			return true
		}
		for _, x := range r.Texts {
			if strings.HasPrefix(x, childTag) || strings.Contains(x, "\n"+childTag) {
				return true
			}
		}
		return false
	},
}

// markerRE finds any marker of ours.
var markerRE = regexp.MustCompile(suite.MarkerPrefix + `[A-Z0-9_-]+`)

// agentDef is a definition of name: frontmatter lines after name and
// description, and a body (the child's system prompt) carrying its
// marker. The description never holds the marker: the main agent is shown
// it.
func agentDef(name, frontmatter string) string {
	return agentDefMarked(name, suite.Marker(name), frontmatter)
}

// agentDefMarked is agentDef with a marker of the caller's choosing (two
// definitions of one name, told apart).
func agentDefMarked(name, mark, frontmatter string) string {
	fm := "name: " + name + "\ndescription: E2E agent " + name + "\n"
	if frontmatter != "" {
		fm += strings.TrimSpace(frontmatter) + "\n"
	}
	return "---\n" + fm + "---\nYou are an e2e test agent. " + mark + "\n"
}

// projectDef and userDef are where a definition of name goes: the
// repository's .gemini/agents (acknowledged by the harness, as the client
// asks before it loads one) or the user's ~/.gemini/agents.
func projectDef(name string) string { return ".gemini/agents/" + name + ".md" }
func userDef(name string) string    { return "~/.gemini/agents/" + name + ".md" }

// turn is one scripted model turn.
type turn = fakemodel.Turn

// spawn is a turn that calls invoke_agent under call id id, with the
// arguments its schema asks for, in the order a model writes them.
func spawn(id, agent string) turn {
	return turn{Calls: []fakemodel.Call{{ID: id, Name: "invoke_agent",
		Args: suite.OrderedJSON("agent_name", agent, "prompt", childTag+" do the task")}}}
}

// complete is a child's last turn: complete_task with its result. A child
// that ends without it fails (ERROR_NO_COMPLETE_TASK_CALL).
func complete(result string) turn {
	return turn{Calls: []fakemodel.Call{{ID: "child_done", Name: "complete_task", Args: map[string]any{"result": result}}}}
}

// builtinDone is a built-in child's one turn: complete_task with the
// output its declaration asks for (generalist's result is an object with
// a response; codebase_investigator's is a report), which the client
// checks before it lets the child end.
func builtinDone(r *fakemodel.Request) turn {
	var schema struct {
		Required   []string `json:"required"`
		Properties map[string]struct {
			Type string `json:"type"`
		} `json:"properties"`
	}
	tools, _ := r.JSON["tools"].([]any)
	for _, t := range tools {
		tm, _ := t.(map[string]any)
		decls, _ := tm["functionDeclarations"].([]any)
		for _, d := range decls {
			dm, _ := d.(map[string]any)
			if dm["name"] == "complete_task" {
				b, _ := json.Marshal(dm["parametersJsonSchema"])
				_ = json.Unmarshal(b, &schema)
			}
		}
	}
	args := map[string]any{}
	for _, name := range schema.Required {
		switch {
		case name == "report":
			args[name] = map[string]any{"SummaryOfFindings": "done", "ExplorationTrace": []any{}, "RelevantLocations": []any{}}
		case schema.Properties[name].Type == "object":
			args[name] = map[string]any{"response": "done"}
		default:
			args[name] = "done"
		}
	}
	return turn{Calls: []fakemodel.Call{{ID: "child_done", Name: "complete_task", Args: args}}}
}

// call is a turn that calls one tool under call id id.
func call(id, name string, args map[string]any) turn {
	return turn{Calls: []fakemodel.Call{{ID: id, Name: name, Args: args}}}
}

// hook is one BeforeTool command hook of a settings file.
type hook struct {
	Command string
	Name    string // "" leaves it unnamed: the client names it by its command
	Matcher string // "" is invoke_agent; "*" matches every tool
	Timeout int    // milliseconds; 0 is 30000
}

// hooksSettings is a settings object's "hooks" value holding hs.
func hooksSettings(hs ...hook) map[string]any {
	var groups []any
	for _, h := range hs {
		entry := map[string]any{"type": "command", "command": h.Command, "timeout": h.Timeout}
		if h.Timeout == 0 {
			entry["timeout"] = 30000
		}
		if h.Name != "" {
			entry["name"] = h.Name
		}
		m := h.Matcher
		if m == "" {
			m = "invoke_agent"
		}
		groups = append(groups, map[string]any{"matcher": m, "hooks": []any{entry}})
	}
	return map[string]any{"BeforeTool": groups}
}

// gateHook is spawngate as a BeforeTool hook, behind the recording wrapper.
func gateHook() hook {
	return hook{Command: "{{BIN}}/record gate {{SPAWNGATE}} hook gemini --policy {{POLICY}}"}
}

// denyStub is a hook that records its call as label and denies with reason.
func denyStub(label, reason string) hook {
	return hook{Command: "{{BIN}}/record " + label + " {{BIN}}/deny " + shellQuote(reason)}
}

// scenario is one client run: a scratch repository with files, the hooks
// and policy, a script for the model, and how to start the client.
type scenario struct {
	// Files to write, relative to the repository; a name starting with
	// "~/" goes under the isolated HOME instead. Every text may use the
	// placeholders of run's replacer ({{ROOT}}, {{HOME}}, {{POLICY}},
	// {{BIN}}, {{SPAWNGATE}}). Definitions in .gemini/agents are
	// acknowledged in ~/.gemini/acknowledgments/agents.json.
	Files map[string]string
	// UserHooks are the BeforeTool hooks of ~/.gemini/settings.json; nil
	// is spawngate's (gateHook), NoUserHook writes none.
	UserHooks  []hook
	NoUserHook bool
	// User are more keys of ~/.gemini/settings.json (beside the auth type
	// and the hooks); Project is .gemini/settings.json, nil for none.
	User, Project map[string]any
	// System is /etc/gemini-cli/settings.json and Policies are files of
	// /etc/gemini-cli/policies by name. With either (or Installed), the
	// client runs in a mount namespace of its own over an overlay of /etc,
	// so the files are this run's alone and the machine's /etc is never
	// written; without root the scenario is skipped.
	System   map[string]any
	Policies map[string]string
	// Installed are more files of the machine, by absolute path under /etc
	// (the policy of the docs' installation): with it, spawngate is
	// installed as /usr/local/bin/spawngate in the overlay too.
	Installed map[string]string
	// Modes are modes of those files other than the usual (0644, 0755
	// for a binary), by path: a broken installation's.
	Modes map[string]os.FileMode
	// Doctor, when set, runs before the client on the same overlay
	// (spawngate doctor gemini), and fails the test unless it judges the
	// installation as the scenario says.
	Doctor func(t *testing.T, ov overlay, root, home string)
	// Policy is the operator policy's text; "" is readOnlyPolicy.
	Policy string
	// Env is more of the client's environment.
	Env []string
	// ACP runs the client as --acp (the Agent Client Protocol an IDE
	// speaks) instead of headless -p, driven through one prompt
	// (driveACP).
	ACP bool
	// Approval is --approval-mode; "" is yolo.
	Approval string
	// Args come after the harness's own flags.
	Args []string
	// Main scripts the main agent; Sub each child by its definition's
	// marker name (every definition's child that has none completes at
	// once).
	Main []turn
	Sub  map[string][]turn
	// Other scripts a child with no marker of ours (a built-in); nil
	// completes at once (builtinDone).
	Other []turn
}

// hookCall is one run of a hook, as the recording wrapper saw it.
type hookCall = suite.HookCall

// outcome is everything one run left behind.
type outcome struct {
	suite.Outcome
}

// run sets the scenario up and runs the client once.
func (sc scenario) run(t *testing.T) *outcome {
	t.Helper()
	client := clientPath(t)
	base, err := filepath.EvalSymlinks(t.TempDir())
	must(t, err)
	root := filepath.Join(base, "repo")
	home := filepath.Join(base, "home")
	bin := filepath.Join(base, "bin")
	capture := filepath.Join(base, "hooks")
	for _, d := range []string{root, home, bin, capture} {
		must(t, os.MkdirAll(d, 0o755))
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
	user := map[string]any{"security": map[string]any{"auth": map[string]any{"selectedType": "gemini-api-key"}}}
	for k, v := range sc.User {
		user[k] = v
	}
	switch {
	case sc.NoUserHook:
	case sc.UserHooks == nil:
		user["hooks"] = hooksSettings(gateHook())
	default:
		user["hooks"] = hooksSettings(sc.UserHooks...)
	}
	files["~/.gemini/settings.json"] = jsonText(user)
	if sc.Project != nil {
		files[".gemini/settings.json"] = jsonText(sc.Project)
	}
	acks := map[string]string{}
	for name, text := range files {
		p := where(name)
		must(t, os.MkdirAll(filepath.Dir(p), 0o755))
		data := []byte(subst.Replace(text))
		must(t, os.WriteFile(p, data, 0o644))
		if strings.HasPrefix(name, ".gemini/agents/") {
			sum := sha256.Sum256(data)
			acks[agentName(string(data))] = hex.EncodeToString(sum[:])
		}
	}
	if len(acks) > 0 {
		// The client loads a project's definition only once the user has
		// acknowledged that file (by its hash) for this project.
		p := filepath.Join(home, ".gemini", "acknowledgments", "agents.json")
		must(t, os.MkdirAll(filepath.Dir(p), 0o755))
		must(t, os.WriteFile(p, []byte(jsonText(map[string]any{root: acks})), 0o644))
	}
	gitCommit(t, root)
	writeHookTools(t, bin, capture)

	// Every definition's child completes unless its script says more: a
	// child with a marker but no script would be taken for the main agent.
	subs := map[string]fakemodel.Script{}
	for _, text := range files {
		for _, m := range markerRE.FindAllString(text, -1) {
			subs[m] = fakemodel.Steps(complete("done"))
		}
	}
	for name, turns := range sc.Sub {
		subs[suite.Marker(name)] = fakemodel.Steps(turns...)
	}
	other := builtinDone
	if sc.Other != nil {
		other = fakemodel.Steps(sc.Other...)
	}
	api := fakemodel.Start(t, geminiHost, fakemodel.Scripts{
		Main: fakemodel.Steps(sc.Main...), Subs: subs, Other: other})

	approval := sc.Approval
	if approval == "" {
		approval = "yolo"
	}
	args := []string{client, "-p", userPrompt, "-m", sessionModel, "--approval-mode", approval, "--output-format", "json"}
	if sc.ACP {
		args = []string{client, "--acp", "-m", sessionModel, "--approval-mode", approval}
	}
	args = append(args, sc.Args...)
	argv := append([]string{nodeBin}, args...)
	if sc.System != nil || sc.Policies != nil || sc.Installed != nil {
		ov := overlay{base: base, files: map[string]string{}, modes: sc.Modes}
		if sc.System != nil {
			ov.files["/etc/gemini-cli/settings.json"] = subst.Replace(jsonText(sc.System))
		}
		for name, text := range sc.Policies {
			ov.files["/etc/gemini-cli/policies/"+name] = subst.Replace(text)
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
	cmd.Env = append(append(isolatedEnv(home),
		"PATH="+os.Getenv("PATH"),
		"TMPDIR="+base,
		"GOOGLE_GEMINI_BASE_URL="+api.URL()+"/s/e2e",
	), sc.Env...)
	// The client starts helpers (shells, hooks): end them with it.
	cmd.WaitDelay = 5 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stderr = &stderr
	if sc.ACP {
		var transcript string
		transcript, err = driveACP(ctx, cmd, root)
		stdout.WriteString(transcript)
	} else {
		cmd.Stdout = &stdout
		err = cmd.Run()
	}
	if ctx.Err() != nil {
		err = fmt.Errorf("the client did not finish within %v: %w", runTimeout, ctx.Err())
	}
	o := &outcome{Outcome: suite.Outcome{Root: root, Home: home, Requests: api.Requests(), Stdout: stdout.String(), Stderr: stderr.String(), Err: err}}
	for _, p := range api.Problems() {
		t.Errorf("model server: %s", p)
	}
	o.Hooks = readHookCalls(capture)
	keepEvidence(t, o)
	return o
}

// agentName is the name: line of a definition's frontmatter.
func agentName(def string) string {
	for _, l := range strings.Split(def, "\n") {
		if n, ok := strings.CutPrefix(l, "name: "); ok {
			return strings.TrimSpace(n)
		}
	}
	return ""
}

// jsonText is v as indented JSON.
func jsonText(v any) string {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		panic(err)
	}
	return string(b) + "\n"
}

// overlay is a private mount namespace in which folders of the machine
// (/etc, /usr/local/bin) are overlays holding a scenario's files: they are
// seen by what runs there alone, and the machine's folders are never
// written.
type overlay struct {
	base string
	// files are by absolute path; a value starting with "@" copies the
	// file it names (a binary), anything else is the file's text; a path
	// ending in "/" is a folder.
	files map[string]string
	// modes are modes other than the usual of files by path.
	modes map[string]os.FileMode
}

// wrap is argv run in a fresh mount namespace with the overlays mounted.
// Without root and unshare the test is skipped. Each call mounts anew, so
// doctor and the client can run one after the other on the same files.
// The files are root's and 0644 (0755 for a binary, and for folders), as
// the client asks of /etc/gemini-cli before it reads it.
func (ov overlay) wrap(t *testing.T, argv []string) []string {
	t.Helper()
	unshare, err := exec.LookPath("unshare")
	if err != nil || os.Geteuid() != 0 {
		t.Skip("files in /etc/gemini-cli need root and unshare -m to overlay /etc")
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
		switch src, ok := strings.CutPrefix(content, "@"); {
		case strings.HasSuffix(path, "/"):
			must(t, os.MkdirAll(p, 0o755))
		case ok:
			b, err := os.ReadFile(src)
			must(t, err)
			must(t, os.WriteFile(p, b, 0o755))
		default:
			must(t, os.WriteFile(p, []byte(content), 0o644))
		}
		if m, ok := ov.modes[path]; ok {
			must(t, os.Chmod(p, m))
		}
		if !slices.Contains(mounts, top) {
			mounts = append(mounts, top)
			must(t, os.MkdirAll(filepath.Join(upper, "work"), 0o755))
		}
	}
	slices.Sort(mounts)
	for _, top := range mounts {
		dir := filepath.Join(ov.base, "overlay", strings.ReplaceAll(strings.Trim(top, "/"), "/", "-"))
		// A fresh work folder per mount: one left by an earlier mount of
		// the same overlay is not to be relied on.
		fmt.Fprintf(&script, "rm -rf %[1]s/work && mkdir %[1]s/work && mount -t overlay overlay -o lowerdir=%[2]s,upperdir=%[1]s/upper,workdir=%[1]s/work %[2]s || exit 97\n",
			shellQuote(dir), top)
	}
	script.WriteString(`exec "$@"`)
	return append([]string{unshare, "-m", "--propagation", "private", "--", "sh", "-c", script.String(), "sh"}, argv...)
}

// writeHookTools puts the hook programs in bin: record LABEL CMD... saves
// what the client hands a hook (stdin, environment) under LABEL, runs CMD
// on the same input and passes its answer and exit code through; deny
// REASON answers Gemini's deny; slow-deny SECONDS REASON denies after a
// wait the hook's timeout cuts short; mcp-probe is an MCP server's command
// that records it ran, in mcp-ran beside the repository.
func writeHookTools(t *testing.T, bin, capture string) {
	t.Helper()
	record := suite.RecordScript(capture)
	deny := `#!/bin/sh
printf '{"decision":"deny","reason":"%s"}\n' "$1"
`
	slowDeny := `#!/bin/sh
sleep "$1"
printf '{"decision":"deny","reason":"%s"}\n' "$2"
`
	// An MCP server's command that only leaves a mark beside the
	// repository.
	mcpProbe := "#!/bin/sh\necho ran >> '" + filepath.Join(filepath.Dir(bin), "mcp-ran") + "'\n"
	for name, text := range map[string]string{"record": record, "deny": deny, "slow-deny": slowDeny, "mcp-probe": mcpProbe} {
		must(t, os.WriteFile(filepath.Join(bin, name), []byte(text), 0o755))
	}
}

// readHookCalls reads the hooks' runs, in the order the client called
// them: Gemini CLI stamps each payload with an ISO time, which sorts as
// text.
func readHookCalls(dir string) []hookCall {
	return suite.ReadHookCalls(dir, func(a, b hookCall) bool {
		ta, _ := a.Payload["timestamp"].(string)
		tb, _ := b.Payload["timestamp"].(string)
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
	write("stdout.json", []byte(o.Stdout))
	write("stderr.txt", []byte(o.Stderr))
	write("paths.txt", []byte("root="+o.Root+"\nhome="+o.Home+"\n"))
	for i, r := range o.Requests {
		head, _ := json.MarshalIndent(map[string]any{"seq": r.Seq, "method": r.Method, "path": r.Path, "kind": r.Kind,
			"marker": r.Marker, "model": r.Model, "tools": r.Tools, "results": r.Results}, "", "  ")
		write(fmt.Sprintf("req%03d.%s.meta.json", i+1, r.Kind), head)
		write(fmt.Sprintf("req%03d.%s.body.json", i+1, r.Kind), r.Body)
	}
	for i, h := range o.Hooks {
		b, _ := json.MarshalIndent(h, "", "  ")
		write(fmt.Sprintf("hook%02d.json", i+1), b)
	}
	// The machine's files the run had (the overlays' upper folders), the
	// backstop doctor wrote among them.
	if _, err := os.Stat(filepath.Join(filepath.Dir(o.Root), "overlay")); err == nil {
		if out, err := exec.Command("cp", "-r", filepath.Join(filepath.Dir(o.Root), "overlay"), filepath.Join(dir, "overlay")).CombinedOutput(); err != nil {
			t.Logf("keep: %v: %s", err, out)
		}
	}
}

// hooks lists the recorded calls of the hook labelled label for tool.
func (o *outcome) hooks(label, tool string) []hookCall {
	var out []hookCall
	for _, h := range o.Hooks {
		if h.Label == label && h.Payload["tool_name"] == tool {
			out = append(out, h)
		}
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

// readOnlyPolicy is the policy of a scenario that names none: the
// child's read and search tools, no writes, no spawns.
const readOnlyPolicy = "allowed_tools: [read_file, grep_search, glob, list_directory]\nworkspace_root: {{ROOT}}\nbudget_cap_tokens: 200000\n"

func jsonUnmarshal(s string, v any) error { return json.Unmarshal([]byte(s), v) }
