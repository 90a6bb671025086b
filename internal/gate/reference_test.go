package gate_test

// An independent reference model of the four checks and the structural
// rules, written from the README (not from the Rego), and a property test
// that compares it with the gate, child by child, on many random plans.

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"math/big"
	"math/rand/v2"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/spawngate/spawngate/internal/gate"
	"github.com/spawngate/spawngate/internal/plan"
)

var (
	refPlans = flag.Int("ref.plans", 3000, "random plans the reference-model test compares")
	refSeed  = flag.Uint64("ref.seed", 1, "seed of the reference-model test")
)

// ---- The reference model ----

type refPolicy struct {
	source     string
	allowed    []string
	root       string
	cap        *big.Rat
	allowWrite bool
	writeTools []string
}

// finding is one refusal: the rule and the JSON pointer it names.
type finding struct{ rule, pointer string }

var (
	refToolName = regexp.MustCompile(`^[A-Za-z0-9_]([A-Za-z0-9_.:-]*[A-Za-z0-9_])?$`)
	refDevices  = map[string]bool{"con": true, "prn": true, "aux": true, "nul": true}
	refSegment  = regexp.MustCompile(`^[A-Za-z0-9._@-]+$`)
	refWhole    = regexp.MustCompile(`^-?[0-9]+$`)
	refChildKey = map[string]bool{"role": true, "tools": true, "paths": true, "budget_tokens": true, "id": true, "brief": true, "model": true, "metadata": true}
)

// refGlob matches a policy pattern as the README says: * within one
// dot-separated segment, ** across segments, ? one character but a dot.
func refGlob(pattern, name string) bool {
	re, ok := globCache[pattern]
	if !ok {
		re = compileGlob(pattern)
		globCache[pattern] = re
	}
	return re.MatchString(name)
}

var globCache = map[string]*regexp.Regexp{}

func compileGlob(pattern string) *regexp.Regexp {
	var re strings.Builder
	re.WriteString("^")
	for i := 0; i < len(pattern); i++ {
		switch {
		case strings.HasPrefix(pattern[i:], "**"):
			re.WriteString(".*")
			i++
		case pattern[i] == '*':
			re.WriteString("[^.]*")
		case pattern[i] == '?':
			re.WriteString("[^.]")
		default:
			re.WriteString(regexp.QuoteMeta(pattern[i : i+1]))
		}
	}
	re.WriteString("$")
	return regexp.MustCompile(re.String())
}

func refAny(patterns []string, name string) bool {
	for _, p := range patterns {
		if refGlob(p, name) {
			return true
		}
	}
	return false
}

// refInside reads the README's path rules directly: segments of
// A-Z a-z 0-9 . _ - @ between single slashes, one trailing slash allowed,
// no segment of dots only or ending in a dot, no Windows device name, no
// leading - or @ for a relative path, and the root itself or under
// root + "/".
func refInside(path, planRoot string, roots []string) bool {
	if path == "" || len(path) > 4096 || strings.HasPrefix(path, "-") || strings.HasPrefix(path, "@") || strings.HasPrefix(path, "//") {
		return false
	}
	abs := path
	if !strings.HasPrefix(path, "/") {
		abs = strings.TrimSuffix(planRoot, "/") + "/" + path
	}
	if abs != "/" {
		abs = strings.TrimSuffix(abs, "/")
	}
	if abs != "/" {
		for _, seg := range strings.Split(abs, "/")[1:] {
			if !refSegment.MatchString(seg) || strings.HasSuffix(seg, ".") || refDevice(seg) {
				return false
			}
		}
	}
	for _, root := range roots {
		if !(abs == root || root == "/" || strings.HasPrefix(abs, root+"/")) {
			return false
		}
	}
	return true
}

// refDevice tells whether a segment names a Windows device: CON, PRN,
// AUX, NUL, COM1-9 or LPT1-9, in any case, with any extension.
func refDevice(seg string) bool {
	base, _, _ := strings.Cut(strings.ToLower(seg), ".")
	if refDevices[base] {
		return true
	}
	return len(base) == 4 && (strings.HasPrefix(base, "com") || strings.HasPrefix(base, "lpt")) && base[3] >= '1' && base[3] <= '9'
}

