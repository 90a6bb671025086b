// Package spawngatebin builds the spawngate command for the end-to-end
// suites (internal/e2e/claudecode, internal/e2e/codex), which drive the
// real clients against it.
package spawngatebin

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// static is the environment spawngate is built in: without cgo, so that
// the binary is statically linked, as the README installs it (doctor
// fails a dynamically linked hook binary, which LD_PRELOAD reaches).
var static = append(os.Environ(), "CGO_ENABLED=0")

// Build builds ./cmd/spawngate from the module root into out, statically
// linked.
func Build(out string) error {
	root, err := moduleRoot()
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", "build", "-o", out, "./cmd/spawngate")
	cmd.Dir = root
	cmd.Env = static
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("%v\n%s", err, b)
	}
	return nil
}

// moduleRoot is the folder of the module the tests are built from.
func moduleRoot() (string, error) {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMOD: %w", err)
	}
	gomod := strings.TrimSpace(string(out))
	if gomod == "" || gomod == os.DevNull {
		return "", errors.New("go env GOMOD: not in a module")
	}
	return filepath.Dir(gomod), nil
}

// LookAtSources stats every file of the module that ./cmd/spawngate is
// built from, as go list names them: its Go files, its embedded files (the
// Rego, the schemas), and go.mod and go.sum (the versions of everything
// else). go test keeps a package's result while the files its tests looked
// at are unchanged, and a build in a subprocess is not looking: a suite
// calls this from a test (go test records only what tests do, not
// TestMain before them), so that its cached pass never outlives a change
// to the binary it drove.
func LookAtSources() error {
	root, err := moduleRoot()
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", "list", "-deps", "-f",
		`{{if and .Module .Module.Main}}{{.Dir}}{{range .GoFiles}}{{"\t"}}{{.}}{{end}}{{range .EmbedFiles}}{{"\t"}}{{.}}{{end}}{{end}}`,
		"./cmd/spawngate")
	cmd.Dir = root
	cmd.Env = static
	out, err := cmd.Output()
	if err != nil {
		return fmt.Errorf("go list: %w", err)
	}
	files := []string{filepath.Join(root, "go.mod"), filepath.Join(root, "go.sum")}
	for line := range strings.Lines(string(out)) {
		fields := strings.Split(strings.TrimSpace(line), "\t")
		for _, f := range fields[1:] {
			files = append(files, filepath.Join(fields[0], f))
		}
	}
	if len(files) < 10 {
		return fmt.Errorf("go list named %d files of ./cmd/spawngate: %s", len(files)-2, out)
	}
	for _, f := range files {
		if _, err := os.Stat(f); err != nil {
			return err
		}
	}
	return nil
}
