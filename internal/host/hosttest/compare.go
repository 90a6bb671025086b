package hosttest

import (
	"bytes"
	"encoding/json"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/spawngate/spawngate/internal/agent"
	"github.com/spawngate/spawngate/internal/document"
	"github.com/spawngate/spawngate/internal/plan"
)

// Canonical is a JSON-shaped value's JSON, keys in order.
func Canonical(t testing.TB, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("not JSON: %v: %#v", err, v)
	}
	return string(b)
}

// CanonicalJSON is a JSON text with keys in order and numbers as written.
func CanonicalJSON(t testing.TB, text string) string {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader([]byte(text)))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("bad JSON in the test: %v: %s", err, text)
	}
	return Canonical(t, v)
}

// Fields compares a definition's fields with the JSON of the ones wanted
// ("" for none).
func Fields(t testing.TB, got map[string]any, want string) {
	t.Helper()
	if want == "" {
		if got != nil {
			t.Errorf("Fields = %#v, want nil", got)
		}
		return
	}
	if got == nil {
		t.Errorf("Fields = nil, want %s", want)
		return
	}
	if g, w := Canonical(t, got), CanonicalJSON(t, want); g != w {
		t.Errorf("Fields = %s\nwant     %s", g, w)
	}
}

// Lines compares a definition's lines with the ones wanted (nil for
// none).
func Lines(t testing.TB, got, want map[string]int) {
	t.Helper()
	if want == nil {
		want = map[string]int{}
	}
	if !maps.Equal(got, want) {
		t.Errorf("Lines = %v\nwant    %v", got, want)
	}
}

// WantDefinition is what a reader must read from a file, as a host's
// reader table writes it.
type WantDefinition struct {
	// File is the file read.
	File string
	Name string
	// Skipped is a part of Skipped; "" for a file the host does not skip.
	Skipped string
	// Problem is ParseProblem(), exactly; "" for none.
	Problem string
	// Fields are the fields as JSON; "" for nil.
	Fields string
	Lines  map[string]int
}

// Definition holds a definition read to the one wanted.
func Definition(t testing.TB, d *agent.Definition, want WantDefinition) {
	t.Helper()
	if d.File != want.File || d.Lines == nil {
		t.Errorf("File, Lines = %q, %v; want %q and lines", d.File, d.Lines, want.File)
	}
	if d.Name != want.Name {
		t.Errorf("Name = %q, want %q", d.Name, want.Name)
	}
	if want.Skipped == "" && d.Skipped != "" || !strings.Contains(d.Skipped, want.Skipped) {
		t.Errorf("Skipped = %q, want one with %q", d.Skipped, want.Skipped)
	}
	if got := d.ParseProblem(); got != want.Problem {
		t.Errorf("ParseProblem() = %q, want %q", got, want.Problem)
	}
	if d.Err != nil && d.Err.Source != want.File {
		t.Errorf("Err.Source = %q", d.Err.Source)
	}
	Fields(t, d.Fields, want.Fields)
	Lines(t, d.Lines, want.Lines)
}

// Examples holds the definitions the examples give a host (its
// examples/<host>/<folder>, loaded as the host loads a folder) to what
// they are there to show: at least five, each named as its file is (up to
// its first dot) and read without a problem, but the one file broken,
// which is there to be refused.
func Examples(t testing.TB, defs []*agent.Definition, broken string) {
	t.Helper()
	if len(defs) < 5 {
		t.Fatalf("%d example definitions", len(defs))
	}
	for _, d := range defs {
		base := filepath.Base(d.File)
		if (d.Err != nil) != (base == broken) || d.Skipped != "" || d.Name == "" {
			t.Errorf("%s: Name %q, Err %v, Skipped %q", d.File, d.Name, d.Err, d.Skipped)
		}
		if name, _, _ := strings.Cut(base, "."); d.Name != name {
			t.Errorf("%s: Name %q", d.File, d.Name)
		}
	}
}

