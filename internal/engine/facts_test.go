package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/storage/inmem"
	"github.com/open-policy-agent/opa/v1/topdown"

	"github.com/spawngate/spawngate/policy"
)

var factInputs = flag.Int("facts.inputs", 3000, "random batches TestFactsAreLibs draws")

// newLibFacts compiles lib.rego alone: its definitions of the facts, which
// hold on an input without input.facts.
func newLibFacts(t *testing.T) *ast.Compiler {
	t.Helper()
	src, err := policy.FS.ReadFile("lib.rego")
	if err != nil {
		t.Fatal(err)
	}
	m, err := ast.ParseModuleWithOpts("lib.rego", string(src), ast.ParserOptions{RegoVersion: ast.RegoV1})
	if err != nil {
		t.Fatal(err)
	}
	c := ast.NewCompiler()
	if c.Compile(map[string]*ast.Module{"lib.rego": m}); c.Failed() {
		t.Fatal(c.Errors)
	}
	return c
}

// evalLib is data.spawngate.lib.<rule> on input, or nil when undefined.
func evalLib(t *testing.T, c *ast.Compiler, rule string, input ast.Value) (*ast.Term, error) {
	t.Helper()
	body, err := c.QueryCompiler().Compile(ast.MustParseBody("x = data.spawngate.lib." + rule))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	store := inmem.New()
	txn, err := store.NewTransaction(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Abort(ctx, txn)
	rs, err := topdown.NewQuery(body).WithCompiler(c).WithStore(store).WithTransaction(txn).
		WithInput(ast.NewTerm(input)).WithStrictBuiltinErrors(true).Run(ctx)
	if err != nil || len(rs) == 0 {
		return nil, err
	}
	return rs[0][ast.Var("x")], nil
}

// hostile are values a plan may hold where a tool, a path or a budget
// goes: every kind of JSON value, and strings that sit on the edge of each
// rule a fact follows.
var hostile = []string{
	`""`, `"/"`, `"//"`, `"///"`, `"/repo/ws"`, `"/repo/ws/"`, `"/repo/ws//x"`, `"/repo/ws/./x"`,
	`"/repo/ws/../x"`, `".."`, `"../x"`, `"."`, `"./"`, `"docs"`, `"docs/"`, `"docs//"`, `"docs/a."`,
	`"...a"`, `".a/b"`, `"a.b/c"`, `"-rf"`, `"@args"`, `"a/-b"`, `"a/@b"`, `"~"`, `"~/x"`, `"$HOME"`,
	`"%2e%2e"`, `"a*"`, `"fs:*"`, `"a\\b"`, `"C:/x"`, `"c:"`, `"http://x"`, `"con"`, `"CON.txt"`,
	`"a/nul/b"`, `"a/com1.x"`, `"a/com10"`, `"lpt9/"`, `"a b"`, `" a"`, `"a\t"`, `"a\u0000b"`,
	`"é"`, `"/repo/ws/\u2024\u2024"`, `"／etc"`, `"fs.read"`, `"fs.write"`, `"Bash"`, `"mcp__github__get_issue"`,
	`"fs."`, `".fs"`, `":x"`, `"x:"`, `"a::b"`, `"a.-b"`, `"Bash(git:*)"`, `"sandbox:danger-full-access"`,
	`"_"`, `"a"`, `"0"`, `"/repo/workspace/task-1"`, `"/repo/workspace-evil"`,
	`0`, `1`, `-1`, `-0`, `40000`, `4e4`, `40000.0`, `1.5`, `1e400`, `-1e400`, `1E3`, `0.0`,
	`18446744073709551617`, `123456789012345678901234567890`, `-99999999999999999999`, `9007199254740993`,
	`1e21`, `1e20`, `true`, `false`, `null`, `[]`, `{}`, `["/x"]`, `{"a": "/x"}`,
}

func randomString(r *rand.Rand) string {
	if r.IntN(3) > 0 {
		for {
			s := hostile[r.IntN(len(hostile))]
			if strings.HasPrefix(s, `"`) {
				return s
			}
		}
	}
	// Built from parts: segments of odd characters, doubled slashes,
	// trailing dots and slashes, now and then very long.
	parts := []string{"a", "b.", ".", "..", "", "con", "x-y", "@", "-", "é", "~", "\u2215", "ok_1", "Z9"}
	var b strings.Builder
	if r.IntN(2) == 0 {
		b.WriteByte('/')
	}
	for n := r.IntN(5); n >= 0; n-- {
		b.WriteString(parts[r.IntN(len(parts))])
		if n > 0 || r.IntN(3) == 0 {
			b.WriteByte('/')
		}
	}
	if r.IntN(40) == 0 {
		b.WriteString(strings.Repeat("a", 4090+r.IntN(10)))
	}
	out, _ := json.Marshal(b.String())
	return string(out)
}

func randomValue(r *rand.Rand) string {
	if r.IntN(4) == 0 {
		return hostile[r.IntN(len(hostile))]
	}
	return randomString(r)
}

func randomList(r *rand.Rand) string {
	switch r.IntN(10) {
	case 0:
		return randomValue(r) // not a list
	}
	var items []string
	for n := r.IntN(5); n > 0; n-- {
		items = append(items, randomValue(r))
	}
	return "[" + strings.Join(items, ", ") + "]"
}

func randomChild(r *rand.Rand) string {
	if r.IntN(15) == 0 {
		return hostile[r.IntN(len(hostile))] // not an object
	}
	var fields []string
	if r.IntN(8) > 0 {
		fields = append(fields, `"tools": `+randomList(r))
	}
	if r.IntN(8) > 0 {
		fields = append(fields, `"paths": `+randomList(r))
	}
	if r.IntN(8) > 0 {
		fields = append(fields, `"budget_tokens": `+hostile[r.IntN(len(hostile))])
	}
	return "{" + strings.Join(fields, ", ") + "}"
}

func randomPolicies(r *rand.Rand) string {
	roots := []string{`"/repo/ws"`, `"/repo/ws/"`, `"/"`, `"//"`, `"rel"`, `""`, `"/repo/workspace"`, `5`, `null`, `["/x"]`}
	policy := func() string {
		if r.IntN(12) == 0 {
			return hostile[r.IntN(len(hostile))] // not an object
		}
		if r.IntN(10) == 0 {
			return `{"allowed_tools": ["fs.read"]}` // no root
		}
		return `{"workspace_root": ` + roots[r.IntN(len(roots))] + `}`
	}
	switch r.IntN(6) {
	case 0:
		return `{}`
	case 1, 2:
		return `{"operator": ` + policy() + `}`
	case 3:
		return `{"plan": ` + policy() + `}`
	}
	return `{"operator": ` + policy() + `, "plan": ` + policy() + `}`
}

// decode reads a document as the plan loader does (numbers as written).
func decode(t *testing.T, doc string) any {
	t.Helper()
	d := json.NewDecoder(bytes.NewReader([]byte(doc)))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		t.Fatalf("%s: %v", doc, err)
	}
	return v
}