func refJudge(policies []refPolicy, children []any) [][]finding {
	out := make([][]finding, len(children))
	planRoot := policies[len(policies)-1].root // the plan's own policy comes last
	var roots []string
	for _, p := range policies {
		roots = append(roots, p.root)
	}
	ids := map[string]int{}
	for _, c := range children {
		if obj, ok := c.(map[string]any); ok {
			if id, ok := obj["id"].(string); ok && id != "" {
				ids[id]++
			}
		}
	}
	for i, c := range children {
		at := func(field string) string { return "/plan/" + strconv.Itoa(i) + field }
		add := func(rule, field string) { out[i] = append(out[i], finding{rule, at(field)}) }
		obj, ok := c.(map[string]any)
		if !ok {
			add("schema", "")
			continue
		}
		for k := range obj {
			if !refChildKey[k] {
				add("schema", "/"+k)
			}
		}
		if role, ok := obj["role"].(string); !ok || strings.TrimSpace(role) == "" {
			add("schema", "/role")
		}
		if v, present := obj["id"]; present {
			if id, ok := v.(string); !ok || id == "" || ids[id] > 1 {
				add("schema", "/id")
			}
		}
		for _, k := range []string{"brief", "model"} {
			if v, present := obj[k]; present {
				if _, ok := v.(string); !ok {
					add("schema", "/"+k)
				}
			}
		}
		// tools
		if tools, ok := obj["tools"].([]any); !ok || len(tools) == 0 {
			add("tools.missing", "/tools")
		} else {
			for j, t := range tools {
				field := "/tools/" + strconv.Itoa(j)
				name, isString := t.(string)
				if !isString || !refToolName.MatchString(name) {
					add("tools.allowlist", field)
					continue
				}
				writes, everyGrants, everyAllows := false, true, true
				for _, p := range policies {
					everyAllows = everyAllows && refAny(p.allowed, name)
					writes = writes || refAny(p.writeTools, name)
					everyGrants = everyGrants && p.allowWrite
				}
				if !everyAllows {
					add("tools.allowlist", field)
				}
				if writes && !everyGrants {
					add("tools.write", field)
				}
			}
		}
		// paths
		if paths, ok := obj["paths"].([]any); !ok {
			add("paths.invalid", "/paths")
		} else {
			for j, p := range paths {
				field := "/paths/" + strconv.Itoa(j)
				s, isString := p.(string)
				switch {
				case !isString:
					add("paths.invalid", field)
				case !refInside(s, planRoot, roots):
					add("paths.escape", field)
				}
			}
		}
		// budget
		n, isNumber := obj["budget_tokens"].(json.Number)
		whole := isNumber && refWhole.MatchString(string(n))
		var b *big.Rat
		if whole {
			b, _ = new(big.Rat).SetString(string(n))
		}
		if !whole || b.Sign() <= 0 {
			add("budget.invalid", "/budget_tokens")
		} else {
			for _, p := range policies {
				if b.Cmp(p.cap) > 0 {
					add("budget.cap", "/budget_tokens")
					break
				}
			}
		}
		sortFindings(out[i])
	}
	return out
}

func sortFindings(fs []finding) {
	sort.Slice(fs, func(a, b int) bool {
		if fs[a].pointer != fs[b].pointer {
			return fs[a].pointer < fs[b].pointer
		}
		return fs[a].rule < fs[b].rule
	})
}

// ---- Random plans ----

// lit is a number written exactly as its text.
type lit string

func writeJSON(b *bytes.Buffer, v any) {
	switch v := v.(type) {
	case lit:
		b.WriteString(string(v))
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		b.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				b.WriteByte(',')
			}
			writeJSON(b, k)
			b.WriteByte(':')
			writeJSON(b, v[k])
		}
		b.WriteByte('}')
	case []any:
		b.WriteByte('[')
		for i, x := range v {
			if i > 0 {
				b.WriteByte(',')
			}
			writeJSON(b, x)
		}
		b.WriteByte(']')
	default:
		enc, err := json.Marshal(v)
		if err != nil {
			panic(err)
		}
		b.Write(enc)
	}
}

