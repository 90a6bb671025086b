package gate_test

// An independent reference model of the checks and the structural rules,
// written from the README and the rules' descriptions (not from the Rego),
// and a property test that compares it with the gate, child by child, on
// many random plans.

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"maps"
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
	allowSpawn bool
	spawnTools []string
	hasModels  bool // the policy has the key allowed_models (even an empty list)
	models     []string
	// The operator policy's role profiles, by role, and whether it refuses
	// a role without one; the plan-wide limits (nil: none).
	profiles              map[string]refProfile
	refuseUnknown         bool
	maxChildren, maxTotal *big.Rat
	// How deep a plan tree may go (3 when the policy does not say), and
	// how many descendants one child may have (nil: any number).
	maxDepth, maxDescendants *big.Rat
}

// refProfile is what a role profile sets: each setting only when the
// profile writes it, since what it leaves out is the operator policy's.
type refProfile struct {
	source                                                 string // how a refusal names it: operator/roles/<role as a pointer segment>
	setsAllowed, setsWrite, setsSpawn, setsRoot, hasModels bool
	allowed, models                                        []string
	allowWrite, allowSpawn                                 bool
	root                                                   string
	cap                                                    *big.Rat // nil: not set
}

// finding is one refusal: the rule, the JSON pointer it names, and the
// sources that refuse it ("operator,plan"), or "" for a refusal whatever
// any policy says.
type finding struct{ rule, pointer, policies string }

// refusedBy lists the sources of a refusal as a finding names them.
func refusedBy(sources ...string) string {
	sorted := slices.Clone(sources)
	slices.Sort(sorted)
	return strings.Join(slices.Compact(sorted), ",")
}

var (
	refToolName = regexp.MustCompile(`^[A-Za-z0-9_]([A-Za-z0-9_.:-]*[A-Za-z0-9_])?$`)
	refDevices  = map[string]bool{"con": true, "prn": true, "aux": true, "nul": true}
	refSegment  = regexp.MustCompile(`^[A-Za-z0-9._@-]+$`)
	refWhole    = regexp.MustCompile(`^-?[0-9]+$`)
	refChildKey = map[string]bool{"role": true, "tools": true, "paths": true, "budget_tokens": true, "id": true, "brief": true, "model": true, "agent": true, "metadata": true, "children": true}
	refAgentKey = map[string]bool{"host": true, "type": true, "definition": true, "problem": true, "inherits_tools": true, "permission_mode": true, "sandbox_mode": true, "caller": true}

	// Tools that write whatever a policy's write_tools say: Claude Code's
	// editing, shell and worktree tools and the Codex sandboxes that write.
	refHostWrite = map[string]bool{
		"Bash": true, "PowerShell": true, "Edit": true, "Write": true, "MultiEdit": true, "NotebookEdit": true,
		"EnterWorktree": true, "ExitWorktree": true, "sandbox:workspace-write": true, "sandbox:danger-full-access": true,
	}
	// Tools only an exact allowed_tools entry allows, never a pattern.
	refExactOnly        = map[string]bool{"sandbox:danger-full-access": true}
	refDefaultWrite     = []string{"fs.write", "fs.delete", "shell.run", "wallet.transfer"}
	refDefaultSpawn     = []string{"Agent", "Task", "spawn_agent", "collaboration.spawn_agent"}
	refApprovingModes   = map[string]bool{"bypassPermissions": true, "auto": true}
	refSandboxModes     = map[string]bool{"read-only": true, "workspace-write": true, "danger-full-access": true}
	refAgentHosts       = map[string]bool{"claude-code": true, "codex": true}
	globCache           = map[string]*regexp.Regexp{}
	toolGlob, modelGlob = byte('.'), byte('/')
)

// refGlob matches a policy pattern as the README says: * within one
// dot-separated segment, ** across segments, ? one character but a dot.
func refGlob(pattern, name string) bool { return refMatch(pattern, name, toolGlob) }

// refModelGlob matches an allowed_models pattern: the same, with / as the
// delimiter.
func refModelGlob(pattern, name string) bool { return refMatch(pattern, name, modelGlob) }

func refMatch(pattern, name string, delim byte) bool {
	key := string(delim) + pattern
	re, ok := globCache[key]
	if !ok {
		re = compileGlob(pattern, delim)
		globCache[key] = re
	}
	return re.MatchString(name)
}

func compileGlob(pattern string, delim byte) *regexp.Regexp {
	not := "[^" + regexp.QuoteMeta(string(delim)) + "]"
	var re strings.Builder
	re.WriteString("(?s)^") // a model may hold a newline; ** matches it
	for i := 0; i < len(pattern); i++ {
		switch {
		case strings.HasPrefix(pattern[i:], "**"):
			re.WriteString(".*")
			i++
		case pattern[i] == '*':
			re.WriteString(not + "*")
		case pattern[i] == '?':
			re.WriteString(not)
		default:
			re.WriteString(regexp.QuoteMeta(pattern[i : i+1]))
		}
	}
	re.WriteString("$")
	return regexp.MustCompile(re.String())
}

func refAny(patterns []string, name string, match func(string, string) bool) bool {
	for _, p := range patterns {
		if match(p, name) {
			return true
		}
	}
	return false
}

// refAllows says whether a policy's allowed_tools allow a plain tool name:
// by any pattern, or, for a tool that grants everything, only by an entry
// equal to it.
func refAllows(p refPolicy, name string) bool { return refAllowsBy(p.allowed, name) }

func refAllowsBy(allowed []string, name string) bool {
	if refExactOnly[name] {
		return slices.Contains(allowed, name)
	}
	return refAny(allowed, name, refGlob)
}

// refModelName reads the child schema's model rule: printable ASCII
// without a space, at least one character.
func refModelName(s string) bool {
	return s != "" && !strings.ContainsFunc(s, func(r rune) bool { return r <= ' ' || r > '~' })
}

// refInside reads the README's path rules directly: segments of
// A-Z a-z 0-9 . _ - @ between single slashes, one trailing slash allowed,
// no segment of dots only or ending in a dot, no Windows device name, no
// leading - or @ for a relative path, and the root itself or under
// root + "/".
func refInside(path, planRoot string, roots []string) bool {
	abs, ok := refPlain(path, planRoot)
	if !ok {
		return false
	}
	for _, root := range roots {
		if !refWithin(abs, root) {
			return false
		}
	}
	return true
}

// refPlain reads a path by the rules above: the absolute path it names
// (a relative one read against the plan's root, without a trailing
// slash), or false when the rules refuse it whatever the roots are.
func refPlain(path, planRoot string) (string, bool) {
	if path == "" || len(path) > 4096 || strings.HasPrefix(path, "-") || strings.HasPrefix(path, "@") || strings.HasPrefix(path, "//") {
		return "", false
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
				return "", false
			}
		}
	}
	return abs, true
}

