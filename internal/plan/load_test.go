package plan_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/spawngate/spawngate/internal/document"
	"github.com/spawngate/spawngate/internal/plan"
)

var loadOnce = sync.OnceValues(func() (*plan.Loader, error) { return plan.NewLoader(document.DefaultLimits) })

func newLoader(t testing.TB) *plan.Loader {
	t.Helper()
	l, err := loadOnce()
	if err != nil {
		t.Fatalf("NewLoader: %v", err)
	}
	return l
}

// The ends of two of the reader's messages, as package document's tests
// pin them.
const (
	notAValue  = `: a JSON value starts with {, [, ", a digit, -, true, false or null`
	notDecimal = " is not written in plain decimal, and YAML versions read it differently: write it in decimal, or quote it"
)

// Short names for JSON-shaped values, as the reader's tests spell them.
type (
	obj  = map[string]any
	list = []any
	num  = json.Number
)

// object writes a JSON object from defaults (raw JSON values) changed by
// overrides; an override of "" drops the key. Keys come out sorted.
func object(defaults, overrides map[string]string) string {
	fields := map[string]string{}
	for k, v := range defaults {
		fields[k] = v
	}
	for k, v := range overrides {
		if v == "" {
			delete(fields, k)
		} else {
			fields[k] = v
		}
	}
	keys := make([]string, 0, len(fields))
	for k := range fields {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = `"` + k + `":` + fields[k]
	}
	return "{" + strings.Join(parts, ",") + "}"
}

var (
	okChildFields  = map[string]string{"role": `"reader"`, "tools": `["fs.read"]`, "paths": `[]`, "budget_tokens": `1000`}
	okPolicyFields = map[string]string{"allowed_tools": `["fs.read"]`, "workspace_root": `"/repo"`, "budget_cap_tokens": `200000`}
	okChild        = object(okChildFields, nil)
	okPolicy       = object(okPolicyFields, nil)
)

func child(overrides map[string]string) string  { return object(okChildFields, overrides) }
func policy(overrides map[string]string) string { return object(okPolicyFields, overrides) }

// planOf writes a JSON plan with these children.
func planOf(children ...string) string {
	return `{"plan":[` + strings.Join(children, ",") + `]}`
}

const (
	childKeys  = "agent, bindings, brief, brief_unreadable, budget_tokens, children, env, id, metadata, model, paths, role, task_id, tools"
	policyKeys = "allow_spawn, allow_write, allowed_models, allowed_tools, allowed_workflows, brief_retask, brief_secrets, brief_unreadable, budget_cap_tokens, checks, exceptions, max_children, max_depth, max_descendants, max_total_budget_tokens, roles, spawn_tools, task_ownership, unknown_roles, workspace_root, write_tools"
	// planPolicyKeys are those a plan's own policy may set.
	planPolicyKeys = "allow_spawn, allow_write, allowed_models, allowed_tools, allowed_workflows, brief_retask, brief_secrets, brief_unreadable, budget_cap_tokens, max_children, max_depth, max_descendants, max_total_budget_tokens, spawn_tools, task_ownership, workspace_root, write_tools"
	rootTitle      = "an absolute, normalized POSIX path made of A-Z a-z 0-9 . _ - @ (no trailing /, no . or .. segments, no segment ending in a dot or naming a Windows device)"
	wholeTitle     = "a positive whole number written without a fraction or exponent"
	patternTitle   = "a tool name or glob pattern made of A-Z a-z 0-9 _ . : - * ?"
)

// planCase is a document read with Loader.Plan: either err (the exact
// Error()) or a plan with these children, policy and issues.
type planCase struct {
	name     string
	source   string // "plan.json" when empty
	in       string
	children int
	policy   plan.Policy
	issues   []plan.SchemaViolation
	err      string
}

const okYAMLPlan = `plan:
  - role: home-cleaner
    tools: [fs.write, shell.run]
    paths: ["~"]
    budget_tokens: 5000000
  - role: doc-reader
    brief: Summarize the docs.
    tools: [fs.read]
    paths: [/repo/docs]
    budget_tokens: 40000
    id: reader-1
    model: small
    metadata: {anything: [1, null, {x: true}]}
`

