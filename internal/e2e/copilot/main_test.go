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
	"github.com/spawngate/spawngate/internal/longtests"
)

// Environment the suite reads.
const (
	envClient  = "SPAWNGATE_E2E_COPILOT" // path of the installed client binary
	envRequire = "SPAWNGATE_E2E"         // "require": a missing client fails the suite
	envKeep    = "SPAWNGATE_E2E_KEEP"    // a folder to copy every scenario's evidence into
	// A spawngate binary to test instead of building one from this module
	// (a release, say); TestMain also hands its build to its re-run this way.
	envSpawngate = "SPAWNGATE_E2E_SPAWNGATE"
	// Set by TestMain for its own re-run inside the network namespace.
	envInNetns = "SPAWNGATE_E2E_IN_NETNS"
	// envNetns=off keeps the suite in the host's network namespace.
	envNetns = "SPAWNGATE_E2E_NETNS"
	// envUpdatePayloads=1 rewrites examples/copilot/payloads from the run.
	envUpdatePayloads = "SPAWNGATE_E2E_UPDATE_PAYLOADS"
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

func TestMain(m *testing.M) { os.Exit(testMain(m)) }

func testMain(m *testing.M) int {
	if os.Getenv(envClient) == "" || !longtests.On() {
		// Nothing to drive, or the long tests are off: the tests skip
		// (or fail) by themselves.
		return m.Run()
	}
	if os.Getenv(envInNetns) != "" {
		inNetns = true
		spawngateBin = os.Getenv(envSpawngate)
		if err := loopbackUp(); err != nil {
			fmt.Fprintf(os.Stderr, "e2e/copilot: bringing up loopback in the network namespace: %v\n", err)
			return 1
		}
		return runTests(m)
	}

	if p := os.Getenv(envSpawngate); p != "" {
		abs, err := filepath.Abs(p)
		if err != nil {
			fmt.Fprintf(os.Stderr, "e2e/copilot: %v\n", err)
			return 1
		}
		spawngateBin = abs
	} else {
		// Built here, before any namespace, since the build may need the
		// module proxy and the namespace has no network.
		dir, err := os.MkdirTemp("", "spawngate-e2e-bin-")
		if err != nil {
			fmt.Fprintf(os.Stderr, "e2e/copilot: %v\n", err)
			return 1
		}
		defer os.RemoveAll(dir)
		spawngateBin = filepath.Join(dir, "spawngate")
		if err := spawngatebin.Build(spawngateBin); err != nil {
			fmt.Fprintf(os.Stderr, "e2e/copilot: building spawngate: %v\n", err)
			return 1
		}
	}

	if os.Getenv(envNetns) != "off" {
		if unshare := suite.NetnsCommand(); unshare != nil {
			return suite.ReexecIn(unshare, "e2e/copilot", envInNetns+"=1", envSpawngate+"="+spawngateBin)
		}
		fmt.Fprintln(os.Stderr, "e2e/copilot: unshare -n is not available: running without a network namespace "+
			"(the client still talks only to the scripted API on 127.0.0.1, every proxy variable points at 127.0.0.1:9)")
	}
	return runTests(m)
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
