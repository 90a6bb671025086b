package plan_test

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"math/rand/v2"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/spawngate/spawngate/internal/document"
	"github.com/spawngate/spawngate/internal/document/documenttest"
	"github.com/spawngate/spawngate/internal/jsonpointer"
	"github.com/spawngate/spawngate/internal/plan"
)

// FuzzLoadPlan reads arbitrary bytes as a plan and as a policy.
func FuzzLoadPlan(f *testing.F) {
	for _, in := range loadPlanSeeds() {
		f.Add(in.Data, in.AsJSON)
	}
	f.Fuzz(loadPlanProperty(newLoader(f)))
}

func loadPlanSeeds() []documenttest.Input {
	var seeds []documenttest.Input
	for _, tc := range planCases {
		seeds = append(seeds, documenttest.Input{Data: []byte(tc.in), AsJSON: tc.source == "" || strings.HasSuffix(tc.source, ".json")})
	}
	for _, tc := range policyCases {
		seeds = append(seeds, documenttest.Input{Data: []byte(tc.in), AsJSON: tc.source == ""})
		seeds = append(seeds, documenttest.Input{Data: []byte(`{"plan":[` + okChild + `],"policy":` + tc.in + `}`), AsJSON: true})
	}
	return seeds
}

func loadPlanProperty(l *plan.Loader) func(t *testing.T, data []byte, asJSON bool) {
	return func(t *testing.T, data []byte, asJSON bool) {
		source := "fuzz.yaml"
		if asJSON {
			source = "fuzz.json"
		}
		var p *plan.Plan
		var err error
		documenttest.WithinDeadline(t, data, func() { p, err = l.Plan(context.Background(), source, data) })
		if err != nil {
			documenttest.CheckError(t, err, source)
			if p != nil {
				t.Fatalf("Plan = %+v with error %v", p, err)
			}
		} else {
			checkPlan(t, p, source)
		}

		pol, err := l.Policy(context.Background(), source, data)
		if err != nil {
			documenttest.CheckError(t, err, source)
			if pol != nil {
				t.Fatalf("Policy = %#v with error %v", pol, err)
			}
			return
		}
		documenttest.CheckShape(t, map[string]any(pol), "")
		for _, key := range []string{"allowed_tools", "workspace_root", "budget_cap_tokens"} {
			if _, ok := pol[key]; !ok {
				t.Fatalf("Policy without %s: %#v", key, pol)
			}
		}
	}
}

func TestFuzzLoadPlanShort(t *testing.T) {
	check := loadPlanProperty(newLoader(t))
	for _, in := range documenttest.Mutated(loadPlanSeeds(), 10000) {
		check(t, in.Data, in.AsJSON)
	}
}

func checkPlan(t *testing.T, p *plan.Plan, source string) {
	t.Helper()
	if p.Source != source {
		t.Fatalf("Plan.Source = %q, want %q", p.Source, source)
	}
	if len(p.Children) == 0 {
		t.Fatalf("Plan succeeded without children")
	}
	documenttest.CheckShape(t, p.Children, "/plan")
	if p.Policy != nil {
		documenttest.CheckShape(t, map[string]any(p.Policy), "/policy")
	}
	issues := p.SchemaViolations()
	for i, is := range issues {
		if is.Child < 0 || is.Child >= len(p.Children) {
			t.Fatalf("issue %d names child %d of %d: %+v", i, is.Child, len(p.Children), is)
		}
		if is.Field != "" && !strings.HasPrefix(is.Field, "/") {
			t.Fatalf("issue %d field %q is not a pointer", i, is.Field)
		}
		if is.Message == "" || strings.ContainsAny(is.Message, "\r\n") {
			t.Fatalf("issue %d message %q is empty or not one line", i, is.Message)
		}
		if i > 0 {
			prev := issues[i-1]
			if prev.Child > is.Child || (prev.Child == is.Child && jsonpointer.Compare(prev.Field, is.Field) > 0) {
				t.Fatalf("issues out of order: %+v before %+v", prev, is)
			}
		}
	}
}