var planCases = []planCase{
	// valid plans
	{name: "yaml plan", source: "plan.yaml", in: okYAMLPlan, children: 2},
	{name: "json plan", in: planOf(okChild), children: 1},
	{name: "sniffed json plan", source: document.Stdin, in: planOf(okChild, okChild), children: 2},
	{name: "sniffed yaml plan", source: document.Stdin, in: okYAMLPlan, children: 2},
	{name: "plan with its own policy", source: "plan.yaml", children: 1, in: `
policy:
  allowed_tools: [fs.read, "http.*"]
  workspace_root: /repo
  budget_cap_tokens: 200000
  allow_write: false
plan:
  - {role: r, tools: [fs.read], paths: [], budget_tokens: 10}
`, policy: plan.Policy{"allowed_tools": list{"fs.read", "http.*"}, "workspace_root": "/repo", "budget_cap_tokens": num("200000"), "allow_write": false}},
	{name: "unique ids", in: planOf(child(map[string]string{"id": `"a"`}), child(map[string]string{"id": `"b"`}), okChild), children: 3},
	{name: "huge budget", in: planOf(child(map[string]string{"budget_tokens": "99999999999999999999999"})), children: 1},

	// the document
	{name: "top level list", source: "plan.yaml", in: "- role: r\n", err: "plan.yaml: the top level must be a mapping of keys, not a list"},
	{name: "top level string", source: "plan.yaml", in: "plan\n", err: "plan.yaml: the top level must be a mapping of keys, not a string"},
	{name: "top level number", in: "12", err: "plan.json: the top level must be a mapping of keys, not a number"},
	{name: "top level boolean", in: "true", err: "plan.json: the top level must be a mapping of keys, not a boolean"},
	{name: "top level null", source: "plan.yaml", in: "---\n", err: "plan.yaml: the top level must be a mapping of keys, not null"},
	{name: "top level tilde", source: "plan.yml", in: "~\n", err: "plan.yml: the top level must be a mapping of keys, not null"},
	{name: "no plan", in: `{}`, err: `plan.json: /plan: required key "plan" is missing`},
	{name: "policy but no plan", in: `{"policy":` + okPolicy + `}`, err: `plan.json: /plan: required key "plan" is missing`},
	{name: "plan is null", source: "plan.yaml", in: "plan:\n", err: "plan.yaml: /plan: must be a list, not null"},
	{name: "plan is a mapping", in: `{"plan":{}}`, err: "plan.json: /plan: must be a list, not an object"},
	{name: "plan is a string", in: `{"plan":"x"}`, err: "plan.json: /plan: must be a list, not a string"},
	{name: "plan is a number", in: `{"plan":3}`, err: "plan.json: /plan: must be a list, not a number"},
	{name: "plan is empty", in: `{"plan":[]}`, err: "plan.json: /plan: the plan lists no children: nothing to check"},
	{name: "plan is empty in yaml", source: "plan.yaml", in: "plan: []\n", err: "plan.yaml: /plan: the plan lists no children: nothing to check"},
	{name: "unknown top-level key", in: `{"plan":[` + okChild + `],"plans":[]}`, err: `plan.json: /plans: unknown key "plans": did you mean "plan"? (allowed: parent, plan, policy)`},
	{name: "misspelled plan", in: `{"plans":[` + okChild + `]}`, err: `plan.json: /plan: required key "plan" is missing (and 1 more problem)`},
	{name: "three unknown keys", in: `{"plan":[` + okChild + `],"c":1,"a":1,"b":1}`, err: `plan.json: /a: unknown key "a" (allowed: parent, plan, policy) (and 2 more problems)`},
	{name: "unknown key with a slash", in: `{"plan":[` + okChild + `],"a/b~":1}`, err: `plan.json: /a~1b~0: unknown key "a/b~" (allowed: parent, plan, policy)`},
	{name: "unknown key with a newline", in: `{"plan":[` + okChild + `],"a\nb":1}`, err: `plan.json: "/a\nb": unknown key "a\nb" (allowed: parent, plan, policy)`},
	{name: "document problem hides child issues", in: `{"plan":[1],"x":1}`, err: `plan.json: /x: unknown key "x" (allowed: parent, plan, policy)`},

	// the plan's policy
	{name: "policy is empty", in: `{"plan":[` + okChild + `],"policy":{}}`,
		err: `plan.json: /policy/allowed_tools: required key "allowed_tools" is missing (and 2 more problems)`},
	{name: "policy is a list", in: `{"plan":[` + okChild + `],"policy":[]}`, err: "plan.json: /policy: must be an object, not a list"},
	{name: "policy is null", source: "plan.yaml", in: "policy:\nplan: [{role: r, tools: [a], paths: [], budget_tokens: 1}]\n",
		err: "plan.yaml: /policy: must be an object, not null"},
	{name: "policy with a relative root", in: `{"plan":[` + okChild + `],"policy":` + policy(map[string]string{"workspace_root": `"repo"`}) + `}`,
		err: `plan.json: /policy/workspace_root: must be ` + rootTitle + `, not "repo"`},
	{name: "policy with a zero cap", in: `{"plan":[` + okChild + `],"policy":` + policy(map[string]string{"budget_cap_tokens": `0`}) + `}`,
		err: `plan.json: /policy/budget_cap_tokens: must be at least 1, not 0`},
	{name: "policy with an unknown key", in: `{"plan":[` + okChild + `],"policy":` + policy(map[string]string{"deny": `[]`}) + `}`,
		err: `plan.json: /policy/deny: unknown key "deny" (allowed: ` + planPolicyKeys + `)`},
	{name: "plan policy cannot except", in: `{"plan":[` + okChild + `],"policy":` + policy(map[string]string{"exceptions": `[]`}) + `}`,
		err: `plan.json: /policy/exceptions: "exceptions" is the operator's to set: a plan's own policy cannot set it`},
	{name: "plan policy cannot load checks", in: `{"plan":[` + okChild + `],"policy":` + policy(map[string]string{"checks": `["/tmp"]`}) + `}`,
		err: `plan.json: /policy/checks: "checks" is the operator's to set: a plan's own policy cannot set it`},
	{name: "plan policy cannot name profiles", in: `{"plan":[` + okChild + `],"policy":` + policy(map[string]string{"roles": `{}`, "unknown_roles": `"allow"`}) + `}`,
		err: `plan.json: /policy/roles: "roles" is the operator's to set: a plan's own policy cannot set it (and 1 more problem)`},
	{name: "policy problem and child issue", in: `{"plan":[1],"policy":` + policy(map[string]string{"allow_write": `"true"`}) + `}`,
		err: `plan.json: /policy/allow_write: must be a boolean, not a string`},

	// errors from reading
	{name: "unknown extension", source: "plan.txt", in: "plan: []\n", err: `plan.txt: unknown document type ".txt": use .yaml, .yml or .json`},
	{name: "json syntax", in: `{"plan": [1,]}`, err: "plan.json:1:13: /plan: trailing comma before ]"},
	{name: "yaml in a json file", in: "plan:\n  - x\n", err: "plan.json:1:1: unexpected character 'p'" + notAValue},
	{name: "yaml ambiguity", source: "plan.yaml", in: "plan:\n  - role: r\n    tools: [fs.read]\n    paths: []\n    budget_tokens: 1_000\n",
		err: `plan.yaml:5:20: /plan/0/budget_tokens: integer "1_000"` + notDecimal},
	{name: "empty document", source: "plan.yaml", in: "# nothing\n", err: "plan.yaml: empty document: nothing to check"},

	// issues inside children
	{name: "children that are not objects", in: planOf("1", `"x"`, "null", "[]", "true", okChild), children: 6, issues: []plan.SchemaViolation{
		{0, "", "must be an object, not a number"},
		{1, "", "must be an object, not a string"},
		{2, "", "must be an object, not null"},
		{3, "", "must be an object, not a list"},
		{4, "", "must be an object, not a boolean"},
	}},
	{name: "empty child", in: planOf("{}"), children: 1, issues: []plan.SchemaViolation{
		{0, "/budget_tokens", `required key "budget_tokens" is missing`},
		{0, "/paths", `required key "paths" is missing`},
		{0, "/role", `required key "role" is missing`},
		{0, "/tools", `required key "tools" is missing`},
	}},
	{name: "missing paths", in: planOf(child(map[string]string{"paths": ""})), children: 1, issues: []plan.SchemaViolation{
		{0, "/paths", `required key "paths" is missing`},
	}},
	{name: "unknown keys", in: planOf(child(map[string]string{"zz": "1", "aa": "{}", "a/b": "2"})), children: 1, issues: []plan.SchemaViolation{
		{0, "/aa", `unknown key "aa" (allowed: ` + childKeys + `)`},
		{0, "/a~1b", `unknown key "a/b" (allowed: ` + childKeys + `)`}, // sorted as escaped: ~ after a
		{0, "/zz", `unknown key "zz" (allowed: ` + childKeys + `)`},
	}},
	{name: "misspelt keys", in: planOf(child(map[string]string{"modle": `"m"`, "task-id": `"t"`, "tolls": "[]"})), children: 1, issues: []plan.SchemaViolation{
		{0, "/modle", `unknown key "modle": did you mean "model"? (allowed: ` + childKeys + `)`},
		{0, "/task-id", `unknown key "task-id": did you mean "task_id"? (allowed: ` + childKeys + `)`},
		{0, "/tolls", `unknown key "tolls": did you mean "tools"? (allowed: ` + childKeys + `)`},
	}},
	{name: "wrong types", in: planOf(child(map[string]string{
		"role": "1", "tools": `"fs.read"`, "paths": `"/repo"`, "budget_tokens": `"5"`, "id": "5", "brief": "true", "model": "[]",
	})), children: 1, issues: []plan.SchemaViolation{
		{0, "/brief", "must be a string, not a boolean"},
		{0, "/budget_tokens", "must be a whole number, not a string"},
		{0, "/id", "must be a string, not a number"},
		{0, "/model", "must be a string, not a list"},
		{0, "/paths", "must be a list, not a string"},
		{0, "/role", "must be a string, not a number"},
		{0, "/tools", "must be a list, not a string"},
	}},
	{name: "wrong item types", in: planOf(child(map[string]string{"tools": `["fs.read", 1]`, "paths": `[null]`})), children: 1, issues: []plan.SchemaViolation{
		{0, "/paths/0", "must be a string, not null"},
		{0, "/tools/1", "must be a string, not a number"},
	}},
	{name: "empty role", in: planOf(child(map[string]string{"role": `""`})), children: 1, issues: []plan.SchemaViolation{
		{0, "/role", `must be a non-empty role name, not ""`},
	}},
	{name: "blank role", in: planOf(child(map[string]string{"role": `"  "`})), children: 1, issues: []plan.SchemaViolation{
		{0, "/role", `must be a non-empty role name, not "  "`},
	}},
	{name: "whitespace role", in: planOf(child(map[string]string{"role": `"\t\n"`})), children: 1, issues: []plan.SchemaViolation{
		{0, "/role", `must be a non-empty role name, not "\t\n"`},
	}},
	{name: "no tools", in: planOf(child(map[string]string{"tools": `[]`})), children: 1, issues: []plan.SchemaViolation{
		{0, "/tools", "must not be empty"},
	}},
	{name: "empty id", in: planOf(child(map[string]string{"id": `""`})), children: 1, issues: []plan.SchemaViolation{
		{0, "/id", "must not be empty"},
	}},
	{name: "budget with an exponent", in: planOf(child(map[string]string{"budget_tokens": "4e4"})), children: 1, issues: []plan.SchemaViolation{
		{0, "/budget_tokens", "must be " + wholeTitle + ", not 4e4"},
	}},
	{name: "budget with a fraction", in: planOf(child(map[string]string{"budget_tokens": "40000.0"})), children: 1, issues: []plan.SchemaViolation{
		{0, "/budget_tokens", "must be " + wholeTitle + ", not 40000.0"},
	}},
	{name: "yaml budget with an exponent", source: "plan.yaml", in: "plan:\n  - {role: r, tools: [a], paths: [], budget_tokens: 4e4}\n", children: 1, issues: []plan.SchemaViolation{
		{0, "/budget_tokens", "must be " + wholeTitle + ", not 4e4"},
	}},
	{name: "fractional budget", in: planOf(child(map[string]string{"budget_tokens": "1.5"})), children: 1, issues: []plan.SchemaViolation{
		{0, "/budget_tokens", "must be a whole number, not a number"},
	}},
	{name: "zero budget", in: planOf(child(map[string]string{"budget_tokens": "0"})), children: 1, issues: []plan.SchemaViolation{
		{0, "/budget_tokens", "must be at least 1, not 0"},
	}},
	{name: "negative budget", in: planOf(child(map[string]string{"budget_tokens": "-1"})), children: 1, issues: []plan.SchemaViolation{
		{0, "/budget_tokens", "must be at least 1, not -1"},
	}},
	{name: "duplicate ids", in: planOf(child(map[string]string{"id": `"a"`}), child(map[string]string{"id": `"a"`})), children: 2, issues: []plan.SchemaViolation{
		{0, "/id", `id "a" is not unique: child 1 also uses it`},
		{1, "/id", `id "a" is not unique: child 0 also uses it`},
	}},
	{name: "three children share an id", in: planOf(
		child(map[string]string{"id": `"a"`}), child(map[string]string{"id": `"b"`}), child(map[string]string{"id": `"a"`}),
		okChild, child(map[string]string{"id": `"a"`}), child(map[string]string{"id": `"c"`}), child(map[string]string{"id": `"c"`}),
	), children: 7, issues: []plan.SchemaViolation{
		{0, "/id", `id "a" is not unique: children 2 and 4 also use it`},
		{2, "/id", `id "a" is not unique: children 0 and 4 also use it`},
		{4, "/id", `id "a" is not unique: children 0 and 2 also use it`},
		{5, "/id", `id "c" is not unique: child 6 also uses it`},
		{6, "/id", `id "c" is not unique: child 5 also uses it`},
	}},
	// An empty id is refused as empty; that it repeats adds nothing.
	{name: "duplicate empty ids", in: planOf(child(map[string]string{"id": `""`}), child(map[string]string{"id": `""`})), children: 2, issues: []plan.SchemaViolation{
		{0, "/id", "must not be empty"},
		{1, "/id", "must not be empty"},
	}},
	{name: "duplicate id beside other issues", in: planOf(
		child(map[string]string{"id": `"x"`, "role": "1", "zz": "1"}), child(map[string]string{"id": `"x"`, "budget_tokens": "0"}),
	), children: 2, issues: []plan.SchemaViolation{
		{0, "/id", `id "x" is not unique: child 1 also uses it`},
		{0, "/role", "must be a string, not a number"},
		{0, "/zz", `unknown key "zz" (allowed: ` + childKeys + `)`},
		{1, "/budget_tokens", "must be at least 1, not 0"},
		{1, "/id", `id "x" is not unique: child 0 also uses it`},
	}},
	{name: "issues sorted by child as a number", in: planOf(
		okChild, okChild, "2", okChild, okChild, okChild, okChild, okChild, okChild, okChild, "10", okChild,
	), children: 12, issues: []plan.SchemaViolation{
		{2, "", "must be an object, not a number"},
		{10, "", "must be an object, not a number"},
	}},
	{name: "issues sorted by index as a number", in: planOf(
		child(map[string]string{"tools": `["a","b",2,"c","d","e","f","g","h","i",10]`}),
	), children: 1, issues: []plan.SchemaViolation{
		{0, "/tools/2", "must be a string, not a number"},
		{0, "/tools/10", "must be a string, not a number"},
	}},
	{name: "issues sorted with number-like keys", in: planOf(child(map[string]string{"9": "1", "10": "1", "1a": "1"})), children: 1, issues: []plan.SchemaViolation{
		{0, "/9", `unknown key "9" (allowed: ` + childKeys + `)`},
		{0, "/10", `unknown key "10" (allowed: ` + childKeys + `)`},
		{0, "/1a", `unknown key "1a" (allowed: ` + childKeys + `)`},
	}},
	{name: "valid and invalid children", source: "plan.yaml", in: okYAMLPlan + "  - role: ''\n    tools: [x]\n    paths: []\n    budget_tokens: 1\n", children: 3, issues: []plan.SchemaViolation{
		{2, "/role", `must be a non-empty role name, not ""`},
	}},
}