var (
	cleanTools   = []any{"fs.read", "http.get"}
	cleanPaths   = []any{"/repo/workspace", "/repo/workspace/docs", "/repo/workspace/src/main.go", "docs/", "src/.env"}
	cleanBudgets = []any{lit("1"), lit("1000"), lit("40000")}

	hostileTools = []any{
		"fs.write", "fs.delete", "shell.run", "wallet.transfer", "fs:*", "mcp__github__get_*", "**", "*",
		"fs.read ", " fs.read", "", "FS.READ", "fs..read", "fs.read.deep", "mcp__github__get_issue",
		"mcp__github__create_issue", "db.drop", "http.post", "fs.rea?", "fs/read", "fs.réad", "fs.read\n",
		"fs.write:", "fs.", "fs.read-", "_", "a",
		lit("5"), nil, true, []any{"fs.read"}, map[string]any{"name": "fs.read"},
	}
	hostilePaths = []any{
		"", "~", "~/", "$HOME", "/repo/workspace/*", " /etc", " ../x", "/etc/passwd", "/", "/repo",
		"/repo/workspace-evil", "/repo/workspace2/x", "/repo/workspace/../etc", "..", ".", "./docs",
		"/repo/workspace/./x", "/repo//workspace", "//server/share", "/repo/workspace/%2e%2e", "C:/x",
		"file:///etc", "/repo/workspace\\..", "/repo/workspace/\u2215etc", "/repo/workspace/\uff0e\uff0e",
		"-rf", "/repo/workspace/a:b", "/repo/workspace/{a,b}", "/repo/workspace/docs ", "/repo/workspace/`id`",
		"/repo/workspace/docs/...", "/repo/workspace/@types", "/repo/workspace/.git", "/srv/app/x", "x/y/z",
		"@etc", "/repo/workspace/ab.", "/repo/workspace/con", "docs/NUL.txt", "/repo/workspace/com10", "/repo/workspace/console",
		lit("7"), nil, []any{"/etc"},
	}
	hostileBudgets = []any{
		lit("0"), lit("-1"), lit("-0"), lit("200000"), lit("200001"), lit("5000000"), lit("4e4"), lit("40000.0"),
		lit("1.5"), lit("9007199254740993"), lit("100000"), lit("100001"), "40000", true, nil, []any{lit("1")},
	}
	pathAlphabet = []string{"/", "/", "a", "b", ".", "..", "-", "_", "@", "~", "$", "%", "\\", " ", ":", "é", "\u2215", "*", "repo", "workspace", "docs", "con", "Lpt1", "nul."}
)

func pick(r *rand.Rand, pool []any) any { return pool[r.IntN(len(pool))] }

func randomPath(r *rand.Rand) any {
	switch r.IntN(10) {
	case 0, 1, 2:
		return pick(r, hostilePaths)
	case 3, 4:
		var b strings.Builder
		if r.IntN(2) == 0 {
			b.WriteString("/repo/workspace")
		}
		for n := r.IntN(6); n > 0; n-- {
			b.WriteString(pathAlphabet[r.IntN(len(pathAlphabet))])
		}
		return b.String()
	}
	return pick(r, cleanPaths)
}

// planCase is a generated plan, its policies for the reference, and which
// children were drawn only from clean values under clean policies.
type planCase struct {
	doc      map[string]any
	policies []refPolicy
	clean    []bool
}

var defaultWriteTools = []string{"fs.write", "fs.delete", "shell.run", "wallet.transfer"}

func operatorRef() refPolicy {
	return refPolicy{source: "operator", allowed: []string{"fs.read", "fs.write", "http.get", "mcp__github__get_*"}, root: "/repo/workspace", cap: big.NewRat(200000, 1), writeTools: defaultWriteTools}
}

// inline policies a plan may carry: some narrow, some try to widen. Those
// marked clean keep the clean values clean.
var inlineVariants = []struct {
	doc   map[string]any
	clean bool
}{
	{nil, true},
	{map[string]any{"allowed_tools": []any{"fs.read", "http.get", "mcp__github__get_issue"}, "workspace_root": "/repo/workspace", "budget_cap_tokens": lit("100000")}, true},
	{map[string]any{"allowed_tools": []any{"**"}, "allow_write": true, "workspace_root": "/", "budget_cap_tokens": lit("9000000"), "write_tools": []any{}}, false},
	{map[string]any{"allowed_tools": []any{"fs.*", "http.*", "mcp__*"}, "workspace_root": "/repo/workspace", "budget_cap_tokens": lit("200000"), "allow_write": false, "write_tools": []any{}}, true},
	{map[string]any{"allowed_tools": []any{"fs.read"}, "workspace_root": "/repo/workspace/docs", "budget_cap_tokens": lit("50000")}, false},
	{map[string]any{"allowed_tools": []any{"*.*", "fs.rea?"}, "workspace_root": "/repo/workspace", "budget_cap_tokens": lit("9007199254740991"), "allow_write": true, "write_tools": []any{"http.*"}}, false},
	{map[string]any{"allowed_tools": []any{"fs.read", "http.get", "shell.run"}, "workspace_root": "/srv/app", "budget_cap_tokens": lit("1000")}, false},
}

