package claudecode

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/spawngate/spawngate/internal/e2e/spawngatebin"
	"github.com/spawngate/spawngate/internal/e2e/suite"
	"github.com/spawngate/spawngate/internal/longtests"
)

// Environment the suite reads.
const (
	envClient  = "SPAWNGATE_E2E_CLAUDE" // path of the installed client binary
	envRequire = "SPAWNGATE_E2E"        // "require": a missing client fails the suite
	envKeep    = "SPAWNGATE_E2E_KEEP"   // a folder to copy every scenario's evidence into
	envSDK     = "SPAWNGATE_E2E_SDK"    // the folder install-sdk.sh prints: the Agent SDK's node_modules
	// A spawngate binary to test instead of building one from this module
	// (a release, say); TestMain also hands its build to its re-run this way.
	envSpawngate = "SPAWNGATE_E2E_SPAWNGATE"
	// Set by TestMain for its own re-run inside the network namespace.
	envInNetns = "SPAWNGATE_E2E_IN_NETNS"
)

const installHint = "the Claude Code client is not installed: run internal/e2e/claudecode/install.sh " +
	"and set " + envClient + " to the path it prints"

// spawngateBin is the spawngate built once for this test binary.
var spawngateBin string

// inNetns says the suite runs in a network namespace of its own.
var inNetns bool

func TestMain(m *testing.M) { os.Exit(testMain(m)) }

func testMain(m *testing.M) int {
	if log := os.Getenv(envMCPServer); log != "" {
		return serveMCP(log)
	}
	if os.Getenv(envClient) == "" && os.Getenv(envSDK) == "" || !longtests.On() {
		// Nothing to drive, or the long tests are off: the tests skip
		// (or fail) by themselves.
		return m.Run()
	}
	if os.Getenv(envInNetns) != "" {
		inNetns = true
		spawngateBin = os.Getenv(envSpawngate)
		if err := loopbackUp(); err != nil {
			fmt.Fprintf(os.Stderr, "e2e: bringing up loopback in the network namespace: %v\n", err)
			return 1
		}
		return m.Run()
	}

	if p := os.Getenv(envSpawngate); p != "" {
		abs, err := filepath.Abs(p)
		if err != nil {
			fmt.Fprintf(os.Stderr, "e2e: %v\n", err)
			return 1
		}
		spawngateBin = abs
	} else {
		// Built here, before any namespace, since the build may need the
		// module proxy and the namespace has no network.
		dir, err := os.MkdirTemp("", "spawngate-e2e-bin-")
		if err != nil {
			fmt.Fprintf(os.Stderr, "e2e: %v\n", err)
			return 1
		}
		defer os.RemoveAll(dir)
		spawngateBin = filepath.Join(dir, "spawngate")
		if err := spawngatebin.Build(spawngateBin); err != nil {
			fmt.Fprintf(os.Stderr, "e2e: building spawngate: %v\n", err)
			return 1
		}
	}

	if unshare := suite.NetnsCommand(); unshare != nil {
		return suite.ReexecIn(unshare, "e2e", envInNetns+"=1", envSpawngate+"="+spawngateBin)
	}
	fmt.Fprintln(os.Stderr, "e2e: unshare -n is not available: running without a network namespace "+
		"(the client still talks only to the scripted API on 127.0.0.1)")
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
	return suite.Client(t, "the real Claude Code client's suite", envClient, envRequire, installHint)
}