// unplaced is an error's line without the line and column the loader
// places a schema problem at (TestSchemaProblemsArePlaced holds those):
// the tables below are about what is refused and why.
func unplaced(e *document.Error) string {
	c := *e
	c.Line, c.Column = 0, 0
	return c.Error()
}

// TestSchemaProblemsArePlaced: every problem of a document that breaks
// its schema is reported, each at the line and column of its value, the
// first one's line counting the others.
func TestSchemaProblemsArePlaced(t *testing.T) {
	l := newLoader(t)
	doc := "allowed_tools: 5\nworkspace_root: relative\nbudget_cap_tokens: -1\n"
	_, err := l.Policy(context.Background(), "pol.yaml", []byte(doc))
	var pe *document.Error
	if !errors.As(err, &pe) {
		t.Fatalf("Policy: %v", err)
	}
	if want := "pol.yaml:1:16: /allowed_tools: must be a list, not a number (and 2 more problems)"; pe.Error() != want {
		t.Errorf("got  %s\nwant %s", pe.Error(), want)
	}
	var more []string
	for _, m := range pe.More {
		more = append(more, fmt.Sprintf("%d:%d %s", m.Line, m.Column, m.Pointer))
	}
	if got, want := strings.Join(more, ", "), "3:20 /budget_cap_tokens, 2:17 /workspace_root"; got != want {
		t.Errorf("the other problems: %s, want %s", got, want)
	}
}

