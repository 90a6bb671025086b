package engine_test

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/spawngate/spawngate/internal/engine"
	"github.com/spawngate/spawngate/internal/report"
)

// The listing bound changes what is listed, never what is found: judging
// with a bound of n lists exactly the first n violations, in report order,
// of judging without one, and counts the rest per child; verdicts are the
// same. Plans mix groups of identical children with distinct ones, so that
// a group's members fall before and after the bound.
func TestListingBoundListsTheFirstViolationsAndCountsTheRest(t *testing.T) {
	engine.LongProperty(t)
	e, l := builtin(t), loader(t)
	operator := mustPolicy(t, operatorPolicy)
	r := rand.New(rand.NewPCG(3, 9))
	for n := 0; n < 40; n++ {
		pc := bigPlan(r, 30+r.IntN(300))
		// Repeat some children so that groups have members far apart.
		children := pc.doc["plan"].([]any)
		for i := range len(children) / 3 {
			children = append(children, children[r.IntN(len(children))])
			_ = i
		}
		for i, c := range children {
			if obj, ok := c.(map[string]any); ok {
				if _, ok := obj["id"].(string); ok {
					copied := map[string]any{}
					for k, v := range obj {
						copied[k] = v
					}
					copied["id"] = fmt.Sprintf("c%d", i)
					children[i] = copied
				}
			}
		}
		pc.doc["plan"] = children
		var b bytes.Buffer
		writeJSON(&b, pc.doc)
		p, err := l.Plan(context.Background(), "plan.json", b.Bytes())
		if err != nil {
			t.Fatal(err)
		}
		all, err := e.Evaluate(context.Background(), operator, p, engine.ListAtMost(1<<30))
		if err != nil {
			t.Fatal(err)
		}
		total := 0
		for _, c := range all.Children {
			total += len(c.Violations)
		}
		for _, bound := range []int{0, 1, r.IntN(total + 1), total - 1, total, total + 5} {
			if bound < 0 {
				continue
			}
			got, err := e.Evaluate(context.Background(), operator, p, engine.ListAtMost(bound))
			if err != nil {
				t.Fatal(err)
			}
			want := deepCopy(all)
			want.Trim(bound)
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("plan %d, bound %d of %d violations:\n%s", n, bound, total, firstDifference(got, want))
			}
		}
	}
}

func deepCopy(r report.Result) report.Result {
	out := r
	out.Children = make([]report.Child, len(r.Children))
	for i, c := range r.Children {
		c.Violations = append([]report.Violation{}, c.Violations...)
		out.Children[i] = c
	}
	return out
}

func firstDifference(got, want report.Result) string {
	for i := range want.Children {
		if i >= len(got.Children) || !reflect.DeepEqual(got.Children[i], want.Children[i]) {
			var g report.Child
			if i < len(got.Children) {
				g = got.Children[i]
			}
			return fmt.Sprintf("child %d:\n got %+v\nwant %+v", i, g, want.Children[i])
		}
	}
	return fmt.Sprintf("results differ: %+v / %+v", got.Verdict, want.Verdict)
}

// 100,000 children that share one id, or one group of identical hostile
// children, are counted, not listed: the result stays small.
func TestManyIdenticalRefusedChildrenAreCountedNotListed(t *testing.T) {
	e, l := builtin(t), loader(t)
	child := `{"role": "r", "tools": ["shell.run", "shell.run", "fs:*"], "paths": ["~"], "budget_tokens": 1, "id": "same"}`
	doc := `{"plan": [` + strings.TrimSuffix(strings.Repeat(child+",", 20000), ",") + `]}`
	p, err := l.Plan(context.Background(), "plan.json", []byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	res, err := e.Evaluate(context.Background(), mustPolicy(t, operatorPolicy), p, engine.ListAtMost(10))
	if err != nil {
		t.Fatal(err)
	}
	var rep report.Report
	rep.Results = []report.Result{res}
	rep.Finish()
	c := rep.Count()
	// Each child: tools.allowlist x3, tools.write x2, paths.escape, and its
	// id that 19,999 others share.
	if c.Blocked != 20000 || c.Violations != 20000*7 || c.Violations-c.Unlisted != 10 {
		t.Fatalf("counts %+v, want 20000 blocked, %d violations, 10 listed", c, 20000*7)
	}
	if got := res.Children[1].Violations; len(got) != 3 || res.Children[1].Unlisted != 4 {
		t.Fatalf("child 1 lists %d and counts %d unlisted, want 3 and 4", len(got), res.Children[1].Unlisted)
	}
	if msg := res.Children[0].Violations[0].Message; msg != `id "same" is not unique: children 1, 2, 3 and 19996 more also use it` {
		t.Fatalf("child 0: %q", msg)
	}
}

// What the engine remembers of children it judged before changes nothing:
// a plan judged again, after others that share its children under the same
// policies and under other policies, gets the same result, and a child is
// never judged by what was found for another policy or another literal.
func TestRememberedDecisionsChangeNothing(t *testing.T) {
	e, l := builtin(t), loader(t)
	doc := `{"plan": [
		{"role": "r", "tools": ["shell.run", "fs.read"], "paths": ["~"], "budget_tokens": 4e4, "unknown": 1},
		{"role": "r", "tools": ["shell.run", "fs.read"], "paths": ["~"], "budget_tokens": 40000, "id": "a"},
		{"role": "r", "tools": ["fs.read"], "paths": ["docs"], "budget_tokens": 40000, "id": "a"}]}`
	loose := `{"allowed_tools": ["fs.read", "shell.run"], "workspace_root": "/repo/workspace", "budget_cap_tokens": 200000, "allow_write": true}`
	judge := func(policy string) report.Result {
		t.Helper()
		p, err := l.Plan(context.Background(), "plan.json", []byte(doc))
		if err != nil {
			t.Fatal(err)
		}
		res, err := e.Evaluate(context.Background(), mustPolicy(t, policy), p)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	strict1 := judge(operatorPolicy)
	loose1 := judge(loose)
	strict2 := judge(operatorPolicy)
	loose2 := judge(loose)
	if !reflect.DeepEqual(strict1, strict2) || !reflect.DeepEqual(loose1, loose2) {
		t.Fatalf("judged again, the plan got another result:\n%+v\n%+v", strict1, strict2)
	}
	if reflect.DeepEqual(strict1.Children, loose1.Children) {
		t.Fatal("two policies gave the same result: one was judged by the other's findings")
	}
	if got := rules(strict1.Children[0]); !strings.Contains(got, "budget.invalid") {
		t.Fatalf("4e4 judged as 40000: %s", got)
	}
	if got := rules(strict1.Children[1]); strings.Contains(got, "budget.invalid") {
		t.Fatalf("40000 judged as 4e4: %s", got)
	}
}
