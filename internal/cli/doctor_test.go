//go:build unix

package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/spawngate/spawngate/internal/agent"
	"github.com/spawngate/spawngate/internal/host"
	"github.com/spawngate/spawngate/internal/host/doctor"
	"github.com/spawngate/spawngate/internal/hosts"
)

// backstopHost is a host whose doctor writes a backstop and says notes,
// so that what the command line does with both is tested whichever real
// hosts have one.
type backstopHost struct{}

const (
	backstopHostName = "backstop-host"
	backstopNote     = "a switch of the host's own\nturns the hook off"
	backstopFile     = "etc/backstop-host/backstop.txt"
)

func (backstopHost) Name() string              { return backstopHostName }
func (backstopHost) SpawnTools() []string      { return []string{"spawn"} }
func (backstopHost) DefinitionsFolder() string { return ".backstop-host/agents" }
func (backstopHost) Events() []string          { return []string{"PreToolUse"} }
func (backstopHost) Deny(string, string) []byte {
	return []byte(`{"decision": "deny"}`)
}
func (backstopHost) Title() string   { return "Backstop Host" }
func (backstopHost) Refusal() string { return `{"decision": "deny"}` }
func (backstopHost) Example() string { return "--policy policy.yaml" }
func (backstopHost) Page() string    { return "docs/backstop-host.md" }
func (backstopHost) Spawn(context.Context, map[string]any, host.Env) (*host.Spawn, error) {
	return nil, nil
}
func (backstopHost) Audit(context.Context, string, host.Env) ([]host.Audited, error) {
	return nil, nil
}
func (backstopHost) DoctorHelp() string { return "its backstop, in " + backstopFile + "." }

// Doctor passes when the backstop is in its place, and says one note
// either way.
func (backstopHost) Doctor(_ context.Context, o doctor.Options) (*doctor.Diagnosis, error) {
	file := o.Path(backstopFile)
	d := &doctor.Diagnosis{Notes: []string{backstopNote}}
	if _, err := os.Stat(file); err != nil {
		d.Findings = []doctor.Finding{{ID: "backstop.missing", File: file, Problem: "there is no backstop", Fix: "write it"}}
		return d, nil
	}
	d.Gates = []doctor.Place{{File: file}}
	return d, nil
}

func (backstopHost) WriteBackstop(_ context.Context, _ doctor.Options, file string) (string, error) {
	if err := os.WriteFile(file, []byte("deny\n"), 0o644); err != nil {
		return "", &doctor.Error{File: file, Msg: "cannot be written"}
	}
	return "wrote " + file + "\nin two lines", nil
}

var _ doctor.Backstopper = backstopHost{}

// withBackstopHost registers backstopHost for one test.
func withBackstopHost(t *testing.T) {
	t.Helper()
	all := hosts.All
	hosts.All = append(slices.Clip(all), backstopHost{})
	t.Cleanup(func() { hosts.All = all })
}