// WantResolved is what resolving a name in a tree of folders must give,
// as a host's resolve table writes it.
type WantResolved struct {
	// File is the file of the definition found, relative to the tree
	// and slash-separated; "" when none is.
	File string
	// Problem is why none is found, with {a} and {b} for the tree's
	// folders a and b; one ending in ": " is the start of the problem.
	Problem string
}

// Resolved holds what a host's resolve gave in the tree at root (the
// definition found, or the problem) to what was wanted.
func Resolved(t testing.TB, root string, def *agent.Definition, problem string, want WantResolved) {
	t.Helper()
	wantProblem := strings.NewReplacer("{a}", filepath.Join(root, "a"), "{b}", filepath.Join(root, "b")).Replace(want.Problem)
	switch {
	case want.File != "":
		if def == nil || def.File != filepath.Join(root, filepath.FromSlash(want.File)) || problem != "" {
			t.Fatalf("resolve = %v, %q; want %s", def, problem, want.File)
		}
		if def.Err != nil || def.Skipped != "" {
			t.Errorf("resolved to a definition with Err %v, Skipped %q", def.Err, def.Skipped)
		}
	case def != nil:
		t.Fatalf("resolve found %s, want the problem %q", def.File, wantProblem)
	case strings.HasSuffix(wantProblem, ": ") && strings.HasPrefix(problem, wantProblem):
	case problem != wantProblem:
		t.Errorf("problem = %q\nwant      %q", problem, wantProblem)
	}
}

// TableCall is the call of a host's translation table, filled in: the
// host, the paths ["/w"] unless set, and the budget 5000 unless set ("-"
// for none).
func TableCall(c agent.Call, host string) agent.Call {
	c.Host = host
	if c.Paths == nil {
		c.Paths = []string{"/w"}
	}
	switch c.Budget {
	case "":
		c.Budget = "5000"
	case "-":
		c.Budget = ""
	}
	return c
}

// WantChild is the child a translation must give, as a host's
// translation table writes it.
type WantChild struct {
	// File is the definition file, "" when none applies.
	File string
	// Child is the child as JSON; {F} stands for File.
	Child string
	// Lines are lines LineOf must give, by pointer.
	Lines map[string]int
	// Issues are the fields of the child the schema refuses, in order.
	Issues []string
}

var (
	loaderOnce sync.Once
	loader     *plan.Loader
	loaderErr  error
)

// Translated holds a translation to the child wanted: its JSON, its file,
// its lines (all 0 without a definition), and a plan the gate's loader
// reads into one child with exactly the schema issues wanted.
func Translated(t testing.TB, tr agent.Translation, want WantChild) {
	t.Helper()
	w := CanonicalJSON(t, strings.ReplaceAll(want.Child, "{F}", want.File))
	if got := Canonical(t, tr.Child); got != w {
		t.Errorf("child = %s\nwant    %s", got, w)
	}
	if tr.File != want.File {
		t.Errorf("File = %q, want %q", tr.File, want.File)
	}
	for pointer, line := range want.Lines {
		if got := tr.LineOf(pointer); got != line {
			t.Errorf("LineOf(%q) = %d, want %d", pointer, got, line)
		}
	}
	if want.File == "" {
		for pointer, line := range tr.Lines {
			if line != 0 {
				t.Errorf("without a definition, Lines[%q] = %d", pointer, line)
			}
		}
	}
	loaderOnce.Do(func() { loader, loaderErr = plan.NewLoader(document.DefaultLimits) })
	if loaderErr != nil {
		t.Fatal(loaderErr)
	}
	p, err := loader.Plan(t.Context(), "spawn.json", tr.Plan())
	if err != nil {
		t.Fatalf("the loader refuses the plan: %v\n%s", err, tr.Plan())
	}
	if len(p.Children) != 1 {
		t.Fatalf("%d children", len(p.Children))
	}
	var fields []string
	for _, is := range p.SchemaViolations() {
		fields = append(fields, is.Field)
	}
	if !slices.Equal(fields, want.Issues) {
		t.Errorf("schema issues at %q, want %q: %v", fields, want.Issues, p.SchemaViolations())
	}
}
