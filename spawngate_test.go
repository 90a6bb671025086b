package spawngate_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/spawngate/spawngate"
)

const operator = `{"allowed_tools": ["fs.read", "http.get"], "workspace_root": "/repo/workspace", "budget_cap_tokens": 100000}`

func gate(t *testing.T, opts ...spawngate.Option) *spawngate.Gate {
	t.Helper()
	g, err := spawngate.New(context.Background(), append([]spawngate.Option{spawngate.WithPolicy("operator.json", []byte(operator))}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// Every way a plan can fail to be judged is a typed error with its parts,
// and none of them is Allowed.
func TestErrorsAreTypedAndNeverAllowed(t *testing.T) {
	g := gate(t)
	deep := `{"plan": [{"role": "r", "tools": ["fs.read"], "paths": [], "budget_tokens": 1, "metadata": [[[[[[]]]]]]}]}`
	for _, tc := range []struct {
		name, doc string
		gate      *spawngate.Gate
		kind      spawngate.ErrorKind
		line, col int
		pointer   string
		limit     string
	}{
		{"does not parse", "{\n  \"plan\": [1,]\n}", g, spawngate.ErrDocument, 2, 14, "/plan", ""},
		{"duplicate key", `{"plan": [], "plan": []}`, g, spawngate.ErrDocument, 1, 14, "", ""},
		{"empty", "", g, spawngate.ErrDocument, 0, 0, "", ""},
		{"nothing to check", `{"plan": []}`, g, spawngate.ErrDocument, 1, 10, "/plan", ""},
		{"over a limit", deep, gate(t, spawngate.WithLimits(func() spawngate.Limits { l := spawngate.DefaultLimits(); l.MaxDepth = 5; return l }())), spawngate.ErrLimit, 1, 94, "/plan/0/metadata/0/0", "max-depth"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := tc.gate.Check(context.Background(), "plan.json", []byte(tc.doc))
			if spawngate.Allowed(res, err) {
				t.Fatal("allowed")
			}
			var e *spawngate.Error
			if !errors.As(err, &e) {
				t.Fatalf("error %v (%T) is not a *spawngate.Error", err, err)
			}
			if res.Verdict != spawngate.NotJudged || res.Error != err.Error() || res.Source != "plan.json" {
				t.Fatalf("result beside the error: %+v", res)
			}
			if e.Kind != tc.kind || e.Line != tc.line || e.Column != tc.col || e.Pointer != tc.pointer || e.Limit != tc.limit || e.Source != "plan.json" {
				t.Fatalf("got %+v", e)
			}
		})
	}
	// A timeout (the caller's deadline passing counts as one), and no
	// policy at all.
	ctx, cancel := context.WithTimeout(context.Background(), time.Nanosecond)
	defer cancel()
	<-ctx.Done()
	res, err := g.Check(ctx, "plan.json", []byte(`{"plan": [{"role": "r", "tools": ["fs.read"], "paths": [], "budget_tokens": 1}]}`))
	var e *spawngate.Error
	if spawngate.Allowed(res, err) || !errors.As(err, &e) || e.Kind != spawngate.ErrTimeout || e.Limit != "timeout" {
		t.Fatalf("timeout: %+v %v", res, err)
	}
	if res.Verdict != spawngate.NotJudged {
		t.Fatalf("timeout: verdict %q", res.Verdict)
	}
	if _, err := spawngate.New(context.Background(), spawngate.WithPolicy("p.json", []byte(`{"allowed_tools": []}`))); !errors.As(err, &e) || e.Kind != spawngate.ErrDocument {
		t.Fatalf("a broken policy built a gate: %v", err)
	}
}

// Allowed is true for a judged plan whose every child passes, and for
// nothing else, whatever a caller builds by hand.
func TestAllowedOnlyForAPass(t *testing.T) {
	pass := spawngate.Result{Verdict: spawngate.Pass, Children: []spawngate.Child{{Verdict: spawngate.Pass}}}
	if !spawngate.Allowed(pass, nil) {
		t.Fatal("a pass is not allowed")
	}
	for name, res := range map[string]spawngate.Result{
		"zero":          {},
		"no children":   {Verdict: spawngate.Pass},
		"blocked child": {Verdict: spawngate.Pass, Children: []spawngate.Child{{Verdict: spawngate.Block}}},
		"unlisted":      {Verdict: spawngate.Pass, Children: []spawngate.Child{{Verdict: spawngate.Pass, Unlisted: 1}}},
		"violation":     {Verdict: spawngate.Pass, Children: []spawngate.Child{{Verdict: spawngate.Pass, Violations: []spawngate.Violation{{Rule: "x"}}}}},
		"block":         {Verdict: spawngate.Block, Children: []spawngate.Child{{Verdict: spawngate.Pass}}},
	} {
		if spawngate.Allowed(res, nil) {
			t.Errorf("%s: allowed", name)
		}
	}
	if spawngate.Allowed(pass, errors.New("x")) {
		t.Fatal("a pass with an error is allowed")
	}
}

// A plan built in Go and the same plan written as a document get the same
// result.
func TestCheckPlanEqualsCheckOfTheDocument(t *testing.T) {
	g := gate(t)
	p := spawngate.Plan{
		Policy: &spawngate.Policy{AllowedTools: []string{"fs.read"}, WorkspaceRoot: "/repo/workspace/docs", BudgetCapTokens: 50000},
		Children: []spawngate.Spawn{
			{Role: "a", Tools: []string{"fs.read"}, Paths: []string{"guide"}, BudgetTokens: 1000},
			{Role: "b", Tools: []string{"http.get"}, BudgetTokens: 60000, Model: "x", Metadata: map[string]any{"k": 1}},
			{Role: "c"},
		},
	}
	fromGo := judgedBothWays(t, g, p)
	if got := []spawngate.Verdict{fromGo.Children[0].Verdict, fromGo.Children[1].Verdict, fromGo.Children[2].Verdict}; !reflect.DeepEqual(got, []spawngate.Verdict{spawngate.Pass, spawngate.Block, spawngate.Block}) {
		t.Fatalf("verdicts %v", got)
	}
}

// judgedBothWays judges a plan built in Go and the document it writes,
// and fails unless both get the same result.
func judgedBothWays(t *testing.T, g *spawngate.Gate, p spawngate.Plan) spawngate.Result {
	t.Helper()
	doc, err := p.Document()
	if err != nil {
		t.Fatal(err)
	}
	fromGo, err := g.CheckPlan(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	fromDoc, err := g.Check(context.Background(), "plan.json", doc)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(fromGo, fromDoc) {
		t.Fatalf("in Go %+v\nas a document %+v", fromGo, fromDoc)
	}
	return fromGo
}

// A gate is safe for concurrent use: many goroutines judging distinct and
// repeated plans get what one goroutine gets. (go test -race runs this.)
func TestConcurrentUse(t *testing.T) {
	g := gate(t)
	doc := func(i int) []byte {
		return fmt.Appendf(nil, `{"plan": [{"role": "r%d", "tools": ["fs.read", "shell.run"], "paths": ["/repo/workspace/%d"], "budget_tokens": %d}]}`, i%7, i%5, 1000+i%3)
	}
	want := make([]spawngate.Result, 20)
	for i := range want {
		res, err := g.Check(context.Background(), "plan.json", doc(i))
		if err != nil {
			t.Fatal(err)
		}
		want[i] = res
	}
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for w := range 8 {
		wg.Go(func() {
			for n := range 40 {
				i := (n + w) % len(want)
				res, err := g.Check(context.Background(), "plan.json", doc(i))
				if err != nil || !reflect.DeepEqual(res, want[i]) {
					errs <- fmt.Errorf("plan %d: %v %+v", i, err, res)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

// A hook payload that cannot be judged is an error, never an answer that
// lets the spawn through.
func TestHookErrorsAreNotAnswers(t *testing.T) {
	g := gate(t)
	for _, payload := range []string{``, `[]`, `{"tool_name": "Agent"}`, `{"tool_name": "Agent", "tool_input": {}, "cwd": "relative"}`} {
		a, err := g.Hook(context.Background(), spawngate.ClaudeCode, []byte(payload))
		if err == nil || a.Decision != 0 || a.Body != nil {
			t.Errorf("payload %q: answer %+v, error %v", payload, a, err)
		}
	}
	a, err := g.Hook(context.Background(), spawngate.Codex, []byte(`{"tool_name": "shell", "tool_input": {}}`))
	if err != nil || a.Decision != spawngate.HookIgnore {
		t.Fatalf("not a spawn: %+v %v", a, err)
	}
}

// A day that is not one is refused when the gate is built: compared with
// expiry dates as text, it could keep an expired exception alive.
func TestWithTodayMustBeADate(t *testing.T) {
	for _, day := range []string{"2026-13-01", "tomorrow", "2026-1-1", "9999-99-99"} {
		if _, err := spawngate.New(context.Background(), spawngate.WithPolicyFile("examples/exceptions/policy.yaml"), spawngate.WithToday(day)); err == nil {
			t.Errorf("WithToday(%q): a gate was built", day)
		}
	}
	g, err := spawngate.New(context.Background(), spawngate.WithPolicyFile("examples/exceptions/policy.yaml"), spawngate.WithToday("2099-02-01"), spawngate.WithStrictExceptions())
	if err != nil {
		t.Fatal(err)
	}
	doc, err := os.ReadFile("examples/exceptions/plan.yaml")
	if err != nil {
		t.Fatal(err)
	}
	res, err := g.Check(context.Background(), "plan.yaml", doc)
	if err != nil {
		t.Fatal(err)
	}
	if res.Children[0].Verdict != spawngate.Block {
		t.Errorf("the migrator %s on 2099-02-01, after its exception expired", res.Children[0].Verdict)
	}
	blocks := 0
	for _, n := range res.Exceptions {
		if n.Blocks {
			blocks++
		}
	}
	if blocks != 1 {
		t.Errorf("%d notes refuse the plan, want the one unused exception", blocks)
	}
}

// A tree built in Go is judged as the same tree written out: a grandchild
// that holds a tool its parent lacks is refused at its pointer, and the
// plan's Parent bounds the plan's own children.
func TestCheckPlanJudgesTrees(t *testing.T) {
	g, err := spawngate.New(context.Background(), spawngate.WithPolicy("operator.json", []byte(`{"allowed_tools": ["fs.read", "http.get", "Agent"], "workspace_root": "/repo/workspace", "budget_cap_tokens": 100000, "allow_spawn": true}`)))
	if err != nil {
		t.Fatal(err)
	}
	depth := int64(2)
	p := spawngate.Plan{
		Policy: &spawngate.Policy{AllowedTools: []string{"fs.read", "http.get", "Agent"}, WorkspaceRoot: "/repo/workspace", BudgetCapTokens: 50000, AllowSpawn: true, MaxDepth: depth},
		Parent: &spawngate.Parent{Role: "caller", Tools: []string{"fs.read", "Agent"}, Paths: []string{"/repo/workspace/docs"}, BudgetTokens: 40000},
		Children: []spawngate.Spawn{{
			Role: "lead", Tools: []string{"fs.read", "Agent"}, Paths: []string{"/repo/workspace/docs"}, BudgetTokens: 30000,
			Children: []spawngate.Spawn{
				{Role: "reader", Tools: []string{"fs.read"}, Paths: []string{"/repo/workspace/docs/a"}, BudgetTokens: 1000},
				{Role: "fetcher", Tools: []string{"http.get"}, BudgetTokens: 1000},
			},
		}},
	}
	fromGo := judgedBothWays(t, g, p)
	var got []string
	for _, c := range fromGo.Children {
		for _, v := range c.Violations {
			got = append(got, c.Name()+" "+v.Rule+" "+v.Path)
		}
	}
	want := []string{"/plan/0/children/1 tree.tools /plan/0/children/1/tools/0"}
	if !reflect.DeepEqual(got, want) || spawngate.Allowed(fromGo, nil) {
		t.Fatalf("violations %q, want %q (verdict %s)", got, want, fromGo.Verdict)
	}
	// Narrow the plan's parent: the lead itself now holds too much.
	p.Parent.Tools = []string{"fs.read"}
	res, err := g.CheckPlan(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	if res.Children[0].Verdict != spawngate.Block || res.Children[0].Violations[0].Rule != "tree.tools" {
		t.Fatalf("lead under a parent without Agent: %+v", res.Children[0])
	}
}

// New builds no gate from what spawngate check would refuse: no operator
// policy, a second one, options no gate can work with. Each is an *Error
// of its kind naming the option, never a gate that judges by less.
func TestNewRefusesWhatTheCommandRefuses(t *testing.T) {
	ctx := context.Background()
	// The plan author's policy, which alone would let anything through.
	const wide = `{"policy": {"allowed_tools": ["shell.run"], "workspace_root": "/", "budget_cap_tokens": 1099511627776, "allow_write": true}, "plan": [{"role": "r", "tools": ["shell.run"], "paths": ["/srv"], "budget_tokens": 1099511627776}]}`
	strict := spawngate.WithPolicy("strict.json", []byte(operator))
	loose := spawngate.WithPolicy("loose.json", []byte(`{"allowed_tools": ["**"], "workspace_root": "/", "budget_cap_tokens": 1099511627776, "allow_write": true}`))
	limits := func(change func(*spawngate.Limits)) spawngate.Option {
		l := spawngate.DefaultLimits()
		change(&l)
		return spawngate.WithLimits(l)
	}
	checksOnly := t.TempDir() // a bundle of checks alone: no operator policy
	for _, f := range []string{"release_deploy.rego", "roles.rego"} {
		data, err := os.ReadFile("examples/checks/" + f)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(checksOnly+"/"+f, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name   string
		opts   []spawngate.Option
		kind   spawngate.ErrorKind
		source string
	}{
		{"no policy", nil, spawngate.ErrNoPolicy, "New"},
		{"checks but no policy", []spawngate.Option{spawngate.WithChecks(checksOnly)}, spawngate.ErrNoPolicy, "New"},
		{"a bundle without a policy", []spawngate.Option{spawngate.WithBundle(checksOnly, nil)}, spawngate.ErrNoPolicy, checksOnly},
		{"strict then loose", []spawngate.Option{strict, loose}, spawngate.ErrOption, "WithPolicy"},
		{"a file then memory", []spawngate.Option{spawngate.WithPolicyFile("examples/policy.yaml"), loose}, spawngate.ErrOption, "WithPolicy"},
		{"memory then a file", []spawngate.Option{strict, spawngate.WithPolicyFile("examples/policy.yaml")}, spawngate.ErrOption, "WithPolicyFile"},
		{"an empty policy path", []spawngate.Option{spawngate.WithPolicyFile("")}, spawngate.ErrOption, "WithPolicyFile"},
		{"a nil policy document", []spawngate.Option{spawngate.WithPolicy("p.json", nil)}, spawngate.ErrDocument, "p.json"},
		{"two bundles", []spawngate.Option{strict, spawngate.WithBundle(checksOnly, nil), spawngate.WithBundle(checksOnly, nil)}, spawngate.ErrOption, "WithBundle"},
		{"an empty bundle path", []spawngate.Option{strict, spawngate.WithBundle("", nil)}, spawngate.ErrOption, "WithBundle"},
		{"a zero timeout", []spawngate.Option{strict, spawngate.WithTimeout(0)}, spawngate.ErrOption, "WithTimeout"},
		{"a negative timeout", []spawngate.Option{strict, spawngate.WithTimeout(-time.Second)}, spawngate.ErrOption, "WithTimeout"},
		{"a negative listing bound", []spawngate.Option{strict, spawngate.WithMaxListed(-5)}, spawngate.ErrOption, "WithMaxListed"},
		{"zero limits", []spawngate.Option{strict, spawngate.WithLimits(spawngate.Limits{})}, spawngate.ErrOption, "WithLimits"},
		{"a zero limit", []spawngate.Option{strict, limits(func(l *spawngate.Limits) { l.MaxValues = 0 })}, spawngate.ErrOption, "WithLimits"},
		{"a negative limit", []spawngate.Option{strict, limits(func(l *spawngate.Limits) { l.MaxAliasBytes = -1 })}, spawngate.ErrOption, "WithLimits"},
		{"a depth past the stack", []spawngate.Option{strict, limits(func(l *spawngate.Limits) { l.MaxDepth = 1 << 30 })}, spawngate.ErrOption, "WithLimits"},
		{"no day", []spawngate.Option{strict, spawngate.WithToday("tomorrow")}, spawngate.ErrOption, "WithToday"},
		{"a nil option", []spawngate.Option{strict, nil}, spawngate.ErrOption, "New"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g, err := spawngate.New(ctx, tc.opts...)
			var e *spawngate.Error
			if !errors.As(err, &e) || e.Kind != tc.kind || e.Source != tc.source {
				msg := "no error"
				if g != nil {
					res, err := g.Check(ctx, "plan.json", []byte(wide))
					msg = fmt.Sprintf("a gate, and the wide plan allowed: %v (%v)", spawngate.Allowed(res, err), err)
				}
				t.Fatalf("got %v (%+v), want kind %s from %q; %s", err, e, tc.kind, tc.source, msg)
			}
			if g != nil {
				t.Fatal("a gate beside the error")
			}
		})
	}
	// What the command takes, New takes too: listing nothing, and limits
	// that refuse every YAML alias.
	if _, err := spawngate.New(ctx, strict, spawngate.WithMaxListed(0), limits(func(l *spawngate.Limits) { l.MaxAliasNodes, l.MaxAliasBytes = 0, 0 })); err != nil {
		t.Fatal(err)
	}
}

// Every Result that comes back with an error has the verdict NotJudged
// and the error's line, from every way of judging, so that a caller who
// looks at the verdict alone still refuses.
func TestResultBesideAnErrorIsNotJudged(t *testing.T) {
	ctx := context.Background()
	g := gate(t)
	var zero spawngate.Gate
	for _, tc := range []struct {
		name  string
		judge func() (spawngate.Result, error)
		kind  spawngate.ErrorKind
	}{
		{"Check, broken", func() (spawngate.Result, error) { return g.Check(ctx, "plan.json", []byte(`{"plan": [1,]}`)) }, spawngate.ErrDocument},
		{"Check, no name", func() (spawngate.Result, error) { return g.Check(ctx, "", nil) }, spawngate.ErrDocument},
		{"CheckPlan, no children", func() (spawngate.Result, error) { return g.CheckPlan(ctx, spawngate.Plan{}) }, spawngate.ErrDocument},
		{"CheckPlan, not JSON", func() (spawngate.Result, error) {
			return g.CheckPlan(ctx, spawngate.Plan{Children: []spawngate.Spawn{{Role: "r", Tools: []string{"fs.read"}, BudgetTokens: 1, Metadata: make(chan int)}}})
		}, spawngate.ErrDocument},
		{"Check, a Gate New did not build", func() (spawngate.Result, error) { return zero.Check(ctx, "plan.json", []byte(`{"plan": []}`)) }, spawngate.ErrInternal},
		{"Hook, a bad payload", func() (spawngate.Result, error) {
			a, err := g.Hook(ctx, spawngate.ClaudeCode, []byte(`[]`))
			return a.Result, err
		}, spawngate.ErrDocument},
		{"Hook, a Gate New did not build", func() (spawngate.Result, error) {
			a, err := zero.Hook(ctx, spawngate.ClaudeCode, []byte(`{}`))
			return a.Result, err
		}, spawngate.ErrInternal},
		{"Hook, a nil option", func() (spawngate.Result, error) {
			a, err := g.Hook(ctx, spawngate.Codex, []byte(`{}`), nil)
			return a.Result, err
		}, spawngate.ErrOption},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := tc.judge()
			var e *spawngate.Error
			if !errors.As(err, &e) || e.Kind != tc.kind {
				t.Fatalf("error %v (%T), want kind %s", err, err, tc.kind)
			}
			if res.Verdict != spawngate.NotJudged || res.Error != err.Error() || len(res.Children) != 0 || spawngate.Allowed(res, err) {
				t.Fatalf("result beside %q: %+v", err, res)
			}
		})
	}
}

// A host is named exactly: any other spelling is an error, never
// HookIgnore, which would let the spawn through.
func TestHookRefusesAnUnknownHost(t *testing.T) {
	g := gate(t)
	payload := []byte(`{"tool_name": "spawn_agent", "tool_input": {"message": "x"}, "cwd": "/repo/workspace"}`)
	for _, host := range []spawngate.Host{"Codex", "codex ", "", "claude", "Claude-Code"} {
		a, err := g.Hook(context.Background(), host, payload)
		var e *spawngate.Error
		if !errors.As(err, &e) || e.Kind != spawngate.ErrDocument || a.Decision != 0 || a.Body != nil || a.Result.Verdict != spawngate.NotJudged {
			t.Errorf("host %q: answer %+v, error %v", host, a, err)
		}
	}
}