func refPolicyOf(source string, doc map[string]any) refPolicy {
	p := refPolicy{source: source, root: doc["workspace_root"].(string), writeTools: defaultWriteTools}
	for _, t := range doc["allowed_tools"].([]any) {
		p.allowed = append(p.allowed, t.(string))
	}
	p.cap, _ = new(big.Rat).SetString(string(doc["budget_cap_tokens"].(lit)))
	p.allowWrite = doc["allow_write"] == true
	if wt, ok := doc["write_tools"].([]any); ok {
		p.writeTools = nil
		for _, t := range wt {
			p.writeTools = append(p.writeTools, t.(string))
		}
	}
	return p
}

func randomChild(r *rand.Rand, cleanPolicy bool, id int) (any, bool) {
	clean := cleanPolicy
	hostility := 0 // in quarters: a third of the children draw only clean values
	if r.IntN(3) > 0 {
		hostility = 1 + r.IntN(3)
	}
	field := func(cleanPool, hostilePool []any) any {
		if r.IntN(4) < hostility {
			clean = false
			return pick(r, hostilePool)
		}
		return pick(r, cleanPool)
	}
	list := func(cleanPool, hostilePool []any, gen func() any, max int) []any {
		out := []any{}
		for n := r.IntN(max) + 1; n > 0; n-- {
			if gen != nil && hostility > 0 && r.IntN(5) == 0 {
				clean = false
				out = append(out, gen())
				continue
			}
			out = append(out, field(cleanPool, hostilePool))
		}
		return out
	}
	child := map[string]any{
		"role":          "worker",
		"tools":         list(cleanTools, hostileTools, nil, 4),
		"paths":         list(cleanPaths, hostilePaths, func() any { return randomPath(r) }, 4),
		"budget_tokens": field(cleanBudgets, hostileBudgets),
	}
	if r.IntN(3) == 0 {
		child["paths"] = []any{}
	}
	// Now and then, break the shape.
	shape := r.IntN(30)
	if hostility == 0 {
		shape = 30
	}
	switch shape {
	case 0:
		delete(child, []string{"role", "tools", "paths", "budget_tokens"}[r.IntN(4)])
	case 1:
		child[[]string{"tools", "paths"}[r.IntN(2)]] = pick(r, []any{"fs.read", nil, map[string]any{}, lit("1"), []any{}})
	case 2:
		child["sudo"] = true
	case 3:
		child["role"] = pick(r, []any{"", "  ", lit("5"), nil})
	case 4:
		return pick(r, []any{"child", lit("1"), nil, []any{}}), false
	case 5:
		child["id"] = pick(r, []any{"a", "a", "b", "", lit("1")})
	case 6:
		child["model"] = pick(r, []any{"m", lit("1")})
	case 7:
		child["metadata"] = map[string]any{"tools": []any{"shell.run"}, "paths": []any{"/etc"}}
		return child, clean
	default:
		if r.IntN(2) == 0 {
			child["id"] = "c" + strconv.Itoa(id)
		}
		return child, clean
	}
	return child, false
}

func randomPlan(r *rand.Rand) planCase {
	op := operatorRef()
	variant := inlineVariants[r.IntN(len(inlineVariants))]
	pc := planCase{doc: map[string]any{}, policies: []refPolicy{op}}
	if variant.doc != nil {
		pc.doc["policy"] = variant.doc
		pc.policies = append(pc.policies, refPolicyOf("plan", variant.doc))
	}
	var children []any
	for i, n := 0, r.IntN(6)+1; i < n; i++ {
		c, clean := randomChild(r, variant.clean, i)
		children = append(children, c)
		pc.clean = append(pc.clean, clean)
	}
	pc.doc["plan"] = children
	return pc
}

