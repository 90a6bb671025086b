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
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/spawngate/spawngate/internal/longtests"
)

// The SDK scenarios drive the real Claude Agent SDK (TypeScript, npm,
// pinned by install-sdk.sh), which drives the claude binary it ships: a
// program defines its agents in code, and its PreToolUse callback is
// examples/agent-sdk/typescript/spawngate.mjs, which hands spawngate the
// call and those definitions. The model is the suite's scripted API on
// 127.0.0.1, in the suite's network namespace.

const sdkInstallHint = "the Claude Agent SDK is not installed: run internal/e2e/claudecode/install-sdk.sh " +
	"and set " + envSDK + " to the folder it prints"

// sdkDir is the installed SDK's folder, or the test stops: a skip
// normally, a failure when the suite is required.
func sdkDir(t *testing.T) string {
	t.Helper()
	longtests.Need(t, "the real Agent SDK's suite")
	d := os.Getenv(envSDK)
	if d == "" {
		if os.Getenv(envRequire) == "require" {
			t.Fatal(sdkInstallHint)
		}
		t.Skip(sdkInstallHint)
	}
	if _, err := os.Stat(filepath.Join(d, "node_modules", "@anthropic-ai", "claude-agent-sdk")); err != nil {
		t.Fatalf("%s=%s: %v", envSDK, d, err)
	}
	return d
}

// Markers of the agents the SDK scenarios define.
const (
	sdkRMarker    = "MARKER-sdk-r-4b0e"
	sdkWMarker    = "MARKER-sdk-w-9c1d"
	sdkLeadMarker = "MARKER-sdk-lead-7e22"
	sdkFileMarker = "MARKER-sdk-file-31aa"
)

// sdkScenario is one program on the SDK.
type sdkScenario struct {
	// Files are written like scenario.Files ("~/" under HOME).
	Files map[string]string
	// Policy is the operator policy's text; "" is noWritePolicy.
	Policy string
	// Agents are the program's options.agents.
	Agents map[string]any
	// Gate is how the callback reaches spawngate: "" the command, "serve"
	// the server, "missing" a command that is not there, "crash" one that
	// dies of a signal.
	Gate   string
	Prompt string
	Main   []step
	Sub    map[string][]step
}

// sdkAgent is a definition as a program writes it, its body carrying
// marker.
func sdkDef(marker string, tools ...string) map[string]any {
	return map[string]any{"description": "Defined by the program", "prompt": "You are an e2e test agent. " + marker, "tools": tools, "model": "haiku"}
}

// sdkSpawn is an Agent call that waits for its child (the SDK runs
// children in the background unless told).
func sdkSpawn(typ string) step {
	return callTool("Agent", map[string]any{"description": "e2e", "prompt": "Do the e2e task.", "subagent_type": typ, "run_in_background": false})
}

// sdkProgram is the program: query() with the agents and the glue, every
// message and every answer of the callback printed as a JSON line.
const sdkProgram = `import { query } from "@anthropic-ai/claude-agent-sdk";
import { spawngateHooks } from %q;
const cfg = JSON.parse(process.env.E2E_SDK_CONFIG);
const hooks = spawngateHooks({ agents: cfg.agents, cwd: cfg.cwd, policy: cfg.policy, bin: cfg.bin, server: cfg.server, timeoutMs: 20000 });
for (const [event, matchers] of Object.entries(hooks)) {
  for (const m of matchers) {
    m.hooks = m.hooks.map((h) => async (input, id, opts) => {
      const answer = await h(input, id, opts);
      console.log(JSON.stringify({ hook: input, answer }));
      return answer;
    });
  }
}
try {
  for await (const m of query({ prompt: cfg.prompt, options: { cwd: cfg.cwd, agents: cfg.agents, hooks, env: cfg.env,
      allowedTools: ["Agent", "Skill", "Read", "Grep"], stderr: (d) => process.stderr.write(d) } })) {
    console.log(JSON.stringify({ message: m }));
  }
} catch (e) {
  console.log(JSON.stringify({ error: String(e && e.message || e) }));
}
`

