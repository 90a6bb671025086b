//go:build unix

package doctor

import (
	"bytes"
	"context"
	"encoding/binary"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/spawngate/spawngate/internal/host"
)

// staticELF is the smallest ELF executable header with no program
// interpreter: what a statically linked spawngate looks like to doctor.
func staticELF() []byte {
	var b bytes.Buffer
	b.Write([]byte{0x7f, 'E', 'L', 'F', 2, 1, 1, 0})
	b.Write(make([]byte, 8))
	le := binary.LittleEndian
	for _, v := range []any{uint16(2), uint16(62), uint32(1), uint64(0x400000), uint64(0), uint64(0), uint32(0),
		uint16(64), uint16(56), uint16(0), uint16(64), uint16(0), uint16(0)} {
		binary.Write(&b, le, v)
	}
	return b.Bytes()
}

// TestCheckCommandWhatTheSessionCanChange: the binary and every file its
// gate is read from are checked where they really lie, links followed;
// the command sets nothing in spawngate's environment; a dynamically
// linked binary, and flags for trying payloads by hand, are findings.
func TestCheckCommandWhatTheSessionCanChange(t *testing.T) {
	base := t.TempDir()
	project, home, etc := filepath.Join(base, "proj"), filepath.Join(base, "home"), filepath.Join(base, "etc")
	for _, d := range []string{project, home, etc} {
		must(t, os.MkdirAll(d, 0o755))
	}
	bin := filepath.Join(etc, "spawngate")
	must(t, os.WriteFile(bin, staticELF(), 0o755))
	policy := filepath.Join(etc, "policy.yaml")
	must(t, os.WriteFile(policy, []byte("x: 1\n"), 0o644))
	// Links that look like the operator's files and lead into the project.
	must(t, os.WriteFile(filepath.Join(project, "spawngate"), staticELF(), 0o755))
	must(t, os.WriteFile(filepath.Join(project, "policy.yaml"), []byte("x: 1\n"), 0o644))
	linkedBin := filepath.Join(etc, "linked", "spawngate")
	must(t, os.MkdirAll(filepath.Dir(linkedBin), 0o755))
	must(t, os.Symlink(filepath.Join(project, "spawngate"), linkedBin))
	linkedPolicy := filepath.Join(etc, "linked-policy.yaml")
	must(t, os.Symlink(filepath.Join(project, "policy.yaml"), linkedPolicy))
	homeBin := filepath.Join(home, "go", "bin", "spawngate")
	must(t, os.MkdirAll(filepath.Dir(homeBin), 0o755))
	must(t, os.WriteFile(homeBin, staticELF(), 0o755))
	dynamic := filepath.Join(etc, "dynamic", "spawngate")
	must(t, os.MkdirAll(filepath.Dir(dynamic), 0o755))
	sh, err := os.ReadFile("/bin/sh")
	if err != nil || dynamicLoader("/bin/sh") == "" {
		t.Log("no dynamically linked /bin/sh: the dynamic case is left out")
		dynamic = ""
	} else {
		must(t, os.WriteFile(dynamic, sh, 0o755))
	}

	owners := host.Owners{Trusted: []int{0, os.Geteuid()}, Session: -1, Dirs: []string{project, home}}
	readHook := func(_ context.Context, _ string, args []string, _ string) (HookLine, error) {
		line := HookLine{}
		for i, a := range args {
			switch {
			case a == "--policy" && i+1 < len(args):
				line.Policy = args[i+1]
				line.Files = append(line.Files, args[i+1])
			case a == "--agents-dir" || a == "--transcript":
				line.ByHand = append(line.ByHand, a)
			}
		}
		return line, nil
	}
	check := func(words ...string) (ids []string, problems string) {
		c := Command{Host: "claude-code", Title: "Claude Code", Words: words, Project: project, Owners: owners,
			LookedFor: "on PATH", PolicyFrom: "the project", Policy: "/etc/spawngate/claude-code.yaml", Directly: "run it directly", ReadHook: readHook}
		CheckCommand(context.Background(), c, func(id, problem, fix string) {
			ids = append(ids, id)
			problems += problem + "\n"
		})
		return ids, problems
	}
	for _, tc := range []struct {
		name  string
		words []string
		want  []string
		says  string
	}{
		{"holds", []string{bin, "hook", "claude-code", "--policy", policy}, nil, ""},
		{"binary-linked-into-the-project", []string{linkedBin, "hook", "claude-code", "--policy", policy}, []string{"hook.writable"}, "lies in " + project},
		{"policy-linked-into-the-project", []string{bin, "hook", "claude-code", "--policy", linkedPolicy}, []string{"hook.writable"}, "lies in " + project},
		{"binary-in-home", []string{homeBin, "hook", "claude-code", "--policy", policy}, []string{"hook.writable"}, "lies in " + home},
		{"ld-preload", []string{"LD_PRELOAD=" + project + "/.cache/x.so", bin, "hook", "claude-code", "--policy", policy}, []string{"hook.command"}, "sets LD_PRELOAD"},
		{"any-assignment", []string{"TZ=UTC", "exec", bin, "hook", "claude-code", "--policy", policy}, []string{"hook.command"}, "sets TZ"},
		{"by-hand-flags", []string{bin, "hook", "claude-code", "--policy", policy, "--agents-dir", etc}, []string{"hook.command"}, "--agents-dir, which is for trying payloads by hand"},
		{"dynamic", []string{dynamic, "hook", "claude-code", "--policy", policy}, []string{"hook.binary"}, "is dynamically linked"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.words[0] == "" {
				t.Skip("no dynamically linked program to copy")
			}
			ids, problems := check(tc.words...)
			if !slices.Equal(ids, tc.want) || !strings.Contains(problems, tc.says) {
				t.Fatalf("findings %q, want %q saying %q:\n%s", ids, tc.want, tc.says, problems)
			}
		})
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