// stdChildren reads a generated plan back with encoding/json, so the
// reference sees the document as any JSON consumer would, not through the
// gate's own reader.
func stdChildren(doc map[string]any) []any {
	var b bytes.Buffer
	writeJSON(&b, doc)
	dec := json.NewDecoder(&b)
	dec.UseNumber()
	var out struct{ Plan []any }
	if err := dec.Decode(&out); err != nil {
		panic(err)
	}
	return out.Plan
}

// ---- The comparison ----

type comparer struct {
	t        *testing.T
	engine   *gate.Engine
	loader   *plan.Loader
	operator plan.Policy
}

// judge runs a plan document through the real loader and engine.
func (c *comparer) judge(doc map[string]any) ([][]finding, error) {
	var b bytes.Buffer
	writeJSON(&b, doc)
	p, err := c.loader.Plan(context.Background(), "random.json", b.Bytes())
	if err != nil {
		return nil, err
	}
	res, err := c.engine.Evaluate(context.Background(), c.operator, p, gate.ListAtMost(1<<30))
	if err != nil {
		return nil, err
	}
	out := make([][]finding, len(res.Children))
	for i, ch := range res.Children {
		for _, v := range ch.Violations {
			out[i] = append(out[i], finding{v.Rule, v.Path})
		}
		sortFindings(out[i])
	}
	return out, nil
}

// disagreement says how the gate and the reference differ on a plan, or "".
func (c *comparer) disagreement(pc planCase) string {
	got, err := c.judge(pc.doc)
	if err != nil {
		return "gate error: " + err.Error()
	}
	want := refJudge(pc.policies, stdChildren(pc.doc))
	for i := range want {
		if !slices.Equal(got[i], want[i]) {
			return fmt.Sprintf("child %d: gate %v, reference %v", i, got[i], want[i])
		}
		if i < len(pc.clean) && pc.clean[i] && len(want[i]) > 0 {
			return fmt.Sprintf("child %d was drawn only from clean values, but the reference refuses it: %v", i, want[i])
		}
	}
	return ""
}

// shrink removes children, then keys and list elements, while the
// disagreement lasts, to print the smallest plan that shows it.
func (c *comparer) shrink(pc planCase) planCase {
	for changed := true; changed; {
		changed = false
		for _, smaller := range smallerPlans(pc) {
			if c.disagreement(smaller) != "" {
				pc, changed = smaller, true
				break
			}
		}
	}
	return pc
}

func smallerPlans(pc planCase) []planCase {
	var out []planCase
	children := pc.doc["plan"].([]any)
	with := func(i int, child any, drop bool) planCase {
		next := planCase{doc: map[string]any{}, policies: pc.policies}
		for k, v := range pc.doc {
			next.doc[k] = v
		}
		var cs []any
		var clean []bool
		for j, c := range children {
			if j == i {
				if drop {
					continue
				}
				c = child
			}
			cs = append(cs, c)
			clean = append(clean, pc.clean[j])
		}
		next.doc["plan"], next.clean = cs, clean
		return next
	}
	if len(children) > 1 {
		for i := range children {
			out = append(out, with(i, nil, true))
		}
	}
	for i, c := range children {
		obj, ok := c.(map[string]any)
		if !ok {
			continue
		}
		for k, v := range obj {
			smaller := map[string]any{}
			for k2, v2 := range obj {
				if k2 != k {
					smaller[k2] = v2
				}
			}
			out = append(out, with(i, smaller, false))
			if list, ok := v.([]any); ok && len(list) > 1 {
				for j := range list {
					shorter := append(append([]any{}, list[:j]...), list[j+1:]...)
					replaced := map[string]any{}
					for k2, v2 := range obj {
						replaced[k2] = v2
					}
					replaced[k] = shorter
					out = append(out, with(i, replaced, false))
				}
			}
		}
	}
	return out
}