// sdkHook is one call of the program's callback: what the SDK gave it
// and what it answered.
type sdkHook struct {
	Input  map[string]any
	Answer map[string]any
}

func (h sdkHook) denied() bool {
	out, _ := h.Answer["hookSpecificOutput"].(map[string]any)
	return out["permissionDecision"] == "deny" || h.Answer["decision"] == "block"
}

// run sets the program up and runs it once.
func (sc sdkScenario) run(t *testing.T) (*outcome, []sdkHook) {
	t.Helper()
	sdk := sdkDir(t)
	base := t.TempDir()
	root, home, bin := filepath.Join(base, "repo"), filepath.Join(base, "home"), filepath.Join(base, "bin")
	for _, d := range []string{root, home, bin} {
		must(t, os.MkdirAll(d, 0o755))
	}
	gitInit(t, root)
	policy := filepath.Join(base, "policy.yaml")
	text := sc.Policy
	if text == "" {
		text = noWritePolicy(root)
	}
	must(t, os.WriteFile(policy, []byte(strings.ReplaceAll(text, "{{ROOT}}", root)), 0o644))
	for name, content := range sc.Files {
		p := filepath.Join(root, name)
		if rest, ok := strings.CutPrefix(name, "~/"); ok {
			p = filepath.Join(home, rest)
		}
		must(t, os.MkdirAll(filepath.Dir(p), 0o755))
		must(t, os.WriteFile(p, []byte(content), 0o644))
	}
	gitCommit(t, root)

	gate := map[string]any{"policy": policy, "bin": spawngateBin}
	switch sc.Gate {
	case "serve":
		gate = map[string]any{"server": startSpawngateServe(t, policy, home)}
	case "missing":
		gate["bin"] = filepath.Join(bin, "no-such-spawngate")
	case "crash":
		crash := filepath.Join(bin, "spawngate")
		must(t, os.WriteFile(crash, []byte("#!/bin/sh\nkill -SEGV $$\n"), 0o755))
		gate["bin"] = crash
	}
	// The program runs beside a link to the SDK's packages, so that it
	// imports the SDK by its name.
	prog := filepath.Join(base, "program")
	must(t, os.MkdirAll(prog, 0o755))
	must(t, os.Symlink(filepath.Join(sdk, "node_modules"), filepath.Join(prog, "node_modules")))
	glue, err := filepath.Abs(filepath.Join("..", "..", "..", "examples", "agent-sdk", "typescript", "spawngate.mjs"))
	must(t, err)
	must(t, os.WriteFile(filepath.Join(prog, "program.mjs"), []byte(fmt.Sprintf(sdkProgram, glue)), 0o644))

	api := startModelAPI(t, sc.Main, sc.Sub)
	prompt := sc.Prompt
	if prompt == "" {
		prompt = "Run the e2e task."
	}
	cfg := map[string]any{"agents": sc.Agents, "cwd": root, "prompt": prompt, "env": map[string]string{
		"PATH": os.Getenv("PATH"), "HOME": home, "TMPDIR": base, "LANG": "C.UTF-8",
		"ANTHROPIC_BASE_URL": api.URL(), "ANTHROPIC_API_KEY": "test",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "DISABLE_TELEMETRY": "1", "DISABLE_AUTOUPDATER": "1", "IS_SANDBOX": "1",
	}}
	for k, v := range gate {
		cfg[k] = v
	}
	config, err := json.Marshal(cfg)
	must(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", "program.mjs")
	cmd.Dir = prog
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "TMPDIR=" + base, "E2E_SDK_CONFIG=" + string(config)}
	cmd.WaitDelay = 5 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = cmd.Run()
	if ctx.Err() != nil {
		err = fmt.Errorf("the program did not finish within %v: %w", runTimeout, ctx.Err())
	}
	out := &outcome{Root: root, Home: home, Requests: api.Requests(), Stdout: stdout.String(), Stderr: stderr.String(), Err: err}
	var hooks []sdkHook
	lines := bufio.NewScanner(strings.NewReader(out.Stdout))
	lines.Buffer(make([]byte, 0, 1<<20), 64<<20)
	for lines.Scan() {
		var line struct {
			Hook    map[string]any `json:"hook"`
			Answer  map[string]any `json:"answer"`
			Message map[string]any `json:"message"`
			Error   string         `json:"error"`
		}
		if json.Unmarshal(lines.Bytes(), &line) != nil {
			continue
		}
		switch {
		case line.Hook != nil:
			hooks = append(hooks, sdkHook{line.Hook, line.Answer})
		case line.Message != nil:
			out.Stream = append(out.Stream, line.Message)
		case line.Error != "":
			out.Err = errors.Join(out.Err, errors.New("the program: "+line.Error))
		}
	}
	return out, hooks
}