// refWithin: the root itself, or below it after a slash.
func refWithin(abs, root string) bool {
	return abs == root || root == "/" || strings.HasPrefix(abs, root+"/")
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

// refCovered tells whether a check already reported at field or at a
// place above it: the README's "a schema violation on a field that a
// check already reports is not repeated".
func refCovered(reported map[string]bool, field string) bool {
	for at := field; ; {
		if reported[at] {
			return true
		}
		i := strings.LastIndexByte(at, '/')
		if i < 0 {
			return false
		}
		at = at[:i]
	}
}

// refJudge judges every child: the checks, then the schema, whose issues
// a check's finding at or above them covers. policies hold the operator's
// policy, if any, then the plan's own, if any.
//
// A child whose role has a profile in the operator policy is judged by the
// profile too, for what the profile sets: a tool it does not allow, a write
// or spawn tool when it sets allow_write or allow_spawn to false, a path
// outside its root, a budget over its cap, a model it does not list. Each
// refusal names every source that refuses it; the plan-wide limits are
// refPlanJudge's.
func refJudge(policies []refPolicy, children []any) [][]finding {
	return refJudgeTree(policies, children, nil)
}

// refJudgeTree judges the children of a plan that may be nested: children
// are every child of the tree (refFlatten), and tree places them, or is nil
// for a flat plan. In a nested plan, each child must hold no more than its
// parent, the parent block bounds the plan's own children, and depth,
// spawning and descendants are bounded (the tree.* rules, in refTreeRules).
func refJudgeTree(policies []refPolicy, children []any, tree *refTree) [][]finding {
	out := make([][]finding, len(children))
	var parents map[int]*refParent
	if tree != nil {
		parents = tree.parents(children)
	}
	planRoot := policies[len(policies)-1].root // the plan's own policy comes last
	var operator *refPolicy
	for i := range policies {
		if policies[i].source == "operator" {
			operator = &policies[i]
		}
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
		pointer := "/plan/" + strconv.Itoa(i)
		if tree != nil {
			pointer = tree.pointer[i]
		}
		at := func(field string) string { return pointer + field }
		obj, ok := c.(map[string]any)
		if !ok {
			out[i] = []finding{{"schema", at(""), ""}}
			continue
		}
		var checks []finding // fields relative to the child
		schema := map[string]bool{}
		add := func(rule, field string, sources ...string) {
			checks = append(checks, finding{rule, field, refusedBy(sources...)})
		}
		// add when some source refuses
		addIf := func(rule, field string, sources []string) {
			if len(sources) > 0 {
				add(rule, field, sources...)
			}
		}
		bad := func(field string) { schema[field] = true }
		isString := func(v any) bool { _, ok := v.(string); return ok }

		// The profile of the child's role, if the operator policy has one;
		// with unknown_roles: refuse, a child without one is refused.
		var prof *refProfile
		if role, ok := obj["role"].(string); ok && operator != nil {
			if pr, ok := operator.profiles[role]; ok {
				prof = &pr
			}
		}
		if prof == nil && operator != nil && operator.refuseUnknown {
			add("roles.unknown", "/role", "operator")
		}
		// What the policies and the profile withhold and restrict.
		var withholdWrite, withholdSpawn, restricting []string
		models := map[string][]string{}
		for _, p := range policies {
			if !p.allowWrite {
				withholdWrite = append(withholdWrite, p.source)
			}
			if !p.allowSpawn {
				withholdSpawn = append(withholdSpawn, p.source)
			}
			if p.hasModels {
				restricting = append(restricting, p.source)
				models[p.source] = p.models
			}
		}
		if prof != nil {
			if prof.setsWrite && !prof.allowWrite {
				withholdWrite = append(withholdWrite, prof.source)
			}
			if prof.setsSpawn && !prof.allowSpawn {
				withholdSpawn = append(withholdSpawn, prof.source)
			}
			if prof.hasModels {
				restricting = append(restricting, prof.source)
				models[prof.source] = prof.models
			}
		}

		// schema: the shape of the child
		for k := range obj {
			if !refChildKey[k] {
				bad("/" + k)
			}
		}
		if role, ok := obj["role"].(string); !ok || strings.TrimSpace(role) == "" {
			bad("/role")
		}
		if v, present := obj["id"]; present {
			if id, ok := v.(string); !ok || id == "" || ids[id] > 1 {
				bad("/id")
			}
		}
		if v, present := obj["brief"]; present && !isString(v) {
			bad("/brief")
		}
		if v, present := obj["children"]; present {
			if _, ok := v.([]any); !ok {
				bad("/children")
			}
		}
		if v, present := obj["model"]; present {
			if s, ok := v.(string); !ok || !refModelName(s) {
				bad("/model")
			}
		}

		// tools: a child with no tools gets tools.missing, unless its agent
		// block says why: it inherits every tool (agent.tools), it has no
		// definition and no tools key at all (agent.definition), or it is a
		// Codex agent, whose tools are its sandbox, without a sandbox
		// (agent.sandbox, or agent.definition when it has no definition).
		agent, isAgent := obj["agent"].(map[string]any)
		_, hasTools := obj["tools"]
		sandbox, _ := agent["sandbox_mode"].(string)
		explained := isAgent && (agent["inherits_tools"] == true ||
			(!isString(agent["definition"]) && !hasTools) ||
			(agent["host"] == "codex" && !refSandboxModes[sandbox]))
		if tools, ok := obj["tools"].([]any); !ok || len(tools) == 0 {
			bad("/tools")
			if !explained {
				add("tools.missing", "/tools")
			}
		} else {
			for j, t := range tools {
				field := "/tools/" + strconv.Itoa(j)
				name, ok := t.(string)
				if !ok {
					bad(field)
				}
				if !ok || !refToolName.MatchString(name) {
					add("tools.allowlist", field) // whatever any policy says
					continue
				}
				var refusing []string
				writes, spawns := refHostWrite[name], false
				for _, p := range policies {
					if !refAllows(p, name) {
						refusing = append(refusing, p.source)
					}
					writes = writes || refAny(p.writeTools, name, refGlob)
					spawns = spawns || refAny(p.spawnTools, name, refGlob)
				}
				if prof != nil && prof.setsAllowed && !refAllowsBy(prof.allowed, name) {
					refusing = append(refusing, prof.source)
				}
				addIf("tools.allowlist", field, refusing)
				if writes {
					addIf("tools.write", field, withholdWrite)
				}
				if spawns {
					addIf("tools.spawn", field, withholdSpawn)
				}
			}
		}
		// paths
		if paths, ok := obj["paths"].([]any); !ok {
			bad("/paths")
			add("paths.invalid", "/paths")
		} else {
			for j, p := range paths {
				field := "/paths/" + strconv.Itoa(j)
				s, ok := p.(string)
				switch {
				case !ok:
					bad(field)
					add("paths.invalid", field)
				default:
					abs, plain := refPlain(s, planRoot)
					if !plain {
						add("paths.escape", field) // whatever any root is
						break
					}
					var outside []string
					for _, p := range policies {
						if !refWithin(abs, p.root) {
							outside = append(outside, p.source)
						}
					}
					if prof != nil && prof.setsRoot && !refWithin(abs, prof.root) {
						outside = append(outside, prof.source)
					}
					addIf("paths.escape", field, outside)
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
			bad("/budget_tokens")
			add("budget.invalid", "/budget_tokens")
		} else {
			var over []string
			for _, p := range policies {
				if b.Cmp(p.cap) > 0 {
					over = append(over, p.source)
				}
			}
			if prof != nil && prof.cap != nil && b.Cmp(prof.cap) > 0 {
				over = append(over, prof.source)
			}
			addIf("budget.cap", "/budget_tokens", over)
		}
		// model: once any source names models, the child must name one that
		// every such source allows; one that names none, or not a string,
		// every such source refuses.
		if len(restricting) > 0 {
			model, ok := obj["model"].(string)
			refusing := restricting
			if ok {
				refusing = nil
				for _, source := range restricting {
					if !refAny(models[source], model, refModelGlob) {
						refusing = append(refusing, source)
					}
				}
			}
			addIf("model.allowlist", "/model", refusing)
		}
		// agent
		if _, present := obj["agent"]; present {
			if !isAgent {
				bad("/agent")
			} else {
				for k := range agent {
					if !refAgentKey[k] {
						bad("/agent/" + k)
					}
				}
				if host, ok := agent["host"].(string); !ok || !refAgentHosts[host] {
					bad("/agent/host")
				}
				if !isString(agent["type"]) {
					bad("/agent/type")
				}
				for _, k := range []string{"definition", "sandbox_mode"} {
					if v, present := agent[k]; present && v != nil && !isString(v) {
						bad("/agent/" + k)
					}
				}
				for _, k := range []string{"problem", "permission_mode", "caller"} {
					if v, present := agent[k]; present && !isString(v) {
						bad("/agent/" + k)
					}
				}
				if v, present := agent["inherits_tools"]; present {
					if _, ok := v.(bool); !ok {
						bad("/agent/inherits_tools")
					}
				}
				// A definition the gate can read is a file name; null or
				// missing says there is none, and then nothing about the
				// child's shape can be known: the finding is the child's
				// own, and covers every schema issue of it.
				defined := isString(agent["definition"])
				if !defined {
					add("agent.definition", "")
				}
				if mode, _ := agent["permission_mode"].(string); refApprovingModes[mode] {
					add("agent.permissions", "/agent/permission_mode")
				}
				// A Codex agent needs a sandbox. One that is set but unknown is
				// refused where it is written; without one nothing about the
				// child's powers is known, and the refusal is of the child.
				if agent["host"] == "codex" && defined && !refSandboxModes[sandbox] {
					if isString(agent["sandbox_mode"]) {
						add("agent.sandbox", "/agent/sandbox_mode")
					} else {
						add("agent.sandbox", "")
					}
				}
				if agent["inherits_tools"] == true {
					add("agent.tools", "/tools")
				}
			}
		}

		if tree != nil && len(parents) > 0 {
			checks = append(checks, refTreeRules(policies, planRoot, obj, tree, parents, i)...)
		}

		reported := map[string]bool{}
		for _, f := range checks {
			reported[f.pointer] = true
			out[i] = append(out[i], finding{f.rule, at(f.pointer), f.policies})
		}
		for field := range schema {
			if !refCovered(reported, field) {
				out[i] = append(out[i], finding{"schema", at(field), ""})
			}
		}
		sortFindings(out[i])
	}
	return out
}

// refPlanJudge judges the plan as a whole: every child counts towards
// max_children, and every budget of the plan's own children that is a
// positive whole number, written as one, towards max_total_budget_tokens (any other budget is refused on
// its own, by budget.invalid). Each limit refuses at /plan, naming every
// policy whose limit is exceeded.
func refPlanJudge(policies []refPolicy, children []any, tree *refTree) []finding {
	count := new(big.Rat).SetInt64(int64(len(children)))
	total := new(big.Rat)
	for i, c := range children {
		if tree != nil && tree.parent[i] >= 0 {
			continue // a descendant spends from its parent's budget, counted already
		}
		obj, _ := c.(map[string]any)
		if n, ok := obj["budget_tokens"].(json.Number); ok && refWhole.MatchString(string(n)) {
			if b, _ := new(big.Rat).SetString(string(n)); b.Sign() > 0 {
				total.Add(total, b)
			}
		}
	}
	var out []finding
	for _, limit := range []struct {
		rule  string
		value *big.Rat
		of    func(refPolicy) *big.Rat
	}{
		{"plan.children", count, func(p refPolicy) *big.Rat { return p.maxChildren }},
		{"plan.budget", total, func(p refPolicy) *big.Rat { return p.maxTotal }},
	} {
		var over []string
		for _, p := range policies {
			if max := limit.of(p); max != nil && limit.value.Cmp(max) > 0 {
				over = append(over, p.source)
			}
		}
		if len(over) > 0 {
			out = append(out, finding{limit.rule, "/plan", refusedBy(over...)})
		}
	}
	sortFindings(out)
	return out
}

func sortFindings(fs []finding) {
	sort.Slice(fs, func(a, b int) bool {
		if fs[a].pointer != fs[b].pointer {
			return fs[a].pointer < fs[b].pointer
		}
		if fs[a].rule != fs[b].rule {
			return fs[a].rule < fs[b].rule
		}
		return fs[a].policies < fs[b].policies
	})
}

// ---- The plan tree ----

// refTree places each child of a nested plan as the README says the gate
// reads one: the plan's own children first, in order, then the
// descendants of each in pre-order, each at its JSON pointer.
type refTree struct {
	pointer []string
	parent  []int // the index of the child's parent; -1 for a child of the plan
	depth   []int // 1 for the plan's own children, plus the parent block's depth
	spawns  []int // the child's own children
	below   []int // every child below it
	block   map[string]any
}

// refFlatten reads the children of a plan document (numbers as
// json.Number): the plan's own and every descendant, and their places in
// the tree, which is nil when nothing is nested (no child of the plan has a
// children key, and the plan has no parent block).
func refFlatten(doc map[string]any) ([]any, *refTree) {
	top, _ := doc["plan"].([]any)
	block, _ := doc["parent"].(map[string]any)
	nested := block != nil
	for _, c := range top {
		if obj, ok := c.(map[string]any); ok {
			_, has := obj["children"]
			nested = nested || has
		}
	}
	if !nested {
		return top, nil
	}
	base := 0
	if d, ok := block["depth"].(json.Number); ok {
		base, _ = strconv.Atoi(string(d))
	}
	t := &refTree{block: block}
	var flat []any
	place := func(c any, pointer string, parent, depth int) int {
		flat = append(flat, c)
		t.pointer = append(t.pointer, pointer)
		t.parent = append(t.parent, parent)
		t.depth = append(t.depth, depth)
		t.spawns = append(t.spawns, 0)
		t.below = append(t.below, 0)
		return len(flat) - 1
	}
	for i, c := range top {
		place(c, "/plan/"+strconv.Itoa(i), -1, base+1)
	}
	var descend func(k int)
	descend = func(k int) {
		obj, _ := flat[k].(map[string]any)
		kids, _ := obj["children"].([]any)
		for j, c := range kids {
			n := place(c, t.pointer[k]+"/children/"+strconv.Itoa(j), k, t.depth[k]+1)
			t.spawns[k]++
			descend(n)
			t.below[k] += 1 + t.below[n]
		}
	}
	for i := range top {
		descend(i)
	}
	return flat, t
}

// refParent is what the tree rules read of a parent: its tools, paths and
// budget as written (a key it lacks is nil, and for the budget, absent),
// and the sum of its children's budgets when each is a positive whole
// number written as one (else nil).
type refParent struct {
	tools, paths, budget any
	hasBudget            bool
	sum                  *big.Int
}

// parents reads every parent of the tree, by index (-1: the plan's parent
// block).
func (t *refTree) parents(children []any) map[int]*refParent {
	budgets := map[int][]any{}
	for k, p := range t.parent {
		obj, _ := children[k].(map[string]any)
		budgets[p] = append(budgets[p], obj["budget_tokens"])
	}
	out := map[int]*refParent{}
	for p, bs := range budgets {
		src := t.block
		if p >= 0 {
			src, _ = children[p].(map[string]any)
		} else if t.block == nil {
			continue
		}
		rp := &refParent{tools: src["tools"], paths: src["paths"], sum: new(big.Int)}
		rp.budget, rp.hasBudget = src["budget_tokens"]
		for _, b := range bs {
			n, ok := b.(json.Number)
			v, whole := new(big.Int).SetString(string(n), 10)
			if !ok || !whole || v.Sign() <= 0 || !refWhole.MatchString(string(n)) {
				rp.sum = nil
				break
			}
			rp.sum.Add(rp.sum, v)
		}
		out[p] = rp
	}
	return out
}

// refSandboxRank orders the Codex sandboxes from the narrowest: a parent
// holding one holds every narrower one.
var refSandboxRank = map[string]int{"sandbox:read-only": 1, "sandbox:workspace-write": 2, "sandbox:danger-full-access": 3}

// refTreeRules judges child i of a nested plan by the tree rules, with
// fields relative to the child:
//
//   - tree.tools: each tool must be among its parent's tools (equal as a
//     JSON value, or a sandbox no wider than one the parent holds), when the
//     parent lists tools;
//   - tree.paths: each path must be plain and lie inside a plain path of its
//     parent (the path itself or below it after a slash, relative paths read
//     against the plan's root), when the parent lists paths;
//   - tree.budget: when the parent has a budget, it must be a positive whole
//     number by value; then the child's own budget must not exceed it, and
//     the budgets of all the parent's children must add up (each written as
//     a positive whole number) to no more than it: each failure is one
//     refusal, of every child of the parent;
//   - tree.spawn: a child with children must hold a plain tool name that
//     some policy's spawn_tools match;
//   - tree.depth: refused by every policy whose max_depth is below the
//     child's depth, the operator's (or, alone, the plan's) at 3 when it
//     sets none;
//   - tree.descendants: refused by every policy whose max_descendants is
//     below the number of the child's descendants, when it has any.
//
// The tree rules refuse whatever the policies say, but for depth and
// descendants, which name the policies that refuse.
func refTreeRules(policies []refPolicy, planRoot string, obj map[string]any, t *refTree, parents map[int]*refParent, i int) []finding {
	var out []finding
	add := func(rule, field string, sources ...string) {
		out = append(out, finding{rule, field, refusedBy(sources...)})
	}
	if par := parents[t.parent[i]]; par != nil {
		if outer, ok := par.tools.([]any); ok {
			if tools, ok := obj["tools"].([]any); ok {
				for j, tool := range tools {
					if !refHeld(tool, outer) {
						add("tree.tools", "/tools/"+strconv.Itoa(j))
					}
				}
			}
		}
		if outer, ok := par.paths.([]any); ok {
			if paths, ok := obj["paths"].([]any); ok {
				for j, path := range paths {
					if !refInsideOne(path, outer, planRoot) {
						add("tree.paths", "/paths/"+strconv.Itoa(j))
					}
				}
			}
		}
		if par.hasBudget {
			limit, ok := refPositive(par.budget)
			if !ok {
				add("tree.budget", "/budget_tokens")
			} else {
				if n, ok := obj["budget_tokens"].(json.Number); ok && refWhole.MatchString(string(n)) {
					if b, _ := new(big.Rat).SetString(string(n)); b.Sign() > 0 && b.Cmp(limit) > 0 {
						add("tree.budget", "/budget_tokens")
					}
				}
				if par.sum == nil || new(big.Rat).SetInt(par.sum).Cmp(limit) > 0 {
					add("tree.budget", "/budget_tokens")
				}
			}
		}
	}
	if t.spawns[i] > 0 && !refSpawns(obj["tools"], policies) {
		add("tree.spawn", "/children")
	}
	depth, below := big.NewRat(int64(t.depth[i]), 1), big.NewRat(int64(t.below[i]), 1)
	var deep, many []string
	defaultSource := "plan" // the operator's policy holds the default, or the plan's when alone
	for _, p := range policies {
		if p.source == "operator" {
			defaultSource = "operator"
		}
	}
	for _, p := range policies {
		limit := p.maxDepth
		if limit == nil && p.source == defaultSource {
			limit = big.NewRat(3, 1)
		}
		if limit != nil && depth.Cmp(limit) > 0 {
			deep = append(deep, p.source)
		}
		if p.maxDescendants != nil && t.below[i] > 0 && below.Cmp(p.maxDescendants) > 0 {
			many = append(many, p.source)
		}
	}
	if len(deep) > 0 {
		add("tree.depth", "", deep...)
	}
	if len(many) > 0 {
		add("tree.descendants", "/children", many...)
	}
	return out
}

// refHeld tells whether a parent's tools hold a tool: an equal value, or
// for a sandbox, one at least as wide.
func refHeld(tool any, outer []any) bool {
	for _, t := range outer {
		if refEqual(tool, t) {
			return true
		}
	}
	name, _ := tool.(string)
	if refSandboxRank[name] == 0 {
		return false
	}
	for _, t := range outer {
		if s, ok := t.(string); ok && refSandboxRank[s] >= refSandboxRank[name] {
			return true
		}
	}
	return false
}

// refEqual compares JSON values as Rego does: numbers by value, lists and
// objects element by element.
func refEqual(a, b any) bool {
	switch a := a.(type) {
	case json.Number:
		b, ok := b.(json.Number)
		if !ok {
			return false
		}
		x, okx := new(big.Rat).SetString(string(a))
		y, oky := new(big.Rat).SetString(string(b))
		return okx && oky && x.Cmp(y) == 0
	case []any:
		b, ok := b.([]any)
		if !ok || len(a) != len(b) {
			return false
		}
		for i := range a {
			if !refEqual(a[i], b[i]) {
				return false
			}
		}
		return true
	case map[string]any:
		b, ok := b.(map[string]any)
		if !ok || len(a) != len(b) {
			return false
		}
		for k, v := range a {
			w, ok := b[k]
			if !ok || !refEqual(v, w) {
				return false
			}
		}
		return true
	default:
		return a == b
	}
}

// refInsideOne tells whether a path lies inside one of a parent's paths:
// both plain, and the path the child names, with a slash appended, starts
// with the parent's.
func refInsideOne(path any, outer []any, planRoot string) bool {
	s, ok := path.(string)
	if !ok {
		return false
	}
	name, ok := refNamed(s, planRoot)
	if !ok {
		return false
	}
	for _, p := range outer {
		if ps, ok := p.(string); ok {
			if prefix, ok := refNamed(ps, planRoot); ok && strings.HasPrefix(name, prefix) {
				return true
			}
		}
	}
	return false
}

// refNamed is the absolute path a plain path names, with a slash appended
// ("/" for the filesystem root).
func refNamed(path, planRoot string) (string, bool) {
	abs, ok := refPlain(path, planRoot)
	if !ok {
		return "", false
	}
	if abs == "/" {
		return abs, true
	}
	return abs + "/", true
}

// refPositive reads a parent's budget: a number whose value is a positive
// whole number, however it is written.
func refPositive(v any) (*big.Rat, bool) {
	n, ok := v.(json.Number)
	if !ok {
		return nil, false
	}
	b, ok := new(big.Rat).SetString(string(n))
	if !ok || !b.IsInt() || b.Sign() <= 0 {
		return nil, false
	}
	return b, true
}

// refSpawns tells whether a child holds a spawn tool: a plain tool name
// that some policy's spawn_tools match. (Rego iterates the values of an
// object as it does the elements of a list.)
func refSpawns(tools any, policies []refPolicy) bool {
	var list []any
	switch v := tools.(type) {
	case []any:
		list = v
	case map[string]any:
		for _, x := range v {
			list = append(list, x)
		}
	}
	for _, t := range list {
		name, ok := t.(string)
		if !ok || !refToolName.MatchString(name) {
			continue
		}
		for _, p := range policies {
			if refAny(p.spawnTools, name, refGlob) {
				return true
			}
		}
	}
	return false
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

// absent, drawn for a key, leaves the key out.
type absentKey struct{}

var absent any = absentKey{}

var (
	cleanPaths   = []any{"/repo/workspace", "/repo/workspace/docs", "/repo/workspace/src/main.go", "docs/", "src/.env"}
	cleanBudgets = []any{lit("1"), lit("1000"), lit("40000")}

	// The tools and models a policy variant below says, by hand, whether it
	// allows; a child draws its clean tools and models from those every
	// policy of its plan lets through.
	candidateTools = []string{
		"fs.read", "http.get", "fs.write", "mcp__github__get_issue", "Read", "Grep", "Glob", "Bash", "Edit", "Write",
		"Agent", "Task", "spawn_agent", "collaboration.spawn_agent", "collaboration.delegate",
		"sandbox:read-only", "sandbox:workspace-write", "sandbox:danger-full-access",
	}
	candidateModels = []string{
		"claude-sonnet-4-5", "claude-opus-4", "gpt-5", "gpt-5.1-codex", "openai/gpt-5", "anthropic/claude/sonnet", "o3-mini", "sonnet",
	}
	// The candidate tools that write under every policy (the brief's list),
	// and those the default write_tools and spawn_tools name.
	alwaysWrites  = []string{"Bash", "Edit", "Write", "sandbox:workspace-write", "sandbox:danger-full-access"}
	defaultWrites = []string{"fs.write"}
	defaultSpawns = []string{"Agent", "Task", "spawn_agent", "collaboration.spawn_agent"}

	hostileTools = []any{
		"fs.write", "fs.delete", "shell.run", "wallet.transfer", "fs:*", "mcp__github__get_*", "**", "*",
		"fs.read ", " fs.read", "", "FS.READ", "fs..read", "fs.read.deep", "mcp__github__get_issue",
		"mcp__github__create_issue", "db.drop", "http.post", "fs.rea?", "fs/read", "fs.réad", "fs.read\n",
		"fs.write:", "fs.", "fs.read-", "_", "a",
		lit("5"), nil, true, []any{"fs.read"}, map[string]any{"name": "fs.read"},
		// what host adapters bring: spawn tools, host write tools, sandboxes,
		// permission rules, and near misses of each
		"Agent", "Task", "spawn_agent", "collaboration.spawn_agent", "collaboration.delegate", "agent", "Agent ",
		"Bash", "PowerShell", "Edit", "Write", "MultiEdit", "NotebookEdit", "EnterWorktree", "ExitWorktree", "bash",
		"sandbox:read-only", "sandbox:workspace-write", "sandbox:danger-full-access", "sandbox:*", "sandbox:yolo",
		"Bash(git diff:*)", "Read(./src/**)", "Agent(Explore)", "Read", "Grep", "mcp__codex",
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
		lit("1.5"), lit("9007199254740993"), lit("100000"), lit("100001"), lit("150001"), "40000", true, nil, []any{lit("1")},
	}
	// Models no policy below lists, or that break the schema: whitespace
	// of every kind (the schema allows printable ASCII only), non-ASCII.
	hostileModels = []any{
		absent, "a\u000bb", "son\u00a0net", "gpt\u2028", "\u3000", "opus", "gpt-4o", "m", "claude sonnet", " sonnet", "sonnet ", "sonnet\n", "\tgpt-5", "", "openai/gpt-5/mini",
		"anthropic/claude", "o33-mini", "o/-mini", "CLAUDE-OPUS-4", "claude-opus-4/", "claude-sönnet", "gpt-5*", "**",
		lit("5"), nil, true, []any{"sonnet"}, map[string]any{"name": "sonnet"},
	}
	pathAlphabet = []string{"/", "/", "a", "b", ".", "..", "-", "_", "@", "~", "$", "%", "\\", " ", ":", "é", "\u2215", "*", "repo", "workspace", "docs", "con", "Lpt1", "nul."}

	// Agent blocks that pass: a definition the gate can read, a mode that
	// asks, and for Codex a sandbox.
	cleanAgents = []map[string]any{
		{"host": "claude-code", "type": "reviewer", "definition": ".claude/agents/reviewer.md"},
		{"host": "claude-code", "type": "reviewer", "definition": ".claude/agents/reviewer.md", "permission_mode": "plan", "inherits_tools": false, "caller": "lead"},
		{"host": "claude-code", "type": "Explore", "definition": ".claude/agents/explore.md", "permission_mode": "acceptEdits", "sandbox_mode": nil},
		{"host": "claude-code", "type": "general-purpose", "definition": ".claude/agents/gp.md", "permission_mode": "dontAsk", "problem": ""},
		{"host": "codex", "type": "worker", "definition": ".codex/agents/worker.toml", "sandbox_mode": "read-only"},
		{"host": "codex", "type": "worker", "definition": ".codex/agents/worker.toml", "sandbox_mode": "workspace-write", "permission_mode": "default"},
		{"host": "codex", "type": "explorer", "definition": ".codex/agents/explorer.toml", "sandbox_mode": "danger-full-access", "caller": "worker"},
	}
	// What a hostile agent block may set a key to (absent drops it).
	hostileAgentValues = map[string][]any{
		"host":            {absent, "gemini", "Codex", "claude", "", nil, lit("1"), []any{"codex"}},
		"type":            {absent, lit("5"), nil, "", true},
		"definition":      {absent, nil, "", lit("3"), true, []any{".claude/agents/x.md"}, map[string]any{}},
		"problem":         {absent, "", "agent type \"general-purpose\" is built in and no agents folder defines it", lit("1"), nil},
		"inherits_tools":  {absent, true, true, false, "true", lit("1"), nil},
		"permission_mode": {absent, "bypassPermissions", "auto", "Auto", "bypasspermissions", "default", lit("1"), nil},
		"sandbox_mode":    {absent, nil, "yolo", "Read-Only", "read-only ", "read-only", "danger-full-access", lit("1"), true},
		"caller":          {absent, "lead", lit("2"), nil},
		"tools":           {[]any{"fs.read"}},
		"model":           {"sonnet"},
	}
	hostileAgentKeys = []string{"host", "type", "definition", "problem", "inherits_tools", "permission_mode", "sandbox_mode", "caller", "tools", "model"}
	hostileAgents    = []any{"reviewer", nil, []any{}, lit("1"), true, []any{map[string]any{"host": "codex", "type": "w"}}}
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

// randomAgent returns a clean agent block, or a hostile one: a clean one
// with one to three keys changed, added or dropped, or not an object.
func randomAgent(r *rand.Rand, hostile bool) any {
	agent := map[string]any{}
	for k, v := range cleanAgents[r.IntN(len(cleanAgents))] {
		agent[k] = v
	}
	if !hostile {
		return agent
	}
	if r.IntN(8) == 0 {
		return pick(r, hostileAgents)
	}
	for n := r.IntN(3) + 1; n > 0; n-- {
		k := hostileAgentKeys[r.IntN(len(hostileAgentKeys))]
		if v := pick(r, hostileAgentValues[k]); v == absent {
			delete(agent, k)
		} else {
			agent[k] = v
		}
	}
	return agent
}

// policyVariant is an operator or plan policy the generator draws, with
// what a reader of the README works out by hand about the candidate tools
// and models: which its allowed_tools allow, which its write_tools and
// spawn_tools name, and which its allowed_models allow.
type policyVariant struct {
	doc       string // JSON; "" for no policy
	clean     bool   // the policy keeps cleanPaths and cleanBudgets clean
	allows    []string
	writes    []string
	spawns    []string
	restricts bool // the policy sets allowed_models
	models    []string
	// For an operator policy with role profiles: what each profile lets
	// through, by role, and whether a role without one is refused.
	profiles      map[string]profileNote
	refuseUnknown bool

	parsed map[string]any // doc, read by encoding/json
}

// profileNote is what a reader works out by hand about a role profile:
// each field for a setting the profile writes, nil or false when it does
// not (and the operator policy's then holds).
type profileNote struct {
	allows           []string // the candidate tools its allowed_tools allow
	noWrite, noSpawn bool     // it sets allow_write or allow_spawn to false
	paths            []any    // the clean paths inside its workspace_root
	budgets          []any    // the clean budgets within its cap
	restricts        bool     // it sets allowed_models
	models           []string
}

func (v *policyVariant) policy() map[string]any {
	if v.doc == "" {
		return nil
	}
	if v.parsed == nil {
		dec := json.NewDecoder(strings.NewReader(v.doc))
		dec.UseNumber()
		if err := dec.Decode(&v.parsed); err != nil {
			panic(err)
		}
	}
	return v.parsed
}

// The operator policies a comparison may use: the first is
// operatorPolicy, the last none at all (the plan's policy alone).
var operatorVariants = []*policyVariant{
	{doc: operatorPolicy, clean: true,
		allows: []string{"fs.read", "fs.write", "http.get", "mcp__github__get_issue"}, writes: defaultWrites, spawns: defaultSpawns},
	{doc: `{"allowed_tools": ["fs.read", "fs.write", "http.get", "mcp__github__get_*", "Read", "Grep", "Glob", "Bash", "Edit", "Write", "Agent", "Task", "spawn_agent", "collaboration.*", "sandbox:*", "sandbox:danger-full-access"],
		"workspace_root": "/repo/workspace", "budget_cap_tokens": 200000, "allow_write": true, "allow_spawn": true,
		"allowed_models": ["claude-sonnet-*", "claude-opus-4", "gpt-5*", "openai/**", "o?-mini", "sonnet"]}`, clean: true,
		allows: candidateTools, writes: defaultWrites, spawns: defaultSpawns,
		restricts: true, models: []string{"claude-sonnet-4-5", "claude-opus-4", "gpt-5", "gpt-5.1-codex", "openai/gpt-5", "o3-mini", "sonnet"}},
	{doc: `{"allowed_tools": ["fs.read", "http.get", "Read", "Grep", "Agent", "collaboration.*", "sandbox:*", "Bash"],
		"workspace_root": "/repo/workspace", "budget_cap_tokens": 150000, "allow_spawn": true, "spawn_tools": ["Agent", "collaboration.*"],
		"allowed_models": ["sonnet", "anthropic/*/*", "claude-*"], "max_depth": 2}`, clean: true,
		allows: []string{"fs.read", "http.get", "Read", "Grep", "Agent", "collaboration.spawn_agent", "collaboration.delegate", "sandbox:read-only", "sandbox:workspace-write", "Bash"},
		writes: defaultWrites, spawns: []string{"Agent", "collaboration.spawn_agent", "collaboration.delegate"},
		restricts: true, models: []string{"claude-sonnet-4-5", "claude-opus-4", "anthropic/claude/sonnet", "sonnet"}},
	{doc: `{"allowed_tools": ["fs.read", "http.get", "Read", "Agent", "Task"], "workspace_root": "/repo/workspace", "budget_cap_tokens": 200000,
		"allow_spawn": false, "spawn_tools": ["Task"], "write_tools": ["fs.write", "Read"], "allowed_models": ["gpt-5", "openai/gpt-?"]}`, clean: true,
		allows: []string{"fs.read", "http.get", "Read", "Agent", "Task"}, writes: []string{"fs.write", "Read"}, spawns: []string{"Task"},
		restricts: true, models: []string{"gpt-5", "openai/gpt-5"}},
	// Role profiles that narrow each setting, a role that is escaped in the
	// sources (team/a~b), and plan-wide limits a few children reach.
	{doc: `{"allowed_tools": ["fs.read", "fs.write", "http.get", "mcp__github__get_*", "Read", "Grep", "Bash", "Agent", "sandbox:*"],
		"workspace_root": "/repo/workspace", "budget_cap_tokens": 200000, "allow_write": true, "allow_spawn": true,
		"max_children": 4, "max_total_budget_tokens": 100000, "max_descendants": 3,
		"roles": {
			"doc-reader": {"allowed_tools": ["fs.read", "Read", "Grep", "http.*"], "allow_write": false, "workspace_root": "/repo/workspace/docs", "budget_cap_tokens": 1000, "allowed_models": ["sonnet", "claude-*"]},
			"fixer": {"allowed_tools": ["fs.*", "Bash", "Read", "Agent"], "allow_spawn": false, "workspace_root": "/repo/workspace/src"},
			"lead": {"allow_spawn": true, "allowed_tools": ["Agent", "fs.read", "sandbox:*", "sandbox:danger-full-access"]},
			"team/a~b": {"budget_cap_tokens": 40000, "allow_write": false}}}`, clean: true,
		allows: []string{"fs.read", "fs.write", "http.get", "mcp__github__get_issue", "Read", "Grep", "Bash", "Agent", "sandbox:read-only", "sandbox:workspace-write"},
		writes: defaultWrites, spawns: defaultSpawns,
		profiles: map[string]profileNote{
			"doc-reader": {allows: []string{"fs.read", "Read", "Grep", "http.get"}, noWrite: true, paths: []any{"/repo/workspace/docs", "docs/"},
				budgets: []any{lit("1"), lit("1000")}, restricts: true, models: []string{"sonnet", "claude-sonnet-4-5", "claude-opus-4"}},
			"fixer":    {allows: []string{"fs.read", "fs.write", "Bash", "Read", "Agent"}, noSpawn: true, paths: []any{"/repo/workspace/src/main.go", "src/.env"}},
			"lead":     {allows: []string{"Agent", "fs.read", "sandbox:read-only", "sandbox:workspace-write", "sandbox:danger-full-access"}},
			"team/a~b": {noWrite: true},
		}},
	// Unknown roles refused, and a profile for the generator's own role.
	// (Its doc-reader withholds what the policy withholds too, so both are
	// named.)
	{doc: `{"allowed_tools": ["fs.read", "http.get", "Read", "shell.run"], "workspace_root": "/repo/workspace", "budget_cap_tokens": 200000,
		"unknown_roles": "refuse", "max_children": 3, "allowed_models": ["gpt-5*", "sonnet"],
		"roles": {"worker": {"allowed_tools": ["fs.read", "Read", "Grep"]},
			"doc-reader": {"workspace_root": "/repo/workspace/docs", "allowed_tools": ["fs.read", "http.get"], "allow_write": false, "allow_spawn": false, "allowed_models": ["sonnet"]}}}`, clean: true,
		allows: []string{"fs.read", "http.get", "Read"}, writes: defaultWrites, spawns: defaultSpawns, refuseUnknown: true,
		restricts: true, models: []string{"gpt-5", "gpt-5.1-codex", "sonnet"},
		profiles: map[string]profileNote{
			"worker": {allows: []string{"fs.read", "Read", "Grep"}},
			"doc-reader": {allows: []string{"fs.read", "http.get"}, paths: []any{"/repo/workspace/docs", "docs/"}, noWrite: true, noSpawn: true,
				restricts: true, models: []string{"sonnet"}},
		}},
	{doc: "", clean: true},
}

// operatorDraws weighs the operator variants: operatorPolicy most often.
var operatorDraws = []int{0, 0, 0, 1, 1, 2, 3, 4, 4, 5, 6}

// Roles a child may have beside a profile's: the generator's own, and near
// misses of profiled roles.
var otherRoles = []string{"worker", "worker", "deployer", "Doc-Reader", "fixer "}

// inline policies a plan may carry: some narrow, some try to widen. Those
// marked clean keep the clean paths and budgets clean.
var inlineVariants = []*policyVariant{
	{doc: "", clean: true},
	{doc: `{"allowed_tools": ["fs.read", "http.get", "mcp__github__get_issue"], "workspace_root": "/repo/workspace", "budget_cap_tokens": 100000, "max_children": 3}`, clean: true,
		allows: []string{"fs.read", "http.get", "mcp__github__get_issue"}, writes: defaultWrites, spawns: defaultSpawns},
	{doc: `{"allowed_tools": ["**"], "allow_write": true, "workspace_root": "/", "budget_cap_tokens": 9000000, "write_tools": []}`,
		allows: candidateTools[:len(candidateTools)-1], spawns: defaultSpawns},
	{doc: `{"allowed_tools": ["fs.*", "http.*", "mcp__*"], "workspace_root": "/repo/workspace", "budget_cap_tokens": 200000, "allow_write": false, "write_tools": [],
		"max_total_budget_tokens": 60000, "max_descendants": 2}`, clean: true,
		allows: []string{"fs.read", "fs.write", "http.get", "mcp__github__get_issue"}, spawns: defaultSpawns},
	{doc: `{"allowed_tools": ["fs.read"], "workspace_root": "/repo/workspace/docs", "budget_cap_tokens": 50000}`,
		allows: []string{"fs.read"}, writes: defaultWrites, spawns: defaultSpawns},
	{doc: `{"allowed_tools": ["*.*", "fs.rea?"], "workspace_root": "/repo/workspace", "budget_cap_tokens": 9007199254740991, "allow_write": true, "write_tools": ["http.*"]}`,
		allows: []string{"fs.read", "http.get", "fs.write", "collaboration.spawn_agent", "collaboration.delegate"}, writes: []string{"http.get"}, spawns: defaultSpawns},
	{doc: `{"allowed_tools": ["fs.read", "http.get", "shell.run"], "workspace_root": "/srv/app", "budget_cap_tokens": 1000}`,
		allows: []string{"fs.read", "http.get"}, writes: defaultWrites, spawns: defaultSpawns},
	{doc: `{"allowed_tools": ["fs.read", "http.get", "Read", "Grep", "Glob", "Agent", "collaboration.spawn_agent", "sandbox:read-only"],
		"workspace_root": "/repo/workspace", "budget_cap_tokens": 100000, "allow_spawn": true, "allowed_models": ["claude-*", "sonnet"], "max_depth": 4}`, clean: true,
		allows: []string{"fs.read", "http.get", "Read", "Grep", "Glob", "Agent", "collaboration.spawn_agent", "sandbox:read-only"}, writes: defaultWrites, spawns: defaultSpawns,
		restricts: true, models: []string{"claude-sonnet-4-5", "claude-opus-4", "sonnet"}},
	{doc: `{"allowed_tools": ["**", "sandbox:danger-full-access"], "workspace_root": "/repo/workspace", "budget_cap_tokens": 200000,
		"allow_write": true, "allow_spawn": true, "spawn_tools": ["**"], "write_tools": ["fs.*"]}`, clean: true,
		allows: candidateTools, writes: []string{"fs.read", "fs.write"}, spawns: candidateTools},
	{doc: `{"allowed_tools": ["fs.read", "http.get", "Read", "Bash", "Task", "spawn_agent", "sandbox:*"], "workspace_root": "/repo/workspace", "budget_cap_tokens": 200000,
		"allow_write": true, "allow_spawn": false, "spawn_tools": ["spawn_agent"]}`, clean: true,
		allows: []string{"fs.read", "http.get", "Read", "Bash", "Task", "spawn_agent", "sandbox:read-only", "sandbox:workspace-write"}, writes: defaultWrites, spawns: []string{"spawn_agent"}},
	{doc: `{"allowed_tools": ["fs.read", "http.get"], "workspace_root": "/repo/workspace", "budget_cap_tokens": 200000, "allowed_models": [], "max_depth": 2}`, clean: true,
		allows: []string{"fs.read", "http.get"}, writes: defaultWrites, spawns: defaultSpawns, restricts: true, models: []string{}},
	{doc: `{"allowed_tools": ["fs.read", "http.get", "Read", "Edit"], "workspace_root": "/repo/workspace", "budget_cap_tokens": 200000,
		"allow_write": true, "allowed_models": ["**"]}`, clean: true,
		allows: []string{"fs.read", "http.get", "Read", "Edit"}, writes: defaultWrites, spawns: defaultSpawns, restricts: true, models: candidateModels},
}

// refPolicyOf reads a policy document (numbers as json.Number or lit) for
// the reference.
func refPolicyOf(source string, doc map[string]any) refPolicy {
	strs := func(v any) []string {
		out := []string{}
		for _, t := range v.([]any) {
			out = append(out, t.(string))
		}
		return out
	}
	p := refPolicy{source: source, root: doc["workspace_root"].(string), allowed: strs(doc["allowed_tools"]),
		writeTools: refDefaultWrite, spawnTools: refDefaultSpawn}
	p.cap, _ = new(big.Rat).SetString(fmt.Sprint(doc["budget_cap_tokens"]))
	p.allowWrite = doc["allow_write"] == true
	p.allowSpawn = doc["allow_spawn"] == true
	if v, ok := doc["write_tools"]; ok {
		p.writeTools = strs(v)
	}
	if v, ok := doc["spawn_tools"]; ok {
		p.spawnTools = strs(v)
	}
	if v, ok := doc["allowed_models"]; ok {
		p.hasModels, p.models = true, strs(v)
	}
	limit := func(key string) *big.Rat {
		if v, ok := doc[key]; ok {
			n, _ := new(big.Rat).SetString(fmt.Sprint(v))
			return n
		}
		return nil
	}
	p.maxChildren, p.maxTotal = limit("max_children"), limit("max_total_budget_tokens")
	p.maxDepth, p.maxDescendants = limit("max_depth"), limit("max_descendants")
	p.refuseUnknown = doc["unknown_roles"] == "refuse"
	roles, _ := doc["roles"].(map[string]any)
	for role, v := range roles {
		pr := v.(map[string]any)
		prof := refProfile{source: "operator/roles/" + strings.NewReplacer("~", "~0", "/", "~1").Replace(role)}
		if v, ok := pr["allowed_tools"]; ok {
			prof.setsAllowed, prof.allowed = true, strs(v)
		}
		if v, ok := pr["allow_write"]; ok {
			prof.setsWrite, prof.allowWrite = true, v == true
		}
		if v, ok := pr["allow_spawn"]; ok {
			prof.setsSpawn, prof.allowSpawn = true, v == true
		}
		if v, ok := pr["workspace_root"]; ok {
			prof.setsRoot, prof.root = true, v.(string)
		}
		if v, ok := pr["budget_cap_tokens"]; ok {
			prof.cap, _ = new(big.Rat).SetString(fmt.Sprint(v))
		}
		if v, ok := pr["allowed_models"]; ok {
			prof.hasModels, prof.models = true, strs(v)
		}
		if p.profiles == nil {
			p.profiles = map[string]refProfile{}
		}
		p.profiles[role] = prof
	}
	return p
}

func operatorRef() refPolicy { return refPolicyOf("operator", operatorVariants[0].policy()) }

// pools are what a child of a plan may be drawn from and stay clean, by
// the hand-made notes of its policies.
type pools struct {
	clean    bool  // every policy keeps paths and budgets clean
	tools    []any // candidate tools every policy lets through
	models   []any // candidate models every policy naming models allows
	anyModel bool  // no policy names models: a child may name none
	paths    []any // the clean paths every root holds
	budgets  []any // the clean budgets within every cap
}

// poolsOf works out the pools of a child judged by the policies and, when
// its role has one, by a profile (nil otherwise).
func poolsOf(prof *profileNote, vs ...*policyVariant) pools {
	pl := pools{clean: true, anyModel: true, paths: cleanPaths, budgets: cleanBudgets}
	everyWrites, everySpawns := true, true
	for _, v := range vs {
		pl.clean = pl.clean && v.clean
		everyWrites = everyWrites && v.policy()["allow_write"] == true
		everySpawns = everySpawns && v.policy()["allow_spawn"] == true
		pl.anyModel = pl.anyModel && !v.restricts
	}
	if prof == nil {
		prof = &profileNote{}
	}
	everyWrites = everyWrites && !prof.noWrite
	everySpawns = everySpawns && !prof.noSpawn
	pl.anyModel = pl.anyModel && !prof.restricts
	if prof.paths != nil {
		pl.paths = prof.paths
	}
	if prof.budgets != nil {
		pl.budgets = prof.budgets
	}
	for _, t := range candidateTools {
		allowed, writes, spawns := prof.allows == nil || slices.Contains(prof.allows, t), slices.Contains(alwaysWrites, t), false
		for _, v := range vs {
			allowed = allowed && slices.Contains(v.allows, t)
			writes = writes || slices.Contains(v.writes, t)
			spawns = spawns || slices.Contains(v.spawns, t)
		}
		if allowed && (!writes || everyWrites) && (!spawns || everySpawns) {
			pl.tools = append(pl.tools, t)
		}
	}
	for _, m := range candidateModels {
		allowed := !prof.restricts || slices.Contains(prof.models, m)
		for _, v := range vs {
			allowed = allowed && (!v.restricts || slices.Contains(v.models, m))
		}
		if allowed {
			pl.models = append(pl.models, m)
		}
	}
	return pl
}

// planCase is a generated plan, its policies for the reference, and which
// children were drawn only from clean values under clean policies.
type planCase struct {
	doc      map[string]any
	operator int // index in operatorVariants
	inline   int // index in inlineVariants
	policies []refPolicy
	clean    []bool
}

// randomChild draws a child of the given role from the pools: a third of
// the children only from clean values, the others more or less hostile;
// a calm child draws only clean values.
func randomChild(r *rand.Rand, role string, pl pools, id int, calm bool) (any, bool) {
	clean := pl.clean
	hostility := 0 // in quarters: a third of the children draw only clean values
	if r.IntN(3) > 0 && !calm {
		hostility = 1 + r.IntN(3)
	}
	field := func(cleanPool, hostilePool []any) any {
		if r.IntN(4) < hostility || len(cleanPool) == 0 {
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
		"role":          role,
		"tools":         list(pl.tools, hostileTools, nil, 4),
		"paths":         list(pl.paths, hostilePaths, func() any { return randomPath(r) }, 4),
		"budget_tokens": field(pl.budgets, hostileBudgets),
	}
	if r.IntN(3) == 0 {
		child["paths"] = []any{}
	}
	// The model: none or any while no policy names models, else one every
	// such policy allows; a hostile one now and then.
	switch {
	case hostility > 0 && r.IntN(8) < hostility:
		clean = false
		if m := pick(r, hostileModels); m != absent {
			child["model"] = m
		}
	case len(pl.models) > 0 && (!pl.anyModel || r.IntN(2) == 0):
		child["model"] = pick(r, pl.models)
	case !pl.anyModel: // a policy names models and allows none of these
		clean = false
		if r.IntN(2) == 0 {
			child["model"] = candidateModels[r.IntN(len(candidateModels))]
		}
	}
	// The agent block a host adapter would add, for some children.
	if r.IntN(3) == 0 {
		hostile := hostility > 0 && r.IntN(4) < hostility
		clean = clean && !hostile
		child["agent"] = randomAgent(r, hostile)
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
		child["metadata"] = map[string]any{"tools": []any{"shell.run"}, "paths": []any{"/etc"}, "model": "opus", "agent": map[string]any{"permission_mode": "bypassPermissions"}}
		return child, clean
	case 8:
		child["brief"] = pick(r, []any{"review the docs", lit("1"), nil})
		return child, clean && child["brief"] == "review the docs"
	default:
		if r.IntN(2) == 0 {
			child["id"] = "c" + strconv.Itoa(id)
		}
		return child, clean
	}
	return child, false
}

func randomPlan(r *rand.Rand) planCase {
	operator, inline := randomVariants(r)
	return randomPlanOf(r, operator, inline, r.IntN(4) == 0)
}

// randomVariants draws an operator and an inline policy variant, so that
// some policy applies.
func randomVariants(r *rand.Rand) (operator, inline int) {
	operator, inline = operatorDraws[r.IntN(len(operatorDraws))], r.IntN(len(inlineVariants))
	if operatorVariants[operator].doc == "" && inline == 0 { // some policy must apply
		inline = 1 + r.IntN(len(inlineVariants)-1)
	}
	return operator, inline
}

// randomPlanWith draws a flat plan under the given operator and inline
// variants.
func randomPlanWith(r *rand.Rand, operator, inline int) planCase {
	return randomPlanOf(r, operator, inline, false)
}

// randomPlanOf draws a plan under the given operator and inline variants;
// when nested, some of its children have children of their own
// (treeDraw.grow), and some plans have a parent block.
func randomPlanOf(r *rand.Rand, operator, inline int, nested bool) planCase {
	pc := planCase{doc: map[string]any{}, operator: operator, inline: inline}
	op, in := operatorVariants[operator], inlineVariants[inline]
	var vs []*policyVariant
	if op.doc != "" {
		vs = append(vs, op)
		pc.policies = append(pc.policies, refPolicyOf("operator", op.policy()))
	}
	if in.doc != "" {
		vs = append(vs, in)
		pc.doc["policy"] = in.policy()
		pc.policies = append(pc.policies, refPolicyOf("plan", in.policy()))
	}
	g := &treeDraw{r: r, op: op, vs: vs, clean: map[string]bool{}, next: 1000, room: 4 + r.IntN(12)}
	var children []any
	var pls []pools // the pools each child was drawn from
	for i, n := 0, r.IntN(6)+1; i < n; i++ {
		role, pl := g.role()
		c, clean := randomChild(r, role, pl, i, false)
		children = append(children, c)
		pls = append(pls, pl)
		pc.clean = append(pc.clean, clean)
	}
	// Now and then, children that differ only in what grants nothing (id,
	// brief): the gate judges them as one group, and the plan-wide limits
	// must still count each.
	if r.IntN(3) == 0 {
		for n := r.IntN(6) + 1; n > 0; n-- {
			k := r.IntN(len(children))
			c := children[k]
			if obj, ok := c.(map[string]any); ok {
				copied := maps.Clone(obj)
				delete(copied, "id")
				if r.IntN(2) == 0 {
					copied["id"] = "dup" + strconv.Itoa(len(children))
				}
				if r.IntN(2) == 0 {
					copied["brief"] = "task " + strconv.Itoa(len(children))
				}
				c = copied
			}
			children = append(children, c)
			pls = append(pls, pls[k])
			pc.clean = append(pc.clean, pc.clean[k])
		}
	}
	pc.doc["plan"] = children
	if nested {
		g.nest(pc.doc, children, pls, pc.clean)
		flat, tree := stdTree(pc.doc)
		pc.clean = make([]bool, len(flat))
		if tree != nil {
			for k, ptr := range tree.pointer {
				pc.clean[k] = g.clean[ptr]
			}
		}
	}
	return pc
}

// treeDraw draws the tree of a nested plan, and notes by hand which of its
// children are clean: drawn only from clean values, each holding no more
// than its parent, and within every limit of the tree.
type treeDraw struct {
	r     *rand.Rand
	op    *policyVariant
	vs    []*policyVariant
	clean map[string]bool // by pointer
	next  int             // the number in the next child's id
	room  int             // how many more descendants the plan may have
}

// role draws a child's role, as the plan's own are drawn: a profiled one
// now and then (each judged by its profile too), else one of the others,
// which the operator policy may refuse. It returns the pools of the role.
func (g *treeDraw) role() (string, pools) {
	profiled := slices.Sorted(maps.Keys(g.op.profiles))
	role := otherRoles[g.r.IntN(len(otherRoles))]
	if len(profiled) > 0 && g.r.IntN(3) > 0 {
		role = profiled[g.r.IntN(len(profiled))]
	}
	var prof *profileNote
	if note, ok := g.op.profiles[role]; ok {
		prof = &note
	}
	pl := poolsOf(prof, g.vs...)
	if prof == nil && g.op.refuseUnknown {
		pl.clean = false
	}
	return role, pl
}

// maxDepth is the lowest max_depth the policies set, the first policy's
// being 3 when it sets none; maxDescendants the lowest max_descendants, or -1 when none sets
// one.
func (g *treeDraw) maxDepth() int {
	lowest := 1 << 30
	for k, v := range g.vs {
		d := 3 // the first policy (the operator's, or the plan's alone) holds the default
		if n, ok := v.policy()["max_depth"].(json.Number); ok {
			d, _ = strconv.Atoi(string(n))
		} else if k > 0 {
			continue
		}
		lowest = min(lowest, d)
	}
	return lowest
}

func (g *treeDraw) maxDescendants() int {
	lowest := -1
	for _, v := range g.vs {
		if n, ok := v.policy()["max_descendants"].(json.Number); ok {
			if d, _ := strconv.Atoi(string(n)); lowest < 0 || d < lowest {
				lowest = d
			}
		}
	}
	return lowest
}

// nest gives some of the plan's children (at least one object among them)
// children of their own, 1 to 4 levels deep, and now and then the plan a
// parent block that bounds them.
func (g *treeDraw) nest(doc map[string]any, top []any, pls []pools, clean []bool) {
	r := g.r
	for i := range top {
		g.clean["/plan/"+strconv.Itoa(i)] = clean[i]
	}
	base, hasBlock := 0, r.IntN(4) == 0
	if hasBlock {
		base = r.IntN(3)
	}
	levels, grew := 1+r.IntN(4), false
	for i, c := range top {
		obj, ok := c.(map[string]any)
		if !ok || (grew && r.IntN(3) > 0) || g.room == 0 {
			continue
		}
		grew = true
		g.grow(obj, "/plan/"+strconv.Itoa(i), base+1, levels, pls[i])
	}
	if !grew && !hasBlock {
		// No child is an object: a children key on none, and a block, make
		// the plan nested all the same.
		hasBlock = true
	}
	pointers := make([]string, len(top))
	for i := range top {
		pointers[i] = "/plan/" + strconv.Itoa(i)
		if base+1 > g.maxDepth() {
			g.clean[pointers[i]] = false
		}
	}
	if hasBlock {
		block := g.block(top, base)
		doc["parent"] = block
		g.bounded(block, top, pointers)
	}
}

// grow gives node, at pointer ptr and depth, drawn from the pools pl, a
// spawn tool and one to three children, drawn mostly by narrowing what it
// holds, and those children of their own while levels last. It returns how
// many descendants node has.
func (g *treeDraw) grow(node map[string]any, ptr string, depth, levels int, pl pools) int {
	r := g.r
	g.giveSpawnTool(node, ptr, pl)
	n := min(1+r.IntN(3), g.room)
	g.room -= n
	kids := make([]any, 0, n)
	pointers := make([]string, 0, n)
	below := 0
	for j := range n {
		at := ptr + "/children/" + strconv.Itoa(j)
		role, kpl := g.role()
		kpl = narrowed(kpl, node, n)
		kid, clean := randomChild(r, role, kpl, g.next, r.IntN(2) == 0)
		g.next++
		obj, isObject := kid.(map[string]any)
		if isObject && r.IntN(8) == 0 {
			widen(r, obj)
			clean = false
		}
		g.clean[at] = clean && depth+1 <= g.maxDepth()
		kids, pointers = append(kids, kid), append(pointers, at)
		switch {
		case isObject && levels > 1 && g.room > 0 && r.IntN(3) > 0:
			below += g.grow(obj, at, depth+1, levels-1, kpl)
		case isObject && r.IntN(16) == 0:
			// children that are none, or not a list
			obj["children"] = pick(r, []any{[]any{}, []any{}, "x", nil, map[string]any{}})
			if _, ok := obj["children"].([]any); !ok {
				g.clean[at] = false
			}
		}
		below++
	}
	node["children"] = kids
	g.bounded(node, kids, pointers)
	if lowest := g.maxDescendants(); lowest >= 0 && below > lowest {
		g.clean[ptr] = false
	}
	return below
}

// giveSpawnTool adds a spawn tool to the tools of a child that is to have
// children: one its pools hold when there is one, else Agent, which then
// may not be clean. Now and then it adds none.
func (g *treeDraw) giveSpawnTool(node map[string]any, ptr string, pl pools) {
	if g.r.IntN(10) > 0 {
		var pool []any
		for _, t := range pl.tools {
			if g.spawnTool(t) {
				pool = append(pool, t)
			}
		}
		tool := any("Agent")
		if len(pool) > 0 {
			tool = pick(g.r, pool)
		} else {
			g.clean[ptr] = false
		}
		if tools, ok := node["tools"].([]any); ok && !slices.Contains(tools, tool) {
			node["tools"] = append(slices.Clone(tools), tool)
		}
	}
	holds := false
	if tools, ok := node["tools"].([]any); ok {
		for _, t := range tools {
			holds = holds || g.spawnTool(t)
		}
	}
	if !holds {
		g.clean[ptr] = false
	}
}

// spawnTool tells, by the notes of the policies, whether a candidate tool
// is one that some policy's spawn_tools name.
func (g *treeDraw) spawnTool(t any) bool {
	name, ok := t.(string)
	if !ok {
		return false
	}
	for _, v := range g.vs {
		if slices.Contains(v.spawns, name) {
			return true
		}
	}
	return false
}

// heldAlso lists, by hand, the sandboxes a parent holding one hands down
// besides itself.
var heldAlso = map[string][]string{
	"sandbox:workspace-write":    {"sandbox:read-only"},
	"sandbox:danger-full-access": {"sandbox:read-only", "sandbox:workspace-write"},
}

// cleanWithin lists, by hand, the clean paths inside each clean path under
// the root /repo/workspace, relative ones read against it.
var cleanWithin = map[string][]any{
	"/repo/workspace":             cleanPaths,
	"/repo/workspace/docs":        {"/repo/workspace/docs", "docs/"},
	"docs/":                       {"/repo/workspace/docs", "docs/"},
	"/repo/workspace/src/main.go": {"/repo/workspace/src/main.go"},
	"src/.env":                    {"src/.env"},
}

// handedDown is what a parent lets its children hold, by the notes above:
// the tools it holds (nil when it lists none, and bounds none), the clean
// paths inside its paths (nil when it lists none), and whether it has a
// budget and what it is when it is a positive whole number.
func handedDown(parent map[string]any) (tools, paths map[any]bool, hasBudget bool, budget *big.Int) {
	if list, ok := parent["tools"].([]any); ok {
		tools = map[any]bool{}
		for _, t := range list {
			if name, ok := t.(string); ok {
				tools[name] = true
				for _, also := range heldAlso[name] {
					tools[also] = true
				}
			}
		}
	}
	if list, ok := parent["paths"].([]any); ok {
		paths = map[any]bool{}
		for _, p := range list {
			if s, ok := p.(string); ok {
				for _, q := range cleanWithin[s] {
					paths[q] = true
				}
			}
		}
	}
	_, hasBudget = parent["budget_tokens"]
	budget, _ = positiveLit(parent["budget_tokens"])
	return tools, paths, hasBudget, budget
}

var positiveDigits = regexp.MustCompile(`^[1-9][0-9]*$`)

// positiveLit reads a budget written as a positive whole number.
func positiveLit(v any) (*big.Int, bool) {
	s, ok := v.(lit)
	if !ok || !positiveDigits.MatchString(string(s)) {
		return nil, false
	}
	return new(big.Int).SetString(string(s), 10)
}

// narrowed is what a child of parent may be drawn from and stay clean:
// the tools, paths and budgets of its own pools that parent hands down,
// budgets small enough that n of them fit in parent's.
func narrowed(pl pools, parent map[string]any, n int) pools {
	tools, paths, hasBudget, budget := handedDown(parent)
	out := pl
	if tools != nil {
		out.tools = nil
		for _, t := range pl.tools {
			if tools[t] {
				out.tools = append(out.tools, t)
			}
		}
	}
	if paths != nil {
		out.paths = nil
		for _, p := range pl.paths {
			if paths[p] {
				out.paths = append(out.paths, p)
			}
		}
	}
	if hasBudget {
		out.budgets = nil
		for _, b := range pl.budgets {
			if v, ok := positiveLit(b); ok && budget != nil && new(big.Int).Mul(v, big.NewInt(int64(n))).Cmp(budget) <= 0 {
				out.budgets = append(out.budgets, b)
			}
		}
	}
	return out
}

// bounded notes which children of parent (at the given pointers) hold
// more than it hands down: a tool, a path, or budgets that do not fit.
func (g *treeDraw) bounded(parent map[string]any, kids []any, pointers []string) {
	tools, paths, hasBudget, budget := handedDown(parent)
	total, summed := new(big.Int), true
	for k, kid := range kids {
		obj, _ := kid.(map[string]any)
		if list, ok := obj["tools"].([]any); ok && tools != nil {
			for _, t := range list {
				if _, ok := t.(string); !ok || !tools[t] {
					g.clean[pointers[k]] = false
				}
			}
		}
		if list, ok := obj["paths"].([]any); ok && paths != nil {
			for _, p := range list {
				if _, ok := p.(string); !ok || !paths[p] {
					g.clean[pointers[k]] = false
				}
			}
		}
		if b, ok := positiveLit(obj["budget_tokens"]); ok {
			total.Add(total, b)
		} else {
			summed = false
		}
	}
	if hasBudget && (budget == nil || !summed || total.Cmp(budget) > 0) {
		for _, ptr := range pointers {
			g.clean[ptr] = false
		}
	}
}

// widen makes a child hold more than a narrowed one: a tool, a path, or
// a budget its parent may lack.
func widen(r *rand.Rand, obj map[string]any) {
	switch r.IntN(3) {
	case 0:
		if tools, ok := obj["tools"].([]any); ok {
			obj["tools"] = append(slices.Clone(tools), pick(r, []any{"db.drop", "fs.write", "Agent", "sandbox:danger-full-access", "sandbox:workspace-write", "http.get"}))
		}
	case 1:
		if paths, ok := obj["paths"].([]any); ok {
			obj["paths"] = append(slices.Clone(paths), pick(r, []any{"/repo/workspace", "src", "docs/guide", "/repo/workspace/docs-old", "/srv/app"}))
		}
	default:
		obj["budget_tokens"] = pick(r, []any{lit("200000"), lit("40001"), lit("1001"), lit("2")})
	}
}

// block draws the plan's parent block, at the given depth (absent now and
// then when 0): its tools mostly those of the plan's children, its paths
// and budget now wide enough and now not.
func (g *treeDraw) block(top []any, depth int) map[string]any {
	r := g.r
	b := map[string]any{}
	if r.IntN(4) > 0 {
		b["role"] = pick(r, []any{"caller", "lead", "team/a~b"})
	}
	switch r.IntN(4) {
	case 0, 1:
		tools := []any{}
		for _, c := range top {
			obj, _ := c.(map[string]any)
			list, _ := obj["tools"].([]any)
			for _, t := range list {
				if _, ok := t.(string); ok && !slices.Contains(tools, t) {
					tools = append(tools, t)
				}
			}
		}
		if r.IntN(2) == 0 {
			tools = append(tools, candidateTools[r.IntN(len(candidateTools))])
		}
		b["tools"] = tools
	case 2:
		tools := []any{}
		for n := r.IntN(4); n > 0; n-- {
			tools = append(tools, candidateTools[r.IntN(len(candidateTools))])
		}
		b["tools"] = tools
	}
	switch r.IntN(6) {
	case 0, 1:
		b["paths"] = []any{"/repo/workspace"}
	case 2:
		b["paths"] = []any{"docs/", "/repo/workspace/src/main.go"}
	case 3:
		b["paths"] = []any{}
	case 4:
		b["paths"] = []any{"/repo/workspace/docs", "src/.env", "/srv"}
	case 5:
		b["paths"] = []any{"/srv/a", "/srv/b", "x", "y/z", "docs", "/repo/workspace/src/main.go", "src/.env", "/repo/workspace/docs/", "a.b", "/repo"}
	}
	switch r.IntN(4) {
	case 0:
	case 1:
		b["budget_tokens"] = pick(r, []any{lit("1"), lit("1000"), lit("40000")})
	default:
		total := new(big.Int)
		for _, c := range top {
			obj, _ := c.(map[string]any)
			if v, ok := positiveLit(obj["budget_tokens"]); ok {
				total.Add(total, v)
			}
		}
		if total.Sign() == 0 || r.IntN(2) == 0 { // the schema wants at least 1
			total.Add(total, big.NewInt(1))
		}
		if most := big.NewInt(9007199254740991); total.Cmp(most) > 0 { // and at most 2^53-1
			total = most
		}
		b["budget_tokens"] = lit(total.String())
	}
	if depth > 0 || r.IntN(2) == 0 {
		b["depth"] = lit(strconv.Itoa(depth))
	}
	return b
}

// stdChildren reads a generated plan back with encoding/json, so the
// reference sees the document as any JSON consumer would, not through the
// gate's own reader.
func stdChildren(doc map[string]any) []any {
	plan, _ := stdDoc(doc)["plan"].([]any)
	return plan
}

// stdDoc reads a whole generated document back the same way.
func stdDoc(doc map[string]any) map[string]any {
	var b bytes.Buffer
	writeJSON(&b, doc)
	dec := json.NewDecoder(&b)
	dec.UseNumber()
	var out map[string]any
	if err := dec.Decode(&out); err != nil {
		panic(err)
	}
	return out
}

// stdTree reads a generated plan back and flattens it as the reference
// does: every child of the tree, and where each sits (nil when flat).
func stdTree(doc map[string]any) ([]any, *refTree) { return refFlatten(stdDoc(doc)) }

// ---- The comparison ----

type comparer struct {
	t         *testing.T
	engine    *gate.Engine
	loader    *plan.Loader
	operators []plan.Policy // by operatorVariants; nil for none
}

func newComparer(t *testing.T) *comparer {
	c := &comparer{t: t, engine: builtin(t), loader: loader(t)}
	for _, v := range operatorVariants {
		var p plan.Policy
		if v.doc != "" {
			p = mustPolicy(t, v.doc)
		}
		c.operators = append(c.operators, p)
	}
	return c
}

// judge runs a plan document through the real loader and engine: what it
// finds of each child, and of the plan as a whole.
func (c *comparer) judge(pc planCase) ([][]finding, []finding, error) {
	var b bytes.Buffer
	writeJSON(&b, pc.doc)
	p, err := c.loader.Plan(context.Background(), "random.json", b.Bytes())
	if err != nil {
		return nil, nil, err
	}
	res, err := c.engine.Evaluate(context.Background(), c.operators[pc.operator], p, gate.ListAtMost(1<<30))
	if err != nil {
		return nil, nil, err
	}
	// The report lists a nested plan's children in document order; each
	// says its index among every child of the tree.
	out := make([][]finding, len(res.Children))
	for _, ch := range res.Children {
		i := ch.Index
		for _, v := range ch.Violations {
			out[i] = append(out[i], finding{v.Rule, v.Path, strings.Join(v.Policies, ",")})
		}
		sortFindings(out[i])
	}
	var whole []finding
	for _, v := range res.Violations {
		whole = append(whole, finding{v.Rule, v.Path, strings.Join(v.Policies, ",")})
	}
	sortFindings(whole)
	return out, whole, nil
}

// disagreement says how the gate and the reference differ on a plan, or "".
func (c *comparer) disagreement(pc planCase) string {
	got, gotPlan, err := c.judge(pc)
	if err != nil {
		return "gate error: " + err.Error()
	}
	children, tree := stdTree(pc.doc)
	if wantPlan := refPlanJudge(pc.policies, children, tree); !slices.Equal(gotPlan, wantPlan) {
		return fmt.Sprintf("the plan as a whole: gate %v, reference %v", gotPlan, wantPlan)
	}
	want := refJudgeTree(pc.policies, children, tree)
	if len(got) != len(want) {
		return fmt.Sprintf("the gate judged %d children, the reference %d", len(got), len(want))
	}
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

// shrink removes children, then keys (also inside a child's objects) and
// list elements, while the disagreement lasts, to print the smallest plan
// that shows it.
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
	// The clean notes of a nested plan are by pointer into its tree, which
	// a smaller plan changes: it keeps none.
	_, nested := pc.doc["parent"]
	for _, c := range children {
		if obj, ok := c.(map[string]any); ok {
			_, has := obj["children"]
			nested = nested || has
		}
	}
	with := func(i int, child any, drop bool) planCase {
		next := planCase{doc: map[string]any{}, operator: pc.operator, inline: pc.inline, policies: pc.policies}
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
			if !nested {
				clean = append(clean, pc.clean[j])
			}
		}
		next.doc["plan"], next.clean = cs, clean
		return next
	}
	if block, ok := pc.doc["parent"].(map[string]any); ok {
		next := with(-1, nil, false)
		delete(next.doc, "parent")
		out = append(out, next)
		for _, smaller := range smallerValues(block) {
			next := with(-1, nil, false)
			next.doc["parent"] = smaller
			out = append(out, next)
		}
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
		for _, smaller := range smallerValues(obj) {
			out = append(out, with(i, smaller, false))
		}
	}
	return out
}

// smallerValues returns an object without one of its keys, with one
// element fewer in one of its lists, or with one of its objects smaller.
func smallerValues(obj map[string]any) []any {
	var out []any
	replaced := func(k string, v any, drop bool) map[string]any {
		next := map[string]any{}
		for k2, v2 := range obj {
			if k2 != k {
				next[k2] = v2
			}
		}
		if !drop {
			next[k] = v
		}
		return next
	}
	for k, v := range obj {
		out = append(out, replaced(k, nil, true))
		switch v := v.(type) {
		case []any:
			if len(v) > 1 {
				for j := range v {
					out = append(out, replaced(k, append(append([]any{}, v[:j]...), v[j+1:]...), false))
				}
			}
			// the objects in a list, such as a child's children, smaller
			for j, x := range v {
				if obj, ok := x.(map[string]any); ok {
					for _, smaller := range smallerValues(obj) {
						out = append(out, replaced(k, append(append(append([]any{}, v[:j]...), smaller), v[j+1:]...), false))
					}
				}
			}
		case map[string]any:
			for _, smaller := range smallerValues(v) {
				out = append(out, replaced(k, smaller, false))
			}
		}
	}
	return out
}

// TestGateAgreesWithTheReferenceModel generates random plans, mixing clean
// and hostile tools, paths, budgets, models, agent blocks, shapes, plan
// policies and operator policies, and asserts for every child that the gate
// refuses exactly what the reference refuses, under the same rule and JSON
// pointer, and passes every child drawn only from clean values. It also
// asserts that every rule was seen refusing, and that clean children held
// each kind of value the newer checks judge. -ref.plans and -ref.seed run
// more or other plans.
func TestGateAgreesWithTheReferenceModel(t *testing.T) {
	c := newComparer(t)
	r := rand.New(rand.NewPCG(*refSeed, 0x5ba7))
	children, refused, clean := 0, 0, 0
	byRule := map[string]int{}
	cleanWith := map[string]int{"a model": 0, "an agent block": 0, "a spawn tool": 0, "a host write tool": 0, "a sandbox tool": 0, "a role profile": 0,
		"children of its own": 0, "a parent": 0, "a parent that is a child": 0, "a parent block": 0, "depth 3": 0}
	// Refusals by who refuses: each kind of source must be seen, alone and
	// with others, for every rule that names sources.
	bySource := map[string]int{}
	for n := 0; n < *refPlans; n++ {
		pc := randomPlan(r)
		if d := c.disagreement(pc); d != "" {
			small := c.shrink(pc)
			var b bytes.Buffer
			writeJSON(&b, small.doc)
			t.Fatalf("plan %d (seed %d, operator policy %d: %s): %s\nsmallest plan that shows it: %s\n%s", n, *refSeed, pc.operator, operatorVariants[pc.operator].doc, d, b.String(), c.disagreement(small))
		}
		plan, tree := stdTree(pc.doc)
		for _, f := range refPlanJudge(pc.policies, plan, tree) {
			byRule[f.rule]++
			bySource[f.rule+" by "+f.policies]++
		}
		for i, found := range refJudgeTree(pc.policies, plan, tree) {
			children++
			pointer := "/plan/" + strconv.Itoa(i)
			if tree != nil {
				pointer = tree.pointer[i]
			}
			if len(found) > 0 {
				refused++
			}
			for _, f := range found {
				byRule[f.rule]++
				if f.policies != "" {
					bySource[f.rule+" by "+sourceKinds(f.policies)]++
				}
				if f.rule == "schema" {
					// where the schema issues lie: the newer keys must be among them
					byRule["schema at "+strings.SplitN(strings.TrimPrefix(f.pointer, pointer)+"/", "/", 3)[1]]++
				}
			}
			if !pc.clean[i] {
				continue
			}
			clean++
			child := plan[i].(map[string]any)
			if tree != nil {
				for what, yes := range map[string]bool{
					"children of its own":      tree.parent[i] >= 0,
					"a parent":                 tree.spawns[i] > 0,
					"a parent that is a child": tree.spawns[i] > 0 && tree.parent[i] >= 0,
					"a parent block":           tree.parent[i] < 0 && tree.block != nil,
					"depth 3":                  tree.depth[i] == 3,
				} {
					if yes {
						cleanWith[what]++
					}
				}
			}
			if _, ok := operatorVariants[pc.operator].profiles[child["role"].(string)]; ok {
				cleanWith["a role profile"]++
			}
			for k, v := range map[string]string{"model": "a model", "agent": "an agent block"} {
				if _, ok := child[k]; ok {
					cleanWith[v]++
				}
			}
			for _, tool := range child["tools"].([]any) {
				switch name := tool.(string); {
				case slices.Contains(refDefaultSpawn, name) || name == "collaboration.delegate":
					cleanWith["a spawn tool"]++
				case strings.HasPrefix(name, "sandbox:"):
					cleanWith["a sandbox tool"]++
				}
				if refHostWrite[tool.(string)] && !strings.HasPrefix(tool.(string), "sandbox:") {
					cleanWith["a host write tool"]++
				}
			}
		}
	}
	t.Logf("compared %d plans, %d children (%d drawn only from clean values, %d refused)", *refPlans, children, clean, refused)
	t.Logf("findings by rule: %v; clean children with %v", byRule, cleanWith)
	t.Logf("refusals by source: %v", bySource)
	if clean == 0 || refused == 0 {
		t.Fatal("the generator produced no clean or no refused children")
	}
	for _, check := range c.engine.Checks() {
		if byRule[check.ID] == 0 {
			t.Errorf("no child or plan was refused under %s: the generator does not reach it", check.ID)
		}
	}
	for _, rule := range []string{"tools.allowlist", "tools.write", "tools.spawn", "paths.escape", "budget.cap", "model.allowlist"} {
		for _, kind := range []string{"operator", "plan", "profile", "operator,profile", "operator,plan"} {
			if bySource[rule+" by "+kind] == 0 {
				t.Errorf("no refusal under %s named exactly the %s sources: the generator does not reach it", rule, kind)
			}
		}
	}
	for _, key := range []string{"roles.unknown by operator", "plan.children by operator", "plan.children by plan", "plan.budget by operator", "plan.budget by plan", "plan.budget by operator,plan",
		"tree.depth by operator", "tree.depth by plan", "tree.depth by operator,plan", "tree.descendants by operator", "tree.descendants by plan", "tree.descendants by operator,plan"} {
		if bySource[key] == 0 {
			t.Errorf("no refusal %s: the generator does not reach it", key)
		}
	}
	for _, key := range []string{"model", "agent"} {
		if byRule["schema at "+key] == 0 {
			t.Errorf("no schema issue at /plan/N/%s survived: the generator does not reach it", key)
		}
	}
	for what, n := range cleanWith {
		if n == 0 {
			t.Errorf("no clean child held %s", what)
		}
	}
}

// sourceKinds reads the sources of a refusal as kinds: "operator", "plan",
// and "profile" for a role profile, joined in that order.
func sourceKinds(policies string) string {
	var kinds []string
	for _, kind := range []string{"operator", "plan", "profile"} {
		for _, source := range strings.Split(policies, ",") {
			if source == kind || (kind == "profile" && strings.HasPrefix(source, "operator/roles/")) {
				kinds = append(kinds, kind)
				break
			}
		}
	}
	return strings.Join(kinds, ",")
}

// bigPlan joins the children of random plans that share their policies
// into one plan of about n children, ids renumbered so none repeats: a
// plan the engine evaluates in several batches, on several cores.
func bigPlan(r *rand.Rand, n int) planCase {
	operator, inline := randomVariants(r)
	big := randomPlanWith(r, operator, inline)
	for {
		children := big.doc["plan"].([]any)
		if len(children) >= n {
			break
		}
		more := randomPlanWith(r, big.operator, big.inline)
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
	c := newComparer(t)
	r := rand.New(rand.NewPCG(*refSeed, 0xb16))
	for n := 0; n < 3; n++ {
		pc := bigPlan(r, 2500)
		if d := c.disagreement(pc); d != "" {
			t.Fatalf("large plan %d (seed %d, %d children, operator policy %d): %s", n, *refSeed, len(pc.doc["plan"].([]any)), pc.operator, d)
		}
	}
}

// TestReferenceModelSeesTheExamples keeps the reference honest on the
// cases the README and the rules' descriptions spell out.
func TestReferenceModelSeesTheExamples(t *testing.T) {
	op := []refPolicy{operatorRef()}
	judge := func(policies []refPolicy, child map[string]any) []finding {
		t.Helper()
		for k, v := range child {
			if s, ok := v.(lit); ok {
				child[k] = json.Number(s)
			}
		}
		return refJudge(policies, []any{child})[0]
	}
	expect := func(name string, got []finding, want ...finding) {
		t.Helper()
		for i := range want {
			want[i].pointer = "/plan/0" + want[i].pointer
		}
		sortFindings(want)
		if !slices.Equal(got, want) {
			t.Errorf("reference on %s:\n got %v\nwant %v", name, got, want)
		}
	}
	expect("the seed essay's home-cleaner",
		judge(op, map[string]any{"role": "home-cleaner", "tools": []any{"fs.write", "fs:*", "shell.run"}, "paths": []any{"~"}, "budget_tokens": lit("5000000")}),
		finding{"budget.cap", "/budget_tokens", "operator"}, finding{"paths.escape", "/paths/0", ""},
		finding{"tools.write", "/tools/0", "operator"}, finding{"tools.allowlist", "/tools/1", ""},
		finding{"tools.allowlist", "/tools/2", "operator"}, finding{"tools.write", "/tools/2", "operator"})
	expect("host tools under operatorPolicy",
		judge(op, map[string]any{"role": "r", "tools": []any{"Agent", "Bash(git diff:*)", "Bash", "sandbox:read-only"}, "paths": []any{}, "budget_tokens": lit("1")}),
		finding{"tools.allowlist", "/tools/0", "operator"}, finding{"tools.spawn", "/tools/0", "operator"}, finding{"tools.allowlist", "/tools/1", ""},
		finding{"tools.allowlist", "/tools/2", "operator"}, finding{"tools.write", "/tools/2", "operator"}, finding{"tools.allowlist", "/tools/3", "operator"})

	// A policy that allows sandboxes by a pattern allows every one but
	// danger-full-access; spawning needs allow_spawn in every policy.
	host := refPolicyOf("operator", map[string]any{"allowed_tools": []any{"sandbox:*", "Agent", "Task"}, "workspace_root": "/repo/workspace",
		"budget_cap_tokens": lit("1000"), "allow_write": true, "allow_spawn": true, "spawn_tools": []any{"Agent"}, "allowed_models": []any{"gpt-5*", "anthropic/**"}})
	plan := refPolicyOf("plan", map[string]any{"allowed_tools": []any{"**", "sandbox:danger-full-access"}, "workspace_root": "/repo/workspace", "budget_cap_tokens": lit("1000"), "allow_write": true})
	tools := []any{"sandbox:read-only", "sandbox:workspace-write", "sandbox:danger-full-access", "Agent", "Task"}
	expect("sandboxes and spawn tools, operator alone",
		judge([]refPolicy{host}, map[string]any{"role": "r", "tools": tools, "paths": []any{}, "budget_tokens": lit("1"), "model": "gpt-5.1"}),
		finding{"tools.allowlist", "/tools/2", "operator"})
	expect("sandboxes and spawn tools, with a plan policy that does not allow spawning",
		judge([]refPolicy{host, plan}, map[string]any{"role": "r", "tools": tools, "paths": []any{}, "budget_tokens": lit("1"), "model": "anthropic/claude/opus"}),
		finding{"tools.allowlist", "/tools/2", "operator"}, finding{"tools.spawn", "/tools/3", "plan"}, finding{"tools.spawn", "/tools/4", "plan"})
	for _, tc := range []struct {
		model any
		want  []finding
	}{
		{"gpt-5", nil},
		{"gpt-5/other", []finding{{"model.allowlist", "/model", "operator"}}},
		{"gpt 5", []finding{{"model.allowlist", "/model", "operator"}}}, // the check covers the schema issue
		{"gpt-5 ", []finding{{"schema", "/model", ""}}},                 // gpt-5* allows it; the schema does not
		{lit("5"), []finding{{"model.allowlist", "/model", "operator"}}},
		{absent, []finding{{"model.allowlist", "/model", "operator"}}},
	} {
		child := map[string]any{"role": "r", "tools": []any{"Task"}, "paths": []any{}, "budget_tokens": lit("1"), "model": tc.model}
		if tc.model == absent {
			delete(child, "model")
		}
		expect(fmt.Sprintf("model %v", tc.model), judge([]refPolicy{host}, child), append([]finding{}, tc.want...)...)
	}

	// Agent blocks.
	for _, tc := range []struct {
		agent any
		want  []finding
	}{
		{map[string]any{"host": "codex", "type": "w", "definition": "w.toml", "sandbox_mode": "read-only"}, nil},
		{map[string]any{"host": "codex", "type": "w"}, []finding{{"agent.definition", "", ""}}},
		{map[string]any{"host": "codex", "type": "w", "definition": lit("1"), "sandbox_mode": lit("2"), "extra": true}, []finding{{"agent.definition", "", ""}}},
		{map[string]any{"host": "codex", "type": "w", "definition": "w.toml", "sandbox_mode": "yolo"}, []finding{{"agent.sandbox", "/agent/sandbox_mode", ""}}},
		{map[string]any{"host": "codex", "type": "w", "definition": "w.toml", "sandbox_mode": lit("2")}, []finding{{"agent.sandbox", "", ""}}},
		{map[string]any{"host": "codex", "type": "w", "definition": "w.toml", "sandbox_mode": nil, "caller": true}, []finding{{"agent.sandbox", "", ""}}},
		{map[string]any{"host": "claude-code", "type": "r", "definition": "r.md", "sandbox_mode": lit("2"), "permission_mode": "auto", "inherits_tools": true},
			[]finding{{"schema", "/agent/sandbox_mode", ""}, {"agent.permissions", "/agent/permission_mode", ""}, {"agent.tools", "/tools", ""}}},
		{map[string]any{"type": "r", "definition": "r.md", "extra": true, "permission_mode": lit("1")},
			[]finding{{"schema", "/agent/host", ""}, {"schema", "/agent/extra", ""}, {"schema", "/agent/permission_mode", ""}}},
		{[]any{}, []finding{{"schema", "/agent", ""}}},
	} {
		child := map[string]any{"role": "r", "tools": []any{"fs.read"}, "paths": []any{}, "budget_tokens": lit("1"), "agent": tc.agent}
		var b bytes.Buffer
		writeJSON(&b, child)
		expect("agent "+b.String(), refJudge(op, stdChildren(map[string]any{"plan": []any{child}}))[0], tc.want...)
	}
	// A child without tools whose agent block says why is refused for that
	// reason, not as tools.missing.
	for _, tc := range []struct {
		tools, agent any
		want         []finding
	}{
		{absent, map[string]any{"host": "codex", "type": "w", "definition": nil}, []finding{{"agent.definition", "", ""}}},
		{absent, map[string]any{"host": "claude-code", "type": "r", "definition": nil}, []finding{{"agent.definition", "", ""}}},
		// A definition left out says as much as null. (The gate once added
		// tools.missing here: "not is_string(child.agent.definition)" is
		// undefined, not true, when the key is missing.)
		{absent, map[string]any{"host": "claude-code", "type": "r"}, []finding{{"agent.definition", "", ""}}},
		{[]any{}, map[string]any{"host": "claude-code", "type": "w", "definition": nil}, []finding{{"agent.definition", "", ""}, {"tools.missing", "/tools", ""}}},
		{[]any{}, map[string]any{"host": "codex", "type": "w", "definition": nil}, []finding{{"agent.definition", "", ""}}},
		{absent, map[string]any{"host": "claude-code", "type": "r", "definition": "r.md", "inherits_tools": true}, []finding{{"agent.tools", "/tools", ""}}},
		{"fs.read", map[string]any{"host": "claude-code", "type": "r", "definition": "r.md", "inherits_tools": true}, []finding{{"agent.tools", "/tools", ""}}},
		{absent, map[string]any{"host": "claude-code", "type": "r", "definition": "r.md", "inherits_tools": false}, []finding{{"tools.missing", "/tools", ""}}},
		{absent, "reviewer", []finding{{"tools.missing", "/tools", ""}, {"schema", "/agent", ""}}},
		{[]any{}, map[string]any{"host": "codex", "type": "w", "definition": "w.toml"}, []finding{{"agent.sandbox", "", ""}}},
		{[]any{}, map[string]any{"host": "codex", "type": "w", "definition": "w.toml", "sandbox_mode": "yolo"}, []finding{{"agent.sandbox", "/agent/sandbox_mode", ""}, {"schema", "/tools", ""}}},
		{"fs.read", map[string]any{"host": "codex", "type": "w", "definition": "w.toml", "sandbox_mode": "yolo"}, []finding{{"agent.sandbox", "/agent/sandbox_mode", ""}, {"schema", "/tools", ""}}},
		{[]any{}, map[string]any{"host": "codex", "type": "w", "definition": "w.toml", "sandbox_mode": "read-only"}, []finding{{"tools.missing", "/tools", ""}}},
	} {
		child := map[string]any{"role": "r", "tools": tc.tools, "paths": []any{}, "budget_tokens": lit("1"), "agent": tc.agent}
		if tc.tools == absent {
			delete(child, "tools")
		}
		var b bytes.Buffer
		writeJSON(&b, child)
		expect("no tools "+b.String(), refJudge(op, stdChildren(map[string]any{"plan": []any{child}}))[0], tc.want...)
	}

	// Nested plans: the examples of issue 12 under a policy that lets
	// everything here through, so that only the tree rules refuse.
	wide := []refPolicy{refPolicyOf("operator", operatorVariants[1].policy())}
	node := func(tools, paths []any, budget string, kids ...any) map[string]any {
		c := map[string]any{"role": "r", "tools": tools, "paths": paths, "budget_tokens": lit(budget), "model": "sonnet"}
		if kids != nil {
			c["children"] = kids
		}
		return c
	}
	tree := func(name string, policies []refPolicy, doc map[string]any, want ...finding) {
		t.Helper()
		children, tr := stdTree(doc)
		var got []finding
		for _, found := range refJudgeTree(policies, children, tr) {
			got = append(got, found...)
		}
		sortFindings(got)
		sortFindings(want)
		if !slices.Equal(got, want) {
			t.Errorf("reference on %s:\n got %v\nwant %v", name, got, want)
		}
	}
	rw, rwa := []any{"fs.read", "fs.write"}, []any{"fs.read", "fs.write", "Agent"}
	tree("a three-level plan that is attenuated", wide, map[string]any{"plan": []any{
		node(rwa, []any{"src", "docs"}, "150000",
			node(rwa, []any{"src/api"}, "80000", node([]any{"fs.read"}, []any{"/repo/workspace/src/api/handlers"}, "20000")),
			node([]any{"fs.read"}, []any{"docs/guide"}, "30000")),
	}})
	tree("a three-level plan that widens below the top", wide, map[string]any{"plan": []any{
		node(rwa, []any{"src", "docs"}, "150000",
			node(rwa, []any{"src/api"}, "80000", node([]any{"fs.read", "http.get"}, []any{"../etc"}, "20000")),
			node([]any{"fs.read", "http.get"}, []any{"docs/guide"}, "30000")),
	}},
		finding{"tree.tools", "/plan/0/children/0/children/0/tools/1", ""},
		finding{"paths.escape", "/plan/0/children/0/children/0/paths/0", ""},
		finding{"tree.paths", "/plan/0/children/0/children/0/paths/0", ""},
		finding{"tree.tools", "/plan/0/children/1/tools/1", ""})
	tree("an overspent parent and a child with children but no spawn tool", wide, map[string]any{"plan": []any{
		node(rwa, []any{"src", "docs"}, "150000",
			node(rw, []any{"src/api"}, "130000", node([]any{"fs.read"}, []any{"src/api/handlers"}, "20000")),
			node([]any{"fs.read"}, []any{"docs/guide"}, "30000")),
	}},
		finding{"tree.budget", "/plan/0/children/0/budget_tokens", ""},
		finding{"tree.spawn", "/plan/0/children/0/children", ""},
		finding{"tree.budget", "/plan/0/children/1/budget_tokens", ""})
	limited := refPolicyOf("plan", map[string]any{"allowed_tools": []any{"**", "sandbox:danger-full-access"}, "workspace_root": "/repo/workspace",
		"budget_cap_tokens": lit("200000"), "allow_write": true, "allow_spawn": true, "max_depth": lit("2"), "max_descendants": lit("2")})
	tree("max_depth and max_descendants of a plan policy", append(slices.Clone(wide), limited), map[string]any{"plan": []any{
		node(rwa, []any{"src", "docs"}, "150000",
			node(rwa, []any{"src/api"}, "80000", node([]any{"fs.read"}, []any{"src/api/handlers"}, "20000", "not a child")),
			node([]any{"fs.read"}, []any{"docs/guide"}, "30000")),
	}},
		// three descendants below the lead, two below the worker; the
		// helper at depth 3 has a child that is not one, which only the
		// schema judges
		finding{"tree.descendants", "/plan/0/children", "plan"},
		finding{"tree.depth", "/plan/0/children/0/children/0", "plan"},
		finding{"tree.spawn", "/plan/0/children/0/children/0/children", ""},
		finding{"schema", "/plan/0/children/0/children/0/children/0", ""})
	tree("the parent block of the hook's caller", wide, map[string]any{
		"parent": map[string]any{"role": "worker", "tools": []any{"fs.read", "sandbox:workspace-write"}, "paths": []any{"docs"}, "budget_tokens": lit("1000"), "depth": lit("1")},
		"plan": []any{
			node([]any{"fs.read", "fs.write", "sandbox:read-only"}, []any{"docs/a", "src"}, "900"),
			node([]any{"sandbox:danger-full-access"}, []any{}, "200"),
		}},
		finding{"tree.tools", "/plan/0/tools/1", ""}, finding{"tree.paths", "/plan/0/paths/1", ""}, finding{"tree.budget", "/plan/0/budget_tokens", ""},
		finding{"tree.tools", "/plan/1/tools/0", ""}, finding{"tree.budget", "/plan/1/budget_tokens", ""})

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
		{"sandbox:*", "sandbox:danger-full-access", true}, {"collaboration.*", "collaboration.spawn_agent", true},
	} {
		if got := refGlob(tc.pattern, tc.name); got != tc.match {
			t.Errorf("refGlob(%q, %q) = %v", tc.pattern, tc.name, got)
		}
	}
	for _, tc := range []struct {
		pattern, name string
		match         bool
	}{
		{"gpt-5*", "gpt-5.1-codex", true}, {"gpt-5*", "gpt-5/other", false}, {"openai/**", "openai/a/b", true},
		{"o?-mini", "o3-mini", true}, {"o?-mini", "o/-mini", false}, {"anthropic/*/*", "anthropic/claude/sonnet", true},
		{"claude-*", "claude-sonnet\n", true}, {"**", "a/b c", true}, {"sonnet", "sonnet ", false},
	} {
		if got := refModelGlob(tc.pattern, tc.name); got != tc.match {
			t.Errorf("refModelGlob(%q, %q) = %v", tc.pattern, tc.name, got)
		}
	}
}

// ---- Trees drawn by narrowing ----

// tnode is a child of a tree drawn by narrowing, or the plan's parent
// block: what it holds, in the order it lists them, and where it sits.
type tnode struct {
	tools     []string
	paths     []string // names under /repo/workspace: "" is the root, "src/api" below it
	budget    int64
	kids      []*tnode
	hasTools  bool // for the parent block, which may leave each out
	hasPaths  bool
	hasBudget bool
	// parent is the node's parent (the block for the plan's own children,
	// when there is one); depth and pointer where it sits.
	parent  *tnode
	depth   int
	pointer string
}

// narrowTree is a plan whose every child holds no more than its parent.
type narrowTree struct {
	top      []*tnode
	block    *tnode // nil when the plan has no parent block
	maxDepth int    // the lowest max_depth of the policies
	operator int    // index in narrowOperators
	plan     string // the plan's own policy, or ""
	spawn    string // the spawn tool every parent holds
}

var (
	// Tools a narrowed child may hold, beside the tree's spawn tool.
	narrowTools = []string{"fs.read", "fs.write", "http.get", "Bash", "Edit", "mcp__github__get_issue", "sandbox:read-only", "sandbox:workspace-write", "sandbox:danger-full-access"}
	// Segments of the paths below the workspace root.
	narrowSegments = []string{"src", "docs", "api", "db", "guide", "a.b", "x_y", "v2"}
	// The operator policies of the tree properties: every tool, path and
	// budget of a narrowed tree passes them, and they bound depth at the
	// default 3, 2 or 4.
	narrowOperators = []string{
		`{"allowed_tools": ["**", "sandbox:danger-full-access"], "workspace_root": "/repo/workspace", "budget_cap_tokens": 9007199254740991, "allow_write": true, "allow_spawn": true}`,
		`{"allowed_tools": ["**", "sandbox:danger-full-access"], "workspace_root": "/repo/workspace", "budget_cap_tokens": 9007199254740991, "allow_write": true, "allow_spawn": true, "max_depth": 2}`,
		`{"allowed_tools": ["**", "sandbox:danger-full-access"], "workspace_root": "/repo/workspace", "budget_cap_tokens": 9007199254740991, "allow_write": true, "allow_spawn": true, "max_depth": 4, "max_descendants": 1000}`,
	}
	narrowOperatorDepths = []int{3, 2, 4}
)

// narrowSandboxes lists, by hand, each sandbox and those narrower than it.
var narrowSandboxes = map[string][]string{
	"sandbox:read-only":          {"sandbox:read-only"},
	"sandbox:workspace-write":    {"sandbox:read-only", "sandbox:workspace-write"},
	"sandbox:danger-full-access": {"sandbox:read-only", "sandbox:workspace-write", "sandbox:danger-full-access"},
}

// holds tells whether a node's tools hold a tool: the tool itself, or a
// narrower sandbox.
func (n *tnode) holds(tool string) bool {
	for _, t := range n.tools {
		if t == tool || slices.Contains(narrowSandboxes[t], tool) {
			return true
		}
	}
	return false
}

// covers tells whether one of a node's paths holds a path name: the path
// itself or one below it.
func (n *tnode) covers(name string) bool {
	for _, p := range n.paths {
		if p == "" || name == p || strings.HasPrefix(name, p+"/") {
			return true
		}
	}
	return false
}

// randomNarrowTree draws a tree of at most about 24 children: the plan's
// own children, a parent block now and then that holds more than them
// all, and below them children that each hold a part of their parent (its
// tools, a narrower sandbox, paths inside its paths, budgets that
// together leave some of its budget), every parent holding the spawn
// tool, none deeper than max_depth.
func randomNarrowTree(r *rand.Rand) *narrowTree {
	nt := &narrowTree{operator: r.IntN(len(narrowOperators)), spawn: []string{"Agent", "spawn_agent"}[r.IntN(2)]}
	nt.maxDepth = narrowOperatorDepths[nt.operator]
	if r.IntN(3) == 0 {
		d := 1 + r.IntN(3)
		nt.plan = strings.Replace(narrowOperators[0], "}", fmt.Sprintf(`, "max_depth": %d}`, d), 1)
		nt.maxDepth = min(nt.maxDepth, d)
	}
	base := 0
	room := 24
	if r.IntN(3) == 0 {
		base = r.IntN(nt.maxDepth)
		nt.block = &tnode{depth: base, hasTools: r.IntN(4) > 0, hasPaths: r.IntN(4) > 0, hasBudget: r.IntN(4) > 0}
	}
	for n := 1 + r.IntN(3); n > 0; n-- {
		top := &tnode{parent: nt.block, depth: base + 1, budget: 1 + r.Int64N(200000)}
		top.tools = []string{nt.spawn}
		for _, t := range narrowTools {
			if r.IntN(3) == 0 {
				top.tools = append(top.tools, t)
			}
		}
		want := 1 + r.IntN(3)
		if r.IntN(4) == 0 { // more than a few: the check looks each place up
			want = 9 + r.IntN(3)
		}
		for len(top.paths) < want {
			levels := 1 + r.IntN(2)
			if want < 9 && r.IntN(10) == 0 {
				levels = 0 // the workspace root: every other path is inside
			}
			top.paths = appendNew(top.paths, randomName(r, "", levels))
		}
		if r.IntN(6) == 0 {
			top.paths = nil
		}
		nt.top = append(nt.top, top)
		room--
	}
	if b := nt.block; b != nil {
		// The block holds everything its children hold, and more now and then.
		var total int64
		for _, top := range nt.top {
			for _, t := range top.tools {
				b.tools = appendNew(b.tools, t)
			}
			for _, p := range top.paths {
				b.paths = appendNew(b.paths, p)
			}
			total += top.budget
		}
		if r.IntN(2) == 0 {
			b.tools = appendNew(b.tools, narrowTools[r.IntN(len(narrowTools))])
		}
		switch r.IntN(4) {
		case 0:
			b.paths = []string{""}
		case 1: // more than a few: the check looks each place up
			for k := range 9 {
				b.paths = appendNew(b.paths, "zz"+strconv.Itoa(k))
			}
		}
		b.budget = total + 1 + r.Int64N(1000)
	}
	for _, top := range nt.top {
		nt.grow(r, top, &room)
	}
	nt.place()
	return nt
}

// grow gives a node children, each holding part of what it holds, and
// them children in turn, while depth and room last.
func (nt *narrowTree) grow(r *rand.Rand, n *tnode, room *int) {
	if n.depth >= nt.maxDepth || *room <= 0 || r.IntN(3) == 0 || n.budget < 2 {
		if r.IntN(2) == 0 && len(n.tools) > 1 { // a leaf need not hold the spawn tool
			n.tools = slices.DeleteFunc(n.tools, func(t string) bool { return t == nt.spawn })
		}
		return
	}
	k := min(1+r.IntN(3), *room, int(n.budget-1))
	*room -= k
	// budgets of k children that together leave at least one token of n's
	total := int64(k) + r.Int64N(n.budget-int64(k))
	cuts := []int64{0, total}
	for len(cuts) < k+1 {
		c := 1 + r.Int64N(total-1+1)
		if c < total && !slices.Contains(cuts, c) {
			cuts = append(cuts, c)
		}
		if total == int64(k) { // every child gets 1
			cuts = cuts[:0]
			for c := int64(0); c <= total; c++ {
				cuts = append(cuts, c)
			}
		}
	}
	slices.Sort(cuts)
	for j := range k {
		kid := &tnode{parent: n, depth: n.depth + 1, budget: cuts[j+1] - cuts[j]}
		kid.tools = []string{nt.spawn}
		for _, t := range n.tools {
			switch {
			case t == nt.spawn || r.IntN(2) == 0:
			case narrowSandboxes[t] != nil:
				kid.tools = appendNew(kid.tools, narrowSandboxes[t][r.IntN(len(narrowSandboxes[t]))])
			default:
				kid.tools = appendNew(kid.tools, t)
			}
		}
		for _, p := range n.paths {
			if r.IntN(3) > 0 {
				kid.paths = appendNew(kid.paths, randomName(r, p, r.IntN(3)))
			}
		}
		n.kids = append(n.kids, kid)
		nt.grow(r, kid, room)
	}
}

// randomName is a path name below (or at) base, levels segments deeper.
func randomName(r *rand.Rand, base string, levels int) string {
	for ; levels > 0; levels-- {
		seg := narrowSegments[r.IntN(len(narrowSegments))]
		if base == "" {
			base = seg
		} else {
			base += "/" + seg
		}
	}
	return base
}

func appendNew(list []string, s string) []string {
	if slices.Contains(list, s) {
		return list
	}
	return append(list, s)
}

// place gives every node its pointer.
func (nt *narrowTree) place() {
	var walk func(n *tnode, pointer string)
	walk = func(n *tnode, pointer string) {
		n.pointer = pointer
		for j, kid := range n.kids {
			walk(kid, pointer+"/children/"+strconv.Itoa(j))
		}
	}
	for i, top := range nt.top {
		walk(top, "/plan/"+strconv.Itoa(i))
	}
}

// nodes lists every child of the tree, in pre-order.
func (nt *narrowTree) nodes() []*tnode {
	var out []*tnode
	var walk func(n *tnode)
	walk = func(n *tnode) {
		out = append(out, n)
		for _, kid := range n.kids {
			walk(kid)
		}
	}
	for _, top := range nt.top {
		walk(top)
	}
	return out
}

// written is a path as a document writes it: absolute or relative, with a
// slash after now and then, the same way every time for one node and path
// (by a hash of them, so a widened tree writes them as the narrowed one).
func written(n *tnode, name string) string {
	h := 0
	for _, c := range n.pointer + "\x00" + name {
		h = h*31 + int(c)
	}
	h &= 0xffff
	switch {
	case name == "":
		return []string{"/repo/workspace", "/repo/workspace/"}[h%2]
	case strings.HasPrefix(name, "/"): // a path outside the workspace
		return name
	case h%3 == 0:
		return "/repo/workspace/" + name
	case h%5 == 0:
		return name + "/"
	}
	return name
}

// doc writes the tree as a plan document.
func (nt *narrowTree) doc() map[string]any {
	var child func(n *tnode) map[string]any
	child = func(n *tnode) map[string]any {
		tools, paths := []any{}, []any{}
		for _, t := range n.tools {
			tools = append(tools, t)
		}
		for _, p := range n.paths {
			paths = append(paths, written(n, p))
		}
		c := map[string]any{"role": "r" + strconv.Itoa(n.depth), "tools": tools, "paths": paths, "budget_tokens": lit(strconv.FormatInt(n.budget, 10))}
		if len(n.kids) > 0 {
			kids := []any{}
			for _, kid := range n.kids {
				kids = append(kids, child(kid))
			}
			c["children"] = kids
		}
		return c
	}
	doc := map[string]any{}
	var top []any
	for _, n := range nt.top {
		top = append(top, child(n))
	}
	doc["plan"] = top
	if b := nt.block; b != nil {
		block := map[string]any{"role": "caller", "depth": lit(strconv.Itoa(b.depth))}
		if b.hasTools {
			block["tools"] = []any{}
			for _, t := range b.tools {
				block["tools"] = append(block["tools"].([]any), t)
			}
		}
		if b.hasPaths {
			block["paths"] = []any{}
			for _, p := range b.paths {
				block["paths"] = append(block["paths"].([]any), written(b, p))
			}
		}
		if b.hasBudget {
			block["budget_tokens"] = lit(strconv.FormatInt(b.budget, 10))
		}
		doc["parent"] = block
	}
	if nt.plan != "" {
		var pol map[string]any
		dec := json.NewDecoder(strings.NewReader(nt.plan))
		dec.UseNumber()
		if err := dec.Decode(&pol); err != nil {
			panic(err)
		}
		doc["policy"] = pol
	}
	return doc
}

// widen makes one random child of the tree hold more than its parent in
// one random way, and returns the tree.* findings the gate must then give
// (rule and pointer), and what it did.
func (nt *narrowTree) widen(r *rand.Rand) (map[finding]bool, string) {
	nodes := nt.nodes()
	var underMany []*tnode // children of a parent of many paths, which the check looks up another way
	for _, n := range nodes {
		if n.parent != nil && len(n.parent.paths) > 8 && (n.parent != nt.block || n.parent.hasPaths) {
			underMany = append(underMany, n)
		}
	}
	for {
		n := nodes[r.IntN(len(nodes))]
		kind := r.IntN(5)
		if kind == 1 && len(underMany) > 0 && r.IntN(2) == 0 {
			n = underMany[r.IntN(len(underMany))]
		}
		p := n.parent
		switch kind {
		case 0: // a tool the parent lacks
			if p == nil || (p == nt.block && !p.hasTools) {
				continue
			}
			var lacks []string
			for _, t := range append([]string{"db.drop", "Agent", "spawn_agent"}, narrowTools...) {
				if !p.holds(t) && !slices.Contains(n.tools, t) {
					lacks = append(lacks, t)
				}
			}
			t := lacks[r.IntN(len(lacks))]
			n.tools = append(n.tools, t)
			return map[finding]bool{{"tree.tools", n.pointer + "/tools/" + strconv.Itoa(len(n.tools)-1), ""}: true}, "tool " + t + " at " + n.pointer
		case 1: // a path outside the parent's
			if p == nil || (p == nt.block && !p.hasPaths) {
				continue
			}
			var outside, siblings []string
			for _, q := range []string{"", "other", "src/x", "docs/guide"} {
				if !p.covers(q) {
					outside = append(outside, q)
				}
			}
			for _, q := range p.paths {
				if q != "" && !p.covers(q+"-old") {
					siblings = append(siblings, q+"-old") // only shares a prefix with one of the parent's
				}
			}
			outside = append(outside, "/srv/outside")
			if len(siblings) > 0 && r.IntN(2) == 0 {
				outside = siblings
			}
			q := outside[r.IntN(len(outside))]
			n.paths = append(n.paths, q)
			return map[finding]bool{{"tree.paths", n.pointer + "/paths/" + strconv.Itoa(len(n.paths)-1), ""}: true}, "path " + written(n, q) + " at " + n.pointer
		case 2: // a budget that overflows the parent's
			if p == nil || (p == nt.block && !p.hasBudget) {
				continue
			}
			siblings := nt.top
			if p != nt.block {
				siblings = p.kids
			}
			var sum int64
			for _, s := range siblings {
				sum += s.budget
			}
			n.budget += p.budget - sum + 1 + r.Int64N(3)
			want := map[finding]bool{}
			for _, s := range siblings {
				want[finding{"tree.budget", s.pointer + "/budget_tokens", ""}] = true
			}
			return want, fmt.Sprintf("budget %d at %s", n.budget, n.pointer)
		case 3: // children without a spawn tool
			if len(n.kids) > 0 || n.depth >= nt.maxDepth {
				continue
			}
			n.tools = slices.DeleteFunc(n.tools, func(t string) bool { return t == "Agent" || t == "spawn_agent" })
			kid := &tnode{parent: n, depth: n.depth + 1, budget: 1, paths: slices.Clone(n.paths), pointer: n.pointer + "/children/0"}
			if len(n.tools) > 0 {
				kid.tools = n.tools[:1:1]
			}
			n.kids = append(n.kids, kid)
			return map[finding]bool{{"tree.spawn", n.pointer + "/children", ""}: true}, "children without a spawn tool at " + n.pointer
		default: // one level too deep, below a child holding the spawn tool
			if !slices.Contains(n.tools, nt.spawn) {
				// a leaf that dropped it may take it back: its parent holds it
				n.tools = append(n.tools, nt.spawn)
			}
			at := n
			for at.depth <= nt.maxDepth {
				kid := &tnode{parent: at, depth: at.depth + 1, budget: 1, tools: []string{nt.spawn}, paths: slices.Clone(n.paths),
					pointer: at.pointer + "/children/" + strconv.Itoa(len(at.kids))}
				at.kids = append(at.kids, kid)
				at = kid
			}
			return map[finding]bool{{"tree.depth", at.pointer, ""}: true}, "a child at depth " + strconv.Itoa(at.depth) + " at " + at.pointer
		}
	}
}

// treeJudge judges a tree with an engine: the findings of every child,
// and of the plan as a whole.
type treeJudge struct {
	t         *testing.T
	engine    *gate.Engine
	loader    *plan.Loader
	operators []plan.Policy
}

func newTreeJudge(t *testing.T, engine *gate.Engine) *treeJudge {
	j := &treeJudge{t: t, engine: engine, loader: loader(t)}
	for _, doc := range narrowOperators {
		j.operators = append(j.operators, mustPolicy(t, doc))
	}
	return j
}

func (j *treeJudge) findings(nt *narrowTree) ([]finding, error) {
	var b bytes.Buffer
	writeJSON(&b, nt.doc())
	p, err := j.loader.Plan(context.Background(), "tree.json", b.Bytes())
	if err != nil {
		return nil, err
	}
	res, err := j.engine.Evaluate(context.Background(), j.operators[nt.operator], p, gate.ListAtMost(1<<30))
	if err != nil {
		return nil, err
	}
	var out []finding
	for _, ch := range res.Children {
		for _, v := range ch.Violations {
			out = append(out, finding{v.Rule, v.Path, strings.Join(v.Policies, ",")})
		}
	}
	for _, v := range res.Violations {
		out = append(out, finding{v.Rule, v.Path, strings.Join(v.Policies, ",")})
	}
	sortFindings(out)
	return out, nil
}

// narrowedPasses says why a tree drawn by narrowing is refused, or "".
func (j *treeJudge) narrowedPasses(nt *narrowTree) string {
	got, err := j.findings(nt)
	switch {
	case err != nil:
		return "gate error: " + err.Error()
	case len(got) > 0:
		return fmt.Sprintf("refused: %v", got)
	}
	return ""
}

// widenedRefused widens one child of a tree drawn by narrowing and says
// how the gate's tree.* findings differ from those the widening must
// give, or "".
func (j *treeJudge) widenedRefused(r *rand.Rand, nt *narrowTree) string {
	want, what := nt.widen(r)
	got, err := j.findings(nt)
	if err != nil {
		return what + ": gate error: " + err.Error()
	}
	tree := map[finding]bool{}
	for _, f := range got {
		if strings.HasPrefix(f.rule, "tree.") {
			tree[finding{f.rule, f.pointer, ""}] = true
		}
	}
	if !maps.Equal(tree, want) {
		return fmt.Sprintf("%s: tree findings %v, want %v", what, slices.SortedFunc(maps.Keys(tree), compareFindings), slices.SortedFunc(maps.Keys(want), compareFindings))
	}
	return ""
}

func compareFindings(a, b finding) int {
	return strings.Compare(a.pointer+"\x00"+a.rule, b.pointer+"\x00"+b.rule)
}

var treeTrees = flag.Int("ref.trees", 200, "random trees each tree property draws")

// checkTrees draws trees and judges each by the property, and says what the
// first one that breaks it shows, or "".
func checkTrees(j *treeJudge, seed uint64, n int, property func(*rand.Rand, *narrowTree) string) string {
	r := rand.New(rand.NewPCG(seed, 0x7ee))
	for k := range n {
		nt := randomNarrowTree(r)
		if d := property(r, nt); d != "" {
			var b bytes.Buffer
			writeJSON(&b, nt.doc())
			return fmt.Sprintf("tree %d (seed %d, operator policy %s): %s\n%s", k, seed, narrowOperators[nt.operator], d, b.String())
		}
	}
	return ""
}

// A tree drawn only by narrowing (each child's tools among its parent's,
// its paths inside, budgets that fit, the spawn tool on every parent,
// depth within max_depth, a parent block holding more than the plan's own
// children) passes: no tree.* rule, and nothing else, refuses any of it.
func TestNarrowedTreesPass(t *testing.T) {
	j := newTreeJudge(t, builtin(t))
	if d := checkTrees(j, *refSeed, *treeTrees, func(_ *rand.Rand, nt *narrowTree) string { return j.narrowedPasses(nt) }); d != "" {
		t.Fatal(d)
	}
}

// The same tree with one random child widened in one random way (a tool
// its parent lacks, a path outside its parent's, a budget that overflows
// its parent's, children without a spawn tool, one level too deep) is
// refused at that child's pointer under the matching rule, and for the
// budget at each of its siblings' too, and nowhere else by any tree.*
// rule.
func TestWidenedDescendantIsRefusedThere(t *testing.T) {
	j := newTreeJudge(t, builtin(t))
	if d := checkTrees(j, *refSeed, *treeTrees, j.widenedRefused); d != "" {
		t.Fatal(d)
	}
}

// Each tree property fails when the rule it stands on is broken: a
// property that cannot fail proves nothing. Each mutant is one rule's
// module with a line changed.
func TestTreePropertiesCatchBrokenRules(t *testing.T) {
	mods := builtinModules(t)
	for _, m := range []struct {
		name, module, from, to string
		narrowed               bool // the narrowed property must fail; else the widened one
	}{
		{"the default depth is 2", "tree_depth.rego", "default_max_depth := 3", "default_max_depth := 2", true},
		{"a narrower sandbox is not held", "tree_tools.rego", "rank <= w}", "rank > w}", true},
		{"a path must be its parent's", "tree_paths.rego", "startswith(name, prefix)", "name == prefix", true},
		{"a path must be below one of many", "tree_paths.rego", "numbers.range(1, count(parts) - 1)", "numbers.range(1, count(parts) - 2)", true},
		{"a relative path is read against /", "tree_paths.rego", "name := paths_escape.named(path)", `name := concat("", ["/", trim_suffix(path, "/"), "/"])`, true},
		{"any tool is held", "tree_tools.rego", "not tool in held\n", "false\n", false},
		{"a path with the parent's prefix is inside", "tree_paths.rego", "startswith(name, prefix)", "startswith(name, trim_suffix(prefix, \"/\"))", false},
		{"a path under many with the prefix is inside", "tree_paths.rego", "concat(\"\", [concat(\"/\", array.slice(parts, 0, k)), \"/\"]) in prefixes", "startswith(concat(\"/\", parts), trim_suffix(prefixes[_], \"/\"))", false},
		{"the sum goes unchecked", "tree_budget.rego", "parent.children_budget_tokens > parent.budget_tokens", "parent.children_budget_tokens > parent.budget_tokens * 2", false},
		{"one child needs no spawn tool", "tree_spawn.rego", "n > 0\n", "n > 1\n", false},
		{"depth counts from 0", "tree_depth.rego", "deeper(depth, limit) if depth > limit", "deeper(depth, limit) if depth > limit + 1", false},
	} {
		t.Run(m.name, func(t *testing.T) {
			mutant := slices.Clone(mods)
			found := false
			for k := range mutant {
				if mutant[k].Name == m.module && strings.Contains(mutant[k].Source, m.from) {
					mutant[k].Source, found = strings.Replace(mutant[k].Source, m.from, m.to, 1), true
				}
			}
			if !found {
				t.Fatalf("%s holds no %q: the mutant is out of date", m.module, m.from)
			}
			e, err := gate.New(mutant)
			if err != nil {
				t.Fatal(err)
			}
			j := newTreeJudge(t, e)
			property := j.widenedRefused
			if m.narrowed {
				property = func(_ *rand.Rand, nt *narrowTree) string { return j.narrowedPasses(nt) }
			}
			if checkTrees(j, *refSeed, *treeTrees, property) == "" {
				t.Errorf("the property held for %d trees with %s broken", *treeTrees, m.module)
			}
		})
	}
}
