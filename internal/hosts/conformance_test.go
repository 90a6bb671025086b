package hosts

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode"

	"github.com/spawngate/spawngate/internal/document"
	"github.com/spawngate/spawngate/internal/host"
	"github.com/spawngate/spawngate/internal/host/codex"
	"github.com/spawngate/spawngate/internal/host/doctor"
	"github.com/spawngate/spawngate/internal/host/hosttest"
)

// TestConformance holds every host of All to what a host brings besides
// its adapter (docs/ARCHITECTURE.md, "A host"), so that registering one
// without its fixtures fails here, each missing piece with the file to
// add:
//
//   - a name for commands and URLs (lower case, digits, '-'), in the
//     agent.host enum of schemas/child.schema.json and as a Host constant
//     of the Go API (hook.go at the module root);
//   - example payloads, examples/<name>/payloads/*.json, that the hook
//     reads (one JSON object each) and the adapter's Spawn reads without
//     an error or a panic, at least one into children that name the
//     host, given the examples alone: definitions in
//     examples/<name>/<DefinitionsFolder>/, the first file of
//     examples/<name>/sessions/ as the session transcript (for a host
//     whose hook reads one), and no home, machine-wide files, environment
//     or host process;
//   - a fuzz target for its definition reader, FuzzRead<Host>, in its
//     package's tests (the package the adapter's type is declared in),
//     seeds for it in the package's testdata/fuzz/FuzzRead<Host>/, and the
//     target in .ci/run;
//   - a deny answer that is one JSON object carrying the reason, for a
//     payload it could not read (event "") and for each of its Events,
//     which are not empty;
//   - a doctor (doctor.Doctor);
//   - spawn tools, none empty or repeated, and a definitions folder that
//     is a clean path inside the project.
func TestConformance(t *testing.T) {
	fx := readFixtures(t)
	seen := map[string]bool{}
	for _, a := range All {
		t.Run(a.Name(), func(t *testing.T) {
			if seen[a.Name()] {
				t.Errorf("two hosts in internal/hosts are named %q", a.Name())
			}
			seen[a.Name()] = true
			for _, c := range fx.check(t, a) {
				t.Run(c.aspect, func(t *testing.T) {
					for _, p := range c.problems {
						t.Error(p)
					}
				})
			}
		})
	}
}

// fixtures are the files of the module a host's conformance is read from.
type fixtures struct {
	root, module string
	// schema is the agent.host enum of the child schema, api the values
	// of the Go API's Host constants, ci the text of .ci/run.
	schema, api []string
	ci          string
}

func readFixtures(t *testing.T) fixtures {
	root := hosttest.ModuleRoot(t)
	ci, err := os.ReadFile(filepath.Join(root, ".ci", "run"))
	if err != nil {
		t.Fatal(err)
	}
	return fixtures{root: root, module: modulePath(t, root), schema: schemaHosts(t, root), api: apiHosts(t, root), ci: string(ci)}
}

// aspect is what one part of a host's conformance found wrong.
type aspect struct {
	aspect   string
	problems []string
}

