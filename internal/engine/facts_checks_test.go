package engine_test

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/spawngate/spawngate/internal/engine"
	"github.com/spawngate/spawngate/internal/report"
)

var factPlans = flag.Int("facts.plans", 400, "random plans TestChecksAgreeWithAndWithoutFacts draws")

// The checks report the same findings, word for word, whether the engine
// hands them its facts or they compute every fact from the input (as
// under opa test, opa eval or a bundle): on the reference model's random
// plans, hostile children, profiles, nested trees and brief hygiene
// included.
func TestChecksAgreeWithAndWithoutFacts(t *testing.T) {
	engine.LongProperty(t)
	with, without := newComparer(t), newComparer(t)
	r := rand.New(rand.NewPCG(*refSeed, 0xfac7))
	ctx := context.Background()
	for k := range *factPlans {
		pc := randomPlan(r)
		var b bytes.Buffer
		writeJSON(&b, pc.doc)
		p, err := with.loader.Plan(ctx, "random.json", b.Bytes())
		if err != nil {
			continue // refused before any check runs
		}
		got, err := with.engine.Evaluate(ctx, with.operators[pc.operator], p, engine.ListAtMost(1<<30))
		var want report.Result
		var wantErr error
		engine.WithoutFacts(func() {
			want, wantErr = without.engine.Evaluate(ctx, without.operators[pc.operator], p, engine.ListAtMost(1<<30))
		})
		if (err == nil) != (wantErr == nil) || !reflect.DeepEqual(got, want) {
			t.Fatalf("plan %d (seed %d): with facts %v, finding:\n%s\nwithout %v:\n%s\nplan %s", k, *refSeed, err, listed(got), wantErr, listed(want), b.String())
		}
	}
}

// listed is every finding of a result, one a line.
func listed(res report.Result) string {
	var b strings.Builder
	for _, c := range res.Children {
		for _, v := range c.Violations {
			fmt.Fprintf(&b, "  %s %s %v: %s\n", v.Path, v.Rule, v.Policies, v.Message)
		}
	}
	for _, v := range res.Violations {
		fmt.Fprintf(&b, "  %s %s %v: %s\n", v.Path, v.Rule, v.Policies, v.Message)
	}
	return b.String()
}
