package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/spawngate/spawngate/internal/host"
	"github.com/spawngate/spawngate/internal/hosts"
	"github.com/spawngate/spawngate/internal/mutate"
	"github.com/spawngate/spawngate/internal/report"
)

// hostFixtures are the example payloads of a host, with the policy and
// the agents folder they are judged with.
type hostFixtures struct {
	host, policy, agents string
	payloads             []string
	// extra are flags the host's payloads need: a session transcript.
	extra []string
}

func exampleHosts(t testing.TB) []hostFixtures {
	t.Helper()
	var out []hostFixtures
	for _, h := range []struct{ host, dir, agents, transcript string }{
		{"claude-code", "claude-code", ".claude/agents", ""},
		// Codex's payloads are judged in the example read-only session.
		{"codex", "codex", ".codex/agents", "sessions/read-only.jsonl"},
	} {
		base := filepath.Join("..", "..", "examples", h.dir)
		payloads, err := filepath.Glob(filepath.Join(base, "payloads", "*.json"))
		if err != nil || len(payloads) == 0 {
			t.Fatalf("no example payloads for %s: %v", h.host, err)
		}
		f := hostFixtures{h.host, filepath.Join(base, "policy.yaml"), filepath.Join(base, h.agents), payloads, nil}
		if h.transcript != "" {
			f.extra = []string{"--transcript", filepath.Join(base, h.transcript)}
		}
		out = append(out, f)
	}
	return out
}

// hookAnswer is what a hook said: its exit code, stdout and stderr.
type hookAnswer struct {
	code           int
	stdout, stderr string
}

func runHookOn(t testing.TB, args []string, payload []byte) hookAnswer {
	var stdout, stderr bytes.Buffer
	code := Run(context.Background(), args, bytes.NewReader(payload), &stdout, &stderr)
	return hookAnswer{code, stdout.String(), stderr.String()}
}

// denyReason reads a deny answer, failing when stdout is anything else.
func denyReason(t testing.TB, stdout string) string {
	t.Helper()
	var answer struct {
		HookSpecificOutput struct {
			HookEventName            string `json:"hookEventName"`
			PermissionDecision       string `json:"permissionDecision"`
			PermissionDecisionReason string `json:"permissionDecisionReason"`
		} `json:"hookSpecificOutput"`
	}
	dec := json.NewDecoder(strings.NewReader(stdout))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&answer); err != nil || dec.More() {
		t.Fatalf("stdout is not one deny answer: %v\n%s", err, stdout)
	}
	o := answer.HookSpecificOutput
	if o.HookEventName != "PreToolUse" || o.PermissionDecision != "deny" || o.PermissionDecisionReason == "" {
		t.Fatalf("not a deny answer: %+v", o)
	}
	return o.PermissionDecisionReason
}

// blockReason reads the answer that refuses on every other event than
// PreToolUse ({"decision": "block"}), failing when stdout is anything
// else.
func blockReason(t testing.TB, stdout string) string {
	t.Helper()
	var answer struct {
		Decision string `json:"decision"`
		Reason   string `json:"reason"`
	}
	dec := json.NewDecoder(strings.NewReader(stdout))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&answer); err != nil || dec.More() || answer.Decision != "block" || answer.Reason == "" {
		t.Fatalf("stdout is not one block answer: %v\n%s", err, stdout)
	}
	return answer.Reason
}

// refusalReason reads either refusal: PreToolUse's deny, or the block of
// another event.
func refusalReason(t testing.TB, stdout string) string {
	t.Helper()
	if strings.HasPrefix(stdout, `{"decision"`) {
		return blockReason(t, stdout)
	}
	return denyReason(t, stdout)
}