func TestLoaderPlan(t *testing.T) {
	l := newLoader(t)
	for _, tc := range planCases {
		t.Run(tc.name, func(t *testing.T) {
			source := tc.source
			if source == "" {
				source = "plan.json"
			}
			p, err := l.Plan(context.Background(), source, []byte(tc.in))
			if tc.err != "" {
				var pe *document.Error
				if !errors.As(err, &pe) || (pe.Error() != tc.err && unplaced(pe) != tc.err) {
					t.Fatalf("Plan(%s) error\n got %v\nwant %s", tc.in, err, tc.err)
				}
				if p != nil {
					t.Errorf("Plan(%s) = %+v with an error, want nil", tc.in, p)
				}
				return
			}
			if err != nil {
				t.Fatalf("Plan(%s) error: %v", tc.in, err)
			}
			if p.Source != source {
				t.Errorf("Source = %q, want %q", p.Source, source)
			}
			if len(p.Children) != tc.children {
				t.Errorf("%d children, want %d", len(p.Children), tc.children)
			}
			if !reflect.DeepEqual(p.Policy, tc.policy) {
				t.Errorf("Policy\n got %#v\nwant %#v", p.Policy, tc.policy)
			}
			if got := p.SchemaViolations(); !reflect.DeepEqual(got, tc.issues) {
				t.Errorf("Issues\n got %s\nwant %s", showIssues(got), showIssues(tc.issues))
			}
		})
	}
}