// doctorDirs are an empty project, home and root, and the flags that
// name them.
func doctorDirs(t *testing.T) (root string, args []string) {
	t.Helper()
	base := t.TempDir()
	for _, d := range []string{"project", "home", "root"} {
		if err := os.Mkdir(filepath.Join(base, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	root = filepath.Join(base, "root")
	return root, []string{"--project", filepath.Join(base, "project"), "--home", filepath.Join(base, "home"),
		"--root", root, "--owner", strconv.Itoa(os.Geteuid())}
}

func runDoctorArgs(args ...string) hookAnswer {
	var stdout, stderr bytes.Buffer
	code := Run(context.Background(), append([]string{"doctor"}, args...), strings.NewReader(""), &stdout, &stderr)
	return hookAnswer{code, stdout.String(), stderr.String()}
}

// Notes come after the verdict, one line each, whether the installation
// holds or not; in JSON they are "notes".
func TestDoctorNotes(t *testing.T) {
	withBackstopHost(t)
	root, dirs := doctorDirs(t)
	const note = "note: a switch of the host's own turns the hook off\n"

	got := runDoctorArgs(append([]string{backstopHostName}, dirs...)...)
	if got.code != exitBlock || got.stderr != "" || !strings.HasSuffix(got.stdout, "\nverdict: FAIL, 1 finding in 1 file\n"+note) {
		t.Errorf("no backstop: exit %d, stdout %q, stderr %q; want 1, the finding, the verdict, then the note", got.code, got.stdout, got.stderr)
	}

	if err := os.MkdirAll(filepath.Dir(filepath.Join(root, backstopFile)), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, backstopFile), []byte("deny\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	got = runDoctorArgs(append([]string{backstopHostName}, dirs...)...)
	lines := strings.SplitAfter(got.stdout, "\n")
	if got.code != exitPass || got.stderr != "" || len(lines) != 3 ||
		!strings.HasPrefix(lines[0], "verdict: PASS, the installation holds as far as files can hold it: ") ||
		!strings.Contains(lines[0], "but for the ways round it below") || lines[1] != note {
		t.Errorf("backstop: exit %d, stdout %q, stderr %q; want 0, the verdict, then the note", got.code, got.stdout, got.stderr)
	}

	got = runDoctorArgs(append([]string{backstopHostName, "--format", "json"}, dirs...)...)
	var doc struct {
		Verdict string   `json:"verdict"`
		Notes   []string `json:"notes"`
	}
	if err := json.Unmarshal([]byte(got.stdout), &doc); err != nil {
		t.Fatalf("json: %v\n%s", err, got.stdout)
	}
	if got.code != exitPass || doc.Verdict != "pass" || !slices.Equal(doc.Notes, []string{backstopNote}) {
		t.Errorf("json: exit %d, %+v; want 0, pass and the note as the doctor wrote it", got.code, doc)
	}
}

// The doctors that say no notes print none, and their JSON has no
// "notes".
func TestDoctorWithoutNotes(t *testing.T) {
	for _, name := range []string{"claude-code", "codex", "copilot"} {
		t.Run(name, func(t *testing.T) {
			_, dirs := doctorDirs(t)
			text := runDoctorArgs(append([]string{name}, dirs...)...)
			if text.code != exitBlock || strings.Contains(text.stdout, "note:") || strings.Contains(text.stdout, "as far as files") {
				t.Errorf("text: exit %d, stdout %q", text.code, text.stdout)
			}
			js := runDoctorArgs(append([]string{name, "--format", "json"}, dirs...)...)
			var doc map[string]any
			if err := json.Unmarshal([]byte(js.stdout), &doc); err != nil {
				t.Fatalf("json: %v\n%s", err, js.stdout)
			}
			if _, ok := doc["notes"]; ok || js.code != exitBlock {
				t.Errorf("json: exit %d, %s", js.code, js.stdout)
			}
		})
	}
}

// --write-backstop writes the file, says so in one line on stderr, then
// checks the installation, which now holds it; stdout is the diagnosis
// alone, in every format.
func TestDoctorWriteBackstop(t *testing.T) {
	withBackstopHost(t)
	for _, format := range []string{"text", "json"} {
		t.Run(format, func(t *testing.T) {
			root, dirs := doctorDirs(t)
			file := filepath.Join(root, backstopFile)
			if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
				t.Fatal(err)
			}
			got := runDoctorArgs(append([]string{backstopHostName, "--format", format, "--write-backstop", file}, dirs...)...)
			if data, err := os.ReadFile(file); err != nil || string(data) != "deny\n" {
				t.Fatalf("backstop %q, %v", data, err)
			}
			if want := "spawngate: wrote " + file + " in two lines\n"; got.code != exitPass || got.stderr != want {
				t.Errorf("exit %d, stderr %q; want 0, %q", got.code, got.stderr, want)
			}
			if format == "json" && !json.Valid([]byte(got.stdout)) || format == "text" && !strings.HasPrefix(got.stdout, "verdict: PASS") {
				t.Errorf("stdout %q", got.stdout)
			}
		})
	}

	t.Run("cannot-write", func(t *testing.T) {
		root, dirs := doctorDirs(t)
		file := filepath.Join(root, "no-such-folder", "backstop.txt")
		got := runDoctorArgs(append([]string{backstopHostName, "--write-backstop", file}, dirs...)...)
		if want := "spawngate: --write-backstop: " + file + ": cannot be written\n"; got.code != exitError || got.stdout != "" || got.stderr != want {
			t.Errorf("exit %d, stdout %q, stderr %q; want 2, nothing, %q", got.code, got.stdout, got.stderr, want)
		}
	})
}

// --write-backstop is a usage error for a host whose doctor writes none:
// exit 2, one line, and no file.
func TestDoctorWriteBackstopRefused(t *testing.T) {
	withBackstopHost(t)
	for _, name := range []string{"claude-code", "codex", "copilot"} {
		t.Run(name, func(t *testing.T) {
			root, dirs := doctorDirs(t)
			file := filepath.Join(root, "backstop.txt")
			got := runDoctorArgs(append([]string{name, "--write-backstop", file}, dirs...)...)
			want := "spawngate: --write-backstop: host " + name + " has no backstop (only "
			if got.code != exitError || got.stdout != "" || !strings.HasPrefix(got.stderr, want) ||
				!strings.Contains(got.stderr, backstopHostName) || strings.Count(got.stderr, "\n") != 1 {
				t.Errorf("exit %d, stdout %q, stderr %q; want 2 and one line starting %q", got.code, got.stdout, got.stderr, want)
			}
			if _, err := os.Stat(file); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("a refused --write-backstop wrote %s (%v)", file, err)
			}
		})
	}
}

// HookLine.Judge decides as the hook does: for each example payload, the
// child the hook judged (its --print-plan) is refused by Judge when the
// hook refused the spawn, with a reason the hook gave, and let through
// when the hook let it through.
func TestHookLineJudgesAsTheHook(t *testing.T) {
	base := filepath.Join("..", "..", "examples", "claude-code")
	policy, agents := filepath.Join(base, "policy.yaml"), filepath.Join(base, ".claude", "agents")
	line, err := hookLineReader(doctor.Machine{})(context.Background(), "claude-code", []string{"--policy", policy}, ".")
	if err != nil || line.Judge == nil {
		t.Fatalf("readHookLine: %v (Judge set: %v)", err, line.Judge != nil)
	}
	payloads, err := filepath.Glob(filepath.Join(base, "payloads", "*.json"))
	if err != nil || len(payloads) == 0 {
		t.Fatalf("no payloads: %v", err)
	}
	var refused, allowed int
	for _, p := range payloads {
		t.Run(filepath.Base(p), func(t *testing.T) {
			payload, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			printed := filepath.Join(t.TempDir(), "plan.json")
			answer := runHookOn(t, []string{"hook", "claude-code", "--policy", policy, "--agents-dir", agents, "--print-plan", printed}, payload)
			data, err := os.ReadFile(printed)
			if err != nil {
				t.Skipf("the hook printed no plan (exit %d): not a spawn", answer.code)
			}
			var plan struct {
				Plan   []map[string]any `json:"plan"`
				Parent map[string]any   `json:"parent"`
			}
			if err := json.Unmarshal(data, &plan); err != nil {
				t.Fatal(err)
			}
			if len(plan.Plan) != 1 || plan.Parent != nil {
				t.Skip("Judge judges one child with no parent")
			}
			gotRefused, why, err := line.Judge(context.Background(), agent.Translation{Child: plan.Plan[0]})
			if err != nil {
				t.Fatal(err)
			}
			hookRefused := answer.stdout != "" && strings.Contains(answer.stdout, `"deny"`)
			if answer.code != exitPass || gotRefused != hookRefused {
				t.Fatalf("Judge refused %v (%q); the hook exited %d and answered %s", gotRefused, why, answer.code, answer.stdout)
			}
			if !gotRefused {
				allowed++
				if why != "" {
					t.Errorf("allowed with a reason: %q", why)
				}
				return
			}
			refused++
			reason := denyReason(t, answer.stdout)
			if why == "" || !strings.Contains(reason, why) {
				t.Errorf("Judge's reason %q is not among the hook's:\n%s", why, reason)
			}
		})
	}
	if refused == 0 || allowed == 0 {
		t.Errorf("the examples judged %d refused and %d allowed: both must be tried", refused, allowed)
	}
}

// HookLine.Budget is what the hook grants a definition that states no
// budget: --budget-tokens, else the policy's budget_cap_tokens. Without
// it a child translated for Judge would be refused for having none.
func TestHookLineBudget(t *testing.T) {
	policy := filepath.Join("..", "..", "examples", "claude-code", "policy.yaml")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--policy", policy}, "200000"},
		{[]string{"--policy", policy, "--budget-tokens", "5000"}, "5000"},
	} {
		line, err := hookLineReader(doctor.Machine{})(context.Background(), "claude-code", tc.args, ".")
		if err != nil || string(line.Budget) != tc.want {
			t.Errorf("%q: budget %q, %v; want %q", tc.args, line.Budget, err, tc.want)
		}
	}
}