// checkHookProtocol holds an answer to what both hosts' protocols make
// safe: exit 0 with nothing (pass) or one deny answer (refused), or exit 2
// with one line on stderr and nothing on stdout (cannot judge). Never exit
// 1, and never an "allow".
func checkHookProtocol(t testing.TB, a hookAnswer) {
	t.Helper()
	switch a.code {
	case exitPass:
		if a.stdout != "" {
			refusalReason(t, a.stdout)
		}
		if a.stderr != "" {
			t.Fatalf("exit 0 with stderr %q", a.stderr)
		}
	case exitError:
		if a.stdout != "" && !strings.HasPrefix(a.stdout, "Usage:") {
			t.Fatalf("exit 2 with stdout %q", a.stdout)
		}
		if a.stderr == "" && a.stdout == "" {
			t.Fatal("exit 2 without a reason on stderr: Codex would let the spawn through")
		}
		if a.stderr != "" && (strings.Count(a.stderr, "\n") != 1 || !strings.HasPrefix(a.stderr, "spawngate: ")) {
			t.Fatalf("stderr is not one line: %q", a.stderr)
		}
	default:
		t.Fatalf("exit %d: a hook may exit only 0 or 2 (stdout %q, stderr %q)", a.code, a.stdout, a.stderr)
	}
}

// For every example payload, the hook's decision is spawngate check's on
// the plan the hook printed: a refusal is exit 1 with the same rules at
// the same fields, a pass is exit 0. The hook and check cannot disagree.
func TestHookDecisionEqualsCheckOnThePrintedPlan(t *testing.T) {
	decided := map[string]int{}
	for _, h := range exampleHosts(t) {
		for _, p := range h.payloads {
			payload, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			printed := filepath.Join(t.TempDir(), "plan.json")
			a := runHookOn(t, append([]string{"hook", h.host, "--policy", h.policy, "--agents-dir", h.agents, "--print-plan", printed}, h.extra...), payload)
			checkHookProtocol(t, a)
			if _, err := os.Stat(printed); os.IsNotExist(err) {
				if a.code != exitPass || a.stdout != "" {
					t.Fatalf("%s: no plan printed, yet the hook answered %+v", p, a)
				}
				decided["not a spawn"]++
				continue // not a spawn: nothing was judged
			}
			var out, errOut bytes.Buffer
			code := Run(context.Background(), []string{"check", "--policy", h.policy, "--format", "json", printed}, nil, &out, &errOut)
			var rep report.Report
			if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
				t.Fatalf("%s: check printed no report: %v", p, err)
			}
			switch {
			case a.stdout == "" && a.code == exitPass:
				decided["pass"]++
				if code != exitPass {
					t.Fatalf("%s: the hook passed, check exits %d: %s", p, code, out.String())
				}
			case a.code == exitPass:
				decided["deny"]++
				reason := denyReason(t, a.stdout)
				if code != exitBlock {
					t.Fatalf("%s: the hook refused, check exits %d", p, code)
				}
				var want []string
				for _, v := range rep.Results[0].Children[0].Violations {
					field := strings.TrimPrefix(v.Path, "/plan/0")
					if field == "" {
						field = "/"
					}
					want = append(want, v.Rule+" "+field)
				}
				var got []string
				for _, line := range strings.Split(reason, "\n")[1:] {
					fields := strings.Fields(strings.TrimPrefix(line, "- "))
					got = append(got, fields[0]+" "+strings.TrimSuffix(fields[1], ":"))
				}
				if !slices.Equal(got, want) {
					t.Fatalf("%s: the hook names %q, check %q", p, got, want)
				}
			default:
				t.Fatalf("%s: the hook could not judge a plan it printed: %+v", p, a)
			}
		}
	}
	if decided["pass"] == 0 || decided["deny"] < 5 || decided["not a spawn"] == 0 {
		t.Fatalf("the fixtures did not try every answer: %v", decided)
	}
}

