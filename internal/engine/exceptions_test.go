package engine_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/spawngate/spawngate/internal/engine"
	"github.com/spawngate/spawngate/internal/plan"
	"github.com/spawngate/spawngate/internal/report"
)

// An operator policy whose exceptions the tests below exercise: shell.run
// for the migrator until the end of January, a budget for job-7 alone, and
// two that can never apply here (one expired, one for a rule nothing breaks).
const exceptingPolicy = `{"allowed_tools": ["fs.read", "shell.run"], "workspace_root": "/repo", "budget_cap_tokens": 1000,
  "exceptions": [
    {"rule": "tools.write", "role": "migrator", "tool": "shell.run", "reason": "OPS-12 migration", "expires": "2027-01-31"},
    {"rule": "budget.cap", "role": "backfill", "id": "job-7", "reason": "OPS-13 backfill", "expires": "2027-01-31"},
    {"rule": "tools.write", "role": "reader", "reason": "gone", "expires": "2026-11-30"},
    {"rule": "model.allowlist", "role": "migrator", "reason": "never needed", "expires": "2027-01-31"}
  ]}`

func excepted(t *testing.T, planDoc string, opts ...engine.EvalOption) report.Result {
	t.Helper()
	res, err := builtin(t).Evaluate(context.Background(), mustPolicy(t, exceptingPolicy), mustPlan(t, planDoc), append([]engine.EvalOption{engine.Today("2026-12-01")}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func TestExceptionLetsAViolationThrough(t *testing.T) {
	res := excepted(t, `{"plan": [
		{"role": "migrator", "tools": ["fs.read", "shell.run"], "paths": ["/repo/db"], "budget_tokens": 10},
		{"role": "reader", "tools": ["shell.run"], "paths": [], "budget_tokens": 10}]}`)
	if res.Verdict != report.Block {
		t.Fatalf("verdict %s, want block (the reader is not excepted)", res.Verdict)
	}
	m := res.Children[0]
	if m.Verdict != report.Pass || len(m.Violations) != 1 {
		t.Fatalf("migrator: %s %+v; want a pass with the excepted violation listed", m.Verdict, m.Violations)
	}
	v := m.Violations[0]
	if v.Rule != "tools.write" || v.Path != "/plan/0/tools/1" || v.Excepted == nil || v.Excepted.Index != 0 || v.Excepted.Reason != "OPS-12 migration" || v.Excepted.Pointer != "/exceptions/0" {
		t.Errorf("migrator violation %+v excepted %+v", v, v.Excepted)
	}
	r := res.Children[1]
	if r.Verdict != report.Block || r.Violations[0].Excepted != nil {
		t.Errorf("reader: %s %+v; an expired exception excepts nothing", r.Verdict, r.Violations)
	}
	var got []string
	for _, n := range res.Exceptions {
		got = append(got, fmt.Sprintf("%d %s", n.Index, n.Status))
		if n.Blocks {
			t.Errorf("note %+v blocks without --strict-exceptions", n)
		}
	}
	// exception 1 names job-7, which this plan does not have.
	want := []string{"1 unused", "2 expired", "3 unused"}
	if strings.Join(got, ", ") != strings.Join(want, ", ") {
		t.Errorf("notes %v, want %v", got, want)
	}
}

// An exception naming a child's id reaches that child and not its twins,
// although the checks judge identical children once.
func TestExceptionByIDReachesOneTwin(t *testing.T) {
	child := `{"role": "backfill", "tools": ["fs.read"], "paths": [], "budget_tokens": 5000, "id": "%s"}`
	doc := `{"plan": [` + fmt.Sprintf(child, "job-6") + `,` + fmt.Sprintf(child, "job-7") + `,` + fmt.Sprintf(child, "job-8") + `]}`
	if p := mustPlan(t, doc); len(p.Reps) != 1 {
		t.Fatalf("%d groups, want the twins in one", len(p.Reps))
	}
	res := excepted(t, doc)
	for i, want := range []report.Verdict{report.Block, report.Pass, report.Block} {
		c := res.Children[i]
		if c.Verdict != want || len(c.Violations) != 1 || (c.Violations[0].Excepted != nil) != (want == report.Pass) {
			t.Errorf("child %d: %s %+v, want %s", i, c.Verdict, c.Violations, want)
		}
	}
}

// What the plan's own policy refuses stays refused, whatever the operator
// excepts: the plan's narrowing holds.
func TestExceptionNeverWidensAPlanPolicy(t *testing.T) {
	res := excepted(t, `{"policy": {"allowed_tools": ["fs.read", "shell.run"], "workspace_root": "/repo", "budget_cap_tokens": 1000},
		"plan": [{"role": "migrator", "tools": ["shell.run"], "paths": [], "budget_tokens": 10}]}`)
	c := res.Children[0]
	if res.Verdict != report.Block || c.Verdict != report.Block || c.Violations[0].Excepted != nil {
		t.Fatalf("%s %+v; the plan policy withholds allow_write too, so the violation must block", c.Verdict, c.Violations)
	}
	if got := strings.Join(c.Violations[0].Policies, ","); got != "operator,plan" {
		t.Errorf("policies %q, want operator,plan", got)
	}
}

func TestStrictExceptionsRefuseUnused(t *testing.T) {
	doc := `{"plan": [{"role": "migrator", "tools": ["shell.run"], "paths": [], "budget_tokens": 10}]}`
	if res := excepted(t, doc); res.Verdict != report.Pass {
		t.Fatalf("verdict %s, want pass (unused exceptions are only reported)", res.Verdict)
	}
	res := excepted(t, doc, engine.StrictExceptions(true))
	if res.Verdict != report.Block {
		t.Fatalf("verdict %s with strict exceptions, want block", res.Verdict)
	}
	for _, n := range res.Exceptions {
		if n.Blocks != (n.Status == report.ExceptionUnused) {
			t.Errorf("note %+v: only unused notes block", n)
		}
	}
	if res.Children[0].Verdict != report.Pass {
		t.Errorf("the child %s: an unused exception refuses the plan, not the child", res.Children[0].Verdict)
	}
}

// Without exceptions nothing changes: no notes, no marks.
func TestNoExceptionsNoNotes(t *testing.T) {
	res, err := builtin(t).Evaluate(context.Background(), mustPolicy(t, operatorPolicy), mustPlan(t, `{"plan": [{"role": "a", "tools": ["shell.run"], "paths": [], "budget_tokens": 10}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if res.Exceptions != nil || res.Children[0].Violations[0].Excepted != nil {
		t.Errorf("exceptions %v, violation %+v", res.Exceptions, res.Children[0].Violations[0])
	}
}

// On random plans and random exceptions: exceptions change nothing but
// which violations block. They add and remove no violation; they never
// let through what the plan's own policy refuses (or, under a plan
// policy, what a check does not attribute), nor an expired exception's
// rule, nor a violation of the plan as a whole; a child passes exactly when
// every violation it has is excepted; and anything that passed without
// them passes with them. A path selector never excepts a path the path
// rules refuse whatever the roots are, nor the filesystem root; a tool
// selector excepts sandbox:danger-full-access only when it names it
// exactly; an id selector only for a child of the role beside it.
func TestExceptionsOnlyEverExcept(t *testing.T) {
	engine.LongProperty(t)
	r := rand.New(rand.NewPCG(7, 11))
	e := builtin(t)
	pick := func(pool ...string) string { return pool[r.IntN(len(pool))] }
	tools := []string{"fs.read", "shell.run", "fs.write", "http.get", "net.raw", "Agent", "sandbox:danger-full-access"}
	paths := []string{"/repo/a", "/repo/b/c", "/etc", "~", "rel/x", "/repo", "/etc/../repo/a", "/etc/~root/x", "/etc/$(id)", "/etc/", "/", "/repo/a/"}
	rules := []string{"tools.write", "tools.allowlist", "budget.cap", "paths.escape", "tools.spawn", "tools.missing"}
	type selectors struct{ role, id, tool, path string }
	for n := range 400 {
		var children []string
		var childTools, childPaths, childRoles [][]string
		for i := range 1 + r.IntN(6) {
			var ts, ps, rawTools, rawPaths []string
			for range r.IntN(3) + 1 {
				rawTools = append(rawTools, pick(tools...))
				ts = append(ts, fmt.Sprintf("%q", rawTools[len(rawTools)-1]))
			}
			for range r.IntN(3) {
				rawPaths = append(rawPaths, pick(paths...))
				ps = append(ps, fmt.Sprintf("%q", rawPaths[len(rawPaths)-1]))
			}
			role := pick("migrator", "reader", "backfill")
			childTools, childPaths, childRoles = append(childTools, rawTools), append(childPaths, rawPaths), append(childRoles, []string{role})
			id := ""
			if r.IntN(2) == 0 {
				id = fmt.Sprintf(`, "id": "c%d"`, i)
			}
			children = append(children, fmt.Sprintf(`{"role": %q, "tools": [%s], "paths": [%s], "budget_tokens": %s%s}`,
				role, strings.Join(ts, ", "), strings.Join(ps, ", "), pick("10", "5000", "2000000"), id))
		}
		doc := `{"plan": [` + strings.Join(children, ", ") + `]`
		planPolicy := r.IntN(3) == 0
		if planPolicy {
			doc += fmt.Sprintf(`, "policy": {"allowed_tools": [%s], "workspace_root": "/repo", "budget_cap_tokens": %s, "allow_write": %v}`,
				`"fs.read", "shell.run"`, pick("100", "100000"), r.IntN(2) == 0)
		}
		doc += "}"
		var xs []string
		var sels []selectors
		for range r.IntN(5) {
			x := fmt.Sprintf(`"rule": %q, "reason": "r", "expires": %q`, pick(rules...), pick("2020-01-01", "2026-12-01", "2099-01-01"))
			var sel selectors
			if r.IntN(3) == 0 {
				sel.id = fmt.Sprintf("c%d", r.IntN(6))
				x += fmt.Sprintf(`, "id": %q`, sel.id)
			}
			if r.IntN(2) == 0 || sel.id != "" {
				sel.role = pick("migrator", "reader", "backfill")
				x += fmt.Sprintf(`, "role": %q`, sel.role)
			}
			if r.IntN(3) == 0 {
				sel.tool = pick("shell.*", "fs.write", "*", "**", "net.raw", "sandbox:*", "sandbox:danger-full-access")
				x += fmt.Sprintf(`, "tool": %q`, sel.tool)
			}
			if r.IntN(4) == 0 || sel == (selectors{}) {
				sel.path = pick("/etc", "/**", "/repo/**", "/etc/**", "/repo/*")
				x += fmt.Sprintf(`, "path": %q`, sel.path)
			}
			xs = append(xs, "{"+x+"}")
			sels = append(sels, sel)
		}
		base := `"allowed_tools": ["fs.read", "shell.run", "fs.write", "Agent"], "workspace_root": "/repo", "budget_cap_tokens": 100000`
		without := mustPolicy(t, "{"+base+"}")
		with := mustPolicy(t, "{"+base+`, "exceptions": [`+strings.Join(xs, ", ")+"]}")
		p := mustPlan(t, doc)
		plain, err := e.Evaluate(context.Background(), without, p, engine.Today("2026-12-01"))
		if err != nil {
			t.Fatal(err)
		}
		got, err := e.Evaluate(context.Background(), with, p, engine.Today("2026-12-01"))
		if err != nil {
			t.Fatal(err)
		}
		fail := func(format string, args ...any) {
			t.Helper()
			t.Fatalf("plan %d %s\nexceptions %s\n"+format, append([]any{n, doc, xs}, args...)...)
		}
		if len(got.Violations) != len(plain.Violations) {
			fail("plan violations differ")
		}
		for i, c := range got.Children {
			pc := plain.Children[i]
			if len(c.Violations) != len(pc.Violations) {
				fail("child %d: %d violations with exceptions, %d without", i, len(c.Violations), len(pc.Violations))
			}
			blocking := 0
			for j, v := range c.Violations {
				pv := pc.Violations[j]
				if v.Rule != pv.Rule || v.Path != pv.Path || v.Message != pv.Message || pv.Excepted != nil {
					fail("child %d violation %d: %+v with exceptions, %+v without", i, j, v, pv)
				}
				if v.Excepted == nil {
					blocking++
					continue
				}
				switch {
				case slices.Contains(v.Policies, "plan"):
					fail("child %d: %+v excepted although the plan policy refuses it", i, v)
				case planPolicy && v.Policies == nil:
					fail("child %d: %+v excepted under a plan policy without saying which policies refuse", i, v)
				case v.Excepted.Rule != v.Rule || v.Rule == "schema":
					fail("child %d: %+v excepted by %+v", i, v, v.Excepted)
				case v.Excepted.Expires < "2026-12-01":
					fail("child %d: %+v excepted by an expired exception", i, v)
				}
				sel := sels[v.Excepted.Index]
				var at int
				if sel.id != "" && (sel.role == "" || sel.role != childRoles[i][0]) {
					fail("child %d: %+v excepted by id without its role", i, v)
				}
				if _, err := fmt.Sscanf(v.Path, fmt.Sprintf("/plan/%d/tools/%%d", i), &at); err == nil && sel.tool != "" && childTools[i][at] == "sandbox:danger-full-access" && sel.tool != childTools[i][at] {
					fail("child %d: %+v excepted by the pattern %q", i, v, sel.tool)
				}
				if _, err := fmt.Sscanf(v.Path, fmt.Sprintf("/plan/%d/paths/%%d", i), &at); err == nil && sel.path != "" {
					if abs, plain := refPlain(childPaths[i][at], "/repo"); !plain || abs == "/" {
						fail("child %d: %+v excepted by the path %q", i, v, sel.path)
					}
				}
			}
			if (blocking == 0) != (c.Verdict == report.Pass) {
				fail("child %d: verdict %s with %d blocking violations", i, c.Verdict, blocking)
			}
			if pc.Verdict == report.Pass && c.Verdict != report.Pass {
				fail("child %d passed without exceptions and not with them", i)
			}
		}
	}
}

// An excepted finding covers no schema issue at its field: excepting
// budget.invalid for a role never lets a budget the schema refuses (a
// string, a fraction, null) through, nor one under a reported field.
func TestExceptedFindingHidesNoSchemaIssue(t *testing.T) {
	const pol = `{"allowed_tools": ["fs.read"], "workspace_root": "/repo", "budget_cap_tokens": 1000,
	  "exceptions": [{"rule": "budget.invalid", "role": "r", "reason": "r", "expires": "2027-01-31"}]}`
	for _, budget := range []string{`"abc"`, `1.5`, `null`, `[1]`, `{"n": 1}`} {
		doc := `{"plan": [{"role": "r", "tools": ["fs.read"], "paths": ["/repo/a"], "budget_tokens": ` + budget + `}]}`
		res, err := builtin(t).Evaluate(context.Background(), mustPolicy(t, pol), mustPlan(t, doc), engine.Today("2026-12-01"))
		if err != nil {
			t.Fatal(err)
		}
		c := res.Children[0]
		var rules []string
		for _, v := range c.Violations {
			rules = append(rules, v.Rule)
			if v.Rule == "budget.invalid" && v.Excepted == nil {
				t.Errorf("budget %s: budget.invalid not excepted", budget)
			}
		}
		if res.Verdict != report.Block || c.Verdict != report.Block || !slices.Contains(rules, "schema") {
			t.Errorf("budget %s: %s, violations %v; want a block by the schema step", budget, c.Verdict, rules)
		}
	}
}

// With --resolve-paths a path selector matches where a path resolves as
// well as where it is written: an exception for the workspace's own
// folders never excepts a link inside them that leads out, nor one that
// cannot be resolved.
func TestExceptedPathMustResolveUnderThePattern(t *testing.T) {
	base := tree(t)
	ws := filepath.Join(base, "ws")
	pol := mustPolicy(t, fmt.Sprintf(`{"allowed_tools": ["fs.read"], "workspace_root": %q, "budget_cap_tokens": 10, "exceptions": [
	  {"rule": "paths.escape", "path": %q, "reason": "r", "expires": "2099-01-01"},
	  {"rule": "paths.escape", "path": %q, "reason": "r", "expires": "2099-01-01"}]}`, ws, ws+"/**", base+"/outside/**"))
	p := &plan.Plan{Source: "plan.json", Children: []any{map[string]any{
		"role": "r", "tools": []any{"fs.read"}, "budget_tokens": json.Number("1"),
		"paths": []any{"link-out/secret", "link-etc/passwd", "dangling", base + "/outside/x"},
	}}}
	res, err := resolvingEngine(t).Evaluate(context.Background(), pol, p)
	if err != nil {
		t.Fatal(err)
	}
	want := []bool{false, false, false, true} // excepted, by path
	vs := res.Children[0].Violations
	if len(vs) != len(want) {
		t.Fatalf("%d violations %+v, want %d", len(vs), vs, len(want))
	}
	for i, v := range vs {
		if v.Rule != "paths.escape" || v.Path != fmt.Sprintf("/plan/0/paths/%d", i) || (v.Excepted != nil) != want[i] {
			t.Errorf("path %d: %s %s excepted %+v, want excepted %v", i, v.Rule, v.Message, v.Excepted, want[i])
		}
	}
}

// A plan of many distinct children is judged in batches on every core, and
// each batch's exceptions are asked on the core that judged it: every
// child gets its own answer, in its place, whatever the batch, and a
// remembered child (the second evaluation) gets the same answer as a
// fresh one.
func TestExceptionsOfManyBatches(t *testing.T) {
	const n = 3000 // more than one batch of the child checks
	var b strings.Builder
	b.WriteString(`{"plan": [`)
	for i := range n {
		if i > 0 {
			b.WriteString(",")
		}
		role, tools := "migrator", `"fs.read", "shell.run"`
		if i%3 == 2 {
			role = "reader" // its exception expired
		}
		if i%5 == 4 {
			tools = `"fs.read"` // nothing to except
		}
		fmt.Fprintf(&b, `{"role": %q, "id": "job-%d", "tools": [%s], "paths": ["/repo/t%d"], "budget_tokens": %d}`, role, i, tools, i, 1+i%900)
	}
	b.WriteString("]}")
	var first []byte
	for run := range 2 {
		res := excepted(t, b.String())
		if len(res.Children) != n {
			t.Fatalf("run %d: %d children", run, len(res.Children))
		}
		for i, c := range res.Children {
			if i%5 == 4 {
				if c.Index != i || c.Verdict != report.Pass || len(c.Violations) != 0 {
					t.Fatalf("run %d: child %d: %+v, want a pass with nothing to except", run, i, c)
				}
				continue
			}
			want := report.Pass
			if i%3 == 2 {
				want = report.Block
			}
			if c.Index != i || c.Verdict != want || len(c.Violations) != 1 || (c.Violations[0].Excepted != nil) != (want == report.Pass) {
				t.Fatalf("run %d: child %d: %+v, want %s with its violation excepted only for a migrator", run, i, c, want)
			}
		}
		got, err := json.Marshal(res)
		if err != nil {
			t.Fatal(err)
		}
		if run == 1 && string(got) != string(first) {
			t.Fatal("the second evaluation, from memory, differs from the first")
		}
		first = got
	}
}
