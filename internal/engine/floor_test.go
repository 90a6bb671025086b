package engine_test

// spawngate is a floor of the Python gate it comes from
// (../shared/anchors/seed_gate.py): it must never pass a child that script
// blocks. The script is ported below, and a property test compares the
// port with spawngate child by child on random plans; a second test runs
// the script itself, when it and python3 are there, to keep the port
// faithful.

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math/big"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/spawngate/spawngate/internal/document"
	"github.com/spawngate/spawngate/internal/engine"
	"github.com/spawngate/spawngate/internal/plan"
	"github.com/spawngate/spawngate/internal/report"
	"github.com/spawngate/spawngate/policy"
)

var (
	floorPlans = flag.Int("floor.plans", 400, "random plans the floor test judges")
	floorSeed  = flag.Uint64("floor.seed", 1, "seed of the floor tests")
)

// ---- The port ----

var (
	seedWildcardPathMarkers = []string{"~", "$HOME", "*"}
	seedWriteCaps           = []string{"fs.write", "fs.delete", "shell.run", "wallet.transfer"}
	// pyWhitespace is what Python's str.strip() strips: every character
	// for which str.isspace() is true.
	pyWhitespace = "\t\n\v\f\r\x1c\x1d\x1e\x1f \u0085\u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005" +
		"\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000"
)

// seedEscapes ports _escapes_workspace of seed_gate.py.
func seedEscapes(path any, root string) bool {
	s, ok := path.(string)
	if !ok {
		return true
	}
	p := strings.Trim(s, pyWhitespace)
	rootNorm := strings.TrimRight(root, "/")
	switch {
	case p == "":
		return true
	case slices.ContainsFunc(seedWildcardPathMarkers, func(m string) bool { return strings.Contains(p, m) }):
		return true
	case slices.Contains(strings.Split(p, "/"), ".."):
		return true
	case p == "/":
		return true
	case strings.HasPrefix(p, "/"):
		return !(p == rootNorm || strings.HasPrefix(p, rootNorm+"/"))
	}
	return false // a relative path never escapes
}

// seedInt is a number json.loads reads as an int (one written without a
// fraction or exponent), and its value.
func seedInt(v any) (*big.Int, bool) {
	n, ok := v.(json.Number)
	if !ok || strings.ContainsAny(string(n), ".eE") {
		return nil, false
	}
	return new(big.Int).SetString(string(n), 10)
}

// seedCheckChild ports check_child of seed_gate.py, on a child and a
// policy decoded with json.Decoder.UseNumber (so that, as for json.loads,
// a number with a fraction or exponent is not an int). It returns a reason
// for each the script gives, in its order, worded shorter; none means
// PASS.
func seedCheckChild(child any, pol map[string]any) []string {
	allowed := pol["allowed_tools"].([]any)
	limit, _ := seedInt(pol["budget_cap_tokens"])
	root := pol["workspace_root"].(string)
	allowWrite := pol["allow_write"] == true
	obj, ok := child.(map[string]any)
	if !ok {
		return []string{"child is not an object"}
	}
	var reasons []string
	if tools, ok := obj["tools"].([]any); !ok || len(tools) == 0 {
		reasons = append(reasons, "child declares no tools (fail-closed: unauthorizable)")
	} else {
		for _, t := range tools {
			// Exact membership: a non-string tool equals no allowed name.
			name, isString := t.(string)
			if !isString || !slices.Contains(allowed, any(name)) {
				reasons = append(reasons, fmt.Sprintf("tool %v not in parent allowlist", t))
			}
			if isString && slices.Contains(seedWriteCaps, name) && !allowWrite {
				reasons = append(reasons, fmt.Sprintf("tool %q is a write capability but allow_write=false", name))
			}
		}
	}
	paths, ok := obj["paths"].([]any)
	if !ok {
		reasons = append(reasons, "child.paths must be a list")
	}
	for _, p := range paths {
		if seedEscapes(p, root) {
			reasons = append(reasons, fmt.Sprintf("path %q escapes workspace root %q", fmt.Sprint(p), root))
		}
	}
	// A JSON true is a bool, never a json.Number: the bool case is covered.
	switch budget, ok := seedInt(obj["budget_tokens"]); {
	case !ok:
		reasons = append(reasons, "budget_tokens missing or non-integer")
	case budget.Cmp(limit) > 0:
		reasons = append(reasons, fmt.Sprintf("budget_tokens %s over parent cap %s", budget, limit))
	case budget.Sign() <= 0:
		reasons = append(reasons, fmt.Sprintf("budget_tokens %s must be positive", budget))
	}
	return reasons
}

