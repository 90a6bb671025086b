package claudecode

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/spawngate/spawngate/internal/agent"
	"github.com/spawngate/spawngate/internal/mutate"
	"github.com/spawngate/spawngate/internal/plan"
)

// The fuzz target reads any bytes as a definition and holds the reader to
// the invariants the rest of the package, and the hook, rely on:
//
//   - Reading never panics, and gives a *agent.Definition of the file,
//     with a non-nil Lines.
//   - Every definition is in one of three states, and resolve tells them
//     apart by Skipped and Err alone:
//     skipped (Skipped != ""): Claude Code loads nothing from the file,
//     and resolve passes it over;
//     broken (Skipped == "", Err != nil): resolve refuses the spawn of its
//     Name, or of any type while Name is "";
//     usable (Skipped == "", Err == nil): Fields is not nil, Name is the
//     non-empty string Fields["name"], without ':' or a leading '-', and
//     the description a non-empty string.
//   - Settings come only from a frontmatter the strict reader read, so
//     Fields != nil means Err == nil; a broken file that is not skipped is
//     one the host would load, so it has the Name the lenient reading
//     found (unless a "---" inside the frontmatter ends it early for the
//     host: then no name may be found, and the file refuses every type of
//     its folder); a file that does not start with "---" is skipped.
//   - Err names the file; ParseProblem is one line.
//   - Fields is JSON-shaped (maps, lists, strings, booleans, null and
//     json.Number holding a valid JSON number), so that a child built of
//     it can be encoded; every line in Lines and Err lies in the file.
//   - Translating a spawn of what was read (as the definition when it is
//     usable, or as no definition with the reason as the problem, and, to
//     be robust, as the definition whatever its state) gives Plan() bytes
//     that are the same on every call, that the gate's strict loader reads
//     into one child without a document error, and whose facts say what
//     the definition and the call say: every tool comes from the
//     definition's tools, its memory (Write, Edit), its MCP servers
//     (mcp__NAME) or its hooks (hooks). A child with schema issues is
//     fine: those are refusals. A limit error is fine too: a definition
//     can list more tools than a child may (max-child-entries), or nest
//     its values deeper, and the gate then stops with an error, which
//     never passes.

func FuzzReadClaude(f *testing.F) {
	for _, seed := range claudeSeeds() {
		f.Add(seed)
	}
	f.Fuzz(readProperty(f))
}

// TestFuzzReadClaudeShort runs FuzzReadClaude's property over inputs
// mutated from its seeds.
func TestFuzzReadClaudeShort(t *testing.T) {
	check := readProperty(t)
	for _, in := range mutate.Bytes(claudeSeeds(), 4000, 1) {
		check(t, in)
	}
}

func claudeSeeds() [][]byte {
	var seeds [][]byte
	for _, tc := range claudeCases {
		seeds = append(seeds, []byte(tc.data))
	}
	for _, tc := range translateCases {
		if tc.def != "" {
			seeds = append(seeds, []byte(tc.def))
		}
	}
	seeds = append(seeds, exampleSeeds()...)
	return append(seeds,
		[]byte(md("tools: mcp__github__get, Bash(git diff:*)\ndisallowedTools: [mcp__github, 'mcp__*', 'mcp__x__*']\npermissionMode: manual\nmodel: inherit\nbudget_tokens: 10\n")),
		[]byte(md("tools: Read\nmemory: project\nmcpServers: [github, {slack: {command: s}}, 5]\nhooks: {Stop: []}\n")),
		[]byte("---\r\nname: a\r\ndescription: d\r\ntools:\r\n  - Read\r\n---"),
	)
}