func showIssues(issues []plan.SchemaViolation) string {
	if len(issues) == 0 {
		return "(none)"
	}
	var b strings.Builder
	for _, is := range issues {
		b.WriteString("\n  ")
		b.WriteString(strings.Join([]string{strconv.Itoa(is.Child), is.Field, is.Message}, " | "))
	}
	return b.String()
}

// TestLoaderPlanChildren checks that children come back as written, in order.
func TestLoaderPlanChildren(t *testing.T) {
	l := newLoader(t)
	p, err := l.Plan(context.Background(), "plan.yaml", []byte(okYAMLPlan))
	if err != nil {
		t.Fatal(err)
	}
	want := []any{
		obj{"role": "home-cleaner", "tools": list{"fs.write", "shell.run"}, "paths": list{"~"}, "budget_tokens": num("5000000")},
		obj{"role": "doc-reader", "brief": "Summarize the docs.", "tools": list{"fs.read"}, "paths": list{"/repo/docs"},
			"budget_tokens": num("40000"), "id": "reader-1", "model": "small",
			"metadata": obj{"anything": list{num("1"), nil, obj{"x": true}}}},
	}
	if !reflect.DeepEqual(p.Children, want) {
		t.Errorf("Children\n got %#v\nwant %#v", p.Children, want)
	}
}