// Every fact the engine computes in Go equals the fact as lib.rego defines
// it, on random batches of hostile children under random policies: every
// kind of value where a tool, a path or a budget goes, paths on the edge
// of each rule of a plain path ("..", "//", trailing slashes and dots,
// device names, look-alikes, 4096 bytes), huge and float-written numbers.
// The gate's facts stand in for the definitions, so a difference would be
// a different decision.
func TestFactsAreLibs(t *testing.T) {
	c := newLibFacts(t)
	r := rand.New(rand.NewPCG(23, 0xfac7))
	named := 0
	for k := range *factInputs {
		var kids []string
		for n := r.IntN(6); n > 0; n-- {
			kids = append(kids, randomChild(r))
		}
		childrenDoc, policiesDoc := "["+strings.Join(kids, ", ")+"]", randomPolicies(r)
		batch := decode(t, childrenDoc).([]any)
		if r.IntN(4) == 0 {
			// A plan built in Go (the public API) holds float64s, not
			// numbers as written, and no float literals.
			batch = goNumbers(batch).([]any)
		}
		children, err := ast.InterfaceToValue(batch)
		if err != nil {
			t.Fatal(err)
		}
		policies, err := ast.InterfaceToValue(decode(t, policiesDoc))
		if err != nil {
			t.Fatal(err)
		}
		floats := floatLiterals(batch)
		if r.IntN(6) == 0 {
			// The facts follow whatever float literals the input holds:
			// without them, 40000.0 is a whole number by value.
			floats = map[string]any{}
		}
		literals, err := ast.InterfaceToValue(floats)
		if err != nil {
			t.Fatal(err)
		}
		facts, ok := batchFacts(children, policies, floats).(ast.Object)
		if !ok {
			t.Fatalf("batch %d: no facts for %s", k, childrenDoc)
		}
		input := ast.NewObject(
			ast.Item(ast.InternedTerm("policies"), ast.NewTerm(policies)),
			ast.Item(ast.InternedTerm("children"), ast.NewTerm(children)),
			ast.Item(ast.InternedTerm("float_literals"), ast.NewTerm(literals)),
		)
		if facts.Get(pathNamesKey) != nil {
			named++
		}
		for _, key := range facts.Keys() {
			rule := string(key.Value.(ast.String))
			want, err := evalLib(t, c, rule, input)
			if err != nil {
				t.Fatalf("batch %d: lib.%s: %v\nchildren %s\npolicies %s", k, rule, err, childrenDoc, policiesDoc)
			}
			if got := facts.Get(key); want == nil || got.Value.Compare(want.Value) != 0 {
				t.Fatalf("batch %d: fact %s is %v, lib.rego says %v\nchildren %s\npolicies %s", k, rule, got, want, childrenDoc, policiesDoc)
			}
		}
	}
	// Most batches have a plan root that is a string: path_names must not
	// be held equal only by being left out.
	if named < *factInputs/3 {
		t.Errorf("path_names computed for %d batches of %d", named, *factInputs)
	}
}

