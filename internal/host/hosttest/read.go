package hosttest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spawngate/spawngate/internal/agent"
	"github.com/spawngate/spawngate/internal/document"
	"github.com/spawngate/spawngate/internal/mutate"
	"github.com/spawngate/spawngate/internal/plan"
)

// Reading is a host's agent definition reader, and what its fuzz target
// holds it to. The kit checks what the rest of the gate relies on of any
// host's reader (ReadProperty); the host adds its own invariants in
// Definition and in each Spawn's Check.
type Reading struct {
	// Host is the host's name, which every child's facts carry.
	Host string
	// File is the path every input is read as: a definition in the
	// host's folder ("/repo/.claude/agents/agent.md").
	File string
	// Read reads data as the definition in file. It must not panic.
	Read func(file string, data []byte) *agent.Definition
	// NameField is the setting a usable definition takes its Name from
	// ("name"); "" for a host that names a definition otherwise.
	NameField string
	// Definition holds a definition to what the host itself promises of
	// one (when it skips a file, which settings it needs), beside the
	// kit's checks; nil for nothing more.
	Definition func(d *agent.Definition, data []byte) error
	// DefaultType is the type the host's adapter asks for when a spawn
	// names none.
	DefaultType string
	// Spawns are the spawns of what was read to translate: at least one
	// of typ, the type the host's adapter asks for to spawn what was read
	// (its Name, or DefaultType when it has none), and one with everything
	// a call can carry (a brief, an id, a caller, a session's modes).
	Spawns func(typ string) []Spawn
}

// Spawn is one spawn the property translates, for each input, as a spawn
// of what was read.
type Spawn struct {
	// Call is what the child's facts must say of the call: its Type and
	// its Caller (when set).
	Call agent.Call
	// Translate is the host's translation of this spawn of def, or, with
	// def nil, of a spawn no definition applies to, for problem.
	Translate func(def *agent.Definition, problem string) agent.Translation
	// Check holds a translation to the host's own facts (permission
	// mode, model, tools), def nil when no definition applies; nil for
	// nothing more. The kit has checked the facts every host shares.
	Check func(tr agent.Translation, def *agent.Definition) error
}

// The invariants ReadProperty holds every host's reader to:
//
//   - Reading never panics, and gives a *agent.Definition of the file,
//     with a non-nil Lines.
//   - A definition is skipped (Skipped != "": the host loads nothing
//     from the file), broken (Skipped == "", Err != nil: the spawn of its
//     Name, or of any type of its folder while Name is "", is refused) or
//     usable (neither: Fields is not nil, Name is not "" and, with a
//     NameField, is that setting's string).
//   - Err names the file; ParseProblem is one line; no line is known of
//     a file without Fields.
//   - Fields is JSON-shaped (maps, lists, strings, booleans, null and
//     json.Number holding a valid JSON number), so that a child built of
//     it can be encoded; every line in Lines and Err lies in the file.
//   - Translating each Spawn of what was read (as the definition when it
//     is usable, or as no definition with the reason as the problem, and,
//     to be robust, as the definition whatever its state) gives Plan()
//     bytes that are the same on every call, that the gate's strict
//     loader reads into one child without a document error, and whose
//     facts name the host, the type, the caller and the definition (or
//     the problem, and then no tools). A child with schema issues is
//     fine: those are refusals. A limit error is fine too: a definition
//     can list more tools than a child may, or nest its values deeper,
//     and the gate then stops with an error, which never passes.

// ReadProperty is the property a host's fuzz target and its short run
// check on one input; it fails t with the input and what was read.
func (r Reading) ReadProperty(tb testing.TB) func(t *testing.T, data []byte) {
	loader, err := plan.NewLoader(document.DefaultLimits)
	if err != nil {
		tb.Fatal(err)
	}
	return func(t *testing.T, data []byte) {
		if err := r.check(loader, data); err != nil {
			t.Fatal(err)
		}
	}
}