// FuzzNestedPlan builds a nested plan from shape parameters the fuzzer
// chooses (how many levels below the plan's own children, how many
// children each may have, at which level one child is malformed and how,
// whether the plan has a parent block, and the limits it is read with)
// and checks what the loader makes of it: no panic; every child of the
// tree flattened, each once, in the documented order; every Node's
// Pointer naming that child in the document, and its Depth, Spawns and
// Descendants what a direct count of the document says; a document over
// MaxChildren or MaxDepth refused with an error that names the limit; and
// the work of reading it linear in the document (counted in allocations,
// not time).
func FuzzNestedPlan(f *testing.F) {
	for _, s := range nestedSeeds() {
		f.Add(s.levels, s.fanout, s.bad, s.kind, s.seed)
	}
	f.Fuzz(func(t *testing.T, levels, fanout, bad, kind uint8, seed uint64) {
		nestedPlanProperty(t, nestedShape{levels, fanout, bad, kind, seed})
	})
}

// nestedShape is what FuzzNestedPlan draws a document from. levels (mod
// 40) is how many levels lie below the plan's own children along the
// first child of each level; fanout (mod 4, plus 1) how many children
// any child may have; bad (mod levels+2) the level, from 1 for the
// plan's own children, at which the first child is malformed (0: none);
// kind its low three bits how, bit 3 whether the plan has a parent
// block, bits 4-5 MaxChildren and bits 6-7 MaxDepth; seed the other
// children's number of children.
type nestedShape struct {
	levels, fanout, bad, kind uint8
	seed                      uint64
}

func nestedSeeds() []nestedShape {
	var seeds []nestedShape
	for kind := range 8 {
		seeds = append(seeds,
			nestedShape{3, 2, uint8(1 + kind%4), uint8(kind), uint64(kind)},
			nestedShape{1, 3, 0, uint8(kind<<4 | 8), uint64(kind)},      // wide and shallow, tight MaxChildren
			nestedShape{31, 0, 0, uint8(kind<<5 | kind), uint64(kind)},  // a chain: over MaxDepth under most limits
			nestedShape{6, 3, 5, uint8(kind | 0xc8), uint64(kind + 8)},  // MaxDepth 64, a parent block
			nestedShape{0, 3, 1, uint8(kind | 0x38), uint64(kind + 16)}, // flat but for the malformed child
		)
	}
	return seeds
}

// nestedLimits are the limits FuzzNestedPlan reads with, by kind's bits:
// MaxChildren 4, 16, 64 or the default, MaxDepth 12, 24, 40 or 64.
func (s nestedShape) limits() document.Limits {
	lim := document.DefaultLimits
	lim.MaxChildren = []int{4, 16, 64, document.DefaultLimits.MaxChildren}[s.kind>>4&3]
	lim.MaxDepth = []int{12, 24, 40, 64}[s.kind>>6&3]
	return lim
}

// build writes the document: children with ids n0, n1, ... in the order
// they are made, at most 300 of them.
func (s nestedShape) build() map[string]any {
	r := rand.New(rand.NewPCG(s.seed, 0x7e57))
	levels, fanout := int(s.levels%40), 1+int(s.fanout%4)
	bad := int(s.bad) % (levels + 2)
	made := 0
	var child func(level int, spine bool) any
	child = func(level int, spine bool) any {
		c := map[string]any{"id": "n" + strconv.Itoa(made), "role": "r", "tools": []any{"fs.read", "Agent"}, "paths": []any{},
			"budget_tokens": json.Number(strconv.Itoa(1 + r.IntN(1000)))}
		made++
		if spine && level == bad {
			switch s.kind & 7 {
			case 0:
				return "not a child"
			case 1:
				return json.Number("5")
			case 2:
				c["children"] = "not a list"
			case 3:
				c["children"] = nil
			case 4:
				c["children"] = map[string]any{"0": map[string]any{"role": "r"}}
			case 5:
				c["children"] = []any{}
			case 6:
				delete(c, "role")
			default:
				c["children"] = []any{nil, "not a child", []any{}}
			}
			if _, ok := c["children"]; ok {
				return c
			}
		}
		n := r.IntN(fanout + 1)
		if spine && level <= levels {
			n = max(n, 1)
		}
		if level > levels || made >= 300 {
			n = 0
		}
		if n > 0 || r.IntN(4) == 0 {
			kids := []any{}
			for j := range n {
				kids = append(kids, child(level+1, spine && j == 0))
			}
			c["children"] = kids
		}
		return c
	}
	top := []any{}
	for i := range max(1, r.IntN(fanout+1)) {
		top = append(top, child(1, i == 0))
	}
	doc := map[string]any{"plan": top}
	if s.kind&8 != 0 {
		doc["parent"] = map[string]any{"role": "caller", "tools": []any{"fs.read", "Agent"}, "depth": json.Number(strconv.Itoa(r.IntN(3)))}
	}
	return doc
}