// check lists, aspect by aspect, what a host lacks.
func (fx fixtures) check(t *testing.T, a host.Adapter) []aspect {
	name := a.Name()
	var out []aspect
	add := func(name string, problems ...string) { out = append(out, aspect{name, problems}) }
	var problems []string
	if !hostName.MatchString(name) {
		problems = append(problems, fmt.Sprintf("the host's name %q is not one for commands and URLs (spawngate hook %s, /v1/hooks/%s): lower-case letters, digits and '-'", name, name, name))
	}
	add("name", problems...)
	problems = nil
	if !slices.Contains(fx.schema, name) {
		problems = append(problems, fmt.Sprintf("%q is not in the agent.host enum of schemas/child.schema.json (it lists %q): add it there, or every child the hook writes for %s breaks the schema", name, fx.schema, name))
	}
	add("schema", problems...)
	problems = nil
	if !slices.Contains(fx.api, name) {
		problems = append(problems, fmt.Sprintf("the Go API has no Host constant for %q (it has %q): add `%s Host = %q` to the const block beside ClaudeCode in hook.go at the module root", name, fx.api, goName(name), name))
	}
	add("go-api", problems...)
	add("payloads", fx.checkPayloads(t, a)...)
	pkg, inModule := strings.CutPrefix(reflect.TypeOf(a).PkgPath(), fx.module+"/")
	if inModule {
		add("fuzz", fx.checkFuzz(t, pkg)...)
	} else {
		add("fuzz", fmt.Sprintf("the adapter %T is not a package of this module, so its fuzz target cannot be found", a))
	}
	add("deny", checkDeny(a)...)
	problems = nil
	if _, ok := a.(doctor.Doctor); !ok {
		problems = append(problems, fmt.Sprintf("%T does not implement doctor.Doctor (internal/host/doctor): give %s a doctor.go with a Doctor method, built on the entries and checks of internal/host/doctor, so that spawngate doctor %s can tell an installation that leaves spawns unjudged", a, pkg, name))
	}
	add("doctor", problems...)
	problems = nil
	tools := a.SpawnTools()
	if len(tools) == 0 {
		problems = append(problems, fmt.Sprintf("%T.SpawnTools() is empty: list every tool of %s that starts a sub-agent, or no hook matcher can be checked against them", a, name))
	}
	for i, tool := range tools {
		if tool == "" || slices.Contains(tools[:i], tool) {
			problems = append(problems, fmt.Sprintf("%T.SpawnTools() = %q: an empty or repeated name", a, tools))
		}
	}
	add("spawn-tools", problems...)
	problems = nil
	if f := a.DefinitionsFolder(); f == "" || !filepath.IsLocal(f) || filepath.Clean(f) != f {
		problems = append(problems, fmt.Sprintf("%T.DefinitionsFolder() = %q: it must be a clean path relative to the project, inside it (.claude/agents)", a, f))
	}
	add("definitions-folder", problems...)
	return out
}

// hostName is what a host's name may be: it is a word of the command
// line, a part of a URL and a schema enum value.
var hostName = regexp.MustCompile(`^[a-z][a-z0-9]*(-[a-z0-9]+)*$`)

// checkPayloads reads every example payload of a host as the hook does and
// has the adapter translate it, in an environment of the examples alone:
// their definitions, their session transcript if the host reads one
// (examples/<name>/sessions/), and no home, machine-wide files, variables
// or host process of the machine that runs the test.
func (fx fixtures) checkPayloads(t *testing.T, a host.Adapter) (problems []string) {
	root := fx.root
	name := a.Name()
	base := filepath.Join(root, "examples", name)
	rel := func(p string) string { r, _ := filepath.Rel(root, p); return filepath.ToSlash(r) }
	files, err := filepath.Glob(filepath.Join(base, "payloads", "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		return []string{fmt.Sprintf("no example payloads: add %s/payloads/NAME.json, each a hook payload of %s as its hook reads it on stdin (one JSON object), at least one a spawn, with the definitions they name in %s/%s/",
			rel(base), name, rel(base), filepath.ToSlash(a.DefinitionsFolder()))}
	}
	env := host.Env{
		Getenv:      func(string) string { return "" },
		Home:        t.TempDir(),
		Root:        t.TempDir(),
		AgentsDirs:  []string{filepath.Join(base, a.DefinitionsFolder())},
		Budget:      "1000",
		Limits:      document.DefaultLimits,
		CommandLine: func(int) ([]string, error) { return nil, errors.New("no host process: the payload is an example") },
	}
	if sessions, _ := filepath.Glob(filepath.Join(base, "sessions", "*")); len(sessions) > 0 {
		env.Transcript = sessions[0]
	}
	spawns := 0
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		v, err := document.Decode(context.Background(), rel(file), data, document.JSON, document.DefaultLimits)
		payload, isObject := v.(map[string]any)
		if err != nil || !isObject {
			problems = append(problems, fmt.Sprintf("%s is not a hook payload the hook reads (one JSON object): %v", rel(file), err))
			continue
		}
		sp, err := spawnOf(a, payload, env)
		switch {
		case err != nil:
			problems = append(problems, fmt.Sprintf("%s: %T.Spawn: %v\n(an example payload must be one the adapter reads, in the examples' own environment: its definitions in %s/%s/, its session transcript in %s/sessions/ when %s's hook reads one)",
				rel(file), a, err, rel(base), filepath.ToSlash(a.DefinitionsFolder()), rel(base), name))
			continue
		case sp == nil:
			continue // a payload that starts no sub-agent
		case len(sp.Children) == 0:
			problems = append(problems, fmt.Sprintf("%s: a spawn of no child: Spawn returns nil, nil for a call that starts no sub-agent", rel(file)))
			continue
		case sp.Event != "" && !slices.Contains(a.Events(), sp.Event):
			problems = append(problems, fmt.Sprintf("%s: the spawn's event %q is none of %T.Events() %q", rel(file), sp.Event, a, a.Events()))
		}
		for _, c := range sp.Children {
			if facts, _ := c.Child["agent"].(map[string]any); facts["host"] != name {
				problems = append(problems, fmt.Sprintf("%s: a child whose agent block names the host %v, not %q", rel(file), facts["host"], name))
			}
		}
		spawns++
	}
	if spawns == 0 {
		problems = append(problems, fmt.Sprintf("none of the %d example payloads in %s/payloads/ is a spawn: add one of a call of %s's spawn tools %q", len(files), rel(base), name, a.SpawnTools()))
	}
	return problems
}

