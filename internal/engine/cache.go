package engine

import (
	"crypto/sha256"
	"encoding/json"
	"strconv"
	"strings"

	"github.com/open-policy-agent/opa/v1/ast"

	"github.com/spawngate/spawngate/internal/memo"
	"github.com/spawngate/spawngate/internal/plan"
	"github.com/spawngate/spawngate/internal/report"
)

// An engine remembers, across evaluations, what the next plan may ask of
// it again. Every memory follows one rule (package memo): a key holds
// everything the checks read; what a check reads that the key lacks turns
// the memory off. Every key is written by one type, key, in one function
// per memory, from the parts below; TestEveryPartOfAKeyCounts changes each
// part in turn:
//
//   - childMemo (childKey): what the child checks found of a child, by the
//     policies and the child's key (plan.Plan.Keys: the SHA-256 of
//     everything the schema and the checks can see of it, its place in a
//     nested plan included).
//   - planMemo (planKey): what the plan checks found, by the policies and
//     every group's key, members and pointer. Not by the plan checks that
//     apply: the policies decide those (planQueryFor).
//   - policyValues (policyValuesKey): the policies in OPA's form, by the
//     policies.
//   - planQueries (checksKey): the query of each set of plan checks that
//     apply, by their IDs.
//   - shared (sharedKey, pure.go): what a rule that reads nothing but the
//     policies evaluated to, by the policies as OPA writes them. The rule
//     is kept rule by rule: a rule is shared only when it provably reads
//     nothing else.
//
// What the checks of one evaluation read that the keys lack is named once:
// what the policies' part lacks by keyPolicies, which turns policyValues,
// childMemo and planMemo off for it, and the rest by unkeyed, which turns
// childMemo and planMemo off. A nil memory remembers nothing
// (memo.Memo.For): so is every memory of an engine built with noMemos, and
// shared with noSharedValues.
type caches struct {
	childMemo    *memo.Memo[[]report.Violation]
	planMemo     *memo.Memo[planViolations]
	policyValues *memo.Memo[ast.Value]
	planQueries  *memo.Memo[*query]
	shared       *sharing // nil when no rule can be shared
}

// planMemoSize is how many plans' plan-check findings an engine keeps: a
// key holds every group's key, so plans are remembered by the hundred, not
// by the thousand. As many sets of policies are kept in OPA's form.
const planMemoSize = 256

// planQuerySets is how many sets of plan checks an engine keeps a query
// of: a set is what the policies turn on (custom.when_set), a few.
const planQuerySets = 64

func newCaches() caches {
	return caches{
		childMemo:    memo.New[[]report.Violation](memo.Size),
		planMemo:     memo.New[planViolations](planMemoSize),
		policyValues: memo.New[ast.Value](planMemoSize),
		planQueries:  memo.New[*query](planQuerySets),
	}
}

// noMemos makes an engine remember nothing across evaluations (the memos
// above: each evaluation converts the policies, prepares its plan query and
// runs the checks on every representative), and noSharedValues makes it
// share no value of a pure rule (pure.go). For tests (export_test.go): one
// that judges a plan again and again, or on every core, sees each
// evaluation done in full, not a memo's lookup.
func noMemos() Option        { return func(e *Engine) { e.memoless = true } }
func noSharedValues() Option { return func(e *Engine) { e.unshared = true } }

// key writes the key of a memory from its parts, the one place the key of
// any memory of the engine is written. Each part is its length and its
// bytes, so two lists of parts that differ never write the same key,
// whatever bytes a part holds (a digest: any 32 bytes). Each memory's key
// is written by one function below, from every part it holds.
type key struct{ b strings.Builder }

// keyOf is a key to be written of about size bytes of parts.
func keyOf(size int) *key {
	k := &key{}
	k.b.Grow(size + 8)
	return k
}

// part adds one part.
func (k *key) part(s string) *key {
	var n [24]byte
	length := append(strconv.AppendInt(n[:0], int64(len(s)), 10), ':')
	k.b.Grow(len(length) + len(s))
	k.b.Write(length)
	k.b.WriteString(s)
	return k
}

func (k *key) String() string { return k.b.String() }

// policyValuesKey is the key of the policies in OPA's form (policyValues):
// the policies that apply (pkey, keyPolicies).
func policyValuesKey(pkey string) string {
	return keyOf(len(pkey)).part(pkey).String()
}

// childKey is the key of what the child checks found of a child: the
// policies (pkey, keyPolicies) and the child's key (plan.Plan.Keys).
func childKey(pkey, child string) string {
	return keyOf(len(pkey) + len(child)).part(pkey).part(child).String()
}

// planKey is the key of what the plan checks found: the policies (pkey),
// and every group's key, how many members it has and where its first
// member is (input.members, input.pointers).
func planKey(pkey string, keys []string, members, pointers []any) string {
	k := keyOf(len(pkey) + len(keys)*64).part(pkey)
	for g := range keys {
		k.part(keys[g]).part(strconv.Itoa(members[g].(int))).part(pointers[g].(string))
	}
	return k.String()
}

// checksKey is the key of the query of a set of checks (planQueries):
// their IDs.
func checksKey(checks []Check) string {
	k := keyOf(len(checks) * 16)
	for _, chk := range checks {
		k.part(chk.ID)
	}
	return k.String()
}

// sharedKey is the key of the values shared under the policies (pure.go):
// the policies as OPA writes them.
func sharedKey(policies ast.Value) string {
	text := policies.String()
	return keyOf(len(text)).part(text).String()
}

// keyPolicies is the policies that apply as a key's part holds them
// (pkey): what plan.Key writes of them, by source, hashed with SHA-256 as
// a child's key is, so that a key of childMemo holds some 70 bytes at
// every child, not the policies' hundreds (thousands, with exceptions).
// lacks is what that part does not hold: nil but for a policy built by
// hand that holds a value the loader never gives (an int, a []string),
// which plan.Key does not write; it turns policyValues, childMemo and
// planMemo off.
func keyPolicies(policies map[string]any) (pkey string, lacks []string) {
	if !loaded(policies) {
		return "", []string{"a policy value no key writes"}
	}
	sum := sha256.Sum256([]byte(plan.Key(policies)))
	return string(sum[:]), nil
}

// loaded tells whether v holds only what the loader gives, which plan.Key
// writes exactly: strings, json.Number, booleans, null, lists and objects
// of them.
func loaded(v any) bool {
	switch v := v.(type) {
	case string, json.Number, bool, nil:
		return true
	case []any:
		for _, x := range v {
			if !loaded(x) {
				return false
			}
		}
		return true
	case map[string]any:
		for _, x := range v {
			if !loaded(x) {
				return false
			}
		}
		return true
	}
	return false
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
	child memo.View[[]report.Violation] // by childKey
	plan  memo.View[planViolations]     // by planKey
}

// memoriesFor are the views for one evaluation of kinds groups. A plan of
// more kinds of children than childMemo keeps uses neither: in order, none
// would be found again, and what earlier plans left would be pushed out.
func (c *caches) memoriesFor(kinds int, unkeyed []string) memories {
	m := memories{child: c.childMemo.For("", kinds, unkeyed)}
	if m.child.On() {
		m.plan = c.planMemo.For("", 1, nil)
	}
	return m
}
