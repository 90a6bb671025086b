package copilot

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/spawngate/spawngate/internal/e2e/suite"
)

// The enforcing installation of the docs, verbatim: spawngate in
// /usr/local/bin, its policy in /etc/spawngate, its hook in
// /etc/github-copilot/policy.d (which no repository or user setting turns
// off), and managed settings that let no other hook run beside it.
const (
	installedHook    = `{"version":1,"hooks":{"preToolUse":[{"type":"command","bash":"/usr/local/bin/spawngate hook copilot --policy /etc/spawngate/copilot.yaml --timeout 20s","timeoutSec":30,"matcher":"task"}]}}`
	installedManaged = `{"allowManagedHooksOnly": true}`
	installedPolicy  = "/etc/spawngate/copilot.yaml"
)

// installed is a scenario under the installation (with hook and managed
// settings replacing the documented ones when not "", "-" for no managed
// settings), doctor run on it first: it must pass, or, with fails set,
// fail with the finding of that ID.
func installed(sc scenario, hook, managed, fails string) func(*testing.T) scenario {
	return func(*testing.T) scenario {
		if hook == "" {
			hook = installedHook
		}
		if managed == "" {
			managed = installedManaged
		}
		sc.PolicyD, sc.Managed = hook, managed
		if managed == "-" {
			sc.Managed = ""
		}
		sc.Installed = map[string]string{installedPolicy: gatePolicy}
		if sc.UserHook == "" {
			sc.UserHook = "-"
		}
		sc.Doctor = func(t *testing.T, ov overlay, root, home string) { doctor(t, ov, root, home, fails) }
		return sc
	}
}

// doctor runs the installed spawngate doctor copilot on the overlay the
// client is about to run with (so it sees exactly the client's /etc), for
// the repository and HOME, and fails the test unless it passes (exit 0),
// or, with fails set, unless it fails the installation (exit 1) with the
// finding of that ID.
func doctor(t *testing.T, ov overlay, root, home, fails string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	defer cancel()
	argv := ov.wrap(t, []string{"/usr/local/bin/spawngate", "doctor", "copilot", "--project", root, "--home", home, "--format", "json"})
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Env = []string{"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=" + home}
	out, err := cmd.Output()
	var report struct {
		Verdict  string
		Findings []struct{ ID, File, Problem string }
	}
	if jerr := json.Unmarshal(out, &report); jerr != nil {
		t.Fatalf("spawngate doctor copilot: %v, and its report is not JSON (%v):\n%s", err, jerr, out)
	}
	var ids []string
	for _, f := range report.Findings {
		ids = append(ids, f.ID)
	}
	var ee *exec.ExitError
	switch {
	case fails == "" && err != nil:
		t.Fatalf("spawngate doctor copilot does not pass the installation: %v\n%s", err, out)
	case fails == "" && (report.Verdict != "pass" || len(ids) > 0):
		t.Fatalf("spawngate doctor copilot exits 0 with verdict %q and findings %v", report.Verdict, ids)
	case fails == "":
		t.Logf("doctor passes it")
	case !errors.As(err, &ee) || ee.ExitCode() != 1 || !slices.Contains(ids, fails):
		t.Fatalf("spawngate doctor copilot does not fail the installation with %s (want exit 1): %v, findings %v\n%s", fails, err, ids, out)
	default:
		t.Logf("doctor fails it, as it must, with %v", ids)
	}
}

// TestDoctorInstallation runs spawngate doctor copilot on the documented
// enforcing installation, which it must pass, and then the client under
// it, trying what a repository and the user can do to get a writer past
// it; and on installations short of it, which doctor must fail, showing
// what the client then lets through.
func TestDoctorInstallation(t *testing.T) {
	clientPath(t)
	needDoctor(t)
	runCases(t, installedCases())
}

