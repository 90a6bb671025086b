// Package suite is what every real-client suite under internal/e2e does
// around its scenarios: run the test binary again inside a network
// namespace of its own (Main, for a suite that needs nothing more), find
// the installed client or stop the test (a skip, or a failure when the
// suite is required), and run a few more scenarios at once than the
// machine has cores.
//
// It also holds what the suites that record hooks alike (Copilot CLI,
// Gemini CLI) share about a run: its Outcome, the checks on it that mean
// the same for every client, Judge, which holds a scenario to its check,
// and MatchPayload, which compares a captured payload with its fixture.
// What a client does its own way (how a payload names the tool, how a
// hook denies, how a denial reaches the model) stays in its suite.
package suite

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/spawngate/spawngate/internal/longtests"
)

// NetnsCommand is the unshare invocation that works here, or nil: plain
// `unshare -n` as root, else one that maps the user to root in a new user
// namespace first.
func NetnsCommand() []string {
	path, err := exec.LookPath("unshare")
	if err != nil {
		return nil
	}
	for _, args := range [][]string{{path, "-n"}, {path, "-r", "-n"}} {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		err := exec.CommandContext(ctx, args[0], append(args[1:], "true")...).Run()
		cancel()
		if err == nil {
			return args
		}
	}
	return nil
}

// ReexecIn runs this test binary again, with the same flags, inside the
// namespace unshare makes, with env added to its environment (what tells
// it it runs there, and the spawngate it drives), and returns its exit
// code. name names the suite in its errors.
func ReexecIn(unshare []string, name string, env ...string) int {
	self, err := os.Executable()
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", name, err)
		return 1
	}
	args := append(append(unshare[1:], "--", self), os.Args[1:]...)
	cmd := exec.Command(unshare[0], args...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.Env = append(os.Environ(), env...)
	if err := cmd.Run(); err != nil {
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			return exit.ExitCode()
		}
		fmt.Fprintf(os.Stderr, "%s: %v\n", name, err)
		return 1
	}
	return 0
}

// Client is the installed client envClient names, or the test stops: a
// skip while the long tests are off or the client is missing, a failure
// when envRequire says "require" (hint says how to install it), or when
// the path it names does not exist. what names the suite for the skip.
func Client(t *testing.T, what, envClient, envRequire, hint string) string {
	t.Helper()
	longtests.Need(t, what)
	p := os.Getenv(envClient)
	if p == "" {
		if os.Getenv(envRequire) == "require" {
			t.Fatal(hint)
		}
		t.Skip(hint)
	}
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("%s=%s: %v", envClient, p, err)
	}
	return p
}

// MoreParallel lets four scenarios run at once unless -parallel is given:
// a scenario spends most of its time waiting (client start-up, scripted
// turns, hooks), so a few more than go test's default of GOMAXPROCS keeps
// a suite shorter on a 2-core machine. It parses the flags.
func MoreParallel() {
	flag.Parse()
	explicit := false
	flag.Visit(func(f *flag.Flag) { explicit = explicit || f.Name == "test.parallel" })
	if !explicit {
		_ = flag.Set("test.parallel", "4")
	}
}