// The engine gives path_names whenever the plan root is a string, and
// leaves it to the Rego otherwise; the other facts always.
func TestFactsLeavePathNamesToTheRego(t *testing.T) {
	children := ast.MustParseTerm(`[{"paths": ["docs", "/repo/ws/a/", "../x"], "tools": ["fs.read", "fs:*", 1], "budget_tokens": 7}]`).Value
	for _, tc := range []struct {
		policies, want string
	}{
		{`{"operator": {"workspace_root": "/repo/ws"}}`, `{"/repo/ws/a/": "/repo/ws/a/", "docs": "/repo/ws/docs/"}`},
		{`{"operator": {"workspace_root": "/repo/ws"}, "plan": {"workspace_root": "/repo/ws/sub/"}}`, `{"/repo/ws/a/": "/repo/ws/a/", "docs": "/repo/ws/sub/docs/"}`},
		{`{"operator": {"workspace_root": "/repo/ws"}, "plan": {}}`, ``},
		{`{"operator": {"workspace_root": 5}}`, ``},
		{`{}`, ``},
	} {
		facts := batchFacts(children, ast.MustParseTerm(tc.policies).Value, nil).(ast.Object)
		got := facts.Get(pathNamesKey)
		switch {
		case tc.want == "" && got != nil:
			t.Errorf("%s: path_names %v, want none", tc.policies, got)
		case tc.want != "" && (got == nil || got.Value.Compare(ast.MustParseTerm(tc.want).Value) != 0):
			t.Errorf("%s: path_names %v, want %s", tc.policies, got, tc.want)
		}
		for _, key := range []*ast.Term{requestedToolsKey, requestedPathsKey, toolNamesKey, wholeBudgetsKey} {
			if facts.Get(key) == nil {
				t.Errorf("%s: no %v", tc.policies, key)
			}
		}
	}
}