// nestingDepth is how deeply a value nests objects and lists: 0 for a
// scalar.
func nestingDepth(v any) int {
	deepest := 0
	switch v := v.(type) {
	case map[string]any:
		for _, e := range v {
			deepest = max(deepest, nestingDepth(e))
		}
	case []any:
		for _, e := range v {
			deepest = max(deepest, nestingDepth(e))
		}
	default:
		return 0
	}
	return deepest + 1
}

// countValues is how many values a document holds.
func countValues(v any) int {
	n := 1
	switch v := v.(type) {
	case map[string]any:
		for _, e := range v {
			n += countValues(e)
		}
	case []any:
		for _, e := range v {
			n += countValues(e)
		}
	}
	return n
}

// kidsOf is the children list of a child as written, or nil.
func kidsOf(c any) []any {
	obj, _ := c.(map[string]any)
	kids, _ := obj["children"].([]any)
	return kids
}

// below counts every child under a child of the document, directly.
func below(c any) int {
	n := 0
	for _, k := range kidsOf(c) {
		n += 1 + below(k)
	}
	return n
}

// nestedLoaders holds one loader per limits the fuzz target reads with:
// a loader remembers what the schema said of children, and allocations
// are counted from the second reading of a document on.
var nestedLoaders sync.Map // document.Limits -> *plan.Loader

func nestedLoader(t *testing.T, lim document.Limits) *plan.Loader {
	if l, ok := nestedLoaders.Load(lim); ok {
		return l.(*plan.Loader)
	}
	l, err := plan.NewLoader(lim)
	if err != nil {
		t.Fatal(err)
	}
	actual, _ := nestedLoaders.LoadOrStore(lim, l)
	return actual.(*plan.Loader)
}

// allocsPerValue bounds the allocations of reading a nested plan the
// loader has read before (so the schema's verdicts come from its memory),
// per value of the document, plus allocsFixed. Reading one costs about
// 300 plus 4 a value, as much for a chain 30 deep as for a wide, shallow
// tree (at most 4.6 a value over the seeds and the short run's shapes); a
// reader whose work grew with each child's depth or the size of its
// subtree would cost several times as much on the deep ones. Work that
// allocates nothing (hashing, comparing) is not counted.
const allocsPerValue, allocsFixed = 8, 400