// spawnOf is a.Spawn, with a panic made an error.
func spawnOf(a host.Adapter, payload map[string]any, env host.Env) (sp *host.Spawn, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v", r)
		}
	}()
	return a.Spawn(context.Background(), payload, env)
}

// checkFuzz finds the fuzz targets of a host's definition reader
// (FuzzRead...) in its package (pkg, relative to the module root) and
// holds each to its seeds and its run in CI.
func (fx fixtures) checkFuzz(t *testing.T, pkg string) (problems []string) {
	dir := filepath.Join(fx.root, filepath.FromSlash(pkg))
	targets := slices.DeleteFunc(fuzzTargets(t, dir), func(name string) bool { return !strings.HasPrefix(name, "FuzzRead") })
	if len(targets) == 0 {
		return append(problems, fmt.Sprintf("%s has no fuzz target for its definition reader: add fuzz_test.go with a FuzzRead<Host>(f *testing.F) that holds the reader to the property of hosttest.Reading (reading.Fuzz(f, seeds)), and a short run beside it (reading.Short), as internal/host/codex/fuzz_test.go does", pkg))
	}
	for _, target := range targets {
		corpus := filepath.Join(dir, "testdata", "fuzz", target)
		seeds, _ := os.ReadDir(corpus)
		n := 0
		for _, s := range seeds {
			data, err := os.ReadFile(filepath.Join(corpus, s.Name()))
			if err != nil || !bytes.HasPrefix(data, []byte("go test fuzz v1\n")) {
				problems = append(problems, fmt.Sprintf("%s/testdata/fuzz/%s/%s is not a seed of go test's corpus (its first line \"go test fuzz v1\")", pkg, target, s.Name()))
				continue
			}
			n++
		}
		if n == 0 {
			problems = append(problems, fmt.Sprintf("%s has no seeds: add files to %s/testdata/fuzz/%s/, each the line \"go test fuzz v1\" and a line []byte(\"...\") holding a definition that reaches a corner of the reader (see internal/host/codex/testdata/fuzz/FuzzReadCodex)", target, pkg, target))
		}
		if !strings.Contains(fx.ci, pkg+":"+target) {
			problems = append(problems, fmt.Sprintf("CI does not fuzz %s: add %s:%s to the fuzz targets of .ci/run", target, pkg, target))
		}
	}
	return problems
}