// TestLoaderPlanDeterministic reads a plan whose issues come from map
// iteration many times: the issues must come out the same every time.
func TestLoaderPlanDeterministic(t *testing.T) {
	l := newLoader(t)
	in := []byte(planOf(
		child(map[string]string{"9": "1", "10": "1", "1a": "1", "a/b": "1", "~": "1", "-1": "1", "01": "1", "id": `"d"`}),
		child(map[string]string{"id": `"d"`, "x": "1", "y": "1", "z": "1"}),
		child(map[string]string{"id": `"d"`}),
	))
	first, err := l.Plan(context.Background(), "plan.json", in)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 30; i++ {
		again, err := l.Plan(context.Background(), "plan.json", in)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(again.SchemaViolations(), first.SchemaViolations()) {
			t.Fatalf("run %d gave other issues\n got %s\nwant %s", i, showIssues(again.SchemaViolations()), showIssues(first.SchemaViolations()))
		}
	}
}

// policyCase is a document read with Loader.Policy.
type policyCase struct {
	name   string
	source string // "policy.json" when empty
	in     string
	want   plan.Policy
	err    string
}

var policyCases = []policyCase{
	{name: "minimal", in: okPolicy, want: plan.Policy{"allowed_tools": list{"fs.read"}, "workspace_root": "/repo", "budget_cap_tokens": num("200000")}},
	{name: "every key", in: policy(map[string]string{"allow_write": "true", "write_tools": `["fs.write","shell.*"]`, "allowed_tools": `["fs.*","**","a?c","mcp:x-y_z"]`}),
		want: plan.Policy{"allowed_tools": list{"fs.*", "**", "a?c", "mcp:x-y_z"}, "workspace_root": "/repo", "budget_cap_tokens": num("200000"),
			"allow_write": true, "write_tools": list{"fs.write", "shell.*"}}},
	{name: "yaml", source: "policy.yaml", in: "allowed_tools: []\nworkspace_root: /\nbudget_cap_tokens: 1\n",
		want: plan.Policy{"allowed_tools": list{}, "workspace_root": "/", "budget_cap_tokens": num("1")}},
	{name: "largest cap", in: policy(map[string]string{"budget_cap_tokens": "9007199254740991"}),
		want: plan.Policy{"allowed_tools": list{"fs.read"}, "workspace_root": "/repo", "budget_cap_tokens": num("9007199254740991")}},
	{name: "root with dots inside names", in: policy(map[string]string{"workspace_root": `"/repo/.hidden/a.b/..c/@x-y_z"`}),
		want: plan.Policy{"allowed_tools": list{"fs.read"}, "workspace_root": "/repo/.hidden/a.b/..c/@x-y_z", "budget_cap_tokens": num("200000")}},

	{name: "not a mapping", in: "[]", err: "policy.json: the top level must be a mapping of keys, not a list"},
	{name: "empty", in: "{}", err: `policy.json: /allowed_tools: required key "allowed_tools" is missing (and 2 more problems)`},
	{name: "no allowed_tools", in: policy(map[string]string{"allowed_tools": ""}), err: `policy.json: /allowed_tools: required key "allowed_tools" is missing`},
	{name: "no workspace_root", in: policy(map[string]string{"workspace_root": ""}), err: `policy.json: /workspace_root: required key "workspace_root" is missing`},
	{name: "no budget_cap_tokens", in: policy(map[string]string{"budget_cap_tokens": ""}), err: `policy.json: /budget_cap_tokens: required key "budget_cap_tokens" is missing`},
	{name: "unknown key", in: policy(map[string]string{"deny": "[]"}), err: `policy.json: /deny: unknown key "deny" (allowed: ` + policyKeys + `)`},
	{name: "everything wrong", in: policy(map[string]string{"allowed_tools": `"x"`, "workspace_root": "1", "budget_cap_tokens": `"1"`}),
		err: `policy.json: /allowed_tools: must be a list, not a string (and 2 more problems)`},
	{name: "problems counted", in: policy(map[string]string{"allowed_tools": `["a[b]", ""]`, "workspace_root": `"repo"`, "budget_cap_tokens": "0", "allow_write": `"true"`, "zz": "1"}),
		err: `policy.json: /allow_write: must be a boolean, not a string (and 5 more problems)`},

	{name: "allow_write as a string", in: policy(map[string]string{"allow_write": `"true"`}), err: `policy.json: /allow_write: must be a boolean, not a string`},
	{name: "allow_write as a number", in: policy(map[string]string{"allow_write": `1`}), err: `policy.json: /allow_write: must be a boolean, not a number`},
	{name: "allow_write yes in yaml", source: "policy.yaml", in: "allowed_tools: []\nworkspace_root: /repo\nbudget_cap_tokens: 1\nallow_write: yes\n",
		err: `policy.yaml:4:14: /allow_write: unquoted "yes" is a boolean to YAML 1.1 parsers: quote it`},
	{name: "allowed_tools as a string", in: policy(map[string]string{"allowed_tools": `"fs.read"`}), err: `policy.json: /allowed_tools: must be a list, not a string`},
	{name: "tool with brackets", in: policy(map[string]string{"allowed_tools": `["fs.read","fs[ab]"]`}),
		err: `policy.json: /allowed_tools/1: must be ` + patternTitle + `, not "fs[ab]"`},
	{name: "tool with a space", in: policy(map[string]string{"write_tools": `["x y"]`}),
		err: `policy.json: /write_tools/0: must be ` + patternTitle + `, not "x y"`},
	{name: "tool with a slash", in: policy(map[string]string{"allowed_tools": `["fs/read"]`}),
		err: `policy.json: /allowed_tools/0: must be ` + patternTitle + `, not "fs/read"`},
	{name: "empty tool", in: policy(map[string]string{"allowed_tools": `[""]`}),
		err: `policy.json: /allowed_tools/0: must be ` + patternTitle + `, not ""`},
	{name: "tool not a string", in: policy(map[string]string{"allowed_tools": `[1]`}), err: `policy.json: /allowed_tools/0: must be a string, not a number`},
	{name: "tool too long", in: policy(map[string]string{"allowed_tools": `["` + strings.Repeat("a", 257) + `"]`}),
		err: `policy.json: /allowed_tools/0: must be at most 256 characters long`},

	{name: "root not a string", in: policy(map[string]string{"workspace_root": "1"}), err: `policy.json: /workspace_root: must be a string, not a number`},
	{name: "root too long", in: policy(map[string]string{"workspace_root": `"/` + strings.Repeat("a", 4096) + `"`}),
		err: `policy.json: /workspace_root: must be at most 4096 characters long`},

	{name: "cap zero", in: policy(map[string]string{"budget_cap_tokens": "0"}), err: `policy.json: /budget_cap_tokens: must be at least 1, not 0`},
	{name: "cap negative", in: policy(map[string]string{"budget_cap_tokens": "-1"}), err: `policy.json: /budget_cap_tokens: must be at least 1, not -1`},
	{name: "cap with an exponent", in: policy(map[string]string{"budget_cap_tokens": "2e5"}), err: `policy.json: /budget_cap_tokens: must be ` + wholeTitle + `, not 2e5`},
	{name: "cap with a fraction", in: policy(map[string]string{"budget_cap_tokens": "200000.0"}), err: `policy.json: /budget_cap_tokens: must be ` + wholeTitle + `, not 200000.0`},
	{name: "cap fractional", in: policy(map[string]string{"budget_cap_tokens": "1.5"}), err: `policy.json: /budget_cap_tokens: must be a whole number, not a number`},
	{name: "cap above 2^53-1", in: policy(map[string]string{"budget_cap_tokens": "9007199254740992"}),
		err: `policy.json: /budget_cap_tokens: must be at most 9007199254740991, not 9007199254740992`},
	{name: "cap far above 2^53-1", in: policy(map[string]string{"budget_cap_tokens": "100000000000000000000000"}),
		err: `policy.json: /budget_cap_tokens: must be at most 9007199254740991, not 100000000000000000000000`},
	{name: "cap as a string", in: policy(map[string]string{"budget_cap_tokens": `"1000"`}), err: `policy.json: /budget_cap_tokens: must be a whole number, not a string`},
	{name: "cap null", in: policy(map[string]string{"budget_cap_tokens": "null"}), err: `policy.json: /budget_cap_tokens: must be a whole number, not null`},

	// checks (folders of the operator's own checks) is the operator's: a
	// plan's policy refuses it (see the plan cases), an operator's keeps it.
	{name: "checks", source: "policy.yaml", in: "allowed_tools: []\nworkspace_root: /\nbudget_cap_tokens: 1\nchecks: [checks, /etc/spawngate/checks]\n",
		want: plan.Policy{"allowed_tools": list{}, "workspace_root": "/", "budget_cap_tokens": num("1"), "checks": list{"checks", "/etc/spawngate/checks"}}},
	{name: "checks not a list", source: "policy.yaml", in: "allowed_tools: []\nworkspace_root: /\nbudget_cap_tokens: 1\nchecks: checks\n",
		err: `policy.yaml: /checks: must be a list, not a string`},
	{name: "checks with an empty folder", source: "policy.yaml", in: "allowed_tools: []\nworkspace_root: /\nbudget_cap_tokens: 1\nchecks: [\"\"]\n",
		err: `policy.yaml: /checks/0: must not be empty`},

	// An exception's id is the plan author's to choose: it needs the role
	// beside it, which the error names where it is missing. (Exceptions are
	// the operator's alone: with a source, these cases are not tried as a
	// plan's own policy.)
	{name: "exception paths", source: "policy.json", in: policy(map[string]string{"exceptions": `[{"rule":"paths.escape","path":"/data/**","reason":"r","expires":"2099-01-01"},{"rule":"paths.escape","path":"/data/*.sql","reason":"r","expires":"2099-01-01"},{"rule":"paths.escape","path":"/srv/**/a?c/*","reason":"r","expires":"2099-01-01"}]`}),
		want: plan.Policy{"allowed_tools": list{"fs.read"}, "workspace_root": "/repo", "budget_cap_tokens": num("200000"), "exceptions": list{
			map[string]any{"rule": "paths.escape", "path": "/data/**", "reason": "r", "expires": "2099-01-01"},
			map[string]any{"rule": "paths.escape", "path": "/data/*.sql", "reason": "r", "expires": "2099-01-01"},
			map[string]any{"rule": "paths.escape", "path": "/srv/**/a?c/*", "reason": "r", "expires": "2099-01-01"}}}},
	{name: "exception by id alone", source: "policy.json", in: policy(map[string]string{"exceptions": `[{"rule":"budget.cap","id":"backfill-1","reason":"r","expires":"2099-01-01"}]`}),
		err: `policy.json: /exceptions/0/role: required key "role" is missing: "id" is set, and needs it beside it`},
	{name: "exception by id and role", source: "policy.json", in: policy(map[string]string{"exceptions": `[{"rule":"budget.cap","role":"backfill","id":"backfill-1","reason":"r","expires":"2099-01-01"}]`}),
		want: plan.Policy{"allowed_tools": list{"fs.read"}, "workspace_root": "/repo", "budget_cap_tokens": num("200000"),
			"exceptions": list{map[string]any{"rule": "budget.cap", "role": "backfill", "id": "backfill-1", "reason": "r", "expires": "2099-01-01"}}}},
}

