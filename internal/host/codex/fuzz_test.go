package codex

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
	"github.com/spawngate/spawngate/internal/mutate"
	"github.com/spawngate/spawngate/internal/plan"
)

// The fuzz target reads any bytes as a Codex definition and holds the
// reader to the invariants the rest of the package, and the hook, rely on:
//
//   - Reading never panics, and gives a *agent.Definition of the file,
//     with a non-nil Lines; ReadCodex never skips a file.
//   - Every definition is broken (Err != nil: resolve refuses the spawn of
//     its Name, or of any type while Name is "") or usable (Err == nil:
//     Fields is not nil, Name is the non-empty string Fields["name"] and
//     the description a string).
//   - Fields is nil exactly when the TOML did not parse, and then no line
//     is known either.
//   - Err names the file; ParseProblem is one line.
//   - Fields is JSON-shaped (maps, lists, strings, booleans, null and
//     json.Number holding a valid JSON number); every line in Lines and
//     Err lies in the file.
//   - Translating a spawn of what was read (as the definition when it is
//     usable, or as no definition with the reason as the problem, and, to
//     be robust, as the definition whatever its state) gives Plan() bytes
//     that are the same on every call, that the gate's strict loader reads
//     into one child without a document error (a limit error is fine: it
//     never passes), and whose facts say what the definition and the call
//     say.

func FuzzReadCodex(f *testing.F) {
	for _, seed := range codexSeeds() {
		f.Add(seed)
	}
	f.Fuzz(readProperty(f))
}

// TestFuzzReadCodexShort runs FuzzReadCodex's property over inputs mutated
// from its seeds.
func TestFuzzReadCodexShort(t *testing.T) {
	check := readProperty(t)
	for _, in := range mutate.Bytes(codexSeeds(), 4000, 1) {
		check(t, in)
	}
}

func codexSeeds() [][]byte {
	var seeds [][]byte
	for _, tc := range codexCases {
		seeds = append(seeds, []byte(tc.data))
	}
	for _, tc := range translateCases {
		if tc.def != "" {
			seeds = append(seeds, []byte(tc.def))
		}
	}
	seeds = append(seeds, exampleSeeds()...)
	return append(seeds,
		[]byte(codexTOML("sandbox_mode = \"read-only\"\nbudget_tokens = 1\nmodel = \"m\"\n[mcp_servers.a]\ncommand = \"a\"\n[mcp_servers.b.env]\nX = 1\n")),
		[]byte(codexTOML("mcp_servers = { a = { command = \"a\" }, b = 5 }\nsandbox_mode = [\"read-only\"]\nx = 1979-05-27T07:32:00Z\n")),
	)
}

// exampleSeeds reads the example's definitions.
func exampleSeeds() [][]byte {
	files, _ := filepath.Glob(filepath.Join("..", "..", "..", "examples", "codex", Folder, "*.toml"))
	var seeds [][]byte
	for _, f := range files {
		if data, err := os.ReadFile(f); err == nil {
			seeds = append(seeds, data)
		}
	}
	return seeds
}

func readProperty(tb testing.TB) func(t *testing.T, data []byte) {
	loader, err := plan.NewLoader(plan.DefaultLimits)
	if err != nil {
		tb.Fatal(err)
	}
	file := "/repo/" + filepath.ToSlash(Folder) + "/agent.toml"
	return func(t *testing.T, data []byte) {
		d := ReadCodex(file, data)
		if err := checkDefinition(d, file, data); err != nil {
			t.Fatalf("%v\ninput %q\nread  %+v", err, data, d)
		}
		usable := d.Err == nil
		why := d.ParseProblem()
		lineCount := bytes.Count(data, []byte("\n")) + 1
		for _, c := range []call{
			{Call: agent.Call{Host: Name, Type: d.Name, Paths: []string{"/repo"}, Budget: "1000"}},
			{Call: agent.Call{Host: Name, Type: DefaultType, Paths: []string{"/repo"}, Brief: "b", ID: "id", Caller: "lead"}, SessionMode: "bypassPermissions", Model: "call-model"},
		} {
			if c.Type == "" {
				c.Type = DefaultType // as the adapter asks for a type
			}
			if usable {
				tr := translate(c, d, "")
				if err := checkTranslation(loader, tr, c, d, lineCount); err != nil {
					t.Fatalf("%v\ninput %q\nplan  %s", err, data, tr.Plan())
				}
			} else {
				tr := translate(c, nil, why)
				if err := checkTranslation(loader, tr, c, nil, lineCount); err != nil {
					t.Fatalf("%v\ninput %q\nplan  %s", err, data, tr.Plan())
				}
				if tr.Child["agent"].(map[string]any)["problem"] != why {
					t.Fatalf("problem fact %v, want %q", tr.Child["agent"], why)
				}
				// translate is only ever given a usable definition, but
				// nothing read makes it fail.
				tr = translate(c, d, "")
				if _, err := loadTranslation(loader, tr); err != nil {
					t.Fatalf("%v\ninput %q\nplan  %s", err, data, tr.Plan())
				}
			}
		}
	}
}