// hookSeeds are the example payloads and variants of them.
func hookSeeds(t testing.TB) [][]byte {
	var seeds [][]byte
	for _, h := range exampleHosts(t) {
		for _, p := range h.payloads {
			data, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			seeds = append(seeds, data)
		}
	}
	for _, s := range []string{``, `{}`, `[]`, `null`, `{"tool_name": "Agent"}`, `{"tool_name": "Agent", "tool_input": {}, "cwd": "/"}`,
		`{"tool_name": "spawn_agent", "tool_input": {"agent_type": null}, "cwd": "/home/dev/project"}`,
		`{"tool_name": "Task", "tool_input": {"subagent_type": "code-reviewer"}, "cwd": "/home/dev/project", "hook_event_name": 1}`} {
		seeds = append(seeds, []byte(s))
	}
	return seeds
}

// hookProperty runs both hooks on one payload and holds the answers to the
// hosts' protocols.
func hookProperty(t testing.TB) func(*testing.T, []byte) {
	hosts := exampleHosts(t)
	return func(t *testing.T, payload []byte) {
		for _, h := range hosts {
			a := runHookOn(t, append([]string{"hook", h.host, "--policy", h.policy, "--agents-dir", h.agents}, h.extra...), payload)
			checkHookProtocol(t, a)
		}
	}
}

// FuzzHook feeds both hooks any bytes: whatever they are, the answer is one
// both hosts read safely (hookProperty), never exit 1.
func FuzzHook(f *testing.F) {
	for _, s := range hookSeeds(f) {
		f.Add(s)
	}
	f.Fuzz(hookProperty(f))
}

// TestFuzzHookShort runs FuzzHook's property over payloads mutated from
// its seeds.
func TestFuzzHookShort(t *testing.T) {
	check := hookProperty(t)
	for _, in := range mutate.Bytes(hookSeeds(t), 1500, 2) {
		check(t, in)
	}
}

