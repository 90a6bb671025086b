package hosttest

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spawngate/spawngate/internal/host"
	"github.com/spawngate/spawngate/internal/host/doctor"
)

// Install lays out a machine with spawngate installed under a fresh base
// folder (NewInstallation) and writes files there (Fill); it returns the
// base.
func Install(t testing.TB, files map[string]string) string {
	t.Helper()
	base := NewInstallation(t)
	Fill(t, base, files)
	return base
}

// NewInstallation lays out a machine with spawngate installed under a
// fresh base folder, and returns the base: the machine-wide files under
// root, the user's home, a project proj, an executable bin/spawngate and a
// policy.yaml beside bin.
func NewInstallation(t testing.TB) string {
	t.Helper()
	base := t.TempDir()
	WriteTree(t, base, map[string]string{"root/": "", "home/": "", "proj/": "", "policy.yaml": "allowed_tools: [Read]\n"})
	if err := os.MkdirAll(filepath.Join(base, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(base, "bin", "spawngate"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	// A doctor looks for the absolute paths a hook names under root, as
	// the host would find them on the machine root stands in for: base
	// is mounted there at its own path, so that {{BIN}} and {{POLICY}}
	// name the same files under root as on this machine.
	mount := filepath.Join(base, "root", base)
	if err := os.MkdirAll(filepath.Dir(mount), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(base, mount); err != nil {
		t.Fatal(err)
	}
	return base
}

// Fill writes files (named and written as WriteTree takes them) into the
// installation at base, with {{BIN}}, {{POLICY}}, {{BASE}} and
// {{PROJECT}} filled in, and each pair old, new of more replaced too.
func Fill(t testing.TB, base string, files map[string]string, more ...string) {
	t.Helper()
	r := strings.NewReplacer(append([]string{
		"{{BIN}}", filepath.Join(base, "bin", "spawngate"), "{{POLICY}}", filepath.Join(base, "policy.yaml"),
		"{{BASE}}", base, "{{PROJECT}}", filepath.Join(base, "proj"),
	}, more...)...)
	filled := make(map[string]string, len(files))
	for name, text := range files {
		filled[name] = r.Replace(text)
	}
	WriteTree(t, base, filled)
}

// DoctorOptions are the options a host's doctor reads the installation
// at base with (Install's): the project proj, the home, the machine's
// files under root, the hook's command line read by ReadHook, and Owners.
func DoctorOptions(base, hostName string) doctor.Options {
	return doctor.Options{
		Project: filepath.Join(base, "proj"), Home: filepath.Join(base, "home"), Root: filepath.Join(base, "root"),
		ReadHook: ReadHook(hostName), Owners: Owners,
	}
}

// Owners stand the test's own user in for root, the owner doctor
// otherwise asks of the binary and the policy, so that the tests hold
// whoever runs them.
var Owners = &host.Owners{Trusted: []int{0, os.Geteuid()}, Session: -1}

// ReadHook stands in for the front end's reader of a spawngate hook
// command line (doctor.Options.ReadHook): it reads --policy and --timeout
// as the hook's flags do, and fails as the hook would when the policy
// cannot be read, or when the command names another host than hostName.
func ReadHook(hostName string) func(ctx context.Context, host string, args []string, dir string) (doctor.HookLine, error) {
	return func(_ context.Context, asked string, args []string, dir string) (doctor.HookLine, error) {
		if asked != hostName {
			return doctor.HookLine{}, fmt.Errorf("asked for host %q", asked)
		}
		fs := flag.NewFlagSet("hook", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		policy := fs.String("policy", "", "")
		timeout := fs.Duration("timeout", 30*time.Second, "")
		if err := fs.Parse(args); err != nil {
			return doctor.HookLine{}, err
		}
		if fs.NArg() > 0 {
			return doctor.HookLine{}, fmt.Errorf("hook takes no arguments (got %q)", fs.Arg(0))
		}
		line := doctor.HookLine{Timeout: *timeout, Policy: *policy}
		p := *policy
		if !filepath.IsAbs(p) {
			p = filepath.Join(dir, p)
		}
		if _, err := os.Stat(p); err != nil {
			return line, fmt.Errorf("--policy %s: cannot read", p)
		}
		line.Files = []string{p}
		return line, nil
	}
}
