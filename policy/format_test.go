package policy_test

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/format"
)

// TestRegoIsFormatted holds every .rego file of the repository (the
// built-in checks, the examples, the benchmarks' modules) to the form
// `opa fmt` gives it, with the formatter of the OPA version in go.mod: a
// reviewer reads one layout, and a diff shows only what changed. It is
// what `opa fmt --list` over the tree says, without installing opa.
func TestRegoIsFormatted(t *testing.T) {
	root := filepath.Join("..")
	checked := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "node_modules") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".rego") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		checked++
		got, err := format.SourceWithOpts(path, src, format.Opts{RegoVersion: ast.RegoV1})
		if err != nil {
			t.Errorf("%s: %v", path, err)
			return nil
		}
		if !bytes.Equal(got, src) {
			t.Errorf("%s is not formatted: run opa fmt -w %s", path, path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 50 {
		t.Fatalf("only %d .rego files found under %s", checked, root)
	}
}
