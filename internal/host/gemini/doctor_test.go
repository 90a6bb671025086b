//go:build unix

package gemini

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/spawngate/spawngate/internal/agent"
	"github.com/spawngate/spawngate/internal/host/doctor"
	"github.com/spawngate/spawngate/internal/host/hosttest"
)

// systemHook is the documented system settings, the hook's binary and
// policy those of the installation.
const systemHook = `{"hooksConfig": {"enabled": true}, "hooks": {"BeforeTool": [{"matcher": "invoke_agent", "hooks": [{"type": "command", "command": "{{BIN}} hook gemini --policy {{POLICY}} --timeout 20s", "timeout": 30000}]}]}}`

// options read an installation with a hook line whose gate refuses a
// child whose role is writer.
func options(base string) doctor.Options {
	o := hosttest.DoctorOptions(base, Name)
	read := o.ReadHook
	o.ReadHook = func(ctx context.Context, h string, args []string, dir string) (doctor.HookLine, error) {
		line, err := read(ctx, h, args, dir)
		line.Judge = func(_ context.Context, t agent.Translation) (bool, string, error) {
			return t.Child["role"] == "writer", "it may write", nil
		}
		return line, err
	}
	return o
}

// withBackstop writes the backstop of the installation into its place.
func withBackstop(t *testing.T, base string) {
	t.Helper()
	o := options(base)
	dir := o.Path(doctorPaths.policies)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := (Adapter{}).WriteBackstop(context.Background(), o, filepath.Join(dir, backstopName)); err != nil {
		t.Fatal(err)
	}
}

func TestDoctor(t *testing.T) {
	for _, tc := range []struct {
		name     string
		files    map[string]string
		backstop bool
		setup    func(t *testing.T, base string)
		want     []string
	}{
		{name: "documented", files: map[string]string{"root/etc/gemini-cli/settings.json": systemHook}, backstop: true},
		{name: "no-backstop", files: map[string]string{"root/etc/gemini-cli/settings.json": systemHook}, want: []string{"backstop.missing"}},
		{name: "nothing", want: []string{"backstop.missing", "hook.absent"}},
		{name: "project-off-without-system-on", backstop: true, files: map[string]string{
			"root/etc/gemini-cli/settings.json": strings.Replace(systemHook, `"hooksConfig": {"enabled": true}, `, "", 1),
			"proj/.gemini/settings.json":        `{"hooksConfig": {"enabled": false}}`,
		}, want: []string{"hook.absent", "hook.disabled"}},
		{name: "system-on-beats-project-off", backstop: true, files: map[string]string{
			"root/etc/gemini-cli/settings.json": systemHook,
			"proj/.gemini/settings.json":        `{"hooksConfig": {"enabled": false}}`,
		}},
		{name: "project-disables-by-command", backstop: true, files: map[string]string{
			"root/etc/gemini-cli/settings.json": systemHook,
			"proj/.gemini/settings.json":        `{"hooksConfig": {"disabled": ["{{BIN}} hook gemini --policy {{POLICY}} --timeout 20s"]}}`,
		}, want: []string{"hook.absent", "hook.disabled"}},
		{name: "group-writable-folder", backstop: true, files: map[string]string{"root/etc/gemini-cli/settings.json": systemHook},
			setup: func(t *testing.T, base string) { chmod(t, filepath.Join(base, "root/etc/gemini-cli"), 0o775) },
			want:  []string{"backstop.skipped", "hook.absent", "settings.invalid"}},
		{name: "group-writable-file", backstop: true, files: map[string]string{"root/etc/gemini-cli/settings.json": systemHook},
			setup: func(t *testing.T, base string) {
				chmod(t, filepath.Join(base, "root/etc/gemini-cli/settings.json"), 0o664)
			},
			want: []string{"backstop.stale", "hook.absent", "settings.invalid"}},
		{name: "user-only", files: map[string]string{"home/.gemini/settings.json": strings.Replace(systemHook, `"hooksConfig": {"enabled": true}, `, "", 1)},
			want: []string{"backstop.missing", "hook.disabled", "hook.unmanaged"}},
		{name: "timeout-not-above", backstop: true, files: map[string]string{"root/etc/gemini-cli/settings.json": strings.Replace(systemHook, "30000", "20000", 1)},
			want: []string{"hook.timeout"}},
		{name: "matcher-misses", backstop: true, files: map[string]string{"root/etc/gemini-cli/settings.json": strings.Replace(systemHook, `"matcher": "invoke_agent"`, `"matcher": "run_shell_command"`, 1)},
			want: []string{"hook.matcher"}},
		{name: "stale-backstop", backstop: true, files: map[string]string{"root/etc/gemini-cli/settings.json": systemHook},
			setup: func(t *testing.T, base string) {
				hosttest.Fill(t, base, map[string]string{"policy.yaml": "allowed_tools: [Read, Grep]\n"})
			}, want: []string{"backstop.stale"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			base := hosttest.Install(t, tc.files)
			for _, dir := range []string{"root", "root/etc", "root/etc/gemini-cli"} {
				if _, err := os.Stat(filepath.Join(base, dir)); err == nil {
					chmod(t, filepath.Join(base, dir), 0o755)
				}
			}
			if tc.backstop {
				withBackstop(t, base)
			}
			if tc.setup != nil {
				tc.setup(t, base)
			}
			diag, err := Adapter{}.Doctor(context.Background(), options(base))
			if err != nil {
				t.Fatal(err)
			}
			var ids []string
			for _, f := range diag.Findings {
				if !slices.Contains(ids, f.ID) {
					ids = append(ids, f.ID)
				}
			}
			slices.Sort(ids)
			if !slices.Equal(ids, tc.want) {
				t.Fatalf("findings %q, want %q:\n%s", ids, tc.want, show(diag))
			}
			if len(diag.Notes) == 0 {
				t.Fatal("no notes: what no file closes must be said on every run")
			}
		})
	}
}

// TestBackstopRoundTrip: the written backstop refuses by name what the
// policy refuses, has no allow rule, and checks as current until the
// policy changes.
func TestBackstopRoundTrip(t *testing.T) {
	base := hosttest.Install(t, map[string]string{"root/etc/gemini-cli/settings.json": systemHook})
	withBackstop(t, base)
	data, err := os.ReadFile(filepath.Join(options(base).Path(doctorPaths.policies), backstopName))
	if err != nil {
		t.Fatal(err)
	}
	text := string(data)
	for _, want := range []string{digestLine + "sha256:", `toolName = "invoke_agent"`, `decision = "deny"`, "priority = 100", "static"} {
		if !strings.Contains(text, want) {
			t.Errorf("backstop lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, `"allow"`) {
		t.Errorf("backstop holds an allow rule:\n%s", text)
	}
}

func TestTOMLString(t *testing.T) {
	if got := tomlString("a \"b\" \\ \n\x00"); got != `"a \"b\" \\ \u000A\u0000"` {
		t.Fatal(got)
	}
}

func chmod(t *testing.T, p string, mode os.FileMode) {
	t.Helper()
	if err := os.Chmod(p, mode); err != nil {
		t.Fatal(err)
	}
}

func show(d *doctor.Diagnosis) string {
	var b strings.Builder
	for _, f := range d.Findings {
		b.WriteString(f.ID + " " + f.File + ": " + f.Problem + "; fix: " + f.Fix + "\n")
	}
	return b.String()
}