// TestGateAgreesWithTheReferenceModel generates random plans, mixing clean
// and hostile tools, paths, budgets, shapes and plan policies, and asserts
// for every child that the gate refuses exactly what the reference refuses,
// under the same rule and JSON pointer, and passes every child drawn only
// from clean values. -ref.plans and -ref.seed run more or other plans.
func TestGateAgreesWithTheReferenceModel(t *testing.T) {
	c := &comparer{t: t, engine: builtin(t), loader: loader(t), operator: mustPolicy(t, operatorPolicy)}
	r := rand.New(rand.NewPCG(*refSeed, 0x5ba7))
	children, refused, clean := 0, 0, 0
	for n := 0; n < *refPlans; n++ {
		pc := randomPlan(r)
		if d := c.disagreement(pc); d != "" {
			small := c.shrink(pc)
			var b bytes.Buffer
			writeJSON(&b, small.doc)
			t.Fatalf("plan %d (seed %d): %s\nsmallest plan that shows it: %s\n%s", n, *refSeed, d, b.String(), c.disagreement(small))
		}
		for i, found := range refJudge(pc.policies, stdChildren(pc.doc)) {
			children++
			if pc.clean[i] {
				clean++
			}
			if len(found) > 0 {
				refused++
			}
		}
	}
	t.Logf("compared %d plans, %d children (%d drawn only from clean values, %d refused)", *refPlans, children, clean, refused)
	if clean == 0 || refused == 0 {
		t.Fatal("the generator produced no clean or no refused children")
	}
}

// bigPlan joins the children of random plans that share a plan policy
// into one plan of about n children, ids renumbered so none repeats: a
// plan the engine evaluates in several batches, on several cores.
func bigPlan(r *rand.Rand, n int) planCase {
	big := randomPlan(r)
	for {
		children := big.doc["plan"].([]any)
		if len(children) >= n {
			break
		}
		more := randomPlan(r)
		if fmt.Sprint(more.doc["policy"]) != fmt.Sprint(big.doc["policy"]) {
			continue
		}
		big.doc["plan"] = append(children, more.doc["plan"].([]any)...)
		big.clean = append(big.clean, more.clean...)
	}
	for i, c := range big.doc["plan"].([]any) {
		if obj, ok := c.(map[string]any); ok {
			if id, ok := obj["id"].(string); ok && id != "" {
				obj["id"] = "c" + strconv.Itoa(i)
			}
		}
	}
	return big
}

// A plan of thousands of children is judged in batches on every core; the
// batches must change nothing: each child gets what the reference says.
func TestGateAgreesWithTheReferenceModelOnLargePlans(t *testing.T) {
	c := &comparer{t: t, engine: builtin(t), loader: loader(t), operator: mustPolicy(t, operatorPolicy)}
	r := rand.New(rand.NewPCG(*refSeed, 0xb16))
	for n := 0; n < 3; n++ {
		pc := bigPlan(r, 2500)
		if d := c.disagreement(pc); d != "" {
			t.Fatalf("large plan %d (seed %d, %d children): %s", n, *refSeed, len(pc.doc["plan"].([]any)), d)
		}
	}
}

// TestReferenceModelSeesTheExamples keeps the reference honest on the
// cases the README spells out.
func TestReferenceModelSeesTheExamples(t *testing.T) {
	op := []refPolicy{operatorRef()}
	child := map[string]any{"role": "home-cleaner", "tools": []any{"fs.write", "fs:*", "shell.run"}, "paths": []any{"~"}, "budget_tokens": json.Number("5000000")}
	got := refJudge(op, []any{child})[0]
	want := []finding{
		{"budget.cap", "/plan/0/budget_tokens"}, {"paths.escape", "/plan/0/paths/0"},
		{"tools.write", "/plan/0/tools/0"}, {"tools.allowlist", "/plan/0/tools/1"},
		{"tools.allowlist", "/plan/0/tools/2"}, {"tools.write", "/plan/0/tools/2"},
	}
	sortFindings(want)
	if !slices.Equal(got, want) {
		t.Fatalf("reference on the seed essay's home-cleaner:\n got %v\nwant %v", got, want)
	}
	for _, tc := range pathCases {
		if got := refInside(tc.path, "/repo/workspace", []string{"/repo/workspace"}); got != tc.inside {
			t.Errorf("refInside(%q) = %v, want %v", tc.path, got, tc.inside)
		}
	}
	for _, tc := range []struct {
		pattern, name string
		match         bool
	}{
		{"fs.*", "fs.read", true}, {"fs.*", "fs.read.all", false}, {"fs.**", "fs.read.all", true},
		{"fs?read", "fs.read", false}, {"fs?read", "fsxread", true}, {"mcp__github__get_*", "mcp__github__get_issue", true},
	} {
		if got := refGlob(tc.pattern, tc.name); got != tc.match {
			t.Errorf("refGlob(%q, %q) = %v", tc.pattern, tc.name, got)
		}
	}
}
