package gemini

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/spawngate/spawngate/internal/e2e/spawngatebin"
	"github.com/spawngate/spawngate/internal/e2e/suite"
)

// Environment the suite reads.
const (
	envClient  = "SPAWNGATE_E2E_GEMINI" // path of the installed client's bundle/gemini.js
	envRequire = "SPAWNGATE_E2E"        // "require": a missing client fails the suite
	envKeep    = "SPAWNGATE_E2E_KEEP"   // a folder to copy every scenario's evidence into
)

// clientVersion is the version install.sh pins, which the suite's facts
// were seen on.
const clientVersion = "0.61.0"

const installHint = "the Gemini CLI is not installed: run `export " + envClient +
	"=\"$(internal/e2e/gemini/install.sh)\"` (npm installs @google/gemini-cli@" + clientVersion + " into " +
	"~/.cache/spawngate/e2e) and go test ./internal/e2e/gemini/"

var (
	// spawngateBin is the spawngate built once for this test binary.
	spawngateBin string
	// inNetns says the suite runs in a network namespace of its own.
	inNetns bool
	// nodeBin is the node that runs the client's bundle.
	nodeBin string
)

func TestMain(m *testing.M) {
	os.Exit(suite.Main(m, "e2e/gemini", envClient, func(m *testing.M, bin string, netns bool) int {
		spawngateBin, inNetns = bin, netns
		return runTests(m)
	}))
}

// runTests checks the client answers with its version and runs the tests.
func runTests(m *testing.M) int {
	var err error
	if nodeBin, err = exec.LookPath("node"); err != nil {
		fmt.Fprintf(os.Stderr, "e2e/gemini: the client's bundle needs node on PATH: %v\n", err)
		return 1
	}
	dir, err := os.MkdirTemp("", "spawngate-e2e-gemini-version-")
	if err != nil {
		fmt.Fprintf(os.Stderr, "e2e/gemini: %v\n", err)
		return 1
	}
	defer os.RemoveAll(dir)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, nodeBin, os.Getenv(envClient), "--version")
	cmd.Env = append(isolatedEnv(dir), "PATH="+os.Getenv("PATH"))
	out, err := cmd.CombinedOutput()
	if err != nil {
		fmt.Fprintf(os.Stderr, "e2e/gemini: node %s --version: %v\n%s", os.Getenv(envClient), err, out)
		return 1
	}
	if v := strings.TrimSpace(string(out)); v != clientVersion {
		fmt.Fprintf(os.Stderr, "e2e/gemini: the client is version %q; the suite's facts were seen on %s\n", v, clientVersion)
	}

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
	return suite.Client(t, "the real Gemini CLI's suite", envClient, envRequire, installHint)
}