// The hook finds definitions where the host does: in the project's folder
// from the folder the session started in (CLAUDE_PROJECT_DIR, whatever the
// payload's cwd has become since) up to the repository root (the closest
// first), then in the user's; and it reads a model the host's environment
// forces. Claude Code's command line, read through CLAUDE_PID, is this
// test's own, which adds no definitions.
func TestHookFindsDefinitionsWhereTheHostDoes(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the hook reads Claude Code's command line from /proc, on Linux only")
	}
	root := t.TempDir()
	home := filepath.Join(root, "home")
	repo := filepath.Join(root, "repo")
	sub := filepath.Join(repo, "svc", "api")
	write := func(path, content string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	agent := func(name, tools string) string {
		return "---\nname: " + name + "\ndescription: d\ntools: " + tools + "\nmodel: sonnet\n---\n"
	}
	write(filepath.Join(repo, ".git", "HEAD"), "ref: refs/heads/main\n")
	write(filepath.Join(repo, ".claude", "agents", "r.md"), agent("reader", "Read"))
	write(filepath.Join(sub, ".claude", "agents", "r.md"), agent("reader", "Read, Bash")) // closest wins
	write(filepath.Join(repo, ".claude", "agents", "only-repo.md"), agent("lister", "Glob"))
	write(filepath.Join(home, ".claude", "agents", "u.md"), agent("user-agent", "Grep"))
	write(filepath.Join(root, ".claude", "agents", "above.md"), agent("above-repo", "Grep")) // above the repository: not looked at
	policy := filepath.Join(root, "policy.yaml")
	write(policy, "allowed_tools: [Read, Grep, Glob, Bash]\nworkspace_root: "+repo+"\nbudget_cap_tokens: 1000\n")
	t.Setenv("HOME", home)
	t.Setenv("CLAUDE_PROJECT_DIR", sub)
	t.Setenv("CLAUDE_PID", strconv.Itoa(sessionStartedIn(t, root, sub)))
	started := time.Now()
	payload := func(typ string) []byte {
		// The shell has moved to the repository's root since the session
		// started in sub.
		return []byte(fmt.Sprintf(`{"cwd": %q, "hook_event_name": "PreToolUse", "tool_name": "Agent", "tool_input": {"subagent_type": %q}}`, repo, typ))
	}
	for _, tc := range []struct {
		typ, want string
	}{
		{"reader", "tools.write /tools/1"},   // the closest definition, which has Bash
		{"lister", ""},                       // the repository's
		{"User Agent", ""},                   // the user's, matched as Claude Code matches names
		{"above-repo", "agent.definition /"}, // outside the repository
	} {
		a := runHookOn(t, []string{"hook", "claude-code", "--policy", policy}, payload(tc.typ))
		checkHookProtocol(t, a)
		got := ""
		if a.stdout != "" {
			lines := strings.Split(denyReason(t, a.stdout), "\n")
			got = strings.Join(strings.Fields(strings.TrimPrefix(lines[1], "- "))[:2], " ")
			got = strings.TrimSuffix(got, ":")
		}
		if got != tc.want {
			t.Errorf("%s: refused for %q, want %q (%s)", tc.typ, got, tc.want, a.stdout)
		}
	}
	t.Setenv("CLAUDE_CODE_SUBAGENT_MODEL", "opus")
	t.Setenv("CLAUDE_CODE_SUBAGENT_MODEL_FORCE", "1")
	restricted := filepath.Join(root, "restricted.yaml")
	write(restricted, "allowed_tools: [Glob]\nworkspace_root: "+repo+"\nbudget_cap_tokens: 1000\nallowed_models: [sonnet]\n")
	a := runHookOn(t, []string{"hook", "claude-code", "--policy", restricted}, payload("lister"))
	if !strings.Contains(a.stdout, `model \"opus\" is not allowed`) {
		t.Fatalf("the model the environment forces was not judged: %+v", a)
	}
	// A definition rewritten after the session started is not the one
	// Claude Code runs (it keeps what it loaded): refused, whatever it
	// says now, and even with its modification time set back (touch -r):
	// the change time cannot be. The write must come later than the
	// start by more than the start is known to, whose clock is waited for.
	for time.Since(started) < time.Second {
		time.Sleep(20 * time.Millisecond)
	}
	rewritten := filepath.Join(repo, ".claude", "agents", "only-repo.md")
	write(rewritten, agent("lister", "Glob"))
	past := time.Now().Add(-time.Hour)
	if err := os.Chtimes(rewritten, past, past); err != nil {
		t.Fatal(err)
	}
	a = runHookOn(t, []string{"hook", "claude-code", "--policy", policy}, payload("lister"))
	checkHookProtocol(t, a)
	if !strings.Contains(a.stdout, "changed at") || !strings.Contains(a.stdout, "after the session started") {
		t.Fatalf("a definition changed after the session started was judged: %+v", a)
	}
	// A definition removed from a subfolder after the start: the hook
	// would fall through to another of the name, which is not what runs.
	if err := os.Remove(rewritten); err != nil {
		t.Fatal(err)
	}
	write(filepath.Join(home, ".claude", "agents", "lister.md"), agent("lister", "Glob"))
	if err := os.Chtimes(filepath.Join(home, ".claude", "agents", "lister.md"), past, past); err != nil {
		t.Fatal(err)
	}
	a = runHookOn(t, []string{"hook", "claude-code", "--policy", policy}, payload("lister"))
	checkHookProtocol(t, a)
	if !strings.Contains(a.stdout, "after the session started") {
		t.Fatalf("a definition removed after the session started left another judged: %+v", a)
	}
}