// The patterns the facts match are lib.rego's, character for character.
func TestFactPatternsAreLibs(t *testing.T) {
	c := newLibFacts(t)
	for rule, re := range map[string]string{
		"tool_name_pattern": toolNamePattern.String(),
		"plain_pattern":     plainPattern.String(),
		"windows_device":    windowsDevice.String(),
		"whole_pattern":     wholePattern.String(),
	} {
		got, err := evalLib(t, c, rule, ast.NewObject())
		if err != nil || got == nil {
			t.Fatalf("lib.%s: %v", rule, err)
		}
		if want := ast.String(re); got.Value.Compare(want) != 0 {
			t.Errorf("lib.%s is %v, the fact matches %s", rule, got, fmt.Sprintf("%q", re))
		}
	}
}

// goNumbers is v with every number a float64, as a plan built in Go holds
// it (a number no float64 holds stays as written).
func goNumbers(v any) any {
	switch v := v.(type) {
	case json.Number:
		if f, err := strconv.ParseFloat(string(v), 64); err == nil {
			return f
		}
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = goNumbers(x)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, x := range v {
			out[k] = goNumbers(x)
		}
		return out
	}
	return v
}

// WithoutFacts runs f with the engine giving the checks no facts, so that
// they compute every fact from the input themselves. Not for parallel
// tests: it changes what every engine does while f runs.
func WithoutFacts(f func()) {
	defer func(old func(ast.Value, ast.Value, map[string]any) ast.Value) { factsOf = old }(factsOf)
	factsOf = func(ast.Value, ast.Value, map[string]any) ast.Value { return nil }
	f()
}

// plainPath scans by hand for what lib.plain_path matches with its
// patterns: the same answer on hostile paths and on random ones made of
// the characters that matter.
func TestPlainPathIsThePatterns(t *testing.T) {
	byPatterns := func(p string) bool {
		return len(p) <= 4096 && plainPattern.MatchString(p) && !windowsDevice.MatchString(p) &&
			!strings.HasPrefix(p, "-") && !strings.HasPrefix(p, "@")
	}
	cases := []string{
		"", "/", "//", "///", "a", "/a", "a/", "/a/", "a//b", "/a/b/", ".", "..", "./a", "a/.", "a/..", ".a", "..a",
		"a.", "a.b", "...a", "a/.b", "-a", "@a", "a-", "a@", "/-a", "/@a", "a b", "a\\b", "~", "$HOME", "%", "a*", "a?",
		"con", "CON", "Con.txt", "/repo/nul", "/repo/nul/x", "aux.", "com0", "com1", "COM9.x", "lpt1", "lpt10", "comx",
		"conx", "xcon", "con.", "/a/prn.b.c/d", "é", "a/é", "K", "\u212a", "nul\u0000", strings.Repeat("a", 4096),
		strings.Repeat("a", 4097), "/" + strings.Repeat("a", 4095), "/repo/workspace/task-1", "docs/0/",
	}
	for _, p := range cases {
		if got, want := plainPath(p), byPatterns(p); got != want {
			t.Errorf("plainPath(%q) = %v, the patterns say %v", p, got, want)
		}
	}
	pieces := []string{"a", "Z", "0", "9", "_", "-", "@", ".", "..", "/", "/", "con", "NUL", "com", "Lpt", "1", "0", "x", " ", "*", "é", "~"}
	r := rand.New(rand.NewPCG(23, 1))
	for range 200000 {
		var b strings.Builder
		for range r.IntN(8) {
			b.WriteString(pieces[r.IntN(len(pieces))])
		}
		p := b.String()
		if got, want := plainPath(p), byPatterns(p); got != want {
			t.Fatalf("plainPath(%q) = %v, the patterns say %v", p, got, want)
		}
	}
}