// exampleSeeds reads the example's definitions.
func exampleSeeds() [][]byte {
	files, _ := filepath.Glob(filepath.Join("..", "..", "..", "examples", "claude-code", Folder, "*.md"))
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
	file := "/repo/" + filepath.ToSlash(Folder) + "/agent.md"
	return func(t *testing.T, data []byte) {
		d := ReadClaude(context.Background(), file, data, plan.DefaultLimits)
		if err := checkDefinition(d, file, data); err != nil {
			t.Fatalf("%v\ninput %q\nread  %+v", err, data, d)
		}
		usable := d.Skipped == "" && d.Err == nil
		why := d.Skipped
		if why == "" {
			why = d.ParseProblem()
		}
		lineCount := bytes.Count(data, []byte("\n")) + 1
		for _, c := range []call{
			{Call: agent.Call{Host: Name, Type: d.Name, Paths: []string{"/repo"}, Budget: "1000"}},
			{Call: agent.Call{Host: Name, Type: DefaultType, Paths: []string{"/repo"}, Brief: "b", ID: "id", Caller: "lead"}, SessionMode: "bypassPermissions", Model: "call-model", EnvModel: "env-model", EnvForce: true},
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
	case d.Err != nil && d.Err.Source != file:
		return fmt.Errorf("Err.Source = %q", d.Err.Source)
	case d.Err != nil && (d.ParseProblem() == "" || strings.ContainsAny(d.ParseProblem(), "\r\n")):
		return fmt.Errorf("ParseProblem() = %q", d.ParseProblem())
	}
	usable := d.Skipped == "" && d.Err == nil
	if usable {
		name, _ := d.Fields["name"].(string)
		desc, isString := d.Fields["description"].(string)
		switch {
		case d.Fields == nil:
			return errors.New("a usable definition without fields")
		case d.Name == "" || d.Name != name:
			return fmt.Errorf("a usable definition named %q, with the name field %v", d.Name, d.Fields["name"])
		case !isString:
			return fmt.Errorf("a usable definition with the description %v", d.Fields["description"])
		case desc == "" || strings.Contains(name, ":") || strings.HasPrefix(name, "-"):
			return fmt.Errorf("Claude Code would skip the definition named %q, described %q", name, desc)
		}
	}
	starts := bytes.HasPrefix(data, []byte("---\n")) || bytes.HasPrefix(data, []byte("---\r\n"))
	earlyEnd := strings.Contains(d.ParseProblem(), `a "---" inside the frontmatter ends it early`)
	switch {
	case d.Fields != nil && d.Err != nil:
		return fmt.Errorf("fields of a frontmatter that does not parse: %v", d.Err)
	case d.Err != nil && d.Skipped == "" && d.Name == "" && !earlyEnd:
		return fmt.Errorf("broken, not skipped, and unnamed: %v", d.Err)
	case !starts && d.Skipped == "" && !strings.HasPrefix(d.ParseProblem(), "line 1: the frontmatter is written oddly"):
		// Almost frontmatter (a byte-order mark, spaces after ---) is
		// refused under its name rather than skipped.
		return errors.New("no frontmatter, not skipped")
	case d.Fields == nil && len(d.Lines) > 0:
		return fmt.Errorf("lines %v without fields", d.Lines)
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
	if unreadableMode(c, def) {
		// A mode the gate cannot read is kept as written for the schema
		// to refuse: it is neither dropped nor read as the default.
		mode = "as written"
		if !reflect.DeepEqual(facts["permission_mode"], def.Fields["permissionMode"]) {
			return fmt.Errorf("permission_mode %v, written %v", facts["permission_mode"], def.Fields["permissionMode"])
		}
	}
	switch {
	case facts["host"] != Name || facts["type"] != c.Type:
		return fmt.Errorf("facts host, type = %v, %v", facts["host"], facts["type"])
	case mode == "":
		return fmt.Errorf("permission_mode %v", facts["permission_mode"])
	case c.SessionMode == "bypassPermissions" && mode != "bypassPermissions":
		return fmt.Errorf("a session bypassing permissions, a child in %q", mode)
	case c.EnvModel != "" && c.EnvForce && tr.Child["model"] != c.EnvModel:
		return fmt.Errorf("model %v, forced %q", tr.Child["model"], c.EnvModel)
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
	tools, listed := tr.Child["tools"].([]any)
	inherits, _ := facts["inherits_tools"].(bool)
	_, hasTools := tr.Child["tools"]
	if inherits == hasTools || hasTools && !listed {
		return fmt.Errorf("inherits_tools %v with tools %v", facts["inherits_tools"], tr.Child["tools"])
	}
	granted := grants(def)
	for _, tool := range tools {
		if !slices.ContainsFunc(granted, func(g any) bool { return reflect.DeepEqual(g, tool) }) {
			return fmt.Errorf("tool %v comes from nothing the definition grants (%v)", tool, granted)
		}
	}
	return nil
}

// grants lists every tool a definition can give its child: its tools, and
// what its memory, MCP servers and hooks add.
func grants(def *agent.Definition) []any {
	out, _ := toolList(def.Fields["tools"], def.Lines, "tools")
	if m, ok := def.Fields["memory"]; ok && m != nil && m != false {
		out = append(out, "Write", "Edit")
	}
	var servers func(v any)
	servers = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			for name := range v {
				out = append(out, "mcp__"+name)
			}
		case []any:
			for _, s := range v {
				if name, ok := s.(string); ok {
					out = append(out, "mcp__"+name)
					continue
				}
				if obj, ok := s.(map[string]any); ok {
					servers(obj)
					continue
				}
				out = append(out, s)
			}
		case nil:
		default:
			out = append(out, v)
		}
	}
	servers(def.Fields["mcpServers"])
	if h, ok := def.Fields["hooks"]; ok && h != nil {
		out = append(out, "hooks")
	}
	return out
}

// unreadableMode says whether def sets a permissionMode that is not a
// string (null included) and the session does not override it.
func unreadableMode(c call, def *agent.Definition) bool {
	if def == nil {
		return false
	}
	raw, set := def.Fields["permissionMode"]
	_, isString := raw.(string)
	return set && !isString && sessionMode(c, "") == ""
}