// seedReasonKinds are the kinds of reason the script gives, by a phrase
// of each.
var seedReasonKinds = []string{"not an object", "no tools", "not in parent allowlist", "write capability",
	"must be a list", "escapes workspace", "non-integer", "over parent cap", "must be positive"}

// ---- The generator ----

// floorAbsent, drawn for a key, leaves the key out.
type floorAbsentKey struct{}

var floorAbsent any = floorAbsentKey{}

func floorPick(r *rand.Rand, pool []any) any { return pool[r.IntN(len(pool))] }

func floorNum(s string) json.RawMessage { return json.RawMessage(s) }

var (
	// Literal tool names only: the script knows no glob patterns.
	floorToolNames = []string{"fs.read", "http.get", "search.code", "mcp__github__get_issue", "fs.write", "fs.delete", "shell.run", "wallet.transfer"}
	floorRoots     = []string{"/repo/workspace", "/repo/workspace", "/repo", "/srv/app-1", "/"}
	floorCaps      = []string{"200000", "200000", "1000", "1", "9007199254740991"}
	floorBadTools  = []any{
		"fs.write", "fs.delete", "shell.run", "wallet.transfer", "db.drop", "FS.READ", "fs.read ", " fs.read",
		"fs.*", "*", "**", "fs.rea?", "", "fs.read\u00a0", "Agent", "http.get\n", floorNum("5"), nil, true,
	}
	floorBadToolLists = []any{floorAbsent, []any{}, "fs.read", nil, map[string]any{"name": "fs.read"}}
	floorBadPathLists = []any{floorAbsent, "docs", nil, map[string]any{}}
	floorNonObjects   = []any{"c", floorNum("5"), nil, []any{}, []any{map[string]any{"role": "c"}}}
)

// floorJoin names rest below root.
func floorJoin(root, rest string) string {
	if root == "/" {
		return "/" + rest
	}
	return root + "/" + rest
}

func floorGoodPaths(root string) []any {
	return []any{root, floorJoin(root, "docs"), floorJoin(root, "src/main.go"), "docs/readme.md", "src"}
}

func floorBadPaths(root string) []any {
	return []any{
		root + "-evil", root + "2/x", floorJoin(root, "../etc"), floorJoin(root, ".."), "..", "../x", "docs/../../etc",
		"docs/..", "~", "~/x", "$HOME", "$HOME/x", floorJoin(root, "*"), "*.go", "/", "", "   ", "\t\n",
		" " + floorJoin(root, "docs") + " ", "\t/etc\n", "\u00a0/etc", "\u00a0" + floorJoin(root, "docs"), "\x1c/etc", "\x1f/etc", "\x1d/x/..",
		"\u3000..", "\u2003/", "/etc/passwd", root + "/", floorJoin(root, "/x"), floorJoin(root, "./x"), "...",
		"a/.../b", root + "\\..\\x", "//", "./docs", ".", "/repo", strings.ToUpper(root), floorNum("7"), nil, true,
	}
}

