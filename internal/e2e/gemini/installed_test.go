package gemini

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/spawngate/spawngate/internal/e2e/suite"
)

// The enforcing installation of the docs, verbatim: spawngate in
// /usr/local/bin, its policy in /etc/spawngate, its hook in the system
// settings with hooksConfig.enabled: true (which a project's enabled:
// false does not undo), and the backstop doctor writes into the policy
// engine's admin folder, for where the hook is gone.
const (
	installedCommand = "/usr/local/bin/spawngate hook gemini --policy /etc/spawngate/gemini.yaml --timeout 20s"
	installedPolicy  = "/etc/spawngate/gemini.yaml"
	installedSystem  = `{"hooksConfig":{"enabled":true},"hooks":{"BeforeTool":[{"matcher":"invoke_agent","hooks":[{"type":"command","command":"` +
		installedCommand + `","timeout":30000}]}]}}`
	backstopFile = "/etc/gemini-cli/policies/spawngate.toml"
)

// installedSettings is the system settings file of the installation,
// with replacements (old, new, ...) made in its text.
func installedSettings(t *testing.T, replace ...string) map[string]any {
	t.Helper()
	text := strings.NewReplacer(replace...).Replace(installedSystem)
	var m map[string]any
	if err := json.Unmarshal([]byte(text), &m); err != nil {
		t.Fatalf("installed settings: %v", err)
	}
	return m
}

// installed is a scenario under the installation (system the settings,
// nil for the documented ones), doctor run on it first, writing the
// backstop: it must pass, or, with fails set, fail with the finding of
// that ID. mode, when not 0, is the settings file's mode (and doctor
// writes no backstop).
func installed(sc scenario, system func(t *testing.T) map[string]any, mode os.FileMode, fails string) func(*testing.T) scenario {
	return func(t *testing.T) scenario {
		sc.System = installedSettings(t)
		if system != nil {
			sc.System = system(t)
		}
		// The policies folder is the operator's to make; doctor writes the
		// backstop into it.
		sc.Installed = map[string]string{installedPolicy: gatePolicy, "/etc/gemini-cli/policies/": ""}
		if mode != 0 {
			sc.Modes = map[string]os.FileMode{"/etc/gemini-cli/settings.json": mode}
		}
		sc.NoUserHook = sc.UserHooks == nil
		sc.Doctor = func(t *testing.T, ov overlay, root, home string) {
			if mode != 0 {
				// doctor takes the backstop's policy from the hook of a
				// file the client reads, so it writes none for a file the
				// client skips.
				doctor(t, ov, root, home, fails)
				return
			}
			doctor(t, ov, root, home, fails, "--write-backstop", backstopFile)
		}
		return sc
	}
}

// doctor runs the installed spawngate doctor gemini on the overlay the
// client is about to run with (so it sees exactly the client's /etc), for
// the repository and HOME, with more flags, and fails the test unless it
// passes (exit 0), or, with fails set, unless it fails the installation
// (exit 1) with the finding of that ID.
func doctor(t *testing.T, ov overlay, root, home, fails string, flags ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	defer cancel()
	argv := ov.wrap(t, append([]string{"/usr/local/bin/spawngate", "doctor", "gemini", "--project", root, "--home", home, "--format", "json"}, flags...))
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Env = []string{"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=" + home}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	var report struct {
		Verdict  string
		Findings []struct{ ID, File, Problem string }
	}
	if jerr := json.Unmarshal(out, &report); jerr != nil {
		t.Fatalf("spawngate doctor gemini: %v, and its report is not JSON (%v):\n%s\n%s", err, jerr, out, stderr.Bytes())
	}
	var ids []string
	for _, f := range report.Findings {
		ids = append(ids, f.ID)
	}
	var ee *exec.ExitError
	switch {
	case fails == "" && err != nil:
		t.Fatalf("spawngate doctor gemini does not pass the installation: %v\n%s\n%s", err, out, stderr.Bytes())
	case fails == "" && (report.Verdict != "pass" || len(ids) > 0):
		t.Fatalf("spawngate doctor gemini exits 0 with verdict %q and findings %v", report.Verdict, ids)
	case fails == "":
		t.Logf("doctor passes it")
	case !errors.As(err, &ee) || ee.ExitCode() != 1 || !slices.Contains(ids, fails):
		t.Fatalf("spawngate doctor gemini does not fail the installation with %s (want exit 1): %v, findings %v\n%s\n%s", fails, err, ids, out, stderr.Bytes())
	default:
		t.Logf("doctor fails it, as it must, with %v", ids)
	}
}

// TestDoctorInstallation runs spawngate doctor gemini on the documented
// enforcing installation, writing its backstop, which it must pass, and
// then the client under it, trying what a project and the user's
// environment can do to get a writer past it; and on installations short
// of it, which doctor must fail, showing what the client then lets
// through.
func TestDoctorInstallation(t *testing.T) {
	clientPath(t)
	needDoctor(t)
	runCases(t, installedCases())
}

