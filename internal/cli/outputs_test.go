package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Every report --output writes is the one --format alone prints, byte for
// byte, and the exit code is the verdict's; reports that would overwrite
// each other, or what the run reads, are refused before anything is judged.
func TestOutputs(t *testing.T) {
	t.Chdir(filepath.Join("..", ".."))
	run := func(args ...string) (int, string, string) {
		var stdout, stderr bytes.Buffer
		code := Run(context.Background(), args, strings.NewReader(""), &stdout, &stderr)
		return code, stdout.String(), stderr.String()
	}
	const policy, refused = "examples/policy.yaml", "examples/refused-plan.yaml"
	for _, tc := range []struct {
		name    string
		args    []string          // DIR stands for a fresh folder
		code    int               // the exit code
		stdout  string            // the format stdout holds, "" for none
		files   map[string]string // file under DIR: the format it holds
		stderr  string            // all of stderr, DIR replaced
		missing []string          // files under DIR that must not be written
	}{
		{name: "sarif to a file, text to stdout", code: 1, stdout: "text",
			args:  []string{"check", "--policy", policy, "--output", "sarif=DIR/r.sarif", refused},
			files: map[string]string{"r.sarif": "sarif"}},
		{name: "every format at once", code: 1, stdout: "github",
			args: []string{"check", "--policy", policy, "--output", "text=DIR/r.txt", "--output", "json=DIR/r.json",
				"--output", "sarif=DIR/r.sarif", "--output", "junit=DIR/r.xml", "--output", "github=-", refused},
			files: map[string]string{"r.txt": "text", "r.json": "json", "r.sarif": "sarif", "r.xml": "junit"}},
		{name: "--format for stdout beside files", code: 0, stdout: "json",
			args:  []string{"check", "--policy", policy, "--format", "json", "--output", "sarif=DIR/r.sarif", "examples/authorized-plan.yaml"},
			files: map[string]string{"r.sarif": "sarif"}},
		{name: "agents", code: 1, stdout: "text",
			args:  []string{"agents", "--policy", "examples/claude-code/policy.yaml", "--cwd", "/home/dev/project", "--output", "junit=DIR/a.xml", "examples/claude-code"},
			files: map[string]string{"a.xml": "junit"}},
		{name: "a file that cannot be written: exit 2, the others written", code: 2, stdout: "text",
			args:   []string{"check", "--policy", policy, "--output", "sarif=DIR/no/r.sarif", "--output", "json=DIR/r.json", refused},
			files:  map[string]string{"r.json": "json"},
			stderr: "spawngate: writing the sarif report to DIR/no/r.sarif: no such file or directory\n"},
		{name: "one file twice", code: 2,
			args:    []string{"check", "--policy", policy, "--output", "sarif=DIR/r", "--output", "json=DIR/./r", refused},
			stderr:  "spawngate: --output names \"DIR/./r\" twice: each report needs its own file (see spawngate check -h)\n",
			missing: []string{"r"}},
		{name: "stdout twice", code: 2,
			args:   []string{"agents", "--policy", policy, "--output", "sarif=-", "--output", "json=-"},
			stderr: "spawngate: --output names standard output (-) twice: it can hold one report (see spawngate agents -h)\n"},
		{name: "stdout by --format and --output", code: 2,
			args:   []string{"check", "--policy", policy, "--output", "sarif=-", "--format", "text", refused},
			stderr: "spawngate: --format and --output sarif=- both name standard output: give one (see spawngate check -h)\n"},
		{name: "over the policy", code: 2,
			args:   []string{"check", "--policy", policy, "--output", "sarif=./" + policy, refused},
			stderr: "spawngate: --output \"./examples/policy.yaml\": the run reads that file: write the report elsewhere (see spawngate check -h)\n"},
		{name: "no file", code: 2,
			args:   []string{"check", "--policy", policy, "--output", "sarif=", refused},
			stderr: "spawngate: --output \"sarif=\": not FORMAT=FILE, such as sarif=results.sarif (FILE - for standard output) (see spawngate check -h)\n"},
		{name: "no format", code: 2,
			args:    []string{"check", "--policy", policy, "--output", "sarf=DIR/r", refused},
			stderr:  "spawngate: --output \"sarf=DIR/r\": not a format: choose text, json, sarif, junit, github or html (see spawngate check -h)\n",
			missing: []string{"r"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			args := make([]string, len(tc.args))
			for i, a := range tc.args {
				args[i] = strings.ReplaceAll(a, "DIR", dir)
			}
			code, stdout, stderr := run(args...)
			if code != tc.code || strings.ReplaceAll(stderr, dir, "DIR") != tc.stderr {
				t.Fatalf("exit %d, stderr %q; want %d, %q", code, stderr, tc.code, tc.stderr)
			}
			// alone is what --format FORMAT prints for the same command
			// without --output and --format.
			alone := func(format string) string {
				var plain []string
				for i := 0; i < len(args); i++ {
					if args[i] == "--output" || args[i] == "--format" {
						i++
						continue
					}
					plain = append(plain, args[i])
				}
				code, out, _ := run(append(plain, "--format", format)...)
				if code != tc.code && tc.code != 2 {
					t.Fatalf("--format %s alone: exit %d, want %d", format, code, tc.code)
				}
				return out
			}
			if tc.stdout == "" && stdout != "" {
				t.Errorf("stdout %q, want none", stdout)
			}
			if tc.stdout != "" && stdout != alone(tc.stdout) {
				t.Errorf("stdout differs from --format %s alone:\n%s", tc.stdout, stdout)
			}
			for file, format := range tc.files {
				got, err := os.ReadFile(filepath.Join(dir, file))
				if err != nil {
					t.Fatal(err)
				}
				if string(got) != alone(format) {
					t.Errorf("%s differs from --format %s alone:\n%s", file, format, got)
				}
			}
			for _, file := range tc.missing {
				if _, err := os.Stat(filepath.Join(dir, file)); err == nil {
					t.Errorf("%s was written", file)
				}
			}
		})
	}
}
