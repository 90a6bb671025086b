package suite

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spawngate/spawngate/internal/e2e/spawngatebin"
	"github.com/spawngate/spawngate/internal/longtests"
)

// The environment Main reads, besides the suite's own.
const (
	// EnvSpawngate names a spawngate binary to test instead of building
	// one from this module (a release, say); Main also hands its build to
	// its re-run this way.
	EnvSpawngate = "SPAWNGATE_E2E_SPAWNGATE"
	// EnvInNetns is set by Main for its own re-run inside the network
	// namespace.
	EnvInNetns = "SPAWNGATE_E2E_IN_NETNS"
	// EnvNetns=off keeps the suite in the host's network namespace.
	EnvNetns = "SPAWNGATE_E2E_NETNS"
)

// Main is the body of a suite's TestMain. With no client in envClient or
// the long tests off it only runs the tests, which skip (or fail) by
// themselves. Else it builds spawngate once (before any namespace, since
// the build may need the module proxy) unless EnvSpawngate names one, and
// runs this test binary again in a network namespace of its own, where it
// sets loopback up and calls run with the spawngate to drive and
// inNetns true. Without unshare, or with EnvNetns=off, it calls run in
// the host's namespace. name names the suite in its messages.
func Main(m *testing.M, name, envClient string, run func(m *testing.M, spawngate string, inNetns bool) int) int {
	if os.Getenv(envClient) == "" || !longtests.On() {
		return m.Run()
	}
	if os.Getenv(EnvInNetns) != "" {
		if err := LoopbackUp(); err != nil {
			fmt.Fprintf(os.Stderr, "%s: bringing up loopback in the network namespace: %v\n", name, err)
			return 1
		}
		return run(m, os.Getenv(EnvSpawngate), true)
	}

	bin := os.Getenv(EnvSpawngate)
	if bin != "" {
		abs, err := filepath.Abs(bin)
		if err != nil {
			fmt.Fprintf(os.Stderr, "%s: %v\n", name, err)
			return 1
		}
		bin = abs
	} else {
		dir, err := os.MkdirTemp("", "spawngate-e2e-bin-")
		if err != nil {
			fmt.Fprintf(os.Stderr, "%s: %v\n", name, err)
			return 1
		}
		defer os.RemoveAll(dir)
		bin = filepath.Join(dir, "spawngate")
		if err := spawngatebin.Build(bin); err != nil {
			fmt.Fprintf(os.Stderr, "%s: building spawngate: %v\n", name, err)
			return 1
		}
	}

	if os.Getenv(EnvNetns) != "off" {
		if unshare := NetnsCommand(); unshare != nil {
			return ReexecIn(unshare, name, EnvInNetns+"=1", EnvSpawngate+"="+bin)
		}
		fmt.Fprintf(os.Stderr, "%s: unshare -n is not available: running without a network namespace "+
			"(the client still talks only to the scripted API on 127.0.0.1, every proxy variable points at 127.0.0.1:9)\n", name)
	}
	return run(m, bin, false)
}

// NeedHook stops the test when spawngate, the binary under test, has no
// hook for host: a failure, since a suite tests that hook. Its help
// (which exits 2) names the host.
func NeedHook(t *testing.T, spawngate, host string) {
	t.Helper()
	if spawngate == "" {
		t.Fatal("no spawngate was built")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, _ := exec.CommandContext(ctx, spawngate, "hook", host, "-h").CombinedOutput()
	if !strings.Contains(string(out), "Usage: spawngate hook "+host) {
		t.Fatalf("spawngate has no `hook %s`: %s", host, Trim(string(out), 500))
	}
}