// checkDefinition checks the invariants of a definition read from data.
func checkDefinition(d *agent.Definition, file string, data []byte) error {
	switch {
	case d == nil:
		return errors.New("nil definition")
	case d.File != file:
		return fmt.Errorf("File = %q", d.File)
	case d.Lines == nil:
		return errors.New("nil Lines")
	case d.Skipped != "":
		return fmt.Errorf("a Codex definition skipped: %s", d.Skipped)
	case d.Err != nil && d.Err.Source != file:
		return fmt.Errorf("Err.Source = %q", d.Err.Source)
	case d.Err != nil && (d.ParseProblem() == "" || strings.ContainsAny(d.ParseProblem(), "\r\n")):
		return fmt.Errorf("ParseProblem() = %q", d.ParseProblem())
	case d.Fields == nil && d.Err == nil:
		return errors.New("no fields and no error")
	case d.Fields == nil && len(d.Lines) > 0:
		return fmt.Errorf("lines %v of a file that does not parse", d.Lines)
	}
	if d.Err == nil {
		name, _ := d.Fields["name"].(string)
		_, isString := d.Fields["description"].(string)
		switch {
		case d.Name == "" || d.Name != name:
			return fmt.Errorf("a usable definition named %q, with the name field %v", d.Name, d.Fields["name"])
		case !isString:
			return fmt.Errorf("a usable definition with the description %v", d.Fields["description"])
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
			return fmt.Errorf("Lines[%q] = %d in a file of %d lines", k, line, lineCount)
		}
	}
	if d.Err != nil && (d.Err.Line < 0 || d.Err.Line > lineCount) {
		return fmt.Errorf("error at line %d in a file of %d lines: %v", d.Err.Line, lineCount, d.Err)
	}
	return nil
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

// loadTranslation has the gate's loader read a translation's plan, and
// says whether it stopped at a limit.
func loadTranslation(loader *plan.Loader, tr agent.Translation) (limited bool, err error) {
	b := tr.Plan()
	if again := tr.Plan(); !bytes.Equal(b, again) {
		return false, errors.New("Plan() gives other bytes on a second call")
	}
	p, err := loader.Plan(context.Background(), "spawn.json", b)
	var pe *plan.Error
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

// checkTranslation checks a translation of a spawn of def (nil for none).
func checkTranslation(loader *plan.Loader, tr agent.Translation, c call, def *agent.Definition, lineCount int) error {
	if _, err := loadTranslation(loader, tr); err != nil {
		return err
	}
	facts, ok := tr.Child["agent"].(map[string]any)
	if !ok {
		return fmt.Errorf("agent block %v", tr.Child["agent"])
	}
	mode, _ := facts["permission_mode"].(string)
	switch {
	case facts["host"] != Name || facts["type"] != c.Type:
		return fmt.Errorf("facts host, type = %v, %v", facts["host"], facts["type"])
	case mode == "":
		return fmt.Errorf("permission_mode %v", facts["permission_mode"])
	case c.SessionMode == "bypassPermissions" && mode != "bypassPermissions":
		return fmt.Errorf("a session bypassing permissions, a child in %q", mode)
	case defModel(def) != "" && tr.Child["model"] != defModel(def):
		return fmt.Errorf("model %v, the definition's %q", tr.Child["model"], defModel(def))
	case defModel(def) == "" && c.Model != "" && c.Model != "inherit" && tr.Child["model"] != c.Model:
		return fmt.Errorf("model %v, called for %q", tr.Child["model"], c.Model)
	case c.Caller != "" && facts["caller"] != c.Caller:
		return fmt.Errorf("caller %v", facts["caller"])
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
		return nil
	}
	if facts["definition"] != def.File || tr.File != def.File || tr.Child["role"] != def.Name {
		return fmt.Errorf("facts definition %v, File %q, role %v", facts["definition"], tr.File, tr.Child["role"])
	}
	if _, set := facts["sandbox_mode"]; !set {
		return fmt.Errorf("a Codex child without a sandbox fact: %v", tr.Child)
	}
	if _, listed := tr.Child["tools"].([]any); !listed {
		return fmt.Errorf("a Codex child without a tools list: %v", tr.Child)
	}
	return nil
}

// defModel is the model a definition names, which wins over the call's.
func defModel(def *agent.Definition) string {
	if def == nil {
		return ""
	}
	m, _ := def.Fields["model"].(string)
	return m
}