// exceptionPaths are path selectors the policy schema refuses: relative,
// not normalised, or with ** glued to a name (/data** matches /data-evil).
var exceptionPaths = []string{"data/**", "/data**", "/**data", "/data/***", "/data/../x", "/data/./x", "/data//x", "/data/", "/", "/data/~x", "/data/$x", "/data/{a,b}", "/data/[ab]", "/data/a b"}

func init() {
	for _, path := range exceptionPaths {
		policyCases = append(policyCases, policyCase{
			name:   "exception path " + path,
			source: "policy.json", // the operator's alone
			in:     policy(map[string]string{"exceptions": `[{"rule":"paths.escape","path":"` + path + `","reason":"r","expires":"2099-01-01"}]`}),
			err:    `policy.json: /exceptions/0/path: must be ` + exceptionPathTitle + `, not "` + path + `"`,
		})
	}
}

const exceptionPathTitle = "an absolute path or glob pattern in normalised form: segments of A-Z a-z 0-9 . _ - @, * within a segment, ** only as a whole segment, ? one character"

// badRoots are workspace roots the policy schema refuses.
var badRoots = []string{"repo", "", "/repo/", "/repo/./x", "/repo/../x", "/repo/.", "/repo/..", "/..", "//repo", "/repo//x", "~/repo", "/repo/~", `C:\\repo`, "/re po", "/répo", "./repo", "/repo/nul", "/repo/NUL.txt", "/repo/com1/x", "/repo/a.", "/repo/a./b"}