func nestedPlanProperty(t *testing.T, s nestedShape) {
	doc := s.build()
	data, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	lim := s.limits()
	l := nestedLoader(t, lim)
	var p *plan.Plan
	documenttest.WithinDeadline(t, data, func() { p, err = l.Plan(context.Background(), "nested.json", data) })

	top := doc["plan"].([]any)
	count := len(top)
	for _, c := range top {
		count += below(c)
	}
	switch {
	case nestingDepth(doc) > lim.MaxDepth:
		checkLimitError(t, err, "max-depth", lim.MaxDepth, data)
		return
	case count > lim.MaxChildren:
		checkLimitError(t, err, "max-children", lim.MaxChildren, data)
		return
	case err != nil:
		t.Fatalf("%d children, nested %d deep: %v\n%s", count, nestingDepth(doc), err, data)
	}
	if len(p.Children) != count {
		t.Fatalf("%d children flattened, the document has %d\n%s", len(p.Children), count, data)
	}

	block, _ := doc["parent"].(map[string]any)
	nested := block != nil
	for _, c := range top {
		if obj, ok := c.(map[string]any); ok {
			_, has := obj["children"]
			nested = nested || has
		}
	}
	if !nested {
		if p.Tree != nil || p.Parents != nil {
			t.Fatalf("a flat plan has a tree: %+v %v", p.Tree, p.Parents)
		}
		return
	}
	if len(p.Tree) != count {
		t.Fatalf("%d nodes for %d children", len(p.Tree), count)
	}
	// The order, directly: the plan's own children, then the descendants
	// of each in pre-order.
	var order []string
	var preorder func(c any, at string)
	preorder = func(c any, at string) {
		for j, k := range kidsOf(c) {
			order = append(order, at+"/children/"+strconv.Itoa(j))
			preorder(k, order[len(order)-1])
		}
	}
	for i := range top {
		order = append(order, "/plan/"+strconv.Itoa(i))
	}
	for i, c := range top {
		preorder(c, "/plan/"+strconv.Itoa(i))
	}
	base := 0
	if block != nil {
		base, _ = strconv.Atoi(string(block["depth"].(json.Number)))
	}
	std, err := documenttest.DecodeStd(data)
	if err != nil {
		t.Fatal(err)
	}
	wantParents := map[string]bool{}
	if block != nil {
		wantParents[plan.ParentBlock] = true
	}
	for k, n := range p.Tree {
		if n.Pointer != order[k] {
			t.Fatalf("child %d is at %s, want %s", k, n.Pointer, order[k])
		}
		c, ok := jsonpointer.Lookup(std, n.Pointer)
		if !ok {
			t.Fatalf("child %d: %s names nothing in the document", k, n.Pointer)
		}
		if obj, isObject := c.(map[string]any); isObject {
			own, _ := p.Children[k].(map[string]any)
			if own["id"] != obj["id"] {
				t.Fatalf("child %d at %s is %v, the document has %v there", k, n.Pointer, own["id"], obj["id"])
			}
			if _, isList := obj["children"].([]any); isList && !reflect.DeepEqual(own["children"], []any{}) {
				t.Fatalf("child %d keeps its children list: %v", k, own["children"])
			}
		} else if !reflect.DeepEqual(c, p.Children[k]) {
			t.Fatalf("child %d at %s is %#v, the document has %#v there", k, n.Pointer, p.Children[k], c)
		}
		depth := base + 1 + strings.Count(n.Pointer, "/children/")
		if n.Depth != depth || n.Spawns != len(kidsOf(c)) || n.Descendants != below(c) {
			t.Fatalf("child %d at %s: depth %d, spawns %d, descendants %d; the document says %d, %d, %d",
				k, n.Pointer, n.Depth, n.Spawns, n.Descendants, depth, len(kidsOf(c)), below(c))
		}
		parent := -1
		if at := strings.LastIndex(n.Pointer, "/children/"); at >= 0 {
			parent = slices.Index(order, n.Pointer[:at])
		}
		if n.Parent != parent || parent >= k {
			t.Fatalf("child %d at %s: parent %d, want %d", k, n.Pointer, n.Parent, parent)
		}
		if n.Spawns > 0 {
			wantParents[n.Pointer] = true
		}
	}
	if got := slices.Sorted(maps.Keys(p.Parents)); !slices.Equal(got, slices.Sorted(maps.Keys(wantParents))) {
		t.Fatalf("facts for parents %v, want %v", got, slices.Sorted(maps.Keys(wantParents)))
	}

	values := countValues(doc)
	allocs := testing.AllocsPerRun(1, func() {
		if _, err := l.Plan(context.Background(), "nested.json", data); err != nil {
			t.Fatal(err)
		}
	})
	if allocs > float64(allocsPerValue*values+allocsFixed) {
		t.Fatalf("reading %d values (%d children, nested %d deep) took %.0f allocations, more than %d a value\n%s",
			values, count, nestingDepth(doc), allocs, allocsPerValue, data)
	}
}

// checkLimitError checks that a document over a limit is refused with an
// error that names the limit and its value.
func checkLimitError(t *testing.T, err error, limit string, value int, data []byte) {
	t.Helper()
	var pe *document.Error
	if !errors.As(err, &pe) {
		t.Fatalf("over %s (%d): error %v, want a *document.Error\n%s", limit, value, err, data)
	}
	documenttest.CheckError(t, err, "nested.json")
	if pe.Limit != limit || !strings.Contains(pe.Msg, strconv.Itoa(value)) {
		t.Fatalf("over %s (%d): %v (limit %q)\n%s", limit, value, err, pe.Limit, data)
	}
}

// TestFuzzNestedPlanShort runs FuzzNestedPlan's property over its seeds
// and a sweep of shapes, so every go test run checks a few hundred trees.
func TestFuzzNestedPlanShort(t *testing.T) {
	shapes := nestedSeeds()
	r := rand.New(rand.NewPCG(1, 2))
	for range 400 {
		shapes = append(shapes, nestedShape{uint8(r.IntN(40)), uint8(r.IntN(4)), uint8(r.IntN(256)), uint8(r.IntN(256)), r.Uint64()})
	}
	for _, s := range shapes {
		nestedPlanProperty(t, s)
	}
}
