package browser

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/accessibility"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/spawngate/spawngate/internal/judge"
	"github.com/spawngate/spawngate/internal/playground"
	"github.com/spawngate/spawngate/internal/server"
)

// startPlayground serves a playground on 127.0.0.1 and opens it, ready.
func startPlayground(t *testing.T, ctx context.Context) *httptest.Server {
	t.Helper()
	ts := httptest.NewUnstartedServer(nil)
	p, err := playground.New(playground.Config{
		Server: server.Config{Gate: judge.DefaultOptions(), MaxConcurrent: 2, MaxListed: 100},
		Hosts:  playground.Hosts(ts.Listener.Addr().String()),
	})
	if err != nil {
		t.Fatal(err)
	}
	ts.Config.Handler = p.Handler()
	ts.Start()
	t.Cleanup(ts.Close)
	if err := chromedp.Do(ctx, chromedp.Navigate(ts.URL+"/"), chromedp.WaitVisible(chromedp.ID("plan"))); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, `document.body.dataset.ready === "true"`)
	return ts
}

// waitFor waits until a condition of the page holds, within ctx.
func waitFor(t *testing.T, ctx context.Context, cond string) {
	t.Helper()
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](cond)); err != nil {
		t.Fatalf("waiting for %s: %v", cond, err)
	}
}

// labelled finds the field a label names, by the label's text, and
// fails unless the label is tied to it.
func labelled(t *testing.T, ctx context.Context, text string) string {
	t.Helper()
	id, err := chromedp.Run(ctx, chromedp.Evaluate[string](`(() => {
		const l = [...document.querySelectorAll("label")].find((l) => l.textContent.startsWith(`+jsString(text)+`));
		return l && l.control ? l.control.id : "";
	})()`))
	if err != nil || id == "" {
		t.Fatalf("no field is labelled %q (%v)", text, err)
	}
	return id
}

func jsString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// judgeTyped types plan and policy into their labelled fields (empty
// until then), presses Judge and waits for the answer and its report.
func judgeTyped(t *testing.T, ctx context.Context, plan, policy string) reportFrame {
	t.Helper()
	planField, policyField := labelled(t, ctx, "Spawn plan"), labelled(t, ctx, "Operator policy")
	if err := chromedp.Do(ctx,
		chromedp.SendKeys(chromedp.ID(planField), plan),
		chromedp.SendKeys(chromedp.ID(policyField), policy),
	); err != nil {
		t.Fatal(err)
	}
	return judged(t, ctx, chromedp.Click(chromedp.ID("judge")))
}

// reportFrame is the report's frame, as a context of its own: the
// browser runs a sandboxed frame as a target of its own, whose document
// and globals the test reads there.
type reportFrame context.Context

// judged runs the action that judges, waits for the report to be shown,
// and attaches to the report's frame.
func judged(t *testing.T, ctx context.Context, action chromedp.Action[chromedp.Void]) reportFrame {
	t.Helper()
	if err := chromedp.Do(ctx, chromedp.Evaluate[chromedp.Void](`document.body.dataset.state = "asked"`, chromedp.EvalIgnoreExceptions), action); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, `document.body.dataset.state === "judged"`)
	return attachReport(t, ctx)
}