// check reads data and holds what was read, and each Spawn's
// translation, to the invariants.
func (r Reading) check(loader *plan.Loader, data []byte) error {
	d := r.Read(r.File, data)
	if err := r.checkDefinition(d, data); err != nil {
		return fmt.Errorf("%v\ninput %q\nread  %+v", err, data, d)
	}
	usable := d.Skipped == "" && d.Err == nil
	why := d.Skipped
	if why == "" {
		why = d.ParseProblem()
	}
	lineCount := bytes.Count(data, []byte("\n")) + 1
	typ := d.Name
	if typ == "" {
		typ = r.DefaultType
	}
	for _, s := range r.Spawns(typ) {
		if usable {
			tr := s.Translate(d, "")
			if err := r.checkTranslation(loader, tr, s, d, lineCount); err != nil {
				return fmt.Errorf("%v\ninput %q\nplan  %s", err, data, tr.Plan())
			}
			continue
		}
		tr := s.Translate(nil, why)
		if err := r.checkTranslation(loader, tr, s, nil, lineCount); err != nil {
			return fmt.Errorf("%v\ninput %q\nplan  %s", err, data, tr.Plan())
		}
		if tr.Child["agent"].(map[string]any)["problem"] != why {
			return fmt.Errorf("problem fact %v, want %q\ninput %q", tr.Child["agent"], why, data)
		}
		// Translate is only ever given a usable definition, but nothing
		// read makes it fail.
		tr = s.Translate(d, "")
		if _, err := loadTranslation(loader, tr); err != nil {
			return fmt.Errorf("%v\ninput %q\nplan  %s", err, data, tr.Plan())
		}
	}
	return nil
}

// Fuzz is a host's fuzz target: ReadProperty over the seeds and what the
// fuzzer makes of them (and of the corpus in the package's
// testdata/fuzz/<target>).
func (r Reading) Fuzz(f *testing.F, seeds [][]byte) {
	for _, seed := range seeds {
		f.Add(seed)
	}
	f.Fuzz(r.ReadProperty(f))
}

// Short runs ReadProperty over inputs mutated from the seeds, a few
// thousand, for the quick go test that runs no fuzzer.
func (r Reading) Short(t *testing.T, seeds [][]byte) {
	check := r.ReadProperty(t)
	for _, in := range mutate.Bytes(seeds, 4000, 1) {
		check(t, in)
	}
}

// ExampleDefinitions reads the definitions the examples give a host, to
// seed its fuzz target: the files matching pattern ("*.md") in
// examples/<host>/<folder> at the module root.
func ExampleDefinitions(tb testing.TB, host, folder, pattern string) [][]byte {
	tb.Helper()
	files, err := filepath.Glob(filepath.Join(ModuleRoot(tb), "examples", host, folder, pattern))
	if err != nil {
		tb.Fatal(err)
	}
	var seeds [][]byte
	for _, f := range files {
		if data, err := os.ReadFile(f); err == nil {
			seeds = append(seeds, data)
		}
	}
	return seeds
}

// checkDefinition checks the invariants of a definition read from data.
func (r Reading) checkDefinition(d *agent.Definition, data []byte) error {
	switch {
	case d == nil:
		return errors.New("nil definition")
	case d.File != r.File:
		return fmt.Errorf("the definition's File is %q", d.File)
	case d.Lines == nil:
		return errors.New("nil Lines")
	case d.Err != nil && d.Err.Source != r.File:
		return fmt.Errorf("Err.Source = %q", d.Err.Source)
	case d.Err != nil && (d.ParseProblem() == "" || strings.ContainsAny(d.ParseProblem(), "\r\n")):
		return fmt.Errorf("ParseProblem() = %q", d.ParseProblem())
	case d.Fields == nil && len(d.Lines) > 0:
		return fmt.Errorf("lines %v without fields", d.Lines)
	}
	if d.Skipped == "" && d.Err == nil {
		name, _ := d.Fields[r.NameField].(string)
		switch {
		case d.Fields == nil:
			return errors.New("a usable definition without fields")
		case d.Name == "":
			return errors.New("a usable definition without a name")
		case r.NameField != "" && d.Name != name:
			return fmt.Errorf("a usable definition named %q, with the %s field %v", d.Name, r.NameField, d.Fields[r.NameField])
		}
	}
	if r.Definition != nil {
		if err := r.Definition(d, data); err != nil {
			return err
		}
	}
	if d.Fields != nil {
		if err := jsonShaped(d.Fields); err != nil {
			return fmt.Errorf("Fields: %v", err)
		}
	}
	lineCount := bytes.Count(data, []byte("\n")) + 1
	for k, line := range d.Lines {
		if line < 1 || line > lineCount {
			return fmt.Errorf("the line of %q is %d in a file of %d lines", k, line, lineCount)
		}
	}
	if d.Err != nil && (d.Err.Line < 0 || d.Err.Line > lineCount) {
		return fmt.Errorf("error at line %d in a file of %d lines: %v", d.Err.Line, lineCount, d.Err)
	}
	return nil
}