// fuzzTargets lists the fuzz targets declared in a package's tests.
func fuzzTargets(t *testing.T, dir string) []string {
	files, err := filepath.Glob(filepath.Join(dir, "*_test.go"))
	if err != nil {
		t.Fatal(err)
	}
	var targets []string
	fset := token.NewFileSet()
	for _, file := range files {
		f, err := parser.ParseFile(fset, file, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if ok && fn.Recv == nil && strings.HasPrefix(fn.Name.Name, "Fuzz") && fn.Type.Params.NumFields() == 1 {
				targets = append(targets, fn.Name.Name)
			}
		}
	}
	return targets
}

// denyReason is a reason with what a careless encoding would break: HTML,
// quotes, a backslash, text beyond ASCII.
const denyReason = `spawngate refused the child: tools.allowlist <Bash> & "Write" \ not allowed — règle`

// checkDeny holds a host's deny answers to being one JSON object that
// carries the reason: for a payload the hook could not read (event "")
// and for each of the host's events.
func checkDeny(a host.Adapter) (problems []string) {
	events := a.Events()
	if len(events) == 0 {
		return append(problems, fmt.Sprintf("%T.Events() is empty: list the hook events whose payloads the hook judges, the one that carries a spawn tool's call first", a))
	}
	if slices.Contains(events, "") {
		problems = append(problems, fmt.Sprintf("%T.Events() = %q: an event without a name", a, events))
	}
	for _, ev := range append([]string{""}, events...) {
		body := a.Deny(ev, denyReason)
		dec := json.NewDecoder(bytes.NewReader(body))
		var doc any
		err := dec.Decode(&doc)
		if err == nil {
			if _, err2 := dec.Token(); err2 != io.EOF {
				err = fmt.Errorf("more after the first JSON value")
			}
		}
		obj, isObject := doc.(map[string]any)
		switch {
		case err != nil || !isObject:
			problems = append(problems, fmt.Sprintf("%T.Deny(%q, reason) = %q: not one JSON object (%v); the host reads the answer as one", a, ev, body, err))
		case !carries(obj, denyReason):
			problems = append(problems, fmt.Sprintf("%T.Deny(%q, reason) = %s: the reason is in none of its strings; the host shows it to the agent, which must learn why", a, ev, body))
		}
	}
	return problems
}

// carries says whether a string in a JSON value holds the reason.
func carries(v any, reason string) bool {
	switch v := v.(type) {
	case string:
		return strings.Contains(v, reason)
	case []any:
		return slices.ContainsFunc(v, func(x any) bool { return carries(x, reason) })
	case map[string]any:
		for _, x := range v {
			if carries(x, reason) {
				return true
			}
		}
	}
	return false
}