func init() {
	for _, root := range badRoots {
		policyCases = append(policyCases, policyCase{
			name: "root " + root,
			in:   policy(map[string]string{"workspace_root": `"` + root + `"`}),
			err:  `policy.json: /workspace_root: must be ` + rootTitle + `, not "` + root + `"`,
		})
	}
}

func TestLoaderPolicy(t *testing.T) {
	l := newLoader(t)
	for _, tc := range policyCases {
		t.Run(tc.name, func(t *testing.T) {
			source := tc.source
			if source == "" {
				source = "policy.json"
			}
			got, err := l.Policy(context.Background(), source, []byte(tc.in))
			if tc.err != "" {
				var pe *document.Error
				if !errors.As(err, &pe) || (pe.Error() != tc.err && unplaced(pe) != tc.err) {
					t.Fatalf("Policy(%s) error\n got %v\nwant %s", tc.in, err, tc.err)
				}
				if got != nil {
					t.Errorf("Policy(%s) = %#v with an error, want nil", tc.in, got)
				}
				return
			}
			if err != nil {
				t.Fatalf("Policy(%s) error: %v", tc.in, err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("Policy(%s)\n got %#v\nwant %#v", tc.in, got, tc.want)
			}
		})
	}
}

// TestLoaderPlanPolicyMatchesPolicy checks that a plan's own policy is held
// to the same schema as an operator policy: the same problem, under /policy.
func TestLoaderPlanPolicyMatchesPolicy(t *testing.T) {
	l := newLoader(t)
	for _, tc := range policyCases {
		if tc.source != "" || !strings.HasPrefix(tc.in, "{") {
			continue
		}
		t.Run(tc.name, func(t *testing.T) {
			in := `{"plan":[` + okChild + `],"policy":` + tc.in + `}`
			p, err := l.Plan(context.Background(), "policy.json", []byte(in))
			if tc.err == "" {
				if err != nil || !reflect.DeepEqual(p.Policy, tc.want) {
					t.Fatalf("Plan(%s) = %v, %v; want policy %#v", in, p, err, tc.want)
				}
				return
			}
			want := strings.Replace(tc.err, "policy.json: /", "policy.json: /policy/", 1)
			for _, operatorOnly := range []string{"checks", "exceptions", "roles", "unknown_roles"} {
				want = strings.Replace(want, " "+operatorOnly+",", "", 1) // never offered to a plan
			}
			var pe *document.Error
			if !errors.As(err, &pe) || (pe.Error() != want && unplaced(pe) != want) {
				t.Fatalf("Plan(%s) error\n got %v\nwant %s", in, err, want)
			}
		})
	}
}