// checkTranslation checks a translation of a spawn of def (nil for none).
func (r Reading) checkTranslation(loader *plan.Loader, tr agent.Translation, s Spawn, def *agent.Definition, lineCount int) error {
	if _, err := loadTranslation(loader, tr); err != nil {
		return err
	}
	facts, ok := tr.Child["agent"].(map[string]any)
	if !ok {
		return fmt.Errorf("agent block %v", tr.Child["agent"])
	}
	switch {
	case facts["host"] != r.Host || facts["type"] != s.Call.Type:
		return fmt.Errorf("facts host, type = %v, %v; want %q, %q", facts["host"], facts["type"], r.Host, s.Call.Type)
	case s.Call.Caller != "" && facts["caller"] != s.Call.Caller:
		return fmt.Errorf("caller %v, want %q", facts["caller"], s.Call.Caller)
	}
	for p := range tr.Lines {
		if line := tr.LineOf(p); line < 0 || line > lineCount {
			return fmt.Errorf("LineOf(%q) = %d in a file of %d lines", p, line, lineCount)
		}
	}
	if def == nil {
		if facts["definition"] != nil || tr.File != "" {
			return fmt.Errorf("no definition, yet the facts name %v", facts["definition"])
		}
		if _, set := tr.Child["tools"]; set {
			return fmt.Errorf("no definition, yet tools %v", tr.Child["tools"])
		}
	} else if facts["definition"] != def.File || tr.File != def.File || tr.Child["role"] != def.Name {
		return fmt.Errorf("facts definition %v, File %q, role %v", facts["definition"], tr.File, tr.Child["role"])
	}
	if s.Check != nil {
		return s.Check(tr, def)
	}
	return nil
}

// loadTranslation has the gate's loader read a translation's plan, and
// says whether it stopped at a limit.
func loadTranslation(loader *plan.Loader, tr agent.Translation) (limited bool, err error) {
	b := tr.Plan()
	if again := tr.Plan(); !bytes.Equal(b, again) {
		return false, errors.New("Plan() gives other bytes on a second call")
	}
	p, err := loader.Plan(context.Background(), "spawn.json", b)
	var pe *document.Error
	switch {
	case errors.As(err, &pe) && pe.Limit != "":
		return true, nil
	case err != nil:
		return false, fmt.Errorf("the loader refuses the plan: %v", err)
	case len(p.Children) != 1:
		return false, fmt.Errorf("%d children", len(p.Children))
	}
	return false, nil
}

// jsonShaped tells why a value is not one the gate's readers could give.
func jsonShaped(v any) error {
	switch v := v.(type) {
	case nil, bool, string:
		return nil
	case json.Number:
		if !json.Valid([]byte(v)) || strings.ContainsAny(string(v), " \t\r\n[]{}\",") {
			return fmt.Errorf("json.Number %q is not a JSON number", string(v))
		}
		return nil
	case []any:
		for _, x := range v {
			if err := jsonShaped(x); err != nil {
				return err
			}
		}
		return nil
	case map[string]any:
		for _, x := range v {
			if err := jsonShaped(x); err != nil {
				return err
			}
		}
		return nil
	}
	return fmt.Errorf("%T is not JSON-shaped", v)
}