// attachReport attaches to the report's frame, which the browser runs as
// a target of its own (a sandboxed frame has an origin of its own), so
// that the test reads the report where it is shown.
func attachReport(t *testing.T, ctx context.Context) reportFrame {
	t.Helper()
	infos, err := chromedp.Targets(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var frames []string
	for _, info := range infos {
		if info.Type == "iframe" {
			frames = append(frames, info.URL)
			if info.URL == "about:srcdoc" {
				fctx, cancel := chromedp.NewContext(ctx, chromedp.WithTargetID(info.TargetID))
				t.Cleanup(cancel)
				return fctx
			}
		}
	}
	t.Fatalf("the report's frame is not a target of its own (frames %v): this browser keeps sandboxed frames in the page's process, which these tests do not read", frames)
	return nil
}

// inReport evaluates an expression in the report's frame.
func inReport[T any](t *testing.T, f reportFrame, expr string) T {
	t.Helper()
	v, err := chromedp.Run(f, chromedp.Evaluate[T](expr))
	if err != nil {
		t.Fatalf("in the report's frame, %s: %v", expr, err)
	}
	return v
}

const (
	refusedPlan = `{"plan": [{"role": "home-cleaner", "tools": ["fs.read", "shell.run"], "paths": ["~"], "budget_tokens": 5000000}]}`
	jsonPolicy  = `{"allowed_tools": ["fs.read"], "workspace_root": "/repo/workspace", "budget_cap_tokens": 200000}`
)

// TestPlaygroundJudgesWhatIsTyped: a plan and a policy typed into the
// labelled fields are judged by the gate, whose verdict the live region
// says and whose report, in the frame, marks each refused value.
func TestPlaygroundJudgesWhatIsTyped(t *testing.T) {
	ctx := newBrowser(t, time.Minute)
	startPlayground(t, ctx)
	f := judgeTyped(t, ctx, refusedPlan, jsonPolicy)
	verdict, err := chromedp.Run(ctx, chromedp.Text(chromedp.ID("verdict")))
	if err != nil || !strings.Contains(verdict, "BLOCK") {
		t.Fatalf("the verdict says %q (%v), want BLOCK", verdict, err)
	}
	marks := inReport[[]string](t, f, `[...document.querySelectorAll("a.mark")].map((m) => m.textContent)`)
	joined := strings.Join(marks, " | ")
	for _, want := range []string{"shell.run", "~", "5000000"} {
		if !strings.Contains(joined, want) {
			t.Errorf("the report marks %q, not %s", joined, want)
		}
	}
	rules := inReport[string](t, f, `document.body.textContent`)
	for _, rule := range []string{"budget.cap", "paths.escape", "tools.allowlist"} {
		if !strings.Contains(rules, rule) {
			t.Errorf("the report does not cite %s", rule)
		}
	}
	url, _ := chromedp.Run(ctx, chromedp.Location())
	if !strings.Contains(url, "#z:") && !strings.Contains(url, "#j:") {
		t.Errorf("the address %q keeps no state after #", url)
	}
	// The link opens the same state, filled but not judged (a link any
	// site can open must not make the machine judge), until Judge.
	if err := chromedp.Do(ctx, chromedp.Navigate("about:blank"), chromedp.Navigate(url), chromedp.WaitVisible(chromedp.ID("plan"))); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, `document.body.dataset.ready === "true"`)
	if got, _ := chromedp.Run(ctx, chromedp.Value(chromedp.ID("plan"))); got != refusedPlan {
		t.Errorf("the link's plan is %q", got)
	}
	if state, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.body.dataset.state || ""`)); state != "" {
		t.Errorf("opening the link judged it (state %q): only Judge may", state)
	}
	f = judged(t, ctx, chromedp.Click(chromedp.ID("judge")))
	if marks := inReport[[]string](t, f, `[...document.querySelectorAll("a.mark")].map(a => a.textContent)`); len(marks) == 0 {
		t.Error("judging the link's state marks nothing")
	}
}

// TestHostilePlanRunsNothing: script in a role and an attribute in a path
// are shown as text, in the page and in the report, and nothing runs: no
// dialog, no global set in the page or in the report's frame, nothing on
// the console.
func TestHostilePlanRunsNothing(t *testing.T) {
	ctx := newBrowser(t, time.Minute)
	dialogs := chromedp.Events(ctx, page.JavascriptDialogOpening)
	console := chromedp.Console(ctx)
	startPlayground(t, ctx)
	role := `<script>window.__pwned=1</script>`
	path := `"><img src=x onerror="window.__pwned=1">`
	// YAML, typed as a person would, so that both stand in the plan's
	// text as written.
	plan := "plan:\n  - role: \"" + role + "\"\n    tools: [fs.read]\n    paths: ['" + path + "']\n    budget_tokens: 100\n"
	f := judgeTyped(t, ctx, plan, jsonPolicy)

	if pwned, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`typeof window.__pwned`)); pwned != "undefined" {
		t.Errorf("window.__pwned is %s in the page", pwned)
	}
	if pwned := inReport[string](t, f, `typeof window.__pwned`); pwned != "undefined" {
		t.Errorf("window.__pwned is %s in the report's frame", pwned)
	}
	text := inReport[string](t, f, `document.body.textContent`)
	for _, shown := range []string{role, path} {
		if !strings.Contains(text, shown) {
			t.Errorf("the report does not show %s as text", shown)
		}
	}
	if n := inReport[int](t, f, `document.querySelectorAll("script, img, iframe, object, embed, [onerror]").length`); n != 0 {
		t.Errorf("the report's frame holds %d elements a plan brought", n)
	}
	sandbox, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.getElementById("report").getAttribute("sandbox")`))
	if sandbox != "" {
		t.Errorf("the report's frame is sandboxed with %q, want nothing allowed", sandbox)
	}

	// Everything the page did came before this line on the console, in
	// order: a marker of the test's own ends the reading.
	if err := chromedp.Do(ctx, chromedp.Evaluate[chromedp.Void](`console.info("end of the hostile plan")`, chromedp.EvalIgnoreExceptions)); err != nil {
		t.Fatal(err)
	}
	for m, err := range console {
		if err != nil {
			t.Fatalf("reading the console: %v", err)
		}
		if strings.Contains(m.String(), "end of the hostile plan") {
			break
		}
		t.Errorf("the console says: %s", m)
	}
	// A dialog of the test's own ends the reading of the dialogs: any
	// before it, the plan opened.
	if err := chromedp.Do(ctx, chromedp.Evaluate[chromedp.Void](`setTimeout(() => alert("end of the hostile plan"))`, chromedp.EvalIgnoreExceptions)); err != nil {
		t.Fatal(err)
	}
	for ev, err := range dialogs {
		if err != nil {
			t.Fatalf("reading the dialogs: %v", err)
		}
		if _, err := chromedp.Call(ctx, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{Accept: true}); err != nil {
			t.Fatal(err)
		}
		if ev.Message == "end of the hostile plan" {
			break
		}
		t.Errorf("a dialog opened: %q", ev.Message)
	}
}

// TestPlaygroundByKeyboard: the controls come in order under Tab, each
// with an accessible name; an example is chosen and judged with the
// keyboard alone, and so is a judgement with Ctrl+Enter.
func TestPlaygroundByKeyboard(t *testing.T) {
	ctx := newBrowser(t, time.Minute)
	startPlayground(t, ctx)
	var order []string
	for range 6 {
		if err := chromedp.Do(ctx, chromedp.KeyEvent(kb.Tab)); err != nil {
			t.Fatal(err)
		}
		id, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.activeElement.id`))
		if err != nil {
			t.Fatal(err)
		}
		order = append(order, id)
	}
	if got := strings.Join(order, " "); got != "example plan policy checks judge share" {
		t.Errorf("Tab visits %s", got)
	}

	tree, err := chromedp.Call(ctx, accessibility.GetFullAXTree, accessibility.GetFullAXTreeParams{})
	if err != nil {
		t.Fatal(err)
	}
	named := map[string]string{}
	for _, n := range tree.Nodes {
		if n.Ignored || n.Role == nil {
			continue
		}
		var role, name string
		json.Unmarshal(n.Role.Value, &role)
		if n.Name != nil {
			json.Unmarshal(n.Name.Value, &name)
		}
		switch role {
		case "textbox", "combobox", "button", "Iframe", "status", "group":
			if strings.TrimSpace(name) == "" && role != "status" {
				t.Errorf("a %s has no accessible name", role)
			}
			named[role+": "+name] = role
		}
	}
	for _, want := range []string{"combobox: Example from examples/", "textbox: Spawn plan (YAML or JSON)", "button: Judge", "group: What to judge", "button: Copy a link to this state"} {
		if _, ok := named[want]; !ok {
			t.Errorf("no %q in the accessibility tree (%v)", want, named)
		}
	}
	live, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.getElementById("verdict").getAttribute("aria-live")`))
	if live != "polite" {
		t.Errorf("the verdict is no live region (aria-live %q)", live)
	}

	// The first example, chosen with the arrow key, is judged at once.
	if err := chromedp.Do(ctx, chromedp.Focus(chromedp.ID("example")), chromedp.KeyEvent(kb.ArrowDown)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, `document.body.dataset.state === "judged" && document.getElementById("verdict").dataset.verdict === "block"`)
	f := attachReport(t, ctx)
	if n := inReport[int](t, f, `document.querySelectorAll("a.mark").length`); n == 0 {
		t.Error("the example's report marks no value")
	}
	screenshot(t, ctx, "playground.png")
	// Ctrl+Enter in a field judges again.
	if err := chromedp.Do(ctx,
		chromedp.Evaluate[chromedp.Void](`document.body.dataset.state = "waiting"`, chromedp.EvalIgnoreExceptions),
		chromedp.Focus(chromedp.ID("policy")),
		chromedp.KeyEvent(kb.Enter, chromedp.KeyModifiers(chromedp.ModifierCtrl)),
	); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, `document.body.dataset.state === "judged"`)
	verdict, _ := chromedp.Run(ctx, chromedp.Text(chromedp.ID("verdict")))
	if !strings.Contains(verdict, "BLOCK") {
		t.Errorf("after Ctrl+Enter the verdict says %q", verdict)
	}
}
