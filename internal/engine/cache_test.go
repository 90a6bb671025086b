package engine_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spawngate/spawngate/internal/plan"
	"github.com/spawngate/spawngate/internal/report"
)

// The engine remembers what the checks found, by a key of what they read
// (cache.go). Each test here judges, on one long-lived engine (a server, the
// Go API), two plans whose keys would be equal if the key lacked one thing
// the checks read: the second must get its own answer, not the first's.

// brief.retask reads the brief, which the keys of groups do not hold: a
// second plan of the same shape whose brief lacks the block is refused,
// and one whose brief has it passes, whatever was judged before.
func TestALongLivedEngineJudgesEveryBrief(t *testing.T) {
	child := func(brief string) string {
		return `{"plan": [{"role": "r", "tools": ["fs.read"], "paths": [], "budget_tokens": 1, "brief": "` + brief + `"}]}`
	}
	good, bad := child("RETASK CHANNEL: token R-abcdef12. Done when merged."), child("Just do it.")
	operator := mustPolicy(t, `{"allowed_tools": ["fs.read"], "workspace_root": "/repo", "budget_cap_tokens": 10, "brief_retask": {}}`)
	for _, order := range [][2]string{{good, bad}, {bad, good}} {
		e := builtin(t)
		for _, doc := range order {
			res, err := e.Evaluate(context.Background(), operator, mustPlan(t, doc))
			if err != nil {
				t.Fatal(err)
			}
			want := report.Pass
			if doc == bad {
				want = report.Block
			}
			if res.Verdict != want {
				t.Errorf("after %d plans, %s: %s, want %s", len(order), doc, res.Verdict, want)
			}
		}
	}
}

// With --resolve-paths the filesystem goes into what paths.escape finds: a
// link that moved outside the root between two plans is refused the second
// time, though the plan is the same document.
func TestALongLivedEngineResolvesPathsEveryTime(t *testing.T) {
	base := t.TempDir()
	if resolved, err := filepath.EvalSymlinks(base); err == nil {
		base = resolved
	}
	ws, inside, outside := filepath.Join(base, "ws"), filepath.Join(base, "ws", "docs"), filepath.Join(base, "outside")
	for _, dir := range []string{inside, outside} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	link := filepath.Join(ws, "link")
	e := resolvingEngine(t)
	operator := policyWithRoot(t, ws)
	doc := `{"plan": [{"role": "r", "tools": ["fs.read"], "paths": ["link/file"], "budget_tokens": 1}]}`
	for _, tc := range []struct {
		target string
		want   report.Verdict
	}{{inside, report.Pass}, {outside, report.Block}, {inside, report.Pass}} {
		if err := os.Remove(link); err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		if err := os.Symlink(tc.target, link); err != nil {
			t.Fatal(err)
		}
		res, err := e.Evaluate(context.Background(), operator, mustPlan(t, doc))
		if err != nil {
			t.Fatal(err)
		}
		if res.Verdict != tc.want {
			t.Errorf("link to %s: %s, want %s: %+v", tc.target, res.Verdict, tc.want, res.Children)
		}
	}
}

// A check of the whole plan reads where each group's first member is
// (input.pointers, lib.pointer). Plans with the same groups in the same
// order and the same numbers of members can place them differently: each
// gets its own pointers.
func TestALongLivedEngineNamesEachPlansPointers(t *testing.T) {
	where := module("spawngate.checks.where", strings.Replace(goodMeta, "x.ok", "plan.where\n#   scope: plan", 1),
		`import data.spawngate.lib

deny contains {"field": "/plan", "message": concat(" ", [lib.pointer(i) | some i, _ in lib.children])} if true`)
	e := builtin(t, where)
	a := `{"role": "a", "tools": ["fs.read"], "paths": [], "budget_tokens": 1}`
	b := `{"role": "b", "tools": ["fs.read"], "paths": [], "budget_tokens": 1}`
	for _, tc := range []struct{ doc, want string }{
		{`{"plan": [` + a + `, ` + a + `, ` + b + `]}`, "/plan/0 /plan/2"},
		{`{"plan": [` + a + `, ` + b + `, ` + a + `]}`, "/plan/0 /plan/1"},
		{`{"plan": [` + a + `, ` + a + `, ` + b + `]}`, "/plan/0 /plan/2"},
	} {
		res, err := e.Evaluate(context.Background(), mustPolicy(t, operatorPolicy), mustPlan(t, tc.doc))
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Violations) != 1 || res.Violations[0].Message != tc.want {
			t.Errorf("%s: %+v, want one violation %q", tc.doc, res.Violations, tc.want)
		}
	}
}

// A plan built by hand (the Go API) has no keys of groups: nothing it
// brings can be found again, and each is judged on its own.
func TestALongLivedEngineJudgesPlansWithoutKeys(t *testing.T) {
	e := builtin(t)
	operator := mustPolicy(t, operatorPolicy)
	for _, tc := range []struct {
		tool string
		want report.Verdict
	}{{"fs.read", report.Pass}, {"shell.run", report.Block}, {"fs.read", report.Pass}} {
		p := &plan.Plan{Source: "plan.json", Children: []any{map[string]any{
			"role": "r", "tools": []any{tc.tool}, "paths": []any{}, "budget_tokens": json.Number("1"),
		}}}
		res, err := e.Evaluate(context.Background(), operator, p)
		if err != nil {
			t.Fatal(err)
		}
		if res.Verdict != tc.want {
			t.Errorf("tool %s: %s, want %s", tc.tool, res.Verdict, tc.want)
		}
	}
}

// A policy built by hand may hold values the loader never gives (an int,
// a []string), which no key writes: each is judged on its own. Loaded, a
// cap of 10 and a cap of 1 are two keys; built by hand, they must still be
// two answers.
func TestALongLivedEngineJudgesPoliciesBuiltByHand(t *testing.T) {
	e := builtin(t)
	for _, tc := range []struct {
		tool string
		cap  int
		want report.Verdict
	}{{"fs.read", 10, report.Pass}, {"fs.read", 1, report.Block}, {"fs.read", 10, report.Pass}, {"fs.write", 10, report.Block}} {
		p := mustPlan(t, `{"plan": [{"role": "r", "tools": ["fs.read"], "paths": [], "budget_tokens": 5}]}`)
		p.Policy = plan.Policy{"allowed_tools": []string{tc.tool}, "workspace_root": "/repo", "budget_cap_tokens": tc.cap}
		res, err := e.Evaluate(context.Background(), nil, p)
		if err != nil {
			t.Fatal(err)
		}
		if res.Verdict != tc.want {
			t.Errorf("%s, cap %d: %s, want %s", tc.tool, tc.cap, res.Verdict, tc.want)
		}
	}
}