// startSpawngateServe runs spawngate serve on 127.0.0.1 with the policy,
// and returns its base URL once it says where it serves.
func startSpawngateServe(t *testing.T, policy, home string) string {
	t.Helper()
	cmd := exec.Command(spawngateBin, "serve", "--addr", "127.0.0.1:0", "--policy", policy, "--timeout", "20s")
	cmd.Env = append(os.Environ(), "HOME="+home)
	var stderr syncBuf
	cmd.Stderr = &stderr
	must(t, cmd.Start())
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	serving := regexp.MustCompile(`"msg":"serving","addr":"([^"]+)"`)
	for deadline := time.Now().Add(runTimeout); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if m := serving.FindStringSubmatch(stderr.String()); m != nil {
			return "http://" + m[1]
		}
	}
	t.Fatalf("spawngate serve did not say where it serves: %s", stderr.String())
	return ""
}

// sdkCase is one SDK scenario and what must hold after it.
type sdkCase struct {
	name  string
	sc    sdkScenario
	check func(t *testing.T, o *outcome, hooks []sdkHook) error
}

// TestAgentSDK: an SDK-defined agent the policy allows starts and a
// forbidden one never does, by every path the SDK offers: an Agent call,
// a fork skill, a nested spawn inside an SDK sub-agent; through the
// command and the server; a definition that shadows a file is judged as
// the program's; a gate that is missing or crashes refuses.
func TestAgentSDK(t *testing.T) {
	agents := map[string]any{"sdkreader": sdkDef(sdkRMarker, "Read", "Grep"), "sdkwriter": sdkDef(sdkWMarker, "Read", "Write")}
	both := []step{sdkSpawn("sdkreader"), sdkSpawn("sdkwriter")}
	readerOnly := func(t *testing.T, o *outcome, hooks []sdkHook) error {
		return all(starts(sdkRMarker), neverStarts(sdkWMarker))(t, o)
	}
	blocked := func(t *testing.T, o *outcome, hooks []sdkHook) error {
		if err := neverStarts(sdkRMarker, sdkWMarker)(t, o); err != nil {
			return err
		}
		if len(hooks) == 0 {
			return errors.New("the callback never ran")
		}
		for _, h := range hooks {
			if !h.denied() {
				return fmt.Errorf("the callback answered %v", h.Answer)
			}
		}
		return nil
	}
	cases := []sdkCase{{
		name:  "sdk-reader-starts-writer-never",
		sc:    sdkScenario{Agents: agents, Main: both},
		check: readerOnly,
	}, {
		name:  "sdk-through-serve",
		sc:    sdkScenario{Agents: agents, Main: both, Gate: "serve"},
		check: readerOnly,
	}, {
		// The program's reader writes, and shadows the project's read-only
		// file of the name: judged as the program's, refused.
		name: "sdk-shadowing-definition-judged-as-the-programs",
		sc: sdkScenario{Agents: map[string]any{"reader": sdkDef(sdkWMarker, "Read", "Write")},
			Files: map[string]string{".claude/agents/reader.md": agentDef("name: reader\ndescription: Reads\ntools: Read\nmodel: haiku", sdkFileMarker)},
			Main:  []step{sdkSpawn("reader")}},
		check: func(t *testing.T, o *outcome, hooks []sdkHook) error {
			return neverStarts(sdkWMarker, sdkFileMarker)(t, o)
		},
	}, {
		// Its opposite: the program's read-only reader over a project file
		// that writes starts, as the program's.
		name: "sdk-shadowing-read-only-definition-starts",
		sc: sdkScenario{Agents: map[string]any{"reader": sdkDef(sdkRMarker, "Read")},
			Files: map[string]string{".claude/agents/reader.md": agentDef("name: reader\ndescription: Writes\ntools: Read, Write, Bash\nmodel: haiku", sdkFileMarker)},
			Main:  []step{sdkSpawn("reader")}},
		check: func(t *testing.T, o *outcome, hooks []sdkHook) error {
			return all(starts(sdkRMarker), neverStarts(sdkFileMarker))(t, o)
		},
	}, {
		name:  "sdk-gate-missing-blocks",
		sc:    sdkScenario{Agents: agents, Main: both, Gate: "missing"},
		check: blocked,
	}, {
		name:  "sdk-gate-crashing-blocks",
		sc:    sdkScenario{Agents: agents, Main: both, Gate: "crash"},
		check: blocked,
	}, {
		// A fork skill naming the program's writer, and one naming its
		// reader: the skill's agent is the program's.
		name: "sdk-fork-skills",
		sc: sdkScenario{Agents: agents, Files: map[string]string{
			".claude/skills/forkw/SKILL.md": "---\nname: forkw\ndescription: Runs the writer\ncontext: fork\nagent: sdkwriter\n---\nDo the skill task.\n",
			".claude/skills/forkr/SKILL.md": "---\nname: forkr\ndescription: Runs the reader\ncontext: fork\nagent: sdkreader\n---\nDo the skill task.\n",
		}, Main: []step{callTool("Skill", map[string]any{"skill": "forkw"}), callTool("Skill", map[string]any{"skill": "forkr"})}},
		check: readerOnly,
	}, {
		// A spawn inside an SDK sub-agent is judged as that sub-agent's
		// child: the lead may spawn, its writer may not write.
		name: "sdk-nested-spawn-gated",
		sc: sdkScenario{Policy: spawnPolicy("{{ROOT}}"),
			Agents: map[string]any{"sdklead": sdkDef(sdkLeadMarker, "Read", "Grep", "Agent"), "sdkreader": sdkDef(sdkRMarker, "Read", "Grep"), "sdkwriter": sdkDef(sdkWMarker, "Read", "Write")},
			Main:   []step{sdkSpawn("sdklead")},
			Sub:    map[string][]step{sdkLeadMarker: {sdkSpawn("sdkwriter"), sdkSpawn("sdkreader")}}},
		check: func(t *testing.T, o *outcome, hooks []sdkHook) error {
			if err := all(starts(sdkLeadMarker), starts(sdkRMarker), neverStarts(sdkWMarker))(t, o); err != nil {
				return err
			}
			for _, h := range hooks {
				if h.Input["agent_type"] == "sdklead" {
					return nil
				}
			}
			return errors.New("no call of the callback came from inside the lead")
		},
	}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			o, hooks := c.sc.run(t)
			if errors.Is(o.Err, context.DeadlineExceeded) || len(o.Requests) == 0 {
				t.Fatalf("the run itself failed: %s", o.describe())
			}
			if err := c.check(t, o, hooks); err != nil {
				t.Fatalf("%v\ncallback: %v\n%s", err, hooks, o.describe())
			}
			if c.sc.Gate == "" {
				samePython(t, c.sc, o, hooks)
			}
		})
	}
}