// A session that can change the policy, the checks or the bundle the
// hook is read from could widen them and then spawn what it widened: the
// hook does not judge by them (exit 2, which blocks), and says which file
// and why. The test's user owns the test binary, so a session running as
// it is one ownership cannot tell from the operator: the policy must then
// lie outside its home and project folders.
func TestHookRefusesWhatTheSessionCanChange(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the hook reads Claude Code's command line from /proc, on Linux only")
	}
	root := t.TempDir()
	home := filepath.Join(root, "home")
	repo := filepath.Join(root, "repo")
	write := func(path, content string, mode os.FileMode) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(path, mode); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(repo, ".git", "HEAD"), "ref: refs/heads/main\n", 0o644)
	write(filepath.Join(repo, ".claude", "agents", "r.md"), "---\nname: reader\ndescription: d\ntools: Read\nmodel: sonnet\n---\n", 0o644)
	text := "allowed_tools: [Read]\nworkspace_root: " + repo + "\nbudget_cap_tokens: 1000\n"
	inHome := filepath.Join(home, ".config", "spawngate", "policy.yaml")
	inRepo := filepath.Join(repo, ".spawngate.yaml")
	outside := filepath.Join(root, "etc", "policy.yaml")
	shared := filepath.Join(root, "shared", "policy.yaml")
	for _, p := range []string{inHome, inRepo, outside} {
		write(p, text, 0o644)
	}
	write(shared, text, 0o664)
	checks := filepath.Join(root, "checks")
	for _, name := range []string{"roles.rego", "release_deploy.rego"} {
		data, err := os.ReadFile(filepath.Join("..", "..", "examples", "checks", name))
		if err != nil {
			t.Fatal(err)
		}
		write(filepath.Join(checks, name), string(data), 0o644)
	}
	chmod := func(p string, mode os.FileMode) {
		t.Helper()
		if err := os.Chmod(p, mode); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("HOME", home)
	t.Setenv("CLAUDE_PROJECT_DIR", repo)
	t.Setenv("CLAUDE_PID", strconv.Itoa(sessionStartedIn(t, root, repo)))
	payload := []byte(fmt.Sprintf(`{"cwd": %q, "hook_event_name": "PreToolUse", "tool_name": "Agent", "tool_input": {"subagent_type": "reader"}}`, repo))
	for _, tc := range []struct {
		name string
		args []string
		want string // on stderr; "" passes
	}{
		{"outside", []string{"--policy", outside}, ""},
		{"in-home", []string{"--policy", inHome}, inHome + ": can be changed by the session: it lies in " + home},
		{"in-project", []string{"--policy", inRepo}, inRepo + ": can be changed by the session: it lies in " + repo},
		{"group-writable", []string{"--policy", shared}, shared + ": can be changed by the session: is writable by its group"},
		{"checks", []string{"--policy", outside, "--checks", checks}, ""},
		{"checks-open", []string{"--policy", outside, "--checks", checks}, "roles.rego is writable by every user"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.name == "checks-open" {
				chmod(filepath.Join(checks, "roles.rego"), 0o666)
			}
			a := runHookOn(t, append([]string{"hook", "claude-code"}, tc.args...), payload)
			checkHookProtocol(t, a)
			switch {
			case tc.want == "" && (a.code != exitPass || a.stdout != ""):
				t.Fatalf("the reader was not let through: %+v", a)
			case tc.want != "" && (a.code != exitError || !strings.Contains(a.stderr, tc.want)):
				t.Fatalf("got %+v, want exit 2 saying %q", a, tc.want)
			}
		})
	}
	// Tried by hand, with the definitions given and no session, nothing
	// is a session's to change.
	t.Setenv("CLAUDE_PID", "")
	a := runHookOn(t, []string{"hook", "claude-code", "--policy", inRepo, "--agents-dir", filepath.Join(repo, ".claude", "agents")}, payload)
	if a.code != exitPass || a.stdout != "" {
		t.Fatalf("by hand: %+v", a)
	}
}