func floorBadBudgets(limit string) []any {
	over, _ := new(big.Int).SetString(limit, 10)
	over.Add(over, big.NewInt(1))
	return []any{
		floorNum("0"), floorNum("-1"), floorNum("-0"), floorNum(over.String()), floorNum("99999999999999999999999"), floorNum("-99999999999999999999"),
		floorNum("1.5"), floorNum("1.0"), floorNum(limit + ".0"), floorNum("1e3"), floorNum("2E1"), "100", floorAbsent, true, false, nil,
	}
}

func floorGoodBudgets(limit string) []any {
	half, _ := new(big.Int).SetString(limit, 10)
	half.Add(half, big.NewInt(1)).Rsh(half, 1)
	return []any{floorNum("1"), floorNum(limit), floorNum(half.String())}
}

// floorCase is a policy and the children of a plan.
type floorCase struct {
	policy   map[string]any
	children []any
}

func floorRandomPolicy(r *rand.Rand) map[string]any {
	allowed := []any{}
	for _, name := range floorToolNames {
		if r.IntN(3) > 0 {
			allowed = append(allowed, name)
		}
	}
	pol := map[string]any{
		"allowed_tools":     allowed,
		"workspace_root":    floorRoots[r.IntN(len(floorRoots))],
		"budget_cap_tokens": floorNum(floorCaps[r.IntN(len(floorCaps))]),
	}
	switch r.IntN(3) {
	case 0:
		pol["allow_write"] = true
	case 1:
		pol["allow_write"] = false
	}
	return pol
}

// floorRandomChild draws a child: a clean one (tools the policy allows,
// paths inside its root, a budget within its cap), left clean, spoiled in
// exactly one part (so that each rule is often the only reason it is
// blocked), or with each part spoiled, or not, at random. Now and then it
// is not an object at all.
func floorRandomChild(r *rand.Rand, role string, pol map[string]any) any {
	if r.IntN(50) == 0 {
		return floorPick(r, floorNonObjects)
	}
	root := pol["workspace_root"].(string)
	limit := string(pol["budget_cap_tokens"].(json.RawMessage))
	var good []any
	for _, t := range pol["allowed_tools"].([]any) {
		if pol["allow_write"] == true || !slices.Contains(seedWriteCaps, t.(string)) {
			good = append(good, t)
		}
	}
	badTool := func() any {
		if r.IntN(2) == 0 {
			return seedWriteCaps[r.IntN(len(seedWriteCaps))]
		}
		return floorPick(r, floorBadTools)
	}
	// fault is the one part spoiled: a tool (0), the tools list (1), a
	// path (2), the paths list (3) or the budget (4); -1 for any part at
	// random, -2 for none.
	fault := -2
	switch r.IntN(3) {
	case 0:
		fault = r.IntN(5)
	case 1:
		fault = -1
	}
	spoil := func() bool { return fault == -1 && r.IntN(4) == 0 }

	child := map[string]any{"role": role}
	if r.IntN(30) == 0 {
		delete(child, "role")
	}
	if r.IntN(30) == 0 {
		child["note"] = "an extra key"
	}
	tools := []any{}
	for n := 1 + r.IntN(3); n > 0; n-- {
		if len(good) > 0 && !spoil() {
			tools = append(tools, floorPick(r, good))
		} else {
			tools = append(tools, badTool())
		}
	}
	paths := []any{}
	for n := r.IntN(4); n > 0; n-- {
		if spoil() {
			paths = append(paths, floorPick(r, floorBadPaths(root)))
		} else {
			paths = append(paths, floorPick(r, floorGoodPaths(root)))
		}
	}
	budget := floorPick(r, floorGoodBudgets(limit))
	if spoil() {
		budget = floorPick(r, floorBadBudgets(limit))
	}
	switch {
	case fault == 0:
		tools[r.IntN(len(tools))] = badTool()
	case fault == 2:
		paths = slices.Insert(paths, r.IntN(len(paths)+1), floorPick(r, floorBadPaths(root)))
	case fault == 4:
		budget = floorPick(r, floorBadBudgets(limit))
	}
	child["tools"], child["paths"], child["budget_tokens"] = tools, paths, budget
	if fault == 1 || fault == -1 && r.IntN(10) == 0 {
		child["tools"] = floorPick(r, floorBadToolLists)
	}
	if fault == 3 || fault == -1 && r.IntN(15) == 0 {
		child["paths"] = floorPick(r, floorBadPathLists)
	}
	for k, v := range child {
		if v == floorAbsent {
			delete(child, k)
		}
	}
	return child
}