// pythonDriver feeds examples/agent-sdk/python's judge each recorded hook
// input, with the program's agents and the same spawngate, and prints its
// answers as one JSON list.
const pythonDriver = `import json, os, sys
from spawngate_hook import judge
cfg = json.loads(os.environ["E2E_SDK_CONFIG"])
inputs = json.load(sys.stdin)
print(json.dumps([judge(i, cfg["agents"], policy=cfg["policy"], bin=cfg["bin"], cwd=cfg["cwd"], timeout=20) for i in inputs]))
`

// samePython holds the Python glue to the TypeScript glue's answers on
// the hook inputs the real SDK gave (PyPI is out of reach, so the Python
// SDK itself cannot be run here): the same input, the same definitions
// and spawngate, the same answer.
func samePython(t *testing.T, sc sdkScenario, o *outcome, hooks []sdkHook) {
	t.Helper()
	if len(hooks) == 0 {
		return
	}
	if _, err := exec.LookPath("python3"); err != nil {
		if os.Getenv(envRequire) == "require" {
			t.Fatal("python3 is not installed: the Python glue cannot be checked")
		}
		t.Skip("python3 is not installed")
	}
	var inputs []map[string]any
	for _, h := range hooks {
		inputs = append(inputs, h.Input)
	}
	in, err := json.Marshal(inputs)
	must(t, err)
	cfg, err := json.Marshal(map[string]any{"agents": sc.Agents, "policy": filepath.Join(filepath.Dir(o.Root), "policy.yaml"), "bin": spawngateBin, "cwd": o.Root})
	must(t, err)
	glue, err := filepath.Abs(filepath.Join("..", "..", "..", "examples", "agent-sdk", "python"))
	must(t, err)
	cmd := exec.Command("python3", "-c", pythonDriver)
	cmd.Env = append(os.Environ(), "PYTHONPATH="+glue, "E2E_SDK_CONFIG="+string(cfg), "HOME="+o.Home)
	cmd.Stdin = bytes.NewReader(in)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("the Python glue: %v\n%s", err, out)
	}
	var answers []map[string]any
	if err := json.Unmarshal(out, &answers); err != nil || len(answers) != len(hooks) {
		t.Fatalf("the Python glue answered %s", out)
	}
	for i, h := range hooks {
		want, _ := json.Marshal(h.Answer)
		got, _ := json.Marshal(answers[i])
		if !bytes.Equal(want, got) {
			t.Errorf("hook input %d: the Python glue answered %s, the TypeScript glue %s", i, got, want)
		}
	}
}