func installedCases() []e2eCase {
	both := func(extra scenario) scenario {
		extra.Files = gateDefs("reader", "writer")
		extra.Main = []turn{spawn("spawn_writer", "writer"), spawn("spawn_reader", "reader")}
		return extra
	}
	refusedWriter := all(refusedInstalled("spawn_writer", "writer"), starts("spawn_reader", "reader"))
	// backstopped: the hook is gone, and the backstop refuses the writer
	// by name; the reader runs.
	backstopped := all(resultHas("spawn_writer", policyDenied+" spawngate refuses the agent writer: "), neverRan("writer"),
		starts("spawn_reader", "reader"))
	return []e2eCase{{
		name:      "documented",
		needsRoot: true,
		sc:        installed(both(scenario{}), nil, 0, ""),
		check:     refusedWriter,
	}, {
		// hooksConfig.enabled: false wherever a project or the user can
		// write it: the system hook still judges.
		name:      "documented-holds-against-enabled-false",
		needsRoot: true,
		sc: installed(both(scenario{Project: hooksOff, User: hooksOff}),
			nil, 0, ""),
		check: refusedWriter,
	}, {
		name:      "documented-hook-disabled-by-the-project-backstop-refuses",
		needsRoot: true,
		hostFact:  "hooksConfig.disabled in a trusted project's settings switches off the system hook by its command",
		sc:        installed(both(scenario{Project: disabling(installedCommand)}), nil, 0, "hook.disabled"),
		check:     backstopped,
	}, {
		name:      "documented-hook-dropped-by-GEMINI_CLI_SYSTEM_SETTINGS_PATH-backstop-refuses",
		needsRoot: true,
		hostFact:  "GEMINI_CLI_SYSTEM_SETTINGS_PATH in the client's environment replaces /etc/gemini-cli/settings.json, and its hook with it",
		sc:        installed(both(scenario{Env: []string{"GEMINI_CLI_SYSTEM_SETTINGS_PATH=/nonexistent/settings.json"}}), nil, 0, ""),
		check:     backstopped,
	}, {
		// --acp under yolo: no hook runs, and the policy engine is not
		// asked either: doctor passes the installation, and the writer
		// starts all the same.
		name:      "documented-under-acp-yolo",
		needsRoot: true,
		hostFact:  "--acp --approval-mode yolo runs no hook and reads no policy rule for invoke_agent: the backstop does not hold there",
		sc:        installed(both(scenario{ACP: true}), nil, 0, ""),
		check:     all(starts("spawn_writer", "writer"), starts("spawn_reader", "reader")),
	}, {
		// No hooksConfig.enabled: true: doctor fails it; with nothing
		// turning hooks off the hook still denies.
		name:      "without-enabled-true",
		needsRoot: true,
		sc: installed(both(scenario{}), func(t *testing.T) map[string]any {
			return installedSettings(t, `"hooksConfig":{"enabled":true},`, "")
		}, 0, "hook.disabled"),
		check: refusedWriter,
	}, {
		// Its cost: a project's enabled: false then switches the hook off,
		// and only the backstop refuses the writer.
		name:      "without-enabled-true-project-enabled-false",
		needsRoot: true,
		hostFact:  `a system hook whose file does not say hooksConfig.enabled: true is switched off by a project's {"hooksConfig":{"enabled":false}}`,
		sc: installed(both(scenario{Project: hooksOff}), func(t *testing.T) map[string]any {
			return installedSettings(t, `"hooksConfig":{"enabled":true},`, "")
		}, 0, "hook.disabled"),
		check: backstopped,
	}, {
		// A system settings file its group can write: doctor fails it,
		// and the client skips the file, hook and all: the writer starts.
		name:      "group-writable-settings",
		needsRoot: true,
		hostFact:  "Gemini CLI skips a system settings file its group or others can write, with a security warning",
		sc:        installed(both(scenario{}), nil, 0o664, "hook.absent"),
		check:     all(starts("spawn_writer", "writer"), starts("spawn_reader", "reader")),
	}, {
		// A timeout not above spawngate's own --timeout: doctor fails it.
		name:      "timeout-not-above-spawngate",
		needsRoot: true,
		sc: installed(both(scenario{}), func(t *testing.T) map[string]any {
			return installedSettings(t, `"timeout":30000`, `"timeout":20000`)
		}, 0, "hook.timeout"),
		check: refusedWriter,
	}}
}

// refusedInstalled: under the installation (no recording wrapper) the
// spawn callID came back as spawngate's refusal of name, and name's child
// never reached the model.
func refusedInstalled(callID, name string) check {
	return func(t *testing.T, o *outcome) error {
		if o.Mentions(name) {
			return fmt.Errorf("the refused %s child reached the model", name)
		}
		want := blocked("spawngate refused this sub-agent: " + name + " (")
		if r := o.Result(callID); !strings.HasPrefix(r, want) {
			return fmt.Errorf("%s's result is %q, want spawngate's refusal (%q...)", callID, r, want)
		}
		return nil
	}
}

// needDoctor stops the test when the spawngate under test has no doctor
// for Gemini CLI, or none that writes its backstop: a failure, since the
// suite tests them.
func needDoctor(t *testing.T) {
	t.Helper()
	suite.NeedHook(t, spawngateBin, "gemini")
	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	defer cancel()
	out, _ := exec.CommandContext(ctx, spawngateBin, "doctor", "-h").CombinedOutput()
	if !bytes.Contains(out, []byte("gemini")) || !bytes.Contains(out, []byte("--write-backstop")) {
		t.Fatalf("spawngate has no `doctor gemini --write-backstop`: %s", suite.Trim(string(out), 300))
	}
}