// modulePath is the module's path, from go.mod.
func modulePath(t *testing.T, root string) string {
	f, err := os.Open(filepath.Join(root, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for lines := bufio.NewScanner(f); lines.Scan(); {
		if m, ok := strings.CutPrefix(lines.Text(), "module "); ok {
			return strings.TrimSpace(m)
		}
	}
	t.Fatal("go.mod names no module")
	return ""
}

// schemaHosts is the agent.host enum of the child schema.
func schemaHosts(t *testing.T, root string) []string {
	data, err := os.ReadFile(filepath.Join(root, "schemas", "child.schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	var s struct {
		Properties struct {
			Agent struct {
				Properties struct {
					Host struct {
						Enum []string `json:"enum"`
					} `json:"host"`
				} `json:"properties"`
			} `json:"agent"`
		} `json:"properties"`
	}
	if err := json.Unmarshal(data, &s); err != nil {
		t.Fatalf("schemas/child.schema.json: %v", err)
	}
	if len(s.Properties.Agent.Properties.Host.Enum) == 0 {
		t.Fatal("schemas/child.schema.json: no enum at /properties/agent/properties/host")
	}
	return s.Properties.Agent.Properties.Host.Enum
}

// apiHosts are the values of the Go API's Host constants, read from the
// root package's source (importing it would be a cycle: it imports this
// package).
func apiHosts(t *testing.T, root string) []string {
	files, err := filepath.Glob(filepath.Join(root, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	var hosts []string
	fset := token.NewFileSet()
	for _, file := range files {
		if strings.HasSuffix(file, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, file, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != token.CONST {
				continue
			}
			for _, spec := range g.Specs {
				vs := spec.(*ast.ValueSpec)
				if typ, ok := vs.Type.(*ast.Ident); !ok || typ.Name != "Host" {
					continue
				}
				for _, v := range vs.Values {
					if lit, ok := v.(*ast.BasicLit); ok && lit.Kind == token.STRING {
						if s, err := strconv.Unquote(lit.Value); err == nil {
							hosts = append(hosts, s)
						}
					}
				}
			}
		}
	}
	if len(hosts) == 0 {
		t.Fatal("found no Host constant in the module root's Go files")
	}
	return hosts
}

// goName is the Go name a host's constant takes: claude-code, ClaudeCode.
func goName(name string) string {
	var b strings.Builder
	for _, part := range strings.Split(name, "-") {
		if part == "" {
			continue
		}
		r := []rune(part)
		b.WriteString(string(unicode.ToUpper(r[0])) + string(r[1:]))
	}
	return b.String()
}

// bare is a host that brings an adapter and nothing else: no fixtures, no
// doctor (embedding the interface hides codex's).
type bare struct{ host.Adapter }

func (bare) Name() string { return "nohost" }

// bent answers and names everything wrongly.
type bent struct{ codex.Adapter }

func (bent) Name() string              { return "No Host" }
func (bent) SpawnTools() []string      { return []string{"spawn_agent", "", "spawn_agent"} }
func (bent) DefinitionsFolder() string { return "../agents" }
func (bent) Events() []string          { return []string{"PreToolUse", ""} }
func (bent) Deny(event, reason string) []byte {
	if event == "" {
		return []byte(`{"decision": "block"}`)
	}
	b, _ := json.Marshal(map[string]string{"reason": reason})
	return append(b, " {}"...)
}

// panicky reads Codex's example payloads, and panics on each.
type panicky struct{ codex.Adapter }

func (panicky) Spawn(context.Context, map[string]any, host.Env) (*host.Spawn, error) {
	panic("a bug")
}

// TestConformanceCatches holds the conformance test to failing a host
// that lacks what it checks, each time naming what to add or change.
func TestConformanceCatches(t *testing.T) {
	fx := readFixtures(t)
	for _, tc := range []struct {
		name string
		a    host.Adapter
		want map[string]string // a part of a problem, by aspect
	}{
		{"an adapter and nothing else", bare{codex.Adapter{}}, map[string]string{
			"schema":   `add it there`,
			"go-api":   "add `Nohost Host = \"nohost\"` to the const block beside ClaudeCode in hook.go",
			"payloads": "add examples/nohost/payloads/NAME.json",
			"fuzz":     "internal/hosts has no fuzz target for its definition reader: add fuzz_test.go",
			"doctor":   "does not implement doctor.Doctor",
		}},
		{"answers and names that are wrong", bent{}, map[string]string{
			"name":               `"No Host" is not one for commands and URLs`,
			"deny":               `the reason is in none of its strings`,
			"spawn-tools":        `an empty or repeated name`,
			"definitions-folder": `"../agents": it must be a clean path relative to the project`,
		}},
		{"a Spawn that panics", panicky{}, map[string]string{
			"payloads": "examples/codex/payloads/reader-v1.json: hosts.panicky.Spawn: panic: a bug",
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			found := map[string][]string{}
			for _, c := range fx.check(t, tc.a) {
				found[c.aspect] = c.problems
			}
			for aspect, want := range tc.want {
				if !slices.ContainsFunc(found[aspect], func(p string) bool { return strings.Contains(p, want) }) {
					t.Errorf("%s: problems %q, want one with %q", aspect, found[aspect], want)
				}
			}
		})
	}
	// A deny answer that is no single JSON object is caught too.
	if problems := checkDeny(bent{}); !slices.ContainsFunc(problems, func(p string) bool {
		return strings.Contains(p, "not one JSON object (more after the first JSON value)")
	}) {
		t.Errorf("checkDeny = %q", problems)
	}
}