// syncBuf is a buffer a process writes while a test reads it.
type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuf) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestAgentSDKGlueTests runs the glue's own tests, TypeScript (node
// --test) and Python (unittest), against stand-ins for spawngate and
// against the spawngate this suite built.
func TestAgentSDKGlueTests(t *testing.T) {
	sdkDir(t)
	dir, err := filepath.Abs(filepath.Join("..", "..", "..", "examples", "agent-sdk"))
	must(t, err)
	for _, c := range []struct{ name, folder string }{{"node", "typescript"}, {"python3", "python"}} {
		t.Run(c.name, func(t *testing.T) {
			if _, err := exec.LookPath(c.name); err != nil {
				if os.Getenv(envRequire) == "require" {
					t.Fatalf("%s is not installed", c.name)
				}
				t.Skipf("%s is not installed", c.name)
			}
			args := []string{"--test"}
			if c.name == "python3" {
				args = []string{"-m", "unittest", "discover", "-s", "."}
			}
			cmd := exec.Command(c.name, args...)
			cmd.Dir = filepath.Join(dir, c.folder)
			cmd.Env = append(os.Environ(), "SPAWNGATE_BIN="+spawngateBin)
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("%v\n%s", err, out)
			} else if bytes.Contains(out, []byte("skipped=")) || bytes.Contains(out, []byte("# skipped 1")) {
				t.Fatalf("a test skipped with the real spawngate given:\n%s", out)
			}
		})
	}
}