func floorRandomCase(r *rand.Rand) floorCase {
	c := floorCase{policy: floorRandomPolicy(r)}
	for i := range 1 + r.IntN(8) {
		c.children = append(c.children, floorRandomChild(r, "c"+strconv.Itoa(i), c.policy))
	}
	return c
}

// floorEdgeCases are a plan for each root and for allow_write absent and
// true, with a child for each value of the generator's pools, clean or
// spoiled in that value alone.
func floorEdgeCases() []floorCase {
	var out []floorCase
	roots := slices.Compact(slices.Sorted(slices.Values(floorRoots)))
	for i, root := range roots {
		for _, write := range []bool{false, true} {
			limit := floorCaps[i%len(floorCaps)]
			allowed := []any{}
			for _, name := range floorToolNames {
				allowed = append(allowed, name)
			}
			pol := map[string]any{"allowed_tools": allowed, "workspace_root": root, "budget_cap_tokens": floorNum(limit)}
			if write {
				pol["allow_write"] = true
			}
			c := floorCase{policy: pol, children: slices.Clone(floorNonObjects)}
			with := func(key string, v any) {
				child := map[string]any{"role": "e" + strconv.Itoa(len(c.children)), "tools": []any{"fs.read"},
					"paths": []any{floorJoin(root, "docs")}, "budget_tokens": floorNum("1")}
				child[key] = v
				if v == floorAbsent {
					delete(child, key)
				}
				c.children = append(c.children, child)
			}
			for _, v := range floorToolNames {
				with("tools", []any{v})
			}
			for _, v := range floorBadTools {
				with("tools", []any{v})
			}
			for _, v := range floorBadToolLists {
				with("tools", v)
			}
			for _, v := range slices.Concat(floorGoodPaths(root), floorBadPaths(root)) {
				with("paths", []any{v})
			}
			for _, v := range floorBadPathLists {
				with("paths", v)
			}
			for _, v := range slices.Concat(floorGoodBudgets(limit), floorBadBudgets(limit)) {
				with("budget_tokens", v)
			}
			out = append(out, c)
		}
	}
	return out
}

// floorJSON writes v as JSON with every non-ASCII character escaped, so
// that neither reader depends on a locale.
func floorJSON(v any) []byte {
	enc, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	var b strings.Builder
	for _, c := range string(enc) {
		switch {
		case c < 0x80:
			b.WriteRune(c)
		case c <= 0xffff:
			fmt.Fprintf(&b, `\u%04x`, c)
		default:
			c -= 0x10000
			fmt.Fprintf(&b, `\u%04x\u%04x`, 0xd800+(c>>10), 0xdc00+(c&0x3ff))
		}
	}
	return []byte(b.String())
}

// seedDoc is the case as the script reads it: the policy in the document.
func (c floorCase) seedDoc() []byte {
	return floorJSON(map[string]any{"policy": c.policy, "plan": c.children})
}

// portVerdicts judges the case with the port, on the document the script
// reads: the reasons of each child, nil when it passes.
func (c floorCase) portVerdicts(t testing.TB) [][]string {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(string(c.seedDoc())))
	dec.UseNumber()
	var doc map[string]any
	if err := dec.Decode(&doc); err != nil {
		t.Fatal(err)
	}
	var out [][]string
	for _, child := range doc["plan"].([]any) {
		out = append(out, seedCheckChild(child, doc["policy"].(map[string]any)))
	}
	return out
}

