package judge_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/spawngate/spawngate/internal/judge"
	"github.com/spawngate/spawngate/policy"
)

// TestModulesInMemory: checks given as text judge beside the built-in
// ones, as a folder's would, and name the gate's checks digest.
func TestModulesInMemory(t *testing.T) {
	opts := judge.DefaultOptions()
	opts.NoFiles = true
	opts.Modules = []policy.Module{{Name: "./pasted.rego", Source: noHTTP}}
	g, err := judge.NewWithPolicy(context.Background(), opts, "policy.yaml", []byte(operatorYAML))
	if err != nil {
		t.Fatal(err)
	}
	res, err := g.JudgeBytes(context.Background(), "plan.json", []byte(fetchingPlan), 100)
	if err != nil {
		t.Fatal(err)
	}
	if got := rulesOf(res); got != "org.no-http" {
		t.Errorf("rules = %q, want org.no-http", got)
	}
	if src := g.Sources(); len(src.Modules) != 1 || src.ChecksDigest == judge.ChecksDigest() {
		t.Errorf("sources = %+v: the pasted module is not named, or not in the digest", src)
	}
}

// TestNoFilesReadsNoFolder: a gate that reads no files refuses a policy
// whose checks name a folder, before reading it (the folder here holds a
// module that would not compile, so reading it would say so), and
// refuses every option that reads the file system.
func TestNoFilesReadsNoFolder(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, map[string]string{"broken.rego": "package spawngate.checks.broken\nthis is not rego\n"})
	opts := judge.DefaultOptions()
	opts.NoFiles = true
	for _, pol := range []string{operatorYAML + "checks: [" + dir + "]\n", operatorYAML + "checks: [checks]\n"} {
		_, err := judge.NewWithPolicy(context.Background(), opts, "policy.yaml", []byte(pol))
		var e *judge.Error
		if !errors.As(err, &e) || e.Kind != judge.Document || e.Pointer != "/checks/0" || e.Line != 4 || !strings.Contains(e.Msg, "reads nothing from the file system") {
			t.Errorf("policy %q: err = %v, want a document error at /checks/0, line 4, saying no folder is read", pol, err)
		}
	}
	for name, set := range map[string]func(*judge.Options){
		"checks":  func(o *judge.Options) { o.Checks = []string{dir} },
		"bundle":  func(o *judge.Options) { o.Bundle = dir },
		"resolve": func(o *judge.Options) { o.ResolvePaths = true },
	} {
		o := opts
		set(&o)
		_, err := judge.NewWithPolicy(context.Background(), o, "policy.yaml", []byte(operatorYAML))
		var e *judge.Error
		if !errors.As(err, &e) || e.Kind != judge.Option {
			t.Errorf("%s: err = %v, want an option error", name, err)
		}
	}
	if _, err := judge.New(context.Background(), opts, "policy.yaml"); err == nil {
		t.Error("a gate that reads no files was built from a policy file")
	}
}