// An Agent SDK program's own PreToolUse callback hands the hook its
// definitions (spawngate_program): no CLAUDE_PID, no CLAUDE_PROJECT_DIR,
// and the program's reader passes and its writer is refused, as the
// client would run them.
func TestHookJudgesAProgramsOwnAgents(t *testing.T) {
	root := t.TempDir()
	repo := filepath.Join(root, "repo")
	if err := os.MkdirAll(filepath.Join(repo, ".claude", "agents"), 0o755); err != nil {
		t.Fatal(err)
	}
	policy := filepath.Join(root, "policy.yaml")
	if err := os.WriteFile(policy, []byte("allowed_tools: [Read, Grep]\nworkspace_root: "+repo+"\nbudget_cap_tokens: 1000\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("HOME", filepath.Join(root, "home"))
	t.Setenv("CLAUDE_PID", "")
	t.Setenv("CLAUDE_PROJECT_DIR", "")
	payload := func(typ string) []byte {
		return []byte(fmt.Sprintf(`{"session_id": "s", "cwd": %q, "hook_event_name": "PreToolUse", "tool_name": "Agent", "tool_input": {"subagent_type": %q, "prompt": "p"}, "tool_use_id": "toolu_1",
			"spawngate_program": {"project": %q, "agents": {"sdkreader": {"description": "d", "prompt": "p", "tools": ["Read", "Grep"], "model": "sonnet"}, "sdkwriter": {"description": "d", "prompt": "p", "tools": ["Read", "Write"], "model": "sonnet"}}}}`, repo, typ, repo))
	}
	args := []string{"hook", "claude-code", "--policy", policy}
	if a := runHookOn(t, args, payload("sdkreader")); a.code != exitPass || a.stdout != "" || a.stderr != "" {
		t.Fatalf("the program's reader: %+v", a)
	}
	a := runHookOn(t, args, payload("sdkwriter"))
	checkHookProtocol(t, a)
	if reason := denyReason(t, a.stdout); !strings.Contains(reason, "sdkwriter") || !strings.Contains(reason, `tool "Write"`) {
		t.Fatalf("the program's writer: %q", reason)
	}
	// Without the field, the same payload names agents no file defines,
	// and needs the session the environment would tell.
	a = runHookOn(t, args, []byte(fmt.Sprintf(`{"cwd": %q, "hook_event_name": "PreToolUse", "tool_name": "Agent", "tool_input": {"subagent_type": "sdkreader"}}`, repo)))
	if a.code != exitError || !strings.Contains(a.stderr, "CLAUDE_PROJECT_DIR is not set") {
		t.Fatalf("without the program's field: %+v", a)
	}
}

// A prompt's /command on a skill with context: fork starts its agent
// with no tool call: the hook on UserPromptExpansion judges it, and
// refuses in that event's protocol ({"decision": "block"} on exit 0).
func TestHookJudgesPromptExpansion(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the hook reads Claude Code's command line from /proc, on Linux only")
	}
	root := t.TempDir()
	repo := filepath.Join(root, "repo")
	files := map[string]string{
		".claude/agents/reader.md":     "---\nname: reader\ndescription: d\ntools: Read\nmodel: sonnet\n---\n",
		".claude/agents/writer.md":     "---\nname: writer\ndescription: d\ntools: Read, Write\nmodel: sonnet\n---\n",
		".claude/skills/fix/SKILL.md":  "---\ndescription: d\ncontext: fork\nagent: writer\n---\nFix it.\n",
		".claude/skills/look/SKILL.md": "---\ndescription: d\ncontext: fork\nagent: reader\n---\nLook.\n",
		".claude/commands/tidy.md":     "Tidy up.\n",
		"../policy.yaml":               "allowed_tools: [Read]\nworkspace_root: " + repo + "\nbudget_cap_tokens: 1000\n",
	}
	for name, content := range files {
		path := filepath.Join(repo, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("HOME", filepath.Join(root, "home"))
	t.Setenv("CLAUDE_PROJECT_DIR", repo)
	t.Setenv("CLAUDE_PID", strconv.Itoa(sessionStartedIn(t, root, repo)))
	args := []string{"hook", "claude-code", "--policy", filepath.Join(root, "policy.yaml")}
	payload := func(kind, name string) []byte {
		return []byte(fmt.Sprintf(`{"session_id": "s", "cwd": %q, "hook_event_name": "UserPromptExpansion", "expansion_type": %q, "command_name": %q, "command_args": "", "prompt": "/x"}`, repo, kind, name))
	}
	a := runHookOn(t, args, payload("slash_command", "fix"))
	checkHookProtocol(t, a)
	if reason := blockReason(t, a.stdout); !strings.HasPrefix(reason, "spawngate refused this sub-agent: writer") || !strings.Contains(reason, "tools.allowlist /tools/1") {
		t.Errorf("fix: %q", reason)
	}
	for _, tc := range [][2]string{{"slash_command", "look"}, {"slash_command", "tidy"}, {"slash_command", "init"}, {"mcp_prompt", "fix"}} {
		if a := runHookOn(t, args, payload(tc[0], tc[1])); a.code != exitPass || a.stdout != "" || a.stderr != "" {
			t.Errorf("%s %s: %+v", tc[0], tc[1], a)
		}
	}
	a = runHookOn(t, args, payload("macro", "fix"))
	checkHookProtocol(t, a)
	if a.code != exitError || !strings.Contains(a.stderr, "/expansion_type") {
		t.Errorf("an expansion the gate does not know: %+v", a)
	}
	// Codex has no such event: its hook cannot judge the payload.
	a = runHookOn(t, []string{"hook", "codex", "--policy", filepath.Join(root, "policy.yaml")}, payload("slash_command", "fix"))
	checkHookProtocol(t, a)
	if a.code != exitError || !strings.Contains(a.stderr, "only PreToolUse can stop a spawn in codex") {
		t.Errorf("codex: %+v", a)
	}
}

// With brief_retask in the operator policy, the hook keeps the session's
// nonces under --state-dir: a nonce handed out by one call is refused in
// a later call of the same session, in the host's deny protocol, and a
// ledger it cannot read blocks the spawn (exit 2), never passes it.
func TestHookLedgerAcrossCalls(t *testing.T) {
	root := t.TempDir()
	agents := filepath.Join(root, "agents")
	if err := os.MkdirAll(agents, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(agents, "reader.md"), []byte("---\nname: reader\ndescription: d\ntools: Read\nmodel: sonnet\n---\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	policy := filepath.Join(root, "policy.yaml")
	if err := os.WriteFile(policy, []byte("allowed_tools: [Read]\nworkspace_root: /w\nbudget_cap_tokens: 1000\nallowed_models: [sonnet]\nbrief_retask: {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	state := filepath.Join(root, "state")
	payload := func(session string) []byte {
		return []byte(fmt.Sprintf(`{"session_id": %q, "cwd": "/w", "hook_event_name": "PreToolUse", "tool_name": "Agent", "tool_input": {"subagent_type": "reader", "prompt": "Read it. RETASK CHANNEL: revisions name token R-c0ffee42. Done when read."}}`, session))
	}
	args := []string{"hook", "claude-code", "--policy", policy, "--agents-dir", agents, "--state-dir", state}
	first := runHookOn(t, args, payload("s"))
	checkHookProtocol(t, first)
	if first.code != exitPass || first.stdout != "" {
		t.Fatalf("first use: %+v", first)
	}
	second := runHookOn(t, args, payload("s"))
	checkHookProtocol(t, second)
	if reason := denyReason(t, second.stdout); !strings.Contains(reason, "brief.retask /brief") || strings.Contains(reason, "R-c0ffee42") {
		t.Fatalf("reuse: %s", reason)
	}
	if other := runHookOn(t, args, payload("t")); other.code != exitPass || other.stdout != "" {
		t.Fatalf("another session: %+v", other)
	}
	files, _ := filepath.Glob(filepath.Join(state, "sessions", "*.json"))
	if len(files) != 2 {
		t.Fatalf("ledgers %v, want one per session", files)
	}
	for _, f := range files {
		data, _ := os.ReadFile(f)
		if strings.Contains(string(data), "R-c0ffee42") || strings.Contains(f, "/s.json") {
			t.Fatalf("%s holds a secret or the session id:\n%s", f, data)
		}
		if err := os.WriteFile(f, []byte("{"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	broken := runHookOn(t, args, payload("s"))
	checkHookProtocol(t, broken)
	if broken.code != exitError || !strings.Contains(broken.stderr, "the ledger is corrupt") {
		t.Fatalf("a corrupt ledger: %+v", broken)
	}
}

// sessionStartedIn starts a process standing in for Claude Code, working
// in dir (the hook takes a pid that is not its ancestor only for a process
// working in CLAUDE_PROJECT_DIR), ended with the test. The hook refuses
// definitions changed after the session started, so what the test wrote
// under root is dated an hour back first.
func sessionStartedIn(t *testing.T, root, dir string) int {
	t.Helper()
	past := time.Now().Add(-time.Hour)
	filepath.WalkDir(root, func(p string, e os.DirEntry, err error) error {
		if err == nil {
			os.Chtimes(p, past, past)
		}
		return nil
	})
	cmd := exec.Command("sleep", "300")
	cmd.Dir = dir
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return cmd.Process.Pid
}

// TestNamesStdout: a file flag of the hook that names its standard output,
// by a name that always does or as the very file stdout is, is caught.
func TestNamesStdout(t *testing.T) {
	dir := t.TempDir()
	out, err := os.Create(filepath.Join(dir, "answer.json"))
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	if err := os.Symlink(out.Name(), filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		stdout io.Writer
		want   bool
	}{
		{"/dev/stdout", &bytes.Buffer{}, true},
		{"/dev/fd/1", &bytes.Buffer{}, true},
		{"/proc/self/fd/1/", &bytes.Buffer{}, true},
		{out.Name(), out, true},
		{filepath.Join(dir, "link"), out, true},
		{out.Name(), &bytes.Buffer{}, false},
		{filepath.Join(dir, "other.json"), out, false},
		{"/dev/stderr", out, false},
		{"-", out, false},
		{"", out, false},
	} {
		if got := namesStdout(tc.name, tc.stdout); got != tc.want {
			t.Errorf("namesStdout(%q, %T) = %t, want %t", tc.name, tc.stdout, got, tc.want)
		}
	}
}

// TestHookHelpExamplesRun: the example each host's help shows runs from a
// checkout and refuses the writer it is given, as the help says.
func TestHookHelpExamplesRun(t *testing.T) {
	t.Chdir(filepath.Join("..", ".."))
	for _, a := range hosts.All {
		example := "spawngate hook " + a.Name() + " " + a.(host.Help).Example()
		t.Run(a.Name(), func(t *testing.T) {
			line := strings.TrimSpace(example)
			cmd, payload, ok := strings.Cut(line, " < ")
			if !ok {
				t.Fatalf("the example reads no payload: %q", example)
			}
			words := strings.Fields(cmd)
			if len(words) < 3 || words[0] != "spawngate" {
				t.Fatalf("not a spawngate command: %q", cmd)
			}
			in, err := os.Open(strings.TrimSpace(payload))
			if err != nil {
				t.Fatal(err)
			}
			defer in.Close()
			var stdout, stderr bytes.Buffer
			code := Run(context.Background(), words[1:], in, &stdout, &stderr)
			// The host's refusal: its own Deny, with the gate's reason.
			var answer map[string]any
			refusal := json.Unmarshal(stdout.Bytes(), &answer) == nil && strings.Contains(stdout.String(), "spawngate refused this sub-agent")
			if code != exitPass || !refusal || stderr.Len() != 0 {
				t.Fatalf("exit %d, stdout %q, stderr %q", code, stdout.String(), stderr.String())
			}
		})
	}
}