// ---- spawngate ----

type floorGate struct {
	loader *plan.Loader
	engine *engine.Engine
}

func newFloorGate(t testing.TB) floorGate {
	t.Helper()
	mods, err := policy.Modules()
	if err != nil {
		t.Fatal(err)
	}
	e, err := engine.New(mods)
	if err != nil {
		t.Fatal(err)
	}
	l, err := plan.NewLoader(document.DefaultLimits)
	if err != nil {
		t.Fatal(err)
	}
	return floorGate{l, e}
}

// judge runs spawngate on the case, the policy as the operator's and the
// plan without one of its own. It returns each child's result, or why the
// plan as a whole was not judged (the loader refused it, exit 2): then no
// child passes.
func (g floorGate) judge(t testing.TB, c floorCase) ([]report.Child, string) {
	t.Helper()
	ctx := context.Background()
	polDoc := floorJSON(c.policy)
	operator, err := g.loader.Policy(ctx, "policy.json", polDoc)
	if err != nil {
		t.Fatalf("the loader refuses a generated policy (a bug of the test): %v\n%s", err, polDoc)
	}
	planDoc := floorJSON(map[string]any{"plan": c.children})
	p, err := g.loader.Plan(ctx, "plan.json", planDoc)
	if err != nil {
		var docErr *document.Error
		if !errors.As(err, &docErr) {
			t.Fatalf("loading %s: %v", planDoc, err)
		}
		return nil, "the loader refuses the plan: " + err.Error()
	}
	res, err := g.engine.Evaluate(ctx, operator, p)
	if err != nil {
		return nil, "Evaluate fails: " + err.Error()
	}
	if res.Verdict == report.NotJudged {
		return nil, "the result is an error: " + res.Error
	}
	children := make([]report.Child, len(c.children))
	seen := 0
	for _, ch := range res.Children {
		if ch.Pointer == "" && ch.Index >= 0 && ch.Index < len(children) {
			children[ch.Index] = ch
			seen++
		}
	}
	if seen != len(c.children) || len(res.Children) != len(c.children) {
		t.Fatalf("spawngate reports %d children for a plan of %d: %+v\n%s", len(res.Children), len(c.children), res.Children, planDoc)
	}
	return children, ""
}

// floorBreach is the first child of the case the port blocks and
// spawngate passes, or -1.
func (g floorGate) floorBreach(t testing.TB, c floorCase) int {
	port := c.portVerdicts(t)
	got, refused := g.judge(t, c)
	if refused != "" {
		return -1
	}
	for i, reasons := range port {
		if len(reasons) > 0 && got[i].Verdict != report.Block {
			return i
		}
	}
	return -1
}

// shrink makes a breach as small as it stays: the one child alone, then
// fewer tools, paths and allowed tools, one at a time.
func (g floorGate) shrink(t testing.TB, c floorCase, i int) floorCase {
	small := floorCase{policy: c.policy, children: []any{c.children[i]}}
	if g.floorBreach(t, small) < 0 {
		return c
	}
	for changed := true; changed; {
		changed = false
		for _, cand := range floorSmaller(small) {
			if g.floorBreach(t, cand) == 0 {
				small, changed = cand, true
				break
			}
		}
	}
	return small
}

// floorSmaller lists the cases that drop one entry of the child's tools
// or paths, or of the policy's allowed tools.
func floorSmaller(c floorCase) []floorCase {
	var out []floorCase
	child, _ := c.children[0].(map[string]any)
	for _, key := range []string{"tools", "paths"} {
		list, _ := child[key].([]any)
		for j := range list {
			next := map[string]any{}
			for k, v := range child {
				next[k] = v
			}
			next[key] = slices.Delete(slices.Clone(list), j, j+1)
			out = append(out, floorCase{policy: c.policy, children: []any{next}})
		}
	}
	allowed := c.policy["allowed_tools"].([]any)
	for j := range allowed {
		pol := map[string]any{}
		for k, v := range c.policy {
			pol[k] = v
		}
		pol["allowed_tools"] = slices.Delete(slices.Clone(allowed), j, j+1)
		out = append(out, floorCase{policy: pol, children: c.children})
	}
	return out
}

