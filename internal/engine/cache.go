package engine

import (
	"strconv"
	"strings"
	"sync"

	"github.com/open-policy-agent/opa/v1/ast"

	"github.com/spawngate/spawngate/internal/memo"
	"github.com/spawngate/spawngate/internal/report"
)

// An engine remembers, across evaluations, what the next plan may ask of
// it again. Every memory follows one rule (package memo): a key holds
// everything the checks read; what a check reads that the key lacks turns
// the memory off. The keys:
//
//   - childMemo: what the child checks found of a child, by the policies
//     and the child's key (plan.Plan.Keys: the SHA-256 of everything the
//     schema and the checks can see of it, its place in a nested plan
//     included).
//   - planMemo: what the plan checks found, by the policies, the
//     plan checks that apply, and every group's key, members and pointer.
//   - policyValues: the policies in OPA's form, by the policies.
//   - planQueries: the query of each set of plan checks that apply, by
//     their IDs.
//   - shared (pure.go): what a rule that reads nothing but the policies
//     evaluated to, by the policies' text. The rule is kept rule by rule:
//     a rule is shared only when it provably reads nothing else.
//
// What the checks of one evaluation read that the keys lack is named once,
// by unkeyed; each turns childMemo and planMemo off for it.
type caches struct {
	childMemo    *memo.Memo[[]report.Violation]
	planMemo     *memo.Memo[planViolations]
	policyValues *memo.Memo[ast.Value]
	planQueries  sync.Map // of *query, by the IDs of its checks
	shared       *sharing // nil when no rule can be shared
}

// planMemoSize is how many plans' plan-check findings an engine keeps: a
// key holds every group's key, so plans are remembered by the hundred, not
// by the thousand.
const planMemoSize = 256

func newCaches() caches {
	return caches{
		childMemo:    memo.New[[]report.Violation](memo.Size),
		planMemo:     memo.New[planViolations](planMemoSize),
		policyValues: memo.New[ast.Value](planMemoSize),
	}
}

// unkeyed names what the checks of one evaluation read that the keys of
// its groups do not hold:
//   - with --resolve-paths, the filesystem, which may change between two
//     plans;
//   - a key that grants nothing, which a check that applies reads
//     (Check.Reads; keep): the keys of groups hold only its type and
//     length;
//   - a plan without keys of groups (one built by hand, not loaded): no
//     key holds its children at all.
func (e *Engine) unkeyed(keys []string, reps []int, keep map[string]bool) []string {
	var out []string
	if e.resolvePaths {
		out = append(out, "the filesystem")
	}
	if keep != nil {
		out = append(out, "a key that grants nothing")
	}
	if len(keys) != len(reps) {
		out = append(out, "children without keys")
	}
	return out
}

// memories are one evaluation's views of the findings an engine remembers.
type memories struct {
	child memo.View[[]report.Violation] // by child key
	plan  memo.View[planViolations]     // by planKey
}

// memoriesFor are the views for one evaluation under policies (by their
// key) of kinds groups. A plan of more kinds of children than childMemo
// keeps uses neither: in order, none would be found again, and what
// earlier plans left would be pushed out.
func (c *caches) memoriesFor(policies string, kinds int, unkeyed []string) memories {
	m := memories{child: c.childMemo.For(policies+"\x00", kinds, unkeyed)}
	if m.child.On() {
		m.plan = c.planMemo.For(policies+"\x00", 1, nil)
	}
	return m
}

// planKey is the key of what the plan checks found (after the policies):
// the checks that apply, and every group's key, how many members it has
// and where its first member is (input.members, input.pointers).
func planKey(checks []Check, keys []string, members, pointers []any) string {
	var key strings.Builder
	for _, chk := range checks {
		key.WriteString(chk.ID)
		key.WriteByte(0)
	}
	for k := range keys {
		// A key is bytes of any value (a digest): its length says where it
		// ends.
		key.WriteString(strconv.Itoa(len(keys[k])))
		key.WriteByte(':')
		key.WriteString(keys[k])
		key.WriteByte(0)
		key.WriteString(strconv.Itoa(members[k].(int)))
		key.WriteByte(0)
		key.WriteString(pointers[k].(string))
		key.WriteByte(0)
	}
	return key.String()
}
