package engine_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/spawngate/spawngate/internal/document"
	"github.com/spawngate/spawngate/internal/engine"
	"github.com/spawngate/spawngate/internal/plan"
	"github.com/spawngate/spawngate/internal/report"
	"github.com/spawngate/spawngate/policy"
)

// builtin is an engine of the built-in checks and any extra modules.
func builtin(t testing.TB, extra ...policy.Module) *engine.Engine {
	t.Helper()
	e, err := engine.New(append(builtinModules(t), extra...))
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func loader(t testing.TB) *plan.Loader {
	t.Helper()
	l, err := plan.NewLoader(document.DefaultLimits)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

const operatorPolicy = `{"allowed_tools": ["fs.read", "fs.write", "http.get", "mcp__github__get_*"], "workspace_root": "/repo/workspace", "budget_cap_tokens": 200000}`

func TestBuiltinChecks(t *testing.T) {
	want := map[string]string{
		"schema":            "high",
		"budget.cap":        "medium",
		"budget.invalid":    "high",
		"paths.escape":      "critical",
		"paths.invalid":     "high",
		"tools.allowlist":   "high",
		"tools.missing":     "high",
		"tools.write":       "high",
		"tools.spawn":       "high",
		"model.allowlist":   "medium",
		"agent.definition":  "high",
		"agent.launch":      "high",
		"agent.tools":       "high",
		"agent.permissions": "critical",
		"agent.sandbox":     "high",
		"roles.unknown":     "high",
		"plan.children":     "medium",
		"plan.budget":       "medium",
		"tree.tools":        "high",
		"tree.paths":        "critical",
		"tree.budget":       "medium",
		"tree.spawn":        "high",
		"tree.depth":        "high",
		"tree.descendants":  "medium",
		"brief.retask":      "high",
		"brief.secrets":     "critical",
		"task.ownership":    "high",
	}
	got := map[string]string{}
	for _, c := range builtin(t).Checks() {
		if c.Title == "" || c.Description == "" {
			t.Errorf("%s has no title or description", c.ID)
		}
		got[c.ID] = c.Severity
	}
	if len(got) != len(want) {
		t.Errorf("checks = %v, want %v", got, want)
	}
	for id, sev := range want {
		if got[id] != sev {
			t.Errorf("check %s: severity %q, want %q", id, got[id], sev)
		}
	}
}

// module builds a check module with the given METADATA lines and body.
func module(pkg, meta, body string) policy.Module {
	src := ""
	if meta != "" {
		src = "# METADATA\n" + meta
	}
	src += "package " + pkg + "\n\n" + body + "\n"
	return policy.Module{Name: strings.ReplaceAll(pkg, ".", "_") + ".rego", Source: src}
}

const (
	goodMeta = "# title: T\n# description: D\n# custom:\n#   id: x.ok\n#   severity: low\n"
	denyNone = "deny contains v if { v := 1; false }"
)

func TestNewRefusesPoliciesItCannotTrust(t *testing.T) {
	tests := []struct {
		name    string
		modules []policy.Module
		want    string
	}{
		{"no checks at all", nil, "no checks under spawngate.checks"},
		{"no METADATA", []policy.Module{module("spawngate.checks.a", "", denyNone)}, "no # METADATA with custom.id"},
		{"no custom.id", []policy.Module{module("spawngate.checks.a", "# title: T\n# description: D\n# custom:\n#   severity: low\n", denyNone)}, "METADATA has no custom.id"},
		{"id not dotted", []policy.Module{module("spawngate.checks.a", "# title: T\n# description: D\n# custom:\n#   id: Bad\n#   severity: low\n", denyNone)}, `custom.id "Bad" is not a rule ID`},
		{"unknown severity", []policy.Module{module("spawngate.checks.a", "# title: T\n# description: D\n# custom:\n#   id: a.b\n#   severity: severe\n", denyNone)}, `custom.severity "severe"`},
		{"no title", []policy.Module{module("spawngate.checks.a", "# description: D\n# custom:\n#   id: a.b\n#   severity: low\n", denyNone)}, "METADATA has no title"},
		{"no description", []policy.Module{module("spawngate.checks.a", "# title: T\n# custom:\n#   id: a.b\n#   severity: low\n", denyNone)}, "METADATA has no description"},
		{"no deny rule", []policy.Module{module("spawngate.checks.a", goodMeta, "allow := true")}, "no deny rule"},
		{"recursion", []policy.Module{module("spawngate.checks.a", goodMeta, "deny contains v if { v := f(1) }\nf(x) := f(x)")}, "rego_recursion_error"},
		{"unknown scope", []policy.Module{module("spawngate.checks.a", strings.Replace(goodMeta, "x.ok", "x.ok\n#   scope: tree", 1), denyNone)}, `custom.scope "tree" is not child or plan`},
		{"duplicate id", []policy.Module{module("spawngate.checks.a", goodMeta, denyNone), module("spawngate.checks.b", goodMeta, denyNone)}, "rule ID x.ok is already used"},
		{"reserved id", []policy.Module{module("spawngate.checks.a", strings.Replace(goodMeta, "x.ok", "schema", 1), denyNone)}, `custom.id "schema" is not a rule ID`},
		{"nested package", []policy.Module{module("spawngate.checks.a.b", goodMeta, denyNone)}, "one level below spawngate.checks"},
		{"parse error", []policy.Module{{Name: "bad.rego", Source: "package spawngate.checks.a\ndeny contains"}}, "bad.rego"},
		{"network built-in", []policy.Module{module("spawngate.checks.a", goodMeta, `deny contains v if { v := http.send({"method": "get", "url": "http://x"}) }`)}, "http.send"},
		{"clock built-in", []policy.Module{module("spawngate.checks.a", goodMeta, "deny contains v if { v := time.now_ns() }")}, "time.now_ns"},
		{"random built-in", []policy.Module{module("spawngate.checks.a", goodMeta, `deny contains v if { v := rand.intn("x", 2) }`)}, "rand.intn"},
		{"signing with randomness", []policy.Module{module("spawngate.checks.a", goodMeta, `deny contains v if { v := io.jwt.encode_sign({"alg": "HS256"}, {}, {"kty": "oct", "k": "a"}) }`)}, "io.jwt.encode_sign"},
		{"verifying against the clock", []policy.Module{module("spawngate.checks.a", goodMeta, `deny contains v if { v := io.jwt.decode_verify("x", {"secret": "s"}) }`)}, "io.jwt.decode_verify"},
		{"reads a field that grants nothing", []policy.Module{module("spawngate.checks.a", goodMeta, `deny contains v if { some child in input.children; v := child.metadata }`)}, `mentions "metadata": checks may not read a child's brief, brief_unreadable, id, metadata`},
		{"reads without when_set", []policy.Module{module("spawngate.checks.a", goodMeta+"#   scope: plan\n#   reads: [metadata]\n", `deny contains v if { some child in input.children; v := child.metadata }`)}, "custom.reads must be a list of child keys, for a check of the whole plan that declares custom.when_set"},
		{"when_set on a child check", []policy.Module{module("spawngate.checks.a", goodMeta+"#   when_set: [max_children]\n", denyNone)}, "custom.when_set must be a list of policy keys, for a check of the whole plan (custom.scope: plan)"},
		{"when_set empty", []policy.Module{module("spawngate.checks.a", goodMeta+"#   scope: plan\n#   when_set: []\n", denyNone)}, "custom.when_set must be a list of policy keys"},
		{"when_set not a key", []policy.Module{module("spawngate.checks.a", goodMeta+"#   scope: plan\n#   when_set: [Max-Children]\n", denyNone)}, "custom.when_set: Max-Children is not a policy key"},
		{"reads not a key", []policy.Module{module("spawngate.checks.a", goodMeta+"#   scope: plan\n#   when_set: [x]\n#   reads: [7]\n", denyNone)}, "custom.reads: 7 is not a child key"},
		{"reads one key, mentions another", []policy.Module{module("spawngate.checks.a", goodMeta+"#   scope: plan\n#   when_set: [x]\n#   reads: [brief]\n", `deny contains v if { some child in input.children; v := child.metadata }`)}, `mentions "metadata"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := engine.New(tt.modules)
			if err == nil {
				t.Fatalf("New succeeded, want an error containing %q", tt.want)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %q does not contain %q", err, tt.want)
			}
		})
	}
}

func TestNewAcceptsAnOperatorCheckBesideTheBuiltins(t *testing.T) {
	extra := module("spawngate.checks.no_http", strings.Replace(goodMeta, "x.ok", "org.no-http", 1),
		`import data.spawngate.lib

deny contains lib.violation(i, "/tools", "no http here") if {
	some i, child in lib.children
	"http.get" in child.tools
}`)
	e := builtin(t, extra)
	p := mustPlan(t, `{"plan": [{"role": "r", "tools": ["http.get"], "paths": [], "budget_tokens": 1}]}`)
	res, err := e.Evaluate(context.Background(), mustPolicy(t, operatorPolicy), p)
	if err != nil {
		t.Fatal(err)
	}
	if got := rules(res.Children[0]); got != "org.no-http /plan/0/tools" {
		t.Fatalf("violations = %q", got)
	}
}

func mustPlan(t testing.TB, doc string) *plan.Plan {
	t.Helper()
	p, err := loader(t).Plan(context.Background(), "plan.json", []byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func mustPolicy(t testing.TB, doc string) plan.Policy {
	t.Helper()
	p, err := loader(t).Policy(context.Background(), "policy.json", []byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// rules lists a child's violations as "rule path" pairs, in report order.
func rules(c report.Child) string {
	var parts []string
	for _, v := range c.Violations {
		parts = append(parts, v.Rule+" "+v.Path)
	}
	return strings.Join(parts, "; ")
}

func TestEvaluate(t *testing.T) {
	e := builtin(t)
	tests := []struct {
		name   string
		plan   string
		want   []string // per child: "rule path; ..." or "" for a pass
		policy []string
	}{
		{
			name: "clean child passes",
			plan: `{"plan": [{"role": "r", "tools": ["fs.read"], "paths": ["/repo/workspace/docs"], "budget_tokens": 40000}]}`,
			want: []string{""},
		},
		{
			name: "seed essay home-cleaner",
			plan: `{"plan": [{"role": "home-cleaner", "tools": ["fs.write", "fs:*", "shell.run"], "paths": ["~"], "budget_tokens": 5000000},
			                 {"role": "doc-reader", "tools": ["fs.read"], "paths": ["/repo/workspace/docs"], "budget_tokens": 40000}]}`,
			want: []string{
				"budget.cap /plan/0/budget_tokens; paths.escape /plan/0/paths/0; tools.write /plan/0/tools/0; tools.allowlist /plan/0/tools/1; tools.allowlist /plan/0/tools/2; tools.write /plan/0/tools/2",
				"",
			},
		},
		{
			name: "a schema issue a check already reports is not repeated",
			plan: `{"plan": [{"role": "r", "tools": "fs.read", "paths": [1], "budget_tokens": "9"}]}`,
			want: []string{"budget.invalid /plan/0/budget_tokens; paths.invalid /plan/0/paths/0; tools.missing /plan/0/tools"},
		},
		{
			name: "missing keys are reported once each",
			plan: `{"plan": [{"role": "r"}]}`,
			want: []string{"budget.invalid /plan/0/budget_tokens; paths.invalid /plan/0/paths; tools.missing /plan/0/tools"},
		},
		{
			name: "schema issues no check covers stand",
			plan: `{"plan": [{"role": "", "tools": ["fs.read"], "paths": [], "budget_tokens": 1, "extra": true, "model": 5}]}`,
			want: []string{"schema /plan/0/extra; schema /plan/0/model; schema /plan/0/role"},
		},
		{
			name: "a child that is not an object is refused once",
			plan: `{"plan": ["fs.read", {"role": "r", "tools": ["fs.read"], "paths": [], "budget_tokens": 1}]}`,
			want: []string{"schema /plan/0", ""},
		},
		{
			name: "budget written with an exponent is refused, an equal whole number is not",
			plan: `{"plan": [{"role": "r", "tools": ["fs.read"], "paths": [], "budget_tokens": 40000},
			                 {"role": "r", "tools": ["fs.read"], "paths": [], "budget_tokens": 4e4},
			                 {"role": "r", "tools": ["fs.read"], "paths": [], "budget_tokens": 40000.0}]}`,
			want: []string{"", "budget.invalid /plan/1/budget_tokens", "budget.invalid /plan/2/budget_tokens"},
		},
		{
			name: "duplicate ids refuse both children",
			plan: `{"plan": [{"id": "a", "role": "r", "tools": ["fs.read"], "paths": [], "budget_tokens": 1},
			                 {"id": "a", "role": "r", "tools": ["fs.read"], "paths": [], "budget_tokens": 1},
			                 {"id": "b", "role": "r", "tools": ["fs.read"], "paths": [], "budget_tokens": 1}]}`,
			want: []string{"schema /plan/0/id", "schema /plan/1/id", ""},
		},
		{
			name:   "an inline policy narrows",
			plan:   `{"policy": {"allowed_tools": ["fs.read"], "workspace_root": "/repo/workspace/docs", "budget_cap_tokens": 100}, "plan": [{"role": "r", "tools": ["http.get"], "paths": ["/repo/workspace/src", "api"], "budget_tokens": 101}]}`,
			want:   []string{"budget.cap /plan/0/budget_tokens; paths.escape /plan/0/paths/0; tools.allowlist /plan/0/tools/0"},
			policy: []string{"operator", "plan"},
		},
		{
			name:   "an inline policy cannot widen",
			plan:   `{"policy": {"allowed_tools": ["**"], "allow_write": true, "workspace_root": "/", "budget_cap_tokens": 9000000}, "plan": [{"role": "r", "tools": ["shell.run", "fs.write"], "paths": ["/etc", "etc"], "budget_tokens": 5000000}]}`,
			want:   []string{"budget.cap /plan/0/budget_tokens; paths.escape /plan/0/paths/0; paths.escape /plan/0/paths/1; tools.allowlist /plan/0/tools/0; tools.write /plan/0/tools/0; tools.write /plan/0/tools/1"},
			policy: []string{"operator", "plan"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := e.Evaluate(context.Background(), mustPolicy(t, operatorPolicy), mustPlan(t, tt.plan))
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Children) != len(tt.want) {
				t.Fatalf("%d children, want %d", len(res.Children), len(tt.want))
			}
			wantVerdict := report.Pass
			for i, want := range tt.want {
				c := res.Children[i]
				if got := rules(c); got != want {
					t.Errorf("child %d:\n got  %s\n want %s", i, got, want)
				}
				verdict := report.Pass
				if want != "" {
					verdict, wantVerdict = report.Block, report.Block
				}
				if c.Verdict != verdict || c.Index != i {
					t.Errorf("child %d: verdict %s index %d, want %s %d", i, c.Verdict, c.Index, verdict, i)
				}
			}
			if res.Verdict != wantVerdict {
				t.Errorf("plan verdict %s, want %s", res.Verdict, wantVerdict)
			}
			wantPolicies := tt.policy
			if wantPolicies == nil {
				wantPolicies = []string{"operator"}
			}
			if strings.Join(res.Policies, ",") != strings.Join(wantPolicies, ",") {
				t.Errorf("policies %v, want %v", res.Policies, wantPolicies)
			}
		})
	}
}

func TestEvaluateWithoutAnyPolicyIsAnError(t *testing.T) {
	p := mustPlan(t, `{"plan": [{"role": "r", "tools": ["fs.read"], "paths": [], "budget_tokens": 1}]}`)
	_, err := builtin(t).Evaluate(context.Background(), nil, p)
	if !errors.Is(err, engine.ErrNoPolicy) {
		t.Fatalf("err = %v, want ErrNoPolicy", err)
	}
}

func TestEvaluateInlinePolicyAlone(t *testing.T) {
	p := mustPlan(t, `{"policy": {"allowed_tools": ["fs.read"], "workspace_root": "/w", "budget_cap_tokens": 10}, "plan": [{"role": "r", "tools": ["fs.read"], "paths": ["x"], "budget_tokens": 10}]}`)
	res, err := builtin(t).Evaluate(context.Background(), nil, p)
	if err != nil {
		t.Fatal(err)
	}
	if res.Verdict != report.Pass || strings.Join(res.Policies, ",") != "plan" {
		t.Fatalf("verdict %s policies %v", res.Verdict, res.Policies)
	}
}

// TestEvaluateRefusesMalformedResults feeds the engine checks whose deny
// sets are not what the gate can report. Each must be an error, never a
// pass and never a silently dropped violation.
func TestEvaluateRefusesMalformedResults(t *testing.T) {
	tests := []struct {
		name, body, want string
	}{
		{"not an object", `deny contains "x" if true`, "malformed violation"},
		{"missing message", `deny contains {"child": 0, "field": ""} if true`, "malformed violation"},
		{"extra key", `deny contains {"child": 0, "field": "", "message": "m", "x": 1} if true`, "malformed violation"},
		{"other keys", `deny contains {"a": 0, "b": "", "c": "m"} if true`, "no child"},
		{"no child from a child check", `deny contains {"field": "/plan", "message": "m"} if true`, "only a check of the whole plan"},
		{"policies not a list", `deny contains {"child": 0, "field": "", "message": "m", "policies": "operator"} if true`, "policies is not a sorted list"},
		{"policies empty", `deny contains {"child": 0, "field": "", "message": "m", "policies": []} if true`, "policies is not a sorted list"},
		{"policies unsorted", `deny contains {"child": 0, "field": "", "message": "m", "policies": ["plan", "operator"]} if true`, "policies is not a sorted list"},
		{"policies repeated", `deny contains {"child": 0, "field": "", "message": "m", "policies": ["plan", "plan"]} if true`, "policies is not a sorted list"},
		{"policies not strings", `deny contains {"child": 0, "field": "", "message": "m", "policies": [1]} if true`, "policies is not a sorted list"},
		{"policies a set", `deny contains {"child": 0, "field": "", "message": "m", "policies": {"plan"}} if true`, "policies is not a sorted list"},
		{"child written 0.0", `deny contains {"child": 0.0, "field": "", "message": "m"} if true`, "child is not an index"},
		{"empty message", `deny contains {"child": 0, "field": "", "message": " "} if true`, "message is empty"},
		{"child out of range", `deny contains {"child": 1, "field": "", "message": "m"} if true`, "child is not an index"},
		{"child negative", `deny contains {"child": -1, "field": "", "message": "m"} if true`, "child is not an index"},
		{"child not whole", `deny contains {"child": 0.5, "field": "", "message": "m"} if true`, "child is not an index"},
		{"child a string", `deny contains {"child": "0", "field": "", "message": "m"} if true`, "child is not an index"},
		{"field not a pointer", `deny contains {"child": 0, "field": "tools", "message": "m"} if true`, "field is not a JSON pointer"},
		{"deny not a set", `deny := {"child": 0, "field": "", "message": "m"}`, "deny is not a set"},
		{"built-in error", `deny contains {"child": 0, "field": "", "message": m} if { m := sprintf("%d", [to_number("x")]) }`, "evaluating the policy"},
		{"conflicting values", "deny := 1 if true\ndeny := 2 if true", "evaluating the policy"},
		{"undefined deny", `deny := {"x"} if false`, "the result is undefined"},
	}
	p := mustPlan(t, `{"plan": [{"role": "r", "tools": ["fs.read"], "paths": [], "budget_tokens": 1}]}`)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, err := engine.New([]policy.Module{module("spawngate.checks.bad", goodMeta, tt.body)})
			if err != nil {
				t.Fatalf("New: %v", err)
			}
			res, err := e.Evaluate(context.Background(), mustPolicy(t, operatorPolicy), p)
			if err == nil {
				t.Fatalf("Evaluate succeeded with verdict %s, want an error containing %q", res.Verdict, tt.want)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %q does not contain %q", err, tt.want)
			}
		})
	}
}

func TestEvaluateHonoursCancellation(t *testing.T) {
	e := builtin(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := e.Evaluate(ctx, mustPolicy(t, operatorPolicy), mustPlan(t, `{"plan": [{"role": "r", "tools": ["fs.read"], "paths": [], "budget_tokens": 1}]}`))
	if err == nil {
		t.Fatal("Evaluate with a cancelled context succeeded")
	}
}

// TestEvaluateIsDeterministic runs the same plan many times: the report
// must not depend on map order or on anything but the input. Without
// memos, every run evaluates the checks; with them, the first does and the
// rest are found again, and must come out as the first did.
func TestEvaluateIsDeterministic(t *testing.T) {
	const runs = 21
	for _, tc := range []struct {
		name  string
		opts  []engine.Option
		evals int64 // how many times the checks are evaluated, when counted (shared values)
	}{
		{"without memos", []engine.Option{engine.NoMemos()}, runs},
		{"without memos or shared values", []engine.Option{engine.NoMemos(), engine.NoSharedValues()}, 0},
		{"with memos", nil, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, err := engine.New(builtinModules(t), tc.opts...)
			if err != nil {
				t.Fatal(err)
			}
			pol := mustPolicy(t, operatorPolicy)
			doc := `{"plan": [{"role": "a", "tools": ["x", "y", "fs:*", 1], "paths": ["~", "/etc", "a b", "..", 2], "budget_tokens": 5e9, "z": 1, "y": 2}]}`
			first, err := e.Evaluate(context.Background(), pol, mustPlan(t, doc))
			if err != nil {
				t.Fatal(err)
			}
			if len(first.Children[0].Violations) < 8 {
				t.Fatalf("only %d violations: the plan should be refused many ways", len(first.Children[0].Violations))
			}
			for range runs - 1 {
				again, err := e.Evaluate(context.Background(), pol, mustPlan(t, doc))
				if err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(again, first) {
					t.Fatalf("runs differ:\n%+v\n%+v", again, first)
				}
			}
			if n := engine.Evaluations(e); n != tc.evals {
				t.Errorf("the checks were evaluated %d times in %d runs, want %d", n, runs, tc.evals)
			}
		})
	}
}

// A check of the whole plan (custom.scope: plan) sees every group at once,
// one child per group, and must weigh it by input.members: here, a limit of
// two children counts three identical ones.
func TestPlanWideCheckWeighsGroupsByMembers(t *testing.T) {
	limit := module("spawngate.checks.plan_size", strings.Replace(goodMeta, "x.ok", "plan.size\n#   scope: plan", 1),
		`deny contains {"child": 0, "field": "", "message": sprintf("%d children, more than 2", [n])} if {
	n := sum(input.members)
	n > 2
}`)
	e := builtin(t, limit)
	child := `{"role": "r", "tools": ["fs.read"], "paths": [], "budget_tokens": 1, "id": "%s"}`
	p := mustPlan(t, `{"plan": [`+fmt.Sprintf(child, "a")+`,`+fmt.Sprintf(child, "b")+`,`+fmt.Sprintf(child, "c")+`]}`)
	if len(p.Reps) != 1 {
		t.Fatalf("%d groups, want the three children in one", len(p.Reps))
	}
	res, err := e.Evaluate(context.Background(), mustPolicy(t, operatorPolicy), p)
	if err != nil {
		t.Fatal(err)
	}
	for i, c := range res.Children {
		if got := rules(c); got != "plan.size /plan/"+strconv.Itoa(i) {
			t.Errorf("child %d: %q", i, got)
		}
		if c.Violations[0].Message != "3 children, more than 2" {
			t.Errorf("child %d: %q", i, c.Violations[0].Message)
		}
	}
}

// A check of the whole plan may report the plan itself: a violation that
// names no child blocks the plan, at a pointer into the document, and no
// child. It must still point somewhere.
func TestPlanWideCheckMayRefuseThePlan(t *testing.T) {
	meta := strings.Replace(goodMeta, "x.ok", "plan.size\n#   scope: plan", 1)
	limit := module("spawngate.checks.plan_size", meta,
		`deny contains {"field": "/plan", "message": sprintf("%d children, more than 2", [n]), "policies": ["operator"]} if {
	n := sum(input.members)
	n > 2
}`)
	e := builtin(t, limit)
	child := `{"role": "r", "tools": ["fs.read"], "paths": [], "budget_tokens": 1, "id": "%s"}`
	three := mustPlan(t, `{"plan": [`+fmt.Sprintf(child, "a")+`,`+fmt.Sprintf(child, "b")+`,`+fmt.Sprintf(child, "c")+`]}`)
	res, err := e.Evaluate(context.Background(), mustPolicy(t, operatorPolicy), three)
	if err != nil {
		t.Fatal(err)
	}
	if res.Verdict != report.Block || len(res.Violations) != 1 {
		t.Fatalf("verdict %s, plan violations %v; want block and one", res.Verdict, res.Violations)
	}
	if v := res.Violations[0]; v.Rule != "plan.size" || v.Path != "/plan" || v.Message != "3 children, more than 2" || strings.Join(v.Policies, ",") != "operator" {
		t.Errorf("plan violation %+v", v)
	}
	for i, c := range res.Children {
		if c.Verdict != report.Pass || len(c.Violations) != 0 {
			t.Errorf("child %d: %s %v; the plan is refused, not the child", i, c.Verdict, c.Violations)
		}
	}
	two := mustPlan(t, `{"plan": [`+fmt.Sprintf(child, "a")+`,`+fmt.Sprintf(child, "b")+`]}`)
	if res, err := e.Evaluate(context.Background(), mustPolicy(t, operatorPolicy), two); err != nil || res.Verdict != report.Pass || res.Violations != nil {
		t.Errorf("two children: %s %v %v; want a pass", res.Verdict, res.Violations, err)
	}
	nowhere := module("spawngate.checks.plan_size", meta, `deny contains {"field": "", "message": "m"} if true`)
	e = builtin(t, nowhere)
	if res, err := e.Evaluate(context.Background(), mustPolicy(t, operatorPolicy), two); err == nil || !strings.Contains(err.Error(), "field is not a JSON pointer") {
		t.Errorf("a plan violation at no field: %s, %v; want an error", res.Verdict, err)
	}
}

// A check that reads a child as a whole must not judge one member of a
// group by another's values: the keys members differ in are gone before
// any check sees the child.
func TestChecksNeverSeeWhatMembersDifferIn(t *testing.T) {
	whole := module("spawngate.checks.whole", strings.Replace(goodMeta, "x.ok", "x.whole", 1),
		`import data.spawngate.lib

deny contains lib.violation(i, "", "the child says secret") if {
	some i, child in lib.children
	contains(json.marshal(child), "secret")
}`)
	e := builtin(t, whole)
	// Either member may be the one the group is judged by, so both orders:
	// with the "secret" child first, a check that saw the brief would block
	// the whole group.
	child := `{"role": "r", "tools": ["fs.read"], "paths": [], "budget_tokens": 1, "brief": "%s"}`
	for _, briefs := range [][2]string{{"ok", "secret"}, {"secret", "ok"}} {
		p := mustPlan(t, `{"plan": [`+fmt.Sprintf(child, briefs[0])+`,`+fmt.Sprintf(child, briefs[1])+`]}`)
		if len(p.Reps) != 1 {
			t.Fatalf("the two children form %d groups, want 1", len(p.Reps))
		}
		res, err := e.Evaluate(context.Background(), mustPolicy(t, operatorPolicy), p)
		if err != nil {
			t.Fatal(err)
		}
		if res.Verdict != report.Pass {
			t.Fatalf("briefs %q: a check saw the brief: %+v", briefs, res.Children)
		}
	}
}

// What the plan checks found is remembered by the groups and how many
// members each has: the same children in other numbers are judged again.
func TestPlanFindingsAreRememberedByMembers(t *testing.T) {
	limit := module("spawngate.checks.plan_size", strings.Replace(goodMeta, "x.ok", "plan.size\n#   scope: plan", 1),
		`deny contains {"field": "/plan", "message": sprintf("%d children, more than 2", [n])} if {
	n := sum(input.members)
	n > 2
}`)
	e := builtin(t, limit)
	child := `{"role": "r", "tools": ["fs.read"], "paths": [], "budget_tokens": 1}`
	plans := func(n int) string { return `{"plan": [` + strings.TrimSuffix(strings.Repeat(child+",", n), ",") + `]}` }
	for _, n := range []int{3, 2, 3, 4, 2} {
		res, err := e.Evaluate(context.Background(), mustPolicy(t, operatorPolicy), mustPlan(t, plans(n)))
		if err != nil {
			t.Fatal(err)
		}
		if refused := len(res.Violations) == 1; refused != (n > 2) {
			t.Errorf("%d children: plan violations %v", n, res.Violations)
		} else if refused && res.Violations[0].Message != fmt.Sprintf("%d children, more than 2", n) {
			t.Errorf("%d children: %q", n, res.Violations[0].Message)
		}
	}
}

// A check of the whole plan that declares custom.when_set runs only when a
// policy that applies sets one of those keys: here it refuses every plan it
// sees, so what it reports says whether it ran.
func TestPlanCheckRunsWhenItsKeysAreSet(t *testing.T) {
	meta := strings.Replace(goodMeta, "x.ok", "plan.always\n#   scope: plan\n#   when_set: [max_children]", 1)
	always := module("spawngate.checks.plan_always", meta, `deny contains {"field": "/plan", "message": "ran"} if true`)
	e := builtin(t, always)
	p := `{"plan": [{"role": "r", "tools": ["fs.read"], "paths": [], "budget_tokens": 1}]%s}`
	for _, tc := range []struct {
		operator, plan string
		ran            bool
	}{
		{operatorPolicy, "", false},
		{strings.Replace(operatorPolicy, "}", `, "max_children": 5}`, 1), "", true},
		{operatorPolicy, `, "policy": {"allowed_tools": ["fs.read"], "workspace_root": "/repo/workspace", "budget_cap_tokens": 10, "max_children": 5}`, true},
	} {
		res, err := e.Evaluate(context.Background(), mustPolicy(t, tc.operator), mustPlan(t, fmt.Sprintf(p, tc.plan)))
		if err != nil {
			t.Fatal(err)
		}
		if ran := len(res.Violations) == 1; ran != tc.ran {
			t.Errorf("operator %s, plan %q: ran %v, want %v", tc.operator, tc.plan, ran, tc.ran)
		}
	}
	for _, bad := range []string{
		strings.Replace(goodMeta, "x.ok", "x.bad\n#   when_set: [max_children]", 1),                // a child check
		strings.Replace(goodMeta, "x.ok", "x.bad\n#   scope: plan\n#   when_set: []", 1),           // nothing named
		strings.Replace(goodMeta, "x.ok", "x.bad\n#   scope: plan\n#   when_set: max_children", 1), // not a list
		strings.Replace(goodMeta, "x.ok", "x.bad\n#   scope: plan\n#   when_set: [Max-Children]", 1),
	} {
		if _, err := engine.New(append(builtinModules(t), module("spawngate.checks.bad", bad, denyNone))); err == nil || !strings.Contains(err.Error(), "when_set") {
			t.Errorf("METADATA\n%s\nbuilt an engine (%v), want a when_set error", bad, err)
		}
	}
}

// While a check that reads what grants nothing applies (brief.retask reads
// the brief), children that differ only in it are judged one by one: the
// twin whose brief lacks the block is refused, the other is not. Without
// the policy key the same two children are one group, and both pass.
func TestChecksThatReadSplitGroups(t *testing.T) {
	e := builtin(t)
	child := func(brief string) string {
		return `{"role": "r", "tools": ["fs.read"], "paths": [], "budget_tokens": 1, "brief": "` + brief + `"}`
	}
	doc := `{"plan": [` + child("RETASK CHANNEL: token R-abcdef12. Done when merged.") + `, ` + child("Just do it.") + `]}`
	p := mustPlan(t, doc)
	if p.Group[0] != p.Group[1] {
		t.Fatalf("twins that differ in their brief are loaded as one group: %v", p.Group)
	}
	on := `{"allowed_tools": ["fs.read"], "workspace_root": "/repo", "budget_cap_tokens": 10, "brief_retask": {}}`
	res, err := e.Evaluate(context.Background(), mustPolicy(t, on), p)
	if err != nil {
		t.Fatal(err)
	}
	if got := rules(res.Children[0]) + " | " + rules(res.Children[1]); got != " | brief.retask /plan/1/brief" {
		t.Fatalf("with brief_retask: %q", got)
	}
	off := `{"allowed_tools": ["fs.read"], "workspace_root": "/repo", "budget_cap_tokens": 10}`
	res, err = e.Evaluate(context.Background(), mustPolicy(t, off), p)
	if err != nil {
		t.Fatal(err)
	}
	if res.Verdict != report.Pass {
		t.Fatalf("without brief_retask: %+v", res)
	}
}