// ---- The tests ----

// TestFloorOfSeedGate: spawngate never passes a child seed_gate.py blocks.
func TestFloorOfSeedGate(t *testing.T) {
	g := newFloorGate(t)
	r := rand.New(rand.NewPCG(*floorSeed, 0xf1005))
	var evaluated, refusedPlans, portBlocked, portPassed, bothPassed, breaches int
	shown := map[string]bool{}
	// The edge cases come first, then the random plans.
	cases := floorEdgeCases()
	edges := len(cases)
	for range *floorPlans {
		cases = append(cases, floorRandomCase(r))
	}
	for n, c := range cases {
		port := c.portVerdicts(t)
		got, refused := g.judge(t, c)
		if refused != "" {
			refusedPlans++
			t.Logf("plan %d not judged, so nothing passes: %s", n, refused)
			continue
		}
		evaluated++
		for i, reasons := range port {
			if len(reasons) == 0 {
				portPassed++
				if got[i].Verdict == report.Pass {
					bothPassed++
				}
				continue
			}
			portBlocked++
			if got[i].Verdict == report.Block {
				continue
			}
			breaches++
			small := g.shrink(t, c, i)
			j := 0
			if len(small.children) > 1 {
				j = i
			}
			// One case shown for each set of reasons the script gives.
			key := strings.Join(small.portVerdicts(t)[j], "\n")
			if shown[key] || len(shown) >= 5 {
				continue
			}
			shown[key] = true
			sg, _ := g.judge(t, small)
			t.Errorf("plan %d (seed %d; plans 0-%d are the edge cases): spawngate passes child %d, which seed_gate.py blocks\n"+
				"smallest case that shows it:\n  policy: %s\n  plan:   %s\n"+
				"  seed_gate.py: BLOCK, because %q\n  spawngate:    %s, violations %+v",
				n, *floorSeed, edges-1, i, floorJSON(small.policy), floorJSON(map[string]any{"plan": small.children}),
				small.portVerdicts(t)[j], sg[j].Verdict, sg[j].Violations)
		}
	}
	if breaches > 0 {
		t.Errorf("spawngate passes %d children seed_gate.py blocks (a smallest case for each set of reasons the script gives is shown above, at most 5)", breaches)
	}
	t.Logf("%d plans: %d judged, %d refused whole; children the port blocks: %d (spawngate passes %d of them), the port passes: %d (spawngate passes %d of them)",
		len(cases), evaluated, refusedPlans, portBlocked, breaches, portPassed, bothPassed)
	if evaluated*10 < len(cases)*8 {
		t.Errorf("only %d of %d plans were judged: the test says little", evaluated, len(cases))
	}
	if portBlocked == 0 || portPassed == 0 || bothPassed == 0 {
		t.Errorf("vacuous run: the port blocked %d children and passed %d, spawngate passed %d of those", portBlocked, portPassed, bothPassed)
	}
}

var seedLine = regexp.MustCompile(`^  - (.*) -> (PASS|BLOCK)$`)