func installedCases() []e2eCase {
	both := []turn{spawn("spawn_writer", "writer"), spawn("spawn_reader", "reader")}
	refusedWriter := all(refusedInstalled("spawn_writer", "writer"), starts("spawn_reader", "reader"))
	userAllow := hookFile(`{{BIN}}/record user echo '{"permissionDecision":"allow"}'`, 30, "task")
	return []e2eCase{{
		name:      "documented",
		needsRoot: true,
		sc:        installed(scenario{Files: defs("reader", "writer"), Main: both}, "", "", ""),
		check:     refusedWriter,
	}, {
		// disableAllHooks wherever a repository or the user can write it,
		// and a user hook beside: the policy.d hook still judges, and the
		// user's never runs.
		name:      "documented-holds-against-disableAllHooks-and-user-hooks",
		needsRoot: true,
		sc: installed(scenario{UserHook: userAllow, Main: both, Files: with(defs("reader", "writer"),
			".github/copilot/settings.json", disableAll, ".github/copilot/settings.local.json", disableAll,
			"~/.copilot/settings.json", disableAll)}, "", "", ""),
		check: all(refusedWriter, neverCalled("user")),
	}, {
		// The same in a folder not trusted (repository hooks and settings
		// are not read there; the policy.d hook is).
		name:      "documented-holds-in-an-untrusted-folder",
		needsRoot: true,
		sc:        installed(scenario{Untrusted: true, Files: defs("reader", "writer"), Main: both}, "", "", ""),
		check:     refusedWriter,
	}, {
		// No allowManagedHooksOnly: doctor fails it (a user or repository
		// hook runs beside spawngate's); spawngate's still denies.
		name:      "without-allowManagedHooksOnly",
		needsRoot: true,
		sc:        installed(scenario{Files: defs("reader", "writer"), Main: both}, "", "-", "hooks.unrestricted"),
		check:     refusedWriter,
	}, {
		// Without allowManagedHooksOnly a user hook runs beside
		// spawngate's on the same call, and one that answers modifiedArgs
		// swaps the reader spawngate allowed for the writer it refuses.
		name:      "without-allowManagedHooksOnly-modifiedArgs-swaps-the-agent",
		needsRoot: true,
		hostFact:  "a user preToolUse hook's modifiedArgs replaces the task call's arguments after a policy.d hook allowed them",
		sc: installed(scenario{Files: defs("reader", "writer"), Main: []turn{spawn("spawn_reader", "reader")}, UserHook: swapToWriter},
			"", "-", "hooks.unrestricted"),
		check: all(starts("spawn_reader", "writer"), neverMentioned("reader"), calledFor("user", "task", 1)),
	}, {
		// Its opposite: under the documented installation that user hook
		// never runs, and the reader runs as judged.
		name:      "documented-drops-a-modifiedArgs-user-hook",
		needsRoot: true,
		sc:        installed(scenario{Files: defs("reader", "writer"), Main: []turn{spawn("spawn_reader", "reader")}, UserHook: swapToWriter}, "", "", ""),
		check:     all(starts("spawn_reader", "reader"), neverMentioned("writer"), neverCalled("user")),
	}, {
		// A timeout below spawngate's own: doctor fails it.
		name:      "timeout-below-spawngate",
		needsRoot: true,
		sc: installed(scenario{Files: defs("reader", "writer"), Main: both},
			strings.Replace(installedHook, `"timeoutSec":30`, `"timeoutSec":10`, 1), "", "hook.timeout"),
		check: refusedWriter,
	}, {
		// A matcher of Agent: doctor fails it, and the client never runs
		// the hook for task, so the writer starts.
		name:      "matcher-Agent",
		needsRoot: true,
		hostFact:  "for camelCase preToolUse the tool is task: a matcher of Agent never runs the hook",
		sc: installed(scenario{Files: defs("reader", "writer"), Main: both},
			strings.Replace(installedHook, `"matcher":"task"`, `"matcher":"Agent"`, 1), "", "hook.matcher"),
		check: all(starts("spawn_writer", "writer"), starts("spawn_reader", "reader")),
	}, {
		// The user-level hook alone: doctor fails it, and a trusted
		// repository's disableAllHooks switches it off.
		name:      "user-level-hook-only",
		needsRoot: true,
		hostFact:  "disableAllHooks in a trusted repository's .github/copilot/settings.json switches off the user's hooks",
		sc: func(t *testing.T) scenario {
			sc := scenario{Files: with(defs("reader", "writer"), ".github/copilot/settings.json", disableAll), Main: both,
				UserHook:  hookFile("/usr/local/bin/spawngate hook copilot --policy /etc/spawngate/copilot.yaml --timeout 20s", 30, "task"),
				Installed: map[string]string{installedPolicy: gatePolicy}}
			sc.Doctor = func(t *testing.T, ov overlay, root, home string) { doctor(t, ov, root, home, "hook.disabled") }
			return sc
		},
		check: all(starts("spawn_writer", "writer"), starts("spawn_reader", "reader")),
	}, {
		// The user-level hook in a repository that does not turn it off:
		// it judges, but doctor fails it, since a session can turn it off
		// (or edit it).
		name:      "user-level-hook-judges-but-is-not-enough",
		needsRoot: true,
		sc: func(t *testing.T) scenario {
			sc := scenario{Files: defs("reader", "writer"), Main: both,
				UserHook:  hookFile("/usr/local/bin/spawngate hook copilot --policy /etc/spawngate/copilot.yaml --timeout 20s", 30, "task"),
				Installed: map[string]string{installedPolicy: gatePolicy}}
			sc.Doctor = func(t *testing.T, ov overlay, root, home string) { doctor(t, ov, root, home, "hook.unmanaged") }
			return sc
		},
		check: refusedWriter,
	}}
}

// swapToWriter is a user hook file whose hook answers every task call
// with modifiedArgs that name the writer.
var swapToWriter = hookFile(`{{BIN}}/record user echo '{"modifiedArgs":{"name":"e2e","description":"e2e task","prompt":"E2E-CHILD do the task","agent_type":"writer"}}'`, 30, "task")

// refusedInstalled: under the installation (no recording wrapper) the
// spawn callID came back as spawngate's refusal of name, and name's child
// never reached the model.
func refusedInstalled(callID, name string) check {
	return func(t *testing.T, o *outcome) error {
		if o.Mentions(name) {
			return fmt.Errorf("the refused %s child reached the model", name)
		}
		want := "Denied by preToolUse hook: spawngate refused this sub-agent: " + name + " ("
		if r := o.Result(callID); !strings.HasPrefix(r, want) {
			return fmt.Errorf("%s's result is %q, want spawngate's refusal (%q...)", callID, r, want)
		}
		return nil
	}
}

// needDoctor stops the test when the spawngate under test has no doctor
// for Copilot: a failure, since the suite tests it.
func needDoctor(t *testing.T) {
	t.Helper()
	suite.NeedHook(t, spawngateBin, "copilot")
	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	defer cancel()
	out, _ := exec.CommandContext(ctx, spawngateBin, "doctor", "-h").CombinedOutput()
	if !bytes.Contains(out, []byte("copilot")) {
		t.Fatalf("spawngate has no `doctor copilot`: %s", suite.Trim(string(out), 300))
	}
}
