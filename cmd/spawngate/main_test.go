package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
)

var update = flag.Bool("update", false, "rewrite the expected output in testdata/script/*.txtar")

// TestMain lets the test binary act as the spawngate command inside the
// scripts: each 'exec spawngate' is a real process with a real exit code.
func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){"spawngate": main})
}

// TestScripts runs the end-to-end transcripts in testdata/script. Each
// script starts in a fresh directory holding a copy of examples/, so the
// commands in it are the ones the README shows, and ws-policy.yaml.
func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir:                 filepath.Join("..", "..", "testdata", "script"),
		UpdateScripts:       *update,
		RequireExplicitExec: true,
		RequireUniqueNames:  true,
		Setup: func(env *testscript.Env) error {
			// ws-policy.yaml has this script's own $WORK/ws as its root, for
			// scripts that build a real tree (testscript cannot template a file).
			policy := "allowed_tools: [fs.read]\nworkspace_root: " + filepath.Join(env.WorkDir, "ws") + "\nbudget_cap_tokens: 100000\n"
			if err := os.WriteFile(filepath.Join(env.WorkDir, "ws-policy.yaml"), []byte(policy), 0o644); err != nil {
				return err
			}
			// $OWNER is the user the scripts' files belong to, for doctor's
			// --owner: root in CI, the developer elsewhere.
			env.Setenv("OWNER", strconv.Itoa(os.Geteuid()))
			return os.CopyFS(filepath.Join(env.WorkDir, "examples"), os.DirFS(filepath.Join("..", "..", "examples")))
		},
		Cmds: map[string]func(*testscript.TestScript, bool, []string){"exits": exits},
		// [root]: the scripts run as root, who owns every file they write.
		Condition: func(cond string) (bool, error) {
			if cond == "root" {
				return os.Geteuid() == 0, nil
			}
			return false, fmt.Errorf("unknown condition %q", cond)
		},
	})
}

// exits runs a command and asserts its exact exit code, which testscript's
// own "! exec" cannot: 1 (refused) and 2 (could not evaluate) must never
// pass for each other. Usage: exits CODE COMMAND [ARGS...]. Like exec, it
// keeps stdout and stderr for cmp and stdout/stderr checks.
func exits(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: exits CODE COMMAND [ARGS...]")
	}
	want, err := strconv.Atoi(args[0])
	if err != nil {
		ts.Fatalf("exits: bad code %q", args[0])
	}
	got := 0
	if err := ts.Exec(args[1], args[2:]...); err != nil {
		var exit *exec.ExitError
		if !errors.As(err, &exit) {
			ts.Fatalf("exits: %v", err)
		}
		got = exit.ExitCode()
	}
	if got != want {
		ts.Fatalf("%s exited %d, want %d", args[1], got, want)
	}
}