// TestFloorPortAgreesWithSeedGate runs seed_gate.py itself on generated
// plans and compares its verdicts with the port's, child by child.
func TestFloorPortAgreesWithSeedGate(t *testing.T) {
	engine.LongProperty(t)
	script := filepath.Join("..", "..", "..", "shared", "anchors", "seed_gate.py")
	python, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 is not on PATH: cannot check the port against seed_gate.py")
	}
	if _, err := os.Stat(script); err != nil {
		t.Skipf("seed_gate.py is not at %s: cannot check the port against it", script)
	}
	// A pyenv or asdf shim costs more than the script: ask once for the
	// interpreter it runs.
	if out, err := exec.Command(python, "-c", "import sys; print(sys.executable)").Output(); err == nil && strings.TrimSpace(string(out)) != "" {
		python = strings.TrimSpace(string(out))
	}
	r := rand.New(rand.NewPCG(*floorSeed, 0x5eed))
	dir := t.TempDir()
	// The edge cases, then random plans.
	cases := floorEdgeCases()
	for range 50 {
		cases = append(cases, floorRandomCase(r))
	}
	outs := make([][]byte, len(cases))
	codes := make([]int, len(cases))
	errs := make([]error, len(cases))
	var wg sync.WaitGroup
	limit := make(chan struct{}, runtime.GOMAXPROCS(0))
	for n := range cases {
		file := filepath.Join(dir, "plan"+strconv.Itoa(n)+".json")
		if err := os.WriteFile(file, cases[n].seedDoc(), 0o644); err != nil {
			t.Fatal(err)
		}
		wg.Go(func() {
			limit <- struct{}{}
			defer func() { <-limit }()
			cmd := exec.Command(python, script, file)
			cmd.Env = append(os.Environ(), "PYTHONIOENCODING=utf-8", "PYTHONUTF8=1")
			outs[n], errs[n] = cmd.Output()
			if exit := (*exec.ExitError)(nil); errors.As(errs[n], &exit) {
				codes[n], errs[n] = exit.ExitCode(), nil
			}
		})
	}
	wg.Wait()
	verdicts := map[string]int{}
	sole := map[string]int{} // children blocked for one reason, by its kind
	for n, c := range cases {
		out, code := outs[n], codes[n]
		if errs[n] != nil {
			t.Fatalf("running seed_gate.py: %v", errs[n])
		}
		var lines [][]string
		for _, line := range strings.Split(string(out), "\n") {
			if m := seedLine.FindStringSubmatch(line); m != nil {
				lines = append(lines, m[1:])
			}
		}
		port := c.portVerdicts(t)
		if len(lines) != len(port) {
			t.Fatalf("plan %d: seed_gate.py (exit %d) reports %d children, the plan has %d\n%s\n%s", n, code, len(lines), len(port), c.seedDoc(), out)
		}
		wantCode := 0
		for i, reasons := range port {
			want := "PASS"
			if len(reasons) > 0 {
				want, wantCode = "BLOCK", 1
			}
			verdicts[want]++
			if len(reasons) == 1 {
				for _, kind := range seedReasonKinds {
					if strings.Contains(reasons[0], kind) {
						sole[kind]++
					}
				}
			}
			if obj, ok := c.children[i].(map[string]any); ok && obj["role"] != nil && lines[i][0] != obj["role"] {
				t.Fatalf("plan %d: line %d of seed_gate.py is for %q, want child %v", n, i, lines[i][0], obj["role"])
			}
			if lines[i][1] != want {
				t.Errorf("plan %d, child %d: seed_gate.py says %s, the port %s (%q)\n%s\n%s", n, i, lines[i][1], want, reasons, c.seedDoc(), out)
			}
		}
		if code != wantCode {
			t.Errorf("plan %d: seed_gate.py exits %d, want %d\n%s", n, code, wantCode, out)
		}
	}
	t.Logf("seed_gate.py and the port agree on %d children passed and %d blocked; blocked for one reason: %v", verdicts["PASS"], verdicts["BLOCK"], sole)
	if verdicts["PASS"] == 0 || verdicts["BLOCK"] == 0 {
		t.Errorf("vacuous run: %v", verdicts)
	}
	// Each rule must be the only reason for some child, or a port that
	// lost it could still agree.
	for _, kind := range seedReasonKinds {
		if sole[kind] == 0 {
			t.Errorf("no child is blocked for %q alone: the sample does not check that rule (%v)", kind, sole)
		}
	}
}
