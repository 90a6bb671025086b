package copilot

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/spawngate/spawngate/internal/e2e/spawngatebin"
	"github.com/spawngate/spawngate/internal/e2e/suite"
)

// Environment the suite reads.
const (
	envClient  = "SPAWNGATE_E2E_COPILOT" // path of the installed client binary
	envRequire = "SPAWNGATE_E2E"         // "require": a missing client fails the suite
	envKeep    = "SPAWNGATE_E2E_KEEP"    // a folder to copy every scenario's evidence into
)

const installHint = "the GitHub Copilot CLI is not installed: run `export " + envClient +
	"=\"$(internal/e2e/copilot/install.sh)\"` (npm installs @github/copilot@1.0.102 into " +
	"~/.cache/spawngate/e2e) and go test ./internal/e2e/copilot/"

var (
	// spawngateBin is the spawngate built once for this test binary.
	spawngateBin string
	// inNetns says the suite runs in a network namespace of its own.
	inNetns bool
	// warmCache is an XDG_CACHE_HOME in which the client has already
	// unpacked its bundled code (it does so on first start, 235 MB): each
	// run gets a hard-linked copy of it instead of unpacking again.
	warmCache string
)

func TestMain(m *testing.M) {
	os.Exit(suite.Main(m, "e2e/copilot", envClient, func(m *testing.M, bin string, netns bool) int {
		spawngateBin, inNetns = bin, netns
		return runTests(m)
	}))
}

// runTests warms the client's cache once and runs the tests.
func runTests(m *testing.M) int {
	dir, err := os.MkdirTemp("", "spawngate-e2e-copilot-cache-")
	if err != nil {
		fmt.Fprintf(os.Stderr, "e2e/copilot: %v\n", err)
		return 1
	}
	defer os.RemoveAll(dir)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Getenv(envClient), "--version")
	cmd.Env = append(isolatedEnv(filepath.Join(dir, "home"), filepath.Join(dir, "cache")), "PATH="+os.Getenv("PATH"))
	if out, err := cmd.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "e2e/copilot: %s --version: %v\n%s", os.Getenv(envClient), err, out)
		return 1
	}
	warmCache = filepath.Join(dir, "cache")

	suite.MoreParallel()
	return m.Run()
}

// The suite's cached result follows the sources of the spawngate it
// drives: go test reruns it when any of them changes
// (spawngatebin.LookAtSources).
func TestTheCachedResultFollowsTheSources(t *testing.T) {
	if err := spawngatebin.LookAtSources(); err != nil {
		t.Fatal(err)
	}
}

// clientPath is the installed client, or the test stops: a skip normally,
// a failure when the suite is required.
func clientPath(t *testing.T) string {
	t.Helper()
	return suite.Client(t, "the real GitHub Copilot CLI's suite", envClient, envRequire, installHint)
}
