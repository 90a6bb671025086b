package judge_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spawngate/spawngate/internal/document"
	"github.com/spawngate/spawngate/internal/judge"
)

const noHTTPTests = `package spawngate.checks.no_http_test

import data.spawngate.checks.no_http

test_fetching_denied if {
	count(no_http.deny) == 1 with input as {"policies": {}, "children": [{"tools": ["http.get"]}]}
}

test_reading_allowed if {
	count(no_http.deny) == 0 with input as {"policies": {}, "children": [{"tools": ["fs.read"]}]}
}
`

func verify(t *testing.T, files map[string]string, o judge.VerifyOptions) (*judge.Verified, error) {
	t.Helper()
	dir := t.TempDir()
	write(t, dir, files)
	for i, d := range o.Dirs {
		o.Dirs[i] = filepath.Join(dir, d)
	}
	o.Limits = document.DefaultLimits
	return judge.Verify(context.Background(), o)
}

func outcomes(v *judge.Verified) string {
	var out []string
	for _, t := range v.Tests {
		out = append(out, t.Name+"="+t.Outcome)
	}
	return strings.Join(out, " ")
}

func TestVerifyPassingTests(t *testing.T) {
	v, err := verify(t, map[string]string{"c/no_http.rego": noHTTP, "c/no_http_test.rego": noHTTPTests}, judge.VerifyOptions{Dirs: []string{"c"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := outcomes(v); got != "test_fetching_denied=pass test_reading_allowed=pass" || !v.Passed() {
		t.Fatalf("outcomes %q", got)
	}
	if v.Tests[0].Package != "spawngate.checks.no_http_test" || v.Tests[0].Line != 5 || !strings.HasSuffix(v.Tests[0].File, "no_http_test.rego") {
		t.Fatalf("test %+v", v.Tests[0])
	}
	c := v.Coverage
	if len(c.Files) != 1 || !strings.HasSuffix(c.Files[0].File, "no_http.rego") || c.Percent != 100 || c.NotCovered != 0 || c.Covered == 0 {
		t.Fatalf("coverage %+v", c)
	}
}

// A failing test, one that errors, and one that is skipped; the coverage
// names the lines no test reached.
func TestVerifyFailingTests(t *testing.T) {
	tests := noHTTPTests + `
test_everything_denied if {
	count(no_http.deny) == 1 with input as {"policies": {}, "children": [{"tools": ["fs.read"]}]}
}

test_cases_denied[note] if {
	some note, tools in {"http": ["http.get"], "fs": ["fs.read"]}
	count(no_http.deny) == 1 with input as {"policies": {}, "children": [{"tools": tools}]}
}

test_a_builtin_error if {
	to_number("x") == 1
}

todo_test_later if {
	false
}
`
	check := noHTTP + `
deny contains lib.violation(i, "/role", "never reached") if {
	some i, child in lib.children
	child.role == "nobody-tests-this"
}
`
	v, err := verify(t, map[string]string{"c/no_http.rego": check, "c/no_http_test.rego": tests}, judge.VerifyOptions{Dirs: []string{"c"}})
	if err != nil {
		t.Fatal(err)
	}
	want := "test_fetching_denied=pass test_reading_allowed=pass test_everything_denied=fail test_cases_denied=fail test_a_builtin_error=error todo_test_later=skip"
	if got := outcomes(v); got != want || v.Passed() {
		t.Fatalf("outcomes %q, want %q", got, want)
	}
	if failed := v.Tests[3].Failed; strings.Join(failed, ",") != "fs" {
		t.Fatalf("failed cases %v", failed)
	}
	if e := v.Tests[4].Error; !strings.Contains(e, "to_number") {
		t.Fatalf("error %q", e)
	}
	c := v.Coverage.Files[0]
	if c.Percent >= 100 || len(c.NotCoveredLines) != 1 || c.NotCoveredLines[0] != [2]int{16, 16} {
		t.Fatalf("coverage %+v", c)
	}
}

// A test module that does not compile, or is in the package of the check
// it tests, and a check that breaks the contract, are errors naming the
// file and line; no test at all is no verified check.
func TestVerifyErrors(t *testing.T) {
	for _, tt := range []struct {
		name  string
		files map[string]string
		file  string
		line  int
		want  string
	}{
		{"a test that does not parse", map[string]string{"c/no_http.rego": noHTTP, "c/no_http_test.rego": "package spawngate.checks.no_http_test\n\ntest_x if {\n"},
			"c/no_http_test.rego", 4, "does not parse: unexpected eof token"},
		{"a test that does not compile", map[string]string{"c/no_http.rego": noHTTP, "c/no_http_test.rego": "package spawngate.checks.no_http_test\n\ntest_x if {\n\tundefined_thing(1)\n}\n"},
			"c/no_http_test.rego", 4, "undefined function undefined_thing"},
		{"a test in the check's package", map[string]string{"c/no_http.rego": noHTTP, "c/no_http_test.rego": "package spawngate.checks.no_http\n\ntest_x if true\n"},
			"c/no_http_test.rego", 1, "is the package of a module it tests"},
		{"a test adding to spawngate.lib", map[string]string{"c/no_http.rego": noHTTP, "c/lib_test.rego": "package spawngate.lib\n\ntest_x if true\n"},
			"c/lib_test.rego", 1, "is the package of a module it tests"},
		{"a check that breaks the contract", map[string]string{"c/no_http.rego": strings.Replace(noHTTP, "#   id: org.no-http\n", "", 1), "c/no_http_test.rego": noHTTPTests},
			"c/no_http.rego", 6, "METADATA has no custom.id"},
		{"a check calling the network", map[string]string{"c/no_http.rego": noHTTP + "\nx := http.send({})\n", "c/no_http_test.rego": noHTTPTests},
			"c/no_http.rego", 16, "calls http.send"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			write(t, dir, tt.files)
			_, err := judge.Verify(context.Background(), judge.VerifyOptions{Dirs: []string{filepath.Join(dir, "c")}, Limits: document.DefaultLimits})
			var e *judge.Error
			if !errors.As(err, &e) || e.Kind != judge.Document {
				t.Fatalf("err %v, want a document error", err)
			}
			if e.Source != filepath.Join(dir, tt.file) || e.Line != tt.line || !strings.Contains(e.Msg, tt.want) {
				t.Fatalf("error %q, want %s:%d and %q", e, tt.file, tt.line, tt.want)
			}
		})
	}
	v, err := verify(t, map[string]string{"c/no_http.rego": noHTTP}, judge.VerifyOptions{Dirs: []string{"c"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(v.Tests) != 0 || v.Passed() {
		t.Fatalf("with no test: %s, passed %v", v, v.Passed())
	}
}

// --builtin runs the built-in checks' tests, and covers their modules.
func TestVerifyBuiltin(t *testing.T) {
	if testing.Short() {
		// Four hundred Rego tests on one goroutine per test: under the race
		// detector (which .ci/run runs with -short) they take minutes and
		// find nothing that go test ./... without it does not.
		t.Skip("the built-in checks' whole test suite: run without -short")
	}
	v, err := judge.Verify(context.Background(), judge.VerifyOptions{Builtin: true, Limits: document.DefaultLimits})
	if err != nil {
		t.Fatal(err)
	}
	if !v.Passed() || len(v.Tests) < 50 {
		t.Fatalf("%s", v)
	}
	covered := false
	for _, f := range v.Coverage.Files {
		if f.File == "lib.rego" && f.Covered > 0 {
			covered = true
		}
	}
	if !covered {
		t.Fatalf("coverage %+v", v.Coverage)
	}
}

// verify --bundle runs the tests a bundle carries, against its checks.
func TestVerifyBundle(t *testing.T) {
	name := writeBundle(t, t.TempDir(), testBundle(t, operatorPolicy()), "", "")
	v, err := judge.Verify(context.Background(), judge.VerifyOptions{Bundle: name, Limits: document.DefaultLimits})
	if err != nil {
		t.Fatal(err)
	}
	if got := outcomes(v); got != "test_fetching_denied=pass" || len(v.Modules) != 1 || v.Modules[0] != name+"/checks/no_http.rego" {
		t.Fatalf("outcomes %q, modules %v", got, v.Modules)
	}
}
