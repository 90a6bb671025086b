package cli

import (
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/spawngate/spawngate/internal/host/claudecode"
)

// Folders of checks and of agent definitions are lists: each use adds one,
// in order. Every other flag is still given at most once.
func TestRepeatableFlags(t *testing.T) {
	opts, err := parseCheck([]string{"--checks", "a", "--checks", "b/", "--policy", "p.yaml", "plan.yaml"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(opts.gate.Checks, []string{"a", "b/"}) {
		t.Fatalf("checks %v", opts.gate.Checks)
	}
	hook, err := parseHook(claudecode.Adapter{}, []string{"--policy", "p.yaml", "--agents-dir", "x", "--agents-dir", "y"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal([]string(hook.agentDirs), []string{"x", "y"}) {
		t.Fatalf("agents dirs %v", hook.agentDirs)
	}
	for _, args := range [][]string{
		{"--bundle", "a.tar.gz", "--bundle", "b.tar.gz", "plan.yaml"},
		{"--bundle", "a.tar.gz", "--bundle-verification-key", "k", "--bundle-verification-key", "k2", "plan.yaml"},
		{"--bundle", "a.tar.gz", "--bundle-signing-alg", "RS256", "--bundle-signing-alg", "HS256", "plan.yaml"},
		{"--policy", "a.yaml", "--policy", "b.yaml", "plan.yaml"},
	} {
		if _, err := parseCheck(args, io.Discard); err == nil || !strings.Contains(err.Error(), "given more than once") {
			t.Errorf("%v: %v", args, err)
		}
	}
}

// The verification key goes into the options only with a bundle; the key
// ID and algorithm only with a key.
func TestBundleKeyFlags(t *testing.T) {
	opts, err := parseCheck([]string{"--bundle", "b.tar.gz", "--bundle-verification-key", "k.pem", "--bundle-signing-alg", "ES256", "--bundle-verification-key-id", "prod", "plan.yaml"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if k := opts.gate.BundleKey; k == nil || k.File != "k.pem" || k.Alg != "ES256" || k.ID != "prod" || opts.gate.Bundle != "b.tar.gz" {
		t.Fatalf("key %+v", k)
	}
	opts, err = parseCheck([]string{"--bundle", "b.tar.gz", "plan.yaml"}, io.Discard)
	if err != nil || opts.gate.BundleKey != nil {
		t.Fatalf("no key: %+v, %v", opts.gate.BundleKey, err)
	}
	for args, want := range map[string]string{
		"--bundle-verification-key k.pem plan.yaml":                                      "--bundle-verification-key needs --bundle",
		"--bundle b --bundle-verification-key-id prod plan.yaml":                         "need --bundle-verification-key",
		"--bundle b --bundle-verification-key k --bundle-signing-alg x plan.yaml":        `--bundle-signing-alg "x": not one of`,
		"--bundle b --bundle-verification-key k --bundle-verification-key-id= plan.yaml": "must not be empty",
	} {
		if _, err := parseCheck(strings.Fields(args), io.Discard); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", args, err, want)
		}
	}
}
