package engine_test

// An independent reference model of the checks and the structural rules,
// written from the README and the rules' descriptions (not from the Rego),
// and a property test that compares it with the gate, child by child, on
// many random plans. (The brief-hygiene checks follow their Rego where
// their descriptions leave a choice open: which parts of a string are
// hashed, and when two refusals are one.)

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
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
	"unicode/utf8"

	"github.com/spawngate/spawngate/internal/engine"
	"github.com/spawngate/spawngate/internal/longtests"
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
	workflows  []string // allowed_workflows
	// The operator policy's role profiles, by role, and whether it refuses
	// a role without one; the plan-wide limits (nil: none).
	profiles              map[string]refProfile
	refuseUnknown         bool
	maxChildren, maxTotal *big.Rat
	// How deep a plan tree may go (3 when the policy does not say), and
	// how many descendants one child may have (nil: any number).
	maxDepth, maxDescendants *big.Rat
	// The brief-hygiene settings as the policy writes them (nil when it
	// does not set the key), and what it says of a brief that cannot be
	// read ("" when it says nothing).
	retask, secrets, tasks map[string]any
	briefUnreadable        string
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
	refChildKey = map[string]bool{"role": true, "tools": true, "paths": true, "budget_tokens": true, "id": true, "brief": true, "model": true, "agent": true, "metadata": true, "children": true,
		"task_id": true, "bindings": true, "env": true, "brief_unreadable": true}
	refAgentKey = map[string]bool{"host": true, "type": true, "definition": true, "problem": true, "inherits_tools": true, "permission_mode": true, "sandbox_mode": true, "caller": true,
		"launch": true, "skill": true, "workflow": true, "isolation": true, "observes": true}

	// Tools that write whatever a policy's write_tools say: Claude Code's
	// editing, shell and worktree tools and the Codex sandboxes that write.
	refHostWrite = map[string]bool{
		"Bash": true, "PowerShell": true, "Edit": true, "Write": true, "MultiEdit": true, "NotebookEdit": true,
		"EnterWorktree": true, "ExitWorktree": true, "sandbox:workspace-write": true, "sandbox:danger-full-access": true,
	}
	// Tools only an exact allowed_tools entry allows, never a pattern.
	refExactOnly      = map[string]bool{"sandbox:danger-full-access": true}
	refDefaultWrite   = []string{"fs.write", "fs.delete", "shell.run", "wallet.transfer"}
	refDefaultSpawn   = []string{"Agent", "Task", "Skill", "Workflow", "spawn_agent", "collaboration.spawn_agent", "collaborationspawn_agent"}
	refApprovingModes = map[string]bool{"bypassPermissions": true, "auto": true}
	refSandboxModes   = map[string]bool{"read-only": true, "workspace-write": true, "danger-full-access": true}
	refAgentHosts     = map[string]bool{"claude-code": true, "codex": true, "copilot": true, "gemini": true}
	// refSandboxed tells a sandboxed agent: one whose block has the key
	// sandbox_mode (null when its definition sets none), whatever its host.
	refSandboxed        = func(agent map[string]any) bool { _, ok := agent["sandbox_mode"]; return ok }
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
// place above it: docs/checks.md's "a schema violation on a field
// that a check already reports is not repeated".
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
	hygiene, _ := refHygiene(policies, children, tree)
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
		// what the brief-hygiene checks read: a task_id of one task, bindings
		// and env of strings, a reason the brief cannot be read
		if v, present := obj["task_id"]; present {
			if s, ok := v.(string); !ok || utf8.RuneCountInString(s) > 256 || !refTaskID.MatchString(s) {
				bad("/task_id")
			}
		}
		if v, present := obj["bindings"]; present {
			if tools, ok := v.(map[string]any); !ok {
				bad("/bindings")
			} else {
				for tool, args := range tools {
					at := "/bindings/" + refPointerEsc.Replace(tool)
					if args, ok := args.(map[string]any); !ok {
						bad(at)
					} else {
						for arg, x := range args {
							if !isString(x) {
								bad(at + "/" + refPointerEsc.Replace(arg))
							}
						}
					}
				}
			}
		}
		if v, present := obj["env"]; present {
			if env, ok := v.(map[string]any); !ok {
				bad("/env")
			} else {
				for name, x := range env {
					if !isString(x) {
						bad("/env/" + refPointerEsc.Replace(name))
					}
				}
			}
		}
		if v, present := obj["brief_unreadable"]; present {
			if s, ok := v.(string); !ok || s == "" {
				bad("/brief_unreadable")
			}
		}
		for _, f := range hygiene[i] {
			checks = append(checks, f.finding)
		}

		// tools: a child with no tools gets tools.missing, unless its agent
		// block says why: it inherits every tool (agent.tools), it has no
		// definition and no tools key at all (agent.definition), or it is a
		// sandboxed agent (the block has sandbox_mode: Codex's), whose
		// tools are its sandbox, without a sandbox (agent.sandbox, or
		// agent.definition when it has no definition).
		agent, isAgent := obj["agent"].(map[string]any)
		_, hasTools := obj["tools"]
		sandbox, _ := agent["sandbox_mode"].(string)
		explained := isAgent && (agent["inherits_tools"] == true ||
			(!isString(agent["definition"]) && !hasTools) ||
			(refSandboxed(agent) && !refSandboxModes[sandbox]))
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
					if len(outside) == 0 && strings.TrimSuffix(abs, "/") == "" {
						add("paths.escape", field) // the filesystem root, under a root of /
						break
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
				for _, k := range []string{"problem", "permission_mode", "caller", "skill", "isolation", "observes"} {
					if v, present := agent[k]; present && !isString(v) {
						bad("/agent/" + k)
					}
				}
				if v, present := agent["workflow"]; present && v != nil && !isString(v) {
					bad("/agent/workflow")
				}
				if v, present := agent["launch"]; present && v != "skill" && v != "workflow" && v != "observer" {
					bad("/agent/launch")
				}
				// agent.launch: a named workflow every policy must list; a
				// child that runs remotely.
				if name, ok := agent["workflow"].(string); ok && agent["launch"] == "workflow" {
					var refusing []string
					for _, p := range policies {
						if !slices.Contains(p.workflows, name) {
							refusing = append(refusing, p.source)
						}
					}
					addIf("agent.launch", "/agent/workflow", refusing)
				}
				if agent["isolation"] == "remote" {
					add("agent.launch", "/agent/isolation")
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
				// A sandboxed agent (one whose block has sandbox_mode, which
				// the Codex adapter always gives) needs a sandbox. One that is
				// set but unknown is refused where it is written; without one
				// nothing about the child's powers is known, and the refusal is
				// of the child.
				if refSandboxed(agent) && defined && !refSandboxModes[sandbox] {
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
	_, whole := refHygiene(policies, children, tree)
	for _, f := range whole {
		out = append(out, f.finding)
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

// ---- The brief-hygiene checks ----

// The brief-hygiene checks (brief.retask, brief.secrets, task.ownership)
// judge the plan tree as a whole, each only while some policy sets its key
// (brief_retask, brief_secrets, task_ownership), and each refusal names the
// policies whose settings find it. They read what grants nothing (the
// brief, env, metadata): while one applies, the gate judges every child on
// its own.

var (
	// The settings brief_retask and brief_secrets leave out, as the policy
	// schema documents them.
	refRetaskDefaults = map[string]any{
		"required":   true,
		"pattern":    `RETASK CHANNEL\b[^\n]*?\btoken (R-[A-Za-z0-9_-]+)`,
		"grants":     `(?i)\b(re-?task\w*|revis(e|ed|es|ion|ions)|expand(ed|s)? (the )?scope)\b`,
		"completion": `(?i)\b(done when|complete when|completion condition)\b`,
	}
	refRetaskPatterns  = []string{"pattern", "grants", "completion"}
	refSecretsDefaults = map[string]any{"parent_sha256": []any{}, "published_sha256": []any{}, "token_pattern": `[A-Za-z0-9_.~+/=-]{16,}`}
	// What a token-shaped run may hold beside the token: a NAME= before it
	// (and a full stop after it); and the characters a string is cut at, so
	// that a token in a URL path is found.
	refAssignment = regexp.MustCompile(`^-*[A-Za-z_][A-Za-z0-9_-]*=`)
	refJoiners    = regexp.MustCompile(`[=/.~+]`)
	refTaskID     = regexp.MustCompile(`^[A-Za-z0-9_.:-]+$`)
	refPointerEsc = strings.NewReplacer("~", "~0", "/", "~1")
	refRegexps    = map[string]*regexp.Regexp{} // by pattern; nil when it is not valid RE2
	refHashes     = map[string]string{}         // SHA-256 by string: the model hashes the same strings many times
)

// refRegexp compiles a setting that must be an RE2 pattern, or says it is
// not one.
func refRegexp(v any) (*regexp.Regexp, bool) {
	s, ok := v.(string)
	if !ok {
		return nil, false
	}
	re, seen := refRegexps[s]
	if !seen {
		re, _ = regexp.Compile(s)
		refRegexps[s] = re
	}
	return re, re != nil
}

func refSHA256(s string) string {
	h, ok := refHashes[s]
	if !ok {
		sum := sha256.Sum256([]byte(s))
		h = hex.EncodeToString(sum[:])
		refHashes[s] = h
	}
	return h
}

// hygieneFinding is a refusal by a brief-hygiene check, its pointer
// relative to the child (or /plan for the plan as a whole), with tags
// saying what was refused and how it was found (for the test's tally of
// what the generator reaches).
type hygieneFinding struct {
	finding
	tags []string
}

// refHygiene judges the brief-hygiene checks over every child of the plan
// tree (children and tree as refJudgeTree takes them): what each child is
// refused for, and what the plan is.
func refHygiene(policies []refPolicy, children []any, tree *refTree) ([][]hygieneFinding, []hygieneFinding) {
	// refJudgeTree, refPlanJudge and the test's tally each ask about the
	// same plan, which is never changed after it is read: the last answer
	// is kept.
	if len(policies) > 0 && len(children) > 0 && lastHygiene.policies == &policies[0] && lastHygiene.children == &children[0] &&
		lastHygiene.n == len(children) && lastHygiene.tree == tree {
		return lastHygiene.out, lastHygiene.whole
	}
	h := &refHygieneJudge{objs: make([]map[string]any, len(children)), tree: tree, out: make([][]hygieneFinding, len(children)), seen: map[string]bool{}}
	for i, c := range children {
		h.objs[i], _ = c.(map[string]any)
	}
	h.retask(policies)
	h.secrets(policies)
	h.tasks(policies)
	if len(policies) > 0 && len(children) > 0 {
		lastHygiene.policies, lastHygiene.children, lastHygiene.n, lastHygiene.tree = &policies[0], &children[0], len(children), tree
		lastHygiene.out, lastHygiene.whole = h.out, h.whole
	}
	return h.out, h.whole
}

// lastHygiene is refHygiene's last answer, and what it was asked.
var lastHygiene struct {
	policies *refPolicy
	children *any
	n        int
	tree     *refTree
	out      [][]hygieneFinding
	whole    []hygieneFinding
}

type refHygieneJudge struct {
	objs  []map[string]any // each child that is an object; nil for one that is not
	tree  *refTree         // nil for a flat plan
	out   [][]hygieneFinding
	whole []hygieneFinding
	seen  map[string]bool
}

// add refuses child i. Two refusals of one child under one rule, at one
// pointer and by the same policies are one when the check words them
// alike, as the Rego's deny set keeps one: a message shows a nonce by its
// first characters only, and a hash by its first eight digits, so two
// nonces of a brief may be refused in one message. words is what tells
// refusals apart; tags say what was refused, for the test's tally.
func (h *refHygieneJudge) add(i int, rule, field string, sources []string, words string, tags ...string) {
	f := finding{rule, field, refusedBy(sources...)}
	key := strings.Join([]string{strconv.Itoa(i), rule, field, f.policies, words}, "\x00")
	if !h.seen[key] {
		h.seen[key] = true
		h.out[i] = append(h.out[i], hygieneFinding{f, tags})
	}
}

func (h *refHygieneJudge) pointer(i int) string {
	if h.tree != nil {
		return h.tree.pointer[i]
	}
	return "/plan/" + strconv.Itoa(i)
}

// unreadable refuses, by the given sources, every child whose brief cannot
// be read (it has brief_unreadable, whatever its value).
func (h *refHygieneJudge) unreadable(rule string, sources []string) {
	if len(sources) == 0 {
		return
	}
	for i, obj := range h.objs {
		if _, ok := obj["brief_unreadable"]; ok {
			h.add(i, rule, "/brief_unreadable", sources, "unreadable", "an unreadable brief")
		}
	}
}

// retask judges brief.retask. Each policy's settings are the defaults with
// what it sets in their place; policies whose settings are equal judge as
// one, and each refusal names them all. A pattern that is not RE2 refuses
// the plan, once per policy and setting, and those settings judge no brief;
// a brief that cannot be read is refused by every policy that sets
// brief_retask without brief_unreadable: allow (its patterns valid or not).
//
// A readable brief's blocks are the pattern's matches, each with the
// nonce its first group holds ("" when it holds none). A brief without a
// block is refused when grants match it, and else, when the settings
// require a block, as missing it (a child with no string brief too). A
// brief with blocks is refused when completion does not match it, and for
// each nonce: empty; held by another readable child of the tree; found by
// the same pattern in the brief of the child's parent (a child of the plan,
// its brief as written, readable or not); equal to the parent block's
// inbound_nonce or hashing to its inbound_nonce_sha256; hashing to one of
// its session_nonces_sha256. Every refusal is at /brief.
func (h *refHygieneJudge) retask(policies []refPolicy) {
	type config struct {
		settings map[string]any
		sources  []string
	}
	var configs []*config
	byKey := map[string]*config{}
	var refusing []string // the policies that refuse a brief they cannot read
	for _, p := range policies {
		if p.retask == nil {
			continue
		}
		s := maps.Clone(refRetaskDefaults)
		maps.Copy(s, p.retask)
		if p.briefUnreadable != "allow" {
			refusing = append(refusing, p.source)
		}
		for _, k := range refRetaskPatterns {
			if _, ok := refRegexp(s[k]); !ok {
				h.whole = append(h.whole, hygieneFinding{finding{"brief.retask", "/plan", p.source}, []string{"a pattern that is not RE2"}})
			}
		}
		key, err := json.Marshal(s)
		if err != nil {
			panic(err)
		}
		c := byKey[string(key)]
		if c == nil {
			c = &config{settings: s}
			byKey[string(key)] = c
			configs = append(configs, c)
		}
		c.sources = append(c.sources, p.source)
	}
	h.unreadable("brief.retask", refusing)
	for _, c := range configs {
		pattern, ok1 := refRegexp(c.settings["pattern"])
		grants, ok2 := refRegexp(c.settings["grants"])
		completion, ok3 := refRegexp(c.settings["completion"])
		if !ok1 || !ok2 || !ok3 {
			continue
		}
		required := c.settings["required"] != false
		nonces := make([][]string, len(h.objs))
		blocked := make([]bool, len(h.objs))
		holders := map[string][]int{} // in index order
		for i, obj := range h.objs {
			brief, ok := obj["brief"].(string)
			if _, unreadable := obj["brief_unreadable"]; !ok || unreadable {
				continue
			}
			nonces[i] = refNonces(pattern, brief)
			blocked[i] = len(nonces[i]) > 0
			for _, n := range nonces[i] {
				if n != "" {
					holders[n] = append(holders[n], i)
				}
			}
		}
		for i, obj := range h.objs {
			if _, unreadable := obj["brief_unreadable"]; obj == nil || unreadable {
				continue
			}
			add := func(words string, tags ...string) { h.add(i, "brief.retask", "/brief", c.sources, words, tags...) }
			brief, isString := obj["brief"].(string)
			if !blocked[i] {
				granted := isString && grants.MatchString(brief)
				switch {
				case granted:
					add("grants", "a brief that grants revisions without a block")
				case required && isString:
					add("missing", "a brief without a block")
				case required:
					add("no brief", "a child without a brief")
				}
				continue
			}
			if !completion.MatchString(brief) {
				add("completion", "a block without a completion condition")
			}
			for _, n := range nonces[i] {
				if n == "" {
					add("empty", "a block without a nonce")
					continue
				}
				shown := refShownNonce(n)
				if list := holders[n]; len(list) > 1 {
					tags := []string{"a nonce another child holds"}
					if len(list) > 4 {
						tags = append(tags, "a nonce more than four children hold")
					}
					add("shared "+shown+" "+h.others(i, list), tags...)
				}
				if h.parentHolds(i, pattern, n) {
					add("parents "+shown, "the parent's own nonce")
				}
				if h.inbound(n) {
					add("inbound "+shown, "the plan's parent's inbound nonce")
				}
				if h.handedBefore(n) {
					add("session "+shown, "a nonce the session handed out before")
				}
			}
		}
	}
}

// refNonces is the nonce of each block a pattern finds in a brief, each
// once: what its first group holds, or "".
func refNonces(pattern *regexp.Regexp, brief string) []string {
	var nonces []string
	for _, m := range pattern.FindAllStringSubmatch(brief, -1) {
		n := ""
		if len(m) > 1 {
			n = m[1]
		}
		if !slices.Contains(nonces, n) {
			nonces = append(nonces, n)
		}
	}
	return nonces
}

// refShownNonce is what a message shows of a nonce: at most its first four
// characters, never more than half of it.
func refShownNonce(n string) string {
	r := []rune(n)
	return string(r[:min(4, len(r)/2)])
}

// others names the other children that hold what child i holds, as a
// message does: the first of them by pointer (up to three), and how many
// more.
func (h *refHygieneJudge) others(i int, holders []int) string {
	var names []string
	for _, j := range holders[:min(4, len(holders))] {
		if j != i {
			names = append(names, h.pointer(j))
		}
	}
	switch n := len(holders) - 1; n {
	case 1:
		return names[0]
	case 2:
		return names[0] + " and " + names[1]
	case 3:
		return names[0] + ", " + names[1] + " and " + names[2]
	default:
		return fmt.Sprintf("%s, %s, %s and %d more", names[0], names[1], names[2], n-3)
	}
}

// parentHolds tells whether the brief of child i's parent, a child of the
// plan, carries the nonce in a block.
func (h *refHygieneJudge) parentHolds(i int, pattern *regexp.Regexp, nonce string) bool {
	if h.tree == nil || h.tree.parent[i] < 0 {
		return false
	}
	brief, ok := h.objs[h.tree.parent[i]]["brief"].(string)
	return ok && slices.Contains(refNonces(pattern, brief), nonce)
}

// inbound and handedBefore tell whether the plan's parent block names the
// nonce as the one it was handed, or as one the session handed out.
func (h *refHygieneJudge) inbound(nonce string) bool {
	if h.tree == nil {
		return false
	}
	return h.tree.block["inbound_nonce"] == nonce || h.tree.block["inbound_nonce_sha256"] == refSHA256(nonce)
}

func (h *refHygieneJudge) handedBefore(nonce string) bool {
	if h.tree == nil {
		return false
	}
	list, _ := h.tree.block["session_nonces_sha256"].([]any)
	return slices.Contains(list, any(refSHA256(nonce)))
}

// secrets judges brief.secrets. Each policy's settings are the defaults
// with what it sets in their place. A token_pattern that is not RE2
// refuses the plan and judges nothing; a brief that cannot be read is
// refused by every policy that sets brief_secrets without
// brief_unreadable: allow (its pattern valid or not).
//
// What a child is handed as text: its brief (unless it has
// brief_unreadable), each env value that is a string, and every string in
// its metadata, each key too. Of each, every policy's token_pattern finds
// the candidates: the string, and trimmed of white space; each
// token-shaped run in it, as it is and bare (without a NAME= before it and
// full stops after it); and, when it holds one of = / . ~ +, each run in
// it with those cut to spaces. A candidate whose SHA-256 a policy names
// (of those with the same token_pattern) is refused where the string is,
// once for parent_sha256 and once for published_sha256, by the policies
// that name it there.
func (h *refHygieneJudge) secrets(policies []refPolicy) {
	type named struct {
		source string
		hashes [2]map[string]bool // parent_sha256, published_sha256
	}
	byPattern := map[string][]named{}
	var patterns []string
	var refusing []string
	listed := map[string]bool{}
	for _, p := range policies {
		if p.secrets == nil {
			continue
		}
		s := maps.Clone(refSecretsDefaults)
		maps.Copy(s, p.secrets)
		if p.briefUnreadable != "allow" {
			refusing = append(refusing, p.source)
		}
		if _, ok := refRegexp(s["token_pattern"]); !ok {
			h.whole = append(h.whole, hygieneFinding{finding{"brief.secrets", "/plan", p.source}, []string{"a pattern that is not RE2"}})
			continue
		}
		n := named{source: p.source}
		for k, key := range []string{"parent_sha256", "published_sha256"} {
			n.hashes[k] = map[string]bool{}
			list, _ := s[key].([]any)
			for _, x := range list {
				if hash, ok := x.(string); ok {
					n.hashes[k][hash], listed[hash] = true, true
				}
			}
		}
		pattern := s["token_pattern"].(string)
		if byPattern[pattern] == nil {
			patterns = append(patterns, pattern)
		}
		byPattern[pattern] = append(byPattern[pattern], n)
	}
	h.unreadable("brief.secrets", refusing)
	if len(listed) == 0 {
		return
	}
	for i, obj := range h.objs {
		if obj == nil {
			continue
		}
		for _, s := range refHanded(obj) {
			for _, pattern := range patterns {
				re, _ := refRegexp(pattern)
				how := map[string][]string{} // each named hash found, by how
				refCandidates(re, s.text, func(way, candidate string) {
					if hash := refSHA256(candidate); listed[hash] && !slices.Contains(how[hash], way) {
						how[hash] = append(how[hash], way)
					}
				})
				for hash, ways := range how {
					for k, kind := range []string{"parent", "published"} {
						var sources []string
						for _, n := range byPattern[pattern] {
							if n.hashes[k][hash] {
								sources = append(sources, n.source)
							}
						}
						if len(sources) > 0 {
							tags := []string{"a token in " + s.where, "a token " + kind + "_sha256 names"}
							for _, way := range ways {
								tags = append(tags, "a token found "+way)
							}
							h.add(i, "brief.secrets", s.field, sources, s.what+"\x00"+kind+"\x00"+hash[:8], tags...)
						}
					}
				}
			}
		}
	}
}

// handedText is a string a child is handed: where it is, how a message
// names that (the metadata key or string, or the env variable), and the
// string.
type handedText struct{ field, what, where, text string }

func refHanded(obj map[string]any) []handedText {
	var out []handedText
	_, unreadable := obj["brief_unreadable"]
	if brief, ok := obj["brief"].(string); ok && !unreadable {
		out = append(out, handedText{"/brief", "the brief", "the brief", brief})
	}
	if env, ok := obj["env"].(map[string]any); ok {
		for name, v := range env {
			if s, ok := v.(string); ok {
				out = append(out, handedText{"/env/" + refPointerEsc.Replace(name), "env variable " + name, "an env value", s})
			}
		}
	}
	md, ok := obj["metadata"]
	if !ok {
		return out
	}
	var walk func(v any, at string)
	walk = func(v any, at string) {
		switch v := v.(type) {
		case string:
			out = append(out, handedText{"/metadata" + at, "a metadata string", "a metadata string", v})
		case map[string]any:
			for k, x := range v {
				next := at + "/" + refPointerEsc.Replace(k)
				out = append(out, handedText{"/metadata" + next, "a metadata key", "a metadata key", k})
				walk(x, next)
			}
		case []any:
			for j, x := range v {
				walk(x, at+"/"+strconv.Itoa(j))
			}
		}
	}
	walk(md, "")
	return out
}

// refCandidates gives each candidate a token_pattern finds in a string,
// with how it was found.
func refCandidates(re *regexp.Regexp, text string, each func(how, candidate string)) {
	each("as the whole string", text)
	if trimmed := strings.TrimSpace(text); trimmed != text {
		each("as the whole string trimmed", trimmed)
	}
	for _, run := range re.FindAllString(text, -1) {
		each("as a run", run)
		each("as a run bare", strings.TrimRight(refAssignment.ReplaceAllString(run, ""), "."))
	}
	if refJoiners.MatchString(text) {
		for _, run := range re.FindAllString(refJoiners.ReplaceAllString(text, " "), -1) {
			each("as a run cut at the joiners", run)
		}
	}
}

// tasks judges task.ownership. Every policy that sets task_ownership
// refuses each child whose task_id (a string) another child of the tree
// has too, at /task_id. A tool in task_ownership.tools is bound to the
// child's task by the argument listed with it: a child that holds one (the
// j-th of its tools, a string) is refused, by the policies that scope the
// tool by that argument, at /tools/j when it has no task_id that is a
// string or when its bindings give the tool no such argument (anything
// under the key counts), and at /bindings/<tool>/<argument> when they bind
// it to anything but its task_id.
func (h *refHygieneJudge) tasks(policies []refPolicy) {
	type scope struct{ tool, arg string }
	var owning []string
	scoping := map[scope][]string{}
	args := map[string][]string{}
	for _, p := range policies {
		if p.tasks == nil {
			continue
		}
		owning = append(owning, p.source)
		tools, _ := p.tasks["tools"].(map[string]any)
		for tool, v := range tools {
			if arg, ok := v.(string); ok {
				k := scope{tool, arg}
				if scoping[k] == nil {
					args[tool] = append(args[tool], arg)
				}
				scoping[k] = append(scoping[k], p.source)
			}
		}
	}
	if len(owning) == 0 {
		return
	}
	owners := map[string][]int{}
	for i, obj := range h.objs {
		if id, ok := obj["task_id"].(string); ok {
			owners[id] = append(owners[id], i)
		}
	}
	for _, list := range owners {
		if len(list) > 1 {
			for _, i := range list {
				h.add(i, "task.ownership", "/task_id", owning, "shared", "a task another child owns")
			}
		}
	}
	for i, obj := range h.objs {
		tools, _ := obj["tools"].([]any)
		id, hasTask := obj["task_id"].(string)
		for j, t := range tools {
			tool, ok := t.(string)
			if !ok {
				continue
			}
			for _, arg := range args[tool] {
				sources := scoping[scope{tool, arg}]
				bound, isBound := any(nil), false
				if b, ok := obj["bindings"].(map[string]any); ok {
					if m, ok := b[tool].(map[string]any); ok {
						bound, isBound = m[arg]
					}
				}
				switch {
				case !hasTask:
					h.add(i, "task.ownership", "/tools/"+strconv.Itoa(j), sources, "no task", "a task tool on a child without a task")
				case !isBound:
					h.add(i, "task.ownership", "/tools/"+strconv.Itoa(j), sources, "unbound", "a task tool without a binding")
				case bound != id:
					h.add(i, "task.ownership", "/bindings/"+refPointerEsc.Replace(tool)+"/"+refPointerEsc.Replace(arg), sources, "bound", "a task tool bound to another task")
				}
			}
		}
	}
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
	defaultSpawns = []string{"Agent", "Task", "Skill", "Workflow", "spawn_agent", "collaboration.spawn_agent", "collaborationspawn_agent"}

	hostileTools = []any{
		"fs.write", "fs.delete", "shell.run", "wallet.transfer", "fs:*", "mcp__github__get_*", "**", "*",
		"fs.read ", " fs.read", "", "FS.READ", "fs..read", "fs.read.deep", "mcp__github__get_issue",
		"mcp__github__create_issue", "db.drop", "http.post", "fs.rea?", "fs/read", "fs.réad", "fs.read\n",
		"fs.write:", "fs.", "fs.read-", "_", "a",
		lit("5"), nil, true, []any{"fs.read"}, map[string]any{"name": "fs.read"},
		// what host adapters bring: spawn tools, host write tools, sandboxes,
		// permission rules, and near misses of each
		"Agent", "Task", "Skill", "Workflow", "spawn_agent", "collaboration.spawn_agent", "collaborationspawn_agent", "collaboration.delegate", "agent", "Agent ",
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
		{"host": "claude-code", "type": "Explore", "definition": ".claude/agents/explore.md", "permission_mode": "acceptEdits"},
		{"host": "claude-code", "type": "general-purpose", "definition": ".claude/agents/gp.md", "permission_mode": "dontAsk", "problem": ""},
		{"host": "claude-code", "type": "fixer", "definition": ".claude/agents/fixer.md", "launch": "skill", "skill": "fixit", "isolation": "worktree"},
		{"host": "codex", "type": "worker", "definition": ".codex/agents/worker.toml", "sandbox_mode": "read-only"},
		{"host": "codex", "type": "worker", "definition": ".codex/agents/worker.toml", "sandbox_mode": "workspace-write", "permission_mode": "default"},
		{"host": "codex", "type": "explorer", "definition": ".codex/agents/explorer.toml", "sandbox_mode": "danger-full-access", "caller": "worker"},
	}
	// What a hostile agent block may set a key to (absent drops it).
	hostileAgentValues = map[string][]any{
		"host":            {absent, "cursor", "Codex", "claude", "", nil, lit("1"), []any{"codex"}},
		"type":            {absent, lit("5"), nil, "", true},
		"definition":      {absent, nil, "", lit("3"), true, []any{".claude/agents/x.md"}, map[string]any{}},
		"problem":         {absent, "", "agent type \"general-purpose\" is built in and no agents folder defines it", lit("1"), nil},
		"inherits_tools":  {absent, true, true, false, "true", lit("1"), nil},
		"permission_mode": {absent, "bypassPermissions", "auto", "Auto", "bypasspermissions", "default", lit("1"), nil},
		"sandbox_mode":    {absent, nil, "yolo", "Read-Only", "read-only ", "read-only", "danger-full-access", lit("1"), true},
		"caller":          {absent, "lead", lit("2"), nil},
		"launch":          {absent, absent, absent, "workflow", "workflow", "skill", "observer", "Workflow", lit("1")},
		"observes":        {absent, absent, "reader", lit("1")},
		"workflow":        {absent, absent, "nightly", "weekly", nil, "", lit("3")},
		"skill":           {absent, absent, "fixit", lit("1")},
		"isolation":       {absent, absent, "worktree", "remote", "Remote", lit("1")},
		"tools":           {[]any{"fs.read"}},
		"model":           {"sonnet"},
	}
	hostileAgentKeys = []string{"host", "type", "definition", "problem", "inherits_tools", "permission_mode", "sandbox_mode", "caller", "launch", "workflow", "skill", "isolation", "observes", "tools", "model"}
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
// operatorPolicy, the seventh none at all (the plan's policy alone), and
// those after it turn the brief-hygiene checks on.
var operatorVariants = []*policyVariant{
	{doc: operatorPolicy, clean: true,
		allows: []string{"fs.read", "fs.write", "http.get", "mcp__github__get_issue"}, writes: defaultWrites, spawns: defaultSpawns},
	{doc: `{"allowed_tools": ["fs.read", "fs.write", "http.get", "mcp__github__get_*", "Read", "Grep", "Glob", "Bash", "Edit", "Write", "Agent", "Task", "spawn_agent", "collaboration.*", "sandbox:*", "sandbox:danger-full-access"],
		"workspace_root": "/repo/workspace", "budget_cap_tokens": 200000, "allow_write": true, "allow_spawn": true,
		"allowed_models": ["claude-sonnet-*", "claude-opus-4", "gpt-5*", "openai/**", "o?-mini", "sonnet"], "allowed_workflows": ["nightly", "weekly"]}`, clean: true,
		allows: candidateTools, writes: defaultWrites, spawns: defaultSpawns,
		restricts: true, models: []string{"claude-sonnet-4-5", "claude-opus-4", "gpt-5", "gpt-5.1-codex", "openai/gpt-5", "o3-mini", "sonnet"}},
	{doc: `{"allowed_tools": ["fs.read", "http.get", "Read", "Grep", "Agent", "collaboration.*", "sandbox:*", "Bash"],
		"workspace_root": "/repo/workspace", "budget_cap_tokens": 150000, "allow_spawn": true, "spawn_tools": ["Agent", "collaboration.*"],
		"allowed_models": ["sonnet", "anthropic/*/*", "claude-*"], "max_depth": 2, "allowed_workflows": ["nightly"]}`, clean: true,
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
	// Every brief-hygiene check, at its defaults but for the tokens
	// brief_secrets names; an unreadable brief refused.
	{doc: `{"allowed_tools": ["fs.read", "fs.write", "http.get", "mcp__github__get_*", "tasks.*"], "workspace_root": "/repo/workspace", "budget_cap_tokens": 200000,
		"brief_retask": {}, "brief_secrets": {"parent_sha256": ` + hashList(tokParent, tokShort) + `, "published_sha256": ` + hashList(tokPeer) + `},
		"task_ownership": {"tools": {"tasks.complete": "task_id", "tasks.heartbeat": "task_id"}}}`, clean: true,
		allows: append([]string{"fs.read", "fs.write", "http.get", "mcp__github__get_issue"}, taskTools...), writes: defaultWrites, spawns: defaultSpawns},
	// A block only where a brief grants revisions, an unreadable brief
	// allowed, tokens of another shape, and one owner per task without
	// task-scoped tools.
	{doc: `{"allowed_tools": ["fs.read", "fs.write", "http.get", "Read", "Grep", "Bash", "Agent", "tasks.complete", "tasks.heartbeat", "tasks.list"], "workspace_root": "/repo/workspace",
		"budget_cap_tokens": 200000, "allow_write": true, "allow_spawn": true, "max_depth": 4,
		"brief_retask": {"required": false}, "brief_unreadable": "allow",
		"brief_secrets": {"published_sha256": ` + hashList(tokParent, tokSlashed) + `, "token_pattern": "[A-Za-z0-9_-]{12,}"}, "task_ownership": {}}`, clean: true,
		allows: []string{"fs.read", "fs.write", "http.get", "Read", "Grep", "Bash", "Agent", "tasks.complete", "tasks.heartbeat", "tasks.list"}, writes: defaultWrites, spawns: defaultSpawns},
	// Task ownership alone: no check then reads a brief, so identical
	// children are judged as one group, and a task they share counts each.
	// (tasks.block is bound by an argument a pointer escapes.)
	{doc: `{"allowed_tools": ["fs.read", "http.get", "Read", "Agent", "tasks.*"], "workspace_root": "/repo/workspace", "budget_cap_tokens": 100000, "allow_spawn": true,
		"max_children": 6, "max_descendants": 4, "brief_unreadable": "refuse", "task_ownership": {"tools": {"tasks.complete": "task_id", "tasks.block": "task/id"}}}`, clean: true,
		allows: append([]string{"fs.read", "http.get", "Read", "Agent"}, taskTools...), writes: defaultWrites, spawns: defaultSpawns},
}

// operatorDraws weighs the operator variants before the brief-hygiene
// ones (which randomVariants draws now and then): operatorPolicy most often.
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
		"allow_write": true, "allow_spawn": true, "spawn_tools": ["**"], "write_tools": ["fs.*"], "allowed_workflows": ["nightly"]}`, clean: true,
		allows: candidateTools, writes: []string{"fs.read", "fs.write"}, spawns: candidateTools},
	{doc: `{"allowed_tools": ["fs.read", "http.get", "Read", "Bash", "Task", "spawn_agent", "sandbox:*"], "workspace_root": "/repo/workspace", "budget_cap_tokens": 200000,
		"allow_write": true, "allow_spawn": false, "spawn_tools": ["spawn_agent"]}`, clean: true,
		allows: []string{"fs.read", "http.get", "Read", "Bash", "Task", "spawn_agent", "sandbox:read-only", "sandbox:workspace-write"}, writes: defaultWrites, spawns: []string{"spawn_agent"}},
	{doc: `{"allowed_tools": ["fs.read", "http.get"], "workspace_root": "/repo/workspace", "budget_cap_tokens": 200000, "allowed_models": [], "max_depth": 2}`, clean: true,
		allows: []string{"fs.read", "http.get"}, writes: defaultWrites, spawns: defaultSpawns, restricts: true, models: []string{}},
	{doc: `{"allowed_tools": ["fs.read", "http.get", "Read", "Edit"], "workspace_root": "/repo/workspace", "budget_cap_tokens": 200000,
		"allow_write": true, "allowed_models": ["**"]}`, clean: true,
		allows: []string{"fs.read", "http.get", "Read", "Edit"}, writes: defaultWrites, spawns: defaultSpawns, restricts: true, models: candidateModels},
	// From here on (hygieneInlines), the brief-hygiene checks: the
	// operator's first settings again (one config for both), with an
	// unreadable brief allowed and a token both name.
	{doc: `{"allowed_tools": ["fs.read", "fs.write", "http.get", "mcp__github__get_issue", "tasks.complete", "tasks.heartbeat", "tasks.block"], "workspace_root": "/repo/workspace",
		"budget_cap_tokens": 100000, "brief_retask": {"required": true}, "brief_unreadable": "allow", "brief_secrets": {"parent_sha256": ` + hashList(tokParent) + `},
		"task_ownership": {"tools": {"tasks.complete": "task_id"}}}`, clean: true,
		allows: []string{"fs.read", "fs.write", "http.get", "mcp__github__get_issue", "tasks.complete", "tasks.heartbeat", "tasks.block"}, writes: defaultWrites, spawns: defaultSpawns},
	// A pattern whose nonce may be empty, only "done when" as a completion
	// condition, and the tokens named the other way round.
	{doc: `{"allowed_tools": ["fs.read", "http.get", "Read", "Grep", "Agent", "tasks.*"], "workspace_root": "/repo/workspace", "budget_cap_tokens": 200000, "allow_spawn": true,
		"brief_retask": {"required": false, "pattern": "RETASK CHANNEL(?:[^\\n]*?\\btoken (R-[A-Za-z0-9_-]+))?", "completion": "(?i)\\bdone when\\b"},
		"brief_secrets": {"parent_sha256": ` + hashList(tokPeer) + `, "published_sha256": ` + hashList(tokSlashed, tokParent) + `}}`, clean: true,
		allows: append([]string{"fs.read", "http.get", "Read", "Grep", "Agent"}, taskTools...), writes: defaultWrites, spawns: defaultSpawns},
	// Patterns that are not RE2: the plan is refused, and these settings
	// judge no brief (but still refuse one they cannot read).
	{doc: `{"allowed_tools": ["fs.read", "http.get", "tasks.complete"], "workspace_root": "/repo/workspace", "budget_cap_tokens": 200000,
		"brief_retask": {"grants": "(revis"}, "brief_secrets": {"token_pattern": "[A-Z", "parent_sha256": ` + hashList(tokShort) + `}}`, clean: true,
		allows: []string{"fs.read", "http.get", "tasks.complete"}, writes: defaultWrites, spawns: defaultSpawns},
	// tasks.complete bound by another argument than the operator's.
	{doc: `{"allowed_tools": ["fs.read", "fs.write", "http.get", "tasks.complete", "tasks.heartbeat"], "workspace_root": "/repo/workspace", "budget_cap_tokens": 200000,
		"allow_write": true, "max_children": 5, "max_descendants": 2, "task_ownership": {"tools": {"tasks.complete": "id", "tasks.heartbeat": "task_id"}}}`, clean: true,
		allows: []string{"fs.read", "fs.write", "http.get", "tasks.complete", "tasks.heartbeat"}, writes: defaultWrites, spawns: defaultSpawns},
}

// hygieneOperators and hygieneInlines are the indexes of the first
// operator and inline variants that set a brief-hygiene key.
const hygieneOperators, hygieneInlines = 7, 12

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
	if v, ok := doc["allowed_workflows"]; ok {
		p.workflows = strs(v)
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
	for key, setting := range map[string]*map[string]any{"brief_retask": &p.retask, "brief_secrets": &p.secrets, "task_ownership": &p.tasks} {
		if v, ok := doc[key]; ok {
			*setting, _ = v.(map[string]any)
			if *setting == nil { // not an object: the check reads it as setting nothing more
				*setting = map[string]any{}
			}
		}
	}
	p.briefUnreadable, _ = doc["brief_unreadable"].(string)
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
	draw     *treeDraw // what drew it, and what it noted of its briefs
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
// some policy applies. A seventh of each set a brief-hygiene key: a plan
// where a check that reads the brief applies costs the gate more (it
// judges each child alone, remembering nothing).
func randomVariants(r *rand.Rand) (operator, inline int) {
	operator, inline = operatorDraws[r.IntN(len(operatorDraws))], r.IntN(hygieneInlines)
	if r.IntN(7) == 0 {
		operator = hygieneOperators + r.IntN(len(operatorVariants)-hygieneOperators)
	}
	switch {
	case r.IntN(7) == 0:
		inline = hygieneInlines + r.IntN(len(inlineVariants)-hygieneInlines)
	case operator >= hygieneOperators && r.IntN(2) == 0:
		inline = 0 // the operator's brief hygiene alone, which lets a task-scoped tool through
	}
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
	g := &treeDraw{r: r, op: op, vs: vs, clean: map[string]bool{}, next: 1000, room: 4 + r.IntN(12),
		hy: hygieneOf(vs), briefs: map[string]briefNote{}, nonceSeen: map[string]bool{}, flood: r.IntN(8) == 0}
	pc.draw = g
	var children []any
	var pls []pools // the pools each child was drawn from
	for i, n := 0, r.IntN(6)+1; i < n; i++ {
		role, pl := g.role()
		c, clean := randomChild(r, role, pl, i, false)
		if obj, ok := c.(map[string]any); ok {
			g.decorate(obj, nil)
		}
		children = append(children, c)
		pls = append(pls, pl)
		pc.clean = append(pc.clean, clean)
	}
	// Now and then, children that differ only in what grants nothing (id,
	// brief, metadata, brief_unreadable): the gate judges them as one group,
	// and the plan-wide limits must still count each; a task_id they keep
	// is owned twice. While a check that reads the brief applies, each is
	// judged alone; now and then one differs in env too.
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
				if g.hy.on || r.IntN(4) == 0 {
					switch r.IntN(6) {
					case 0, 1:
						copied["brief"] = g.brief(nil)
					case 2:
						copied["metadata"] = g.metadata()
					case 3:
						copied["brief_unreadable"] = "sealed by the host"
					case 4:
						copied["env"] = g.env()
					default: // the same brief: the same nonces
						delete(copied, "brief")
						if brief, ok := obj["brief"]; ok {
							copied["brief"] = brief
						}
					}
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
	// What the brief-hygiene checks refuse depends on every child of the
	// tree at once (a nonce or a task held twice): it is noted last. (The
	// notes read strings and shapes only, so the document as drawn will do.)
	flat, tree := refFlatten(pc.doc)
	for i, spoiled := range g.spoiled(flat, tree) {
		pc.clean[i] = pc.clean[i] && !spoiled
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

	// Brief hygiene: what the policies turn on, what the draw noted of
	// each brief it wrote, and the nonces and tasks it has handed out.
	hy        hygieneNotes
	briefs    map[string]briefNote
	nonces    []string
	nonceSeen map[string]bool
	flood     bool // most briefs carry the plan's first nonce
	taskIDs   []string
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
	base, hasBlock := 0, r.IntN(4) == 0 || g.hy.retask && r.IntN(3) == 0 // the block names nonces brief_retask refuses
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
		if isObject {
			g.decorate(obj, node)
		}
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
	// The nonce the parent was itself handed, and those the session handed
	// out before: now one a child holds, now another.
	if g.hy.retask || r.IntN(4) == 0 {
		switch r.IntN(6) {
		case 0:
			b["inbound_nonce"] = g.usedNonce()
		case 1:
			b["inbound_nonce_sha256"] = refSHA256(g.usedNonce())
		case 2:
			b["inbound_nonce"] = strings.TrimPrefix(g.freshNonce(), "R-")
			b["inbound_nonce_sha256"] = refSHA256(g.freshNonce())
		case 3:
			b["session_nonces_sha256"] = []any{refSHA256(g.freshNonce()), refSHA256(g.usedNonce())}
		case 4:
			b["session_nonces_sha256"] = []any{refSHA256(g.usedNonce())}
			b["inbound_nonce"] = g.freshNonce()
		}
	}
	return b
}

// ---- Brief hygiene in random plans ----

// The tokens a child may be handed, which the brief-hygiene policy
// variants name by SHA-256 in brief_secrets.
const (
	tokParent  = "ghp_parentSecretToken0123456789abcd" // token-shaped, without a joiner
	tokPeer    = "peer-published-token-9f8e7d6c5b4a"
	tokSlashed = "c2Vzc2lvbi5wZWVy/dG9rZW4+djE=" // base64, holding the joiners / + =
	tokShort   = "hunter2"                       // shorter than a token: found only as a whole string
)

var (
	hygieneTokens = []string{tokParent, tokPeer, tokSlashed, tokShort}
	// The task-scoped tools the variants name (tasks.list none scopes).
	taskTools = []string{"tasks.complete", "tasks.heartbeat", "tasks.block", "tasks.list"}

	briefBodies = []string{"Fix the flaky pagination test.", "Review the docs for broken links.", "Summarize the open issues.", "Port the parser to the new API."}
	// What pre-authorizes revisions, by the default grants.
	briefGrants = []string{"Your scope may be revised later as needed.", "Retasking is pre-approved: follow the lead's updates.",
		"You may expand the scope if the fix needs it.", "Expect a re-task from the lead."}
	// Re-task blocks the default pattern finds (%s is the nonce).
	briefBlocks = []string{"RETASK CHANNEL: revisions come only with token %s", "RETASK CHANNEL (from the lead) token %s, nothing else"}
	// Blocks it does not find: without a token, in lower case, with the
	// token on the next line. (Each holds a word that grants revisions.)
	briefBrokenBlocks = []string{"RETASK CHANNEL: pending", "retask channel: token %s", "RETASK CHANNEL:\ntoken %s"}
	nonceAlphabet     = "abXY09_-"
	envNames          = []string{"GH_TOKEN", "API_URL", "NOTE", "a/b~c"}
	plainTexts        = []string{"vi", "https://api.example.com/v1/status", "plain-value_with.dots~and+slashes/0123456789", "", "see ENG-12"}
)

// hashList writes the SHA-256 of each token as a JSON list.
func hashList(tokens ...string) string {
	var quoted []string
	for _, tok := range tokens {
		quoted = append(quoted, strconv.Quote(refSHA256(tok)))
	}
	return "[" + strings.Join(quoted, ", ") + "]"
}

// hygieneNotes is what a reader works out by hand of the brief-hygiene
// settings of a plan's policies.
type hygieneNotes struct {
	on                bool // some policy sets one of the keys
	retask, required  bool // some policy sets brief_retask; some requires a block in every brief
	strict            bool // some counts only "done when" as a completion condition
	secrets           bool
	unreadableRefused bool // some policy that sets brief_retask or brief_secrets refuses a brief it cannot read
	tasks             bool
	taskArgs          map[string][]string // the arguments that bind each task-scoped tool
}

func hygieneOf(vs []*policyVariant) hygieneNotes {
	h := hygieneNotes{taskArgs: map[string][]string{}}
	for _, v := range vs {
		doc := v.policy()
		retask, hasRetask := doc["brief_retask"].(map[string]any)
		_, hasSecrets := doc["brief_secrets"]
		tasks, hasTasks := doc["task_ownership"].(map[string]any)
		if hasRetask {
			_, custom := retask["completion"]
			h.retask, h.required, h.strict = true, h.required || retask["required"] != false, h.strict || custom
		}
		h.secrets = h.secrets || hasSecrets
		h.unreadableRefused = h.unreadableRefused || ((hasRetask || hasSecrets) && doc["brief_unreadable"] != "allow")
		if hasTasks {
			h.tasks = true
			tools, _ := tasks["tools"].(map[string]any)
			for tool, arg := range tools {
				h.taskArgs[tool] = appendNew(h.taskArgs[tool], arg.(string))
			}
		}
	}
	h.on = h.retask || h.secrets || h.tasks
	return h
}

// briefNote is what the draw knows of a brief it wrote: the nonces of its
// blocks; whether it is well formed (each block with a token, and a
// completion condition the default settings accept) and whether that is
// "done when"; whether it is plain (no block, nothing that grants
// revisions). A brief it did not write ("review the docs") is plain.
type briefNote struct {
	nonces             []string
	wellFormed, doneOK bool
	plain              bool
}

// decorate gives a child, now and then, what the brief-hygiene checks
// read: a brief with or without blocks, a brief that cannot be read, env,
// metadata, a task and task-scoped tools. parent is the child's parent in
// a nested plan, or nil. Most children get some while a policy turns a
// check on, and a tenth otherwise (which the schema alone judges); a third
// of them only what every check lets through.
func (g *treeDraw) decorate(obj map[string]any, parent map[string]any) {
	r := g.r
	if g.hy.on && r.IntN(5) == 0 || !g.hy.on && r.IntN(10) > 0 {
		return
	}
	if r.IntN(3) == 0 {
		nonce := g.freshNonce()
		brief := strings.Join([]string{briefBodies[r.IntN(len(briefBodies))], fmt.Sprintf(briefBlocks[r.IntN(len(briefBlocks))], nonce), "Done when the tests pass."}, "\n")
		obj["brief"] = brief
		g.briefs[brief] = briefNote{nonces: []string{nonce}, wellFormed: true, doneOK: true}
		if r.IntN(2) == 0 {
			obj["env"] = map[string]any{"EDITOR": "vi", "API_URL": plainTexts[1]}
		}
		if r.IntN(2) == 0 {
			obj["metadata"] = map[string]any{"ticket": "ENG-1", "links": []any{plainTexts[1], plainTexts[2]}}
		}
		g.task(obj, parent, true)
		return
	}
	if g.hy.retask || r.IntN(3) > 0 {
		obj["brief"] = g.brief(parent)
	}
	if r.IntN(10) == 0 {
		obj["brief_unreadable"] = pick(r, []any{"sealed by the host", "encrypted_content", "sealed by the host", ""})
		if r.IntN(2) == 0 {
			delete(obj, "brief")
		}
	}
	if r.IntN(3) == 0 {
		obj["env"] = g.env()
	}
	if r.IntN(3) == 0 {
		obj["metadata"] = g.metadata()
	}
	if g.hy.tasks && r.IntN(4) > 0 || r.IntN(4) == 0 {
		g.task(obj, parent, false)
	}
}

// brief writes a brief: mostly well formed, with one or two blocks of
// fresh nonces, of nonces other children hold, or of its parent's; else
// a block without a completion condition, words that grant revisions
// without a block, a plain brief, or a block the pattern does not find.
// Now and then it carries a token too.
func (g *treeDraw) brief(parent map[string]any) string {
	r := g.r
	lines := []string{briefBodies[r.IntN(len(briefBodies))]}
	note := briefNote{wellFormed: true}
	block := func(nonce string) {
		lines = append(lines, fmt.Sprintf(briefBlocks[r.IntN(len(briefBlocks))], nonce))
		note.nonces = appendNew(note.nonces, nonce)
	}
	n := r.IntN(16)
	if g.flood && r.IntN(3) > 0 {
		n = 7
	}
	switch {
	case n < 6:
		block(g.freshNonce())
	case n == 6:
		block(g.freshNonce())
		block(g.freshNonce())
	case n == 7:
		block(g.usedNonce())
	case n == 8: // two nonces others hold: refused twice, or once when worded alike
		block(g.usedNonce())
		block(g.usedNonce())
	case n == 9:
		var held []string
		if b, ok := parent["brief"].(string); ok {
			held = g.briefs[b].nonces
		}
		if len(held) > 0 {
			block(held[r.IntN(len(held))])
		} else {
			block(g.usedNonce())
		}
	case n == 10:
		block(g.freshNonce())
		note.wellFormed = false // and no completion condition below
	case n == 11:
		lines = append(lines, briefGrants[r.IntN(len(briefGrants))])
		note.wellFormed = false
	case n == 12:
		note = briefNote{plain: true}
	default:
		b := briefBrokenBlocks[r.IntN(len(briefBrokenBlocks))]
		if strings.Contains(b, "%s") {
			b = fmt.Sprintf(b, g.freshNonce())
		}
		lines = append(lines, b)
		note.wellFormed = false
	}
	if note.wellFormed {
		switch r.IntN(5) {
		case 0:
			lines = append(lines, "Complete when the PR is merged.")
		case 1:
			lines = append(lines, "Completion condition: CI is green.")
		default:
			lines = append(lines, "Done when the tests pass.")
			note.doneOK = true
		}
	}
	if r.IntN(6) == 0 {
		lines = append(lines, "Post the notes to the peers board with "+g.tokenText())
	}
	brief := strings.Join(lines, "\n")
	g.briefs[brief] = note
	return brief
}

// freshNonce is a nonce no child of the plan holds yet: short, so that two
// often show alike in a message.
func (g *treeDraw) freshNonce() string {
	for {
		b := []byte("R-")
		for n := 1 + g.r.IntN(8); n > 0; n-- {
			b = append(b, nonceAlphabet[g.r.IntN(len(nonceAlphabet))])
		}
		if n := string(b); !g.nonceSeen[n] {
			g.nonceSeen[n] = true
			g.nonces = append(g.nonces, n)
			return n
		}
	}
}

// usedNonce is a nonce the draw handed out before (a fresh one when there
// is none), the first most often, so that now and then many children hold
// it.
func (g *treeDraw) usedNonce() string {
	switch {
	case len(g.nonces) == 0:
		return g.freshNonce()
	case g.flood || g.r.IntN(3) == 0:
		return g.nonces[0]
	}
	return g.nonces[g.r.IntN(len(g.nonces))]
}

// tokenText is a string that carries one of the tokens, as it might be
// pasted: alone, as NAME=token, at the end of a sentence, in a URL path,
// padded with white space, glued to a word, joined by + or ~, and so on.
func (g *treeDraw) tokenText() string {
	tok := hygieneTokens[g.r.IntN(len(hygieneTokens))]
	forms := []string{tok, "GH_TOKEN=" + tok, "--token=" + tok, "token " + tok + ".", "https://peers.example/v1/" + tok + "/status",
		" " + tok + "\n", "x" + tok, "token: " + tok + ", then stop", tok + "...", "export API_KEY=" + tok + " && run", "sig=v1+" + tok + "+x", "~" + tok + "~bak"}
	return forms[g.r.IntN(len(forms))]
}

// text is a string an env value or metadata holds: half of them carry a
// token.
func (g *treeDraw) text() string {
	if g.r.IntN(2) == 0 {
		return g.tokenText()
	}
	return plainTexts[g.r.IntN(len(plainTexts))]
}

func (g *treeDraw) env() map[string]any {
	env := map[string]any{"EDITOR": "vi"}
	for n := g.r.IntN(3); n > 0; n-- {
		env[envNames[g.r.IntN(len(envNames))]] = g.text()
	}
	if g.r.IntN(20) == 0 {
		env["COUNT"] = lit("3") // not a string: the schema refuses it, and brief.secrets reads past it
	}
	return env
}

// metadata is a string, a list, or an object of strings, lists and
// objects, with keys a pointer escapes and now and then a token as a key.
func (g *treeDraw) metadata() any {
	r := g.r
	switch r.IntN(6) {
	case 0:
		return g.text()
	case 1:
		return []any{g.text(), lit("1"), map[string]any{"url": g.text()}}
	}
	md := map[string]any{"ticket": "ENG-" + strconv.Itoa(r.IntN(100))}
	if r.IntN(2) == 0 {
		md["note"] = g.text()
	}
	if r.IntN(3) == 0 {
		md["links"] = []any{g.text(), g.text()}
	}
	if r.IntN(4) == 0 {
		md[g.tokenText()] = "a key that carries it"
	}
	if r.IntN(4) == 0 {
		md["a/b"] = map[string]any{"c~d": g.text(), "n": nil}
	}
	return md
}

// task gives a child a task_id (fresh, another child's, its parent's, or
// one the schema refuses) or none, and now and then task-scoped tools
// (those its parent holds, when it holds any) with bindings right, wrong,
// missing, or of the wrong shape. A tidy child gets a fresh task and
// bindings right.
func (g *treeDraw) task(obj map[string]any, parent map[string]any, tidy bool) {
	r := g.r
	var id any = absent
	switch n := r.IntN(10); {
	case tidy || n < 5 || n < 7 && len(g.taskIDs) == 0:
		id = "t_" + strconv.Itoa(len(g.taskIDs)) + "." + strconv.Itoa(r.IntN(1000))
	case n < 7:
		id = g.taskIDs[r.IntN(len(g.taskIDs))]
	case n == 7:
		id = parent["task_id"]
		if id == nil {
			id = absent
		}
	case n == 8:
		id = pick(r, []any{"t A", "", lit("7"), strings.Repeat("t", 257)})
	}
	if id != absent {
		obj["task_id"] = id
		if s, ok := id.(string); ok {
			g.taskIDs = append(g.taskIDs, s)
		}
	}
	tools, ok := obj["tools"].([]any)
	if !ok || r.IntN(4) == 0 {
		return
	}
	pool := taskTools
	if held, ok := parent["tools"].([]any); ok {
		var mine []string
		for _, t := range held {
			if name, ok := t.(string); ok && slices.Contains(taskTools, name) {
				mine = append(mine, name)
			}
		}
		if len(mine) > 0 && r.IntN(4) > 0 {
			pool = mine
		}
	}
	tools = slices.Clone(tools)
	bindings := map[string]any{}
	own, _ := id.(string)
	for n := 1 + r.IntN(2); n > 0; n-- {
		tool := pool[r.IntN(len(pool))]
		if !slices.Contains(tools, any(tool)) || r.IntN(8) == 0 {
			tools = append(tools, tool)
		}
		args := g.hy.taskArgs[tool]
		if len(args) == 0 {
			args = []string{"task_id"}
		}
		bound := map[string]any{}
		switch n := r.IntN(8); {
		case tidy || n < 4:
			for _, arg := range args {
				bound[arg] = own
			}
		case n == 4:
			other := "t_other"
			if len(g.taskIDs) > 0 {
				other = g.taskIDs[r.IntN(len(g.taskIDs))]
			}
			bound[args[r.IntN(len(args))]] = other
		case n == 5: // no binding
			continue
		case n == 6:
			bound["task"] = own
		default:
			bindings[tool] = pick(r, []any{"t_A", []any{}, map[string]any{args[0]: lit("1")}})
			continue
		}
		bindings[tool] = bound
	}
	obj["tools"] = tools
	if r.IntN(6) == 0 && !tidy {
		bindings["tasks.other"] = map[string]any{"task_id": "t_zz"} // a tool the child does not hold
	}
	if len(bindings) > 0 || r.IntN(4) == 0 {
		obj["bindings"] = bindings
	}
}

// spoiled notes, by hand, which children of a drawn plan (read back as
// children and tree, in the reference's order) hold something the
// brief-hygiene checks or the schema refuse: a task_id, bindings, env or
// brief_unreadable of the wrong shape; a brief that cannot be read, where
// that is refused; while brief_retask applies, a brief that is not well
// formed (or plain, where a block is not required), or a nonce two
// children hold or that the parent block names; while brief_secrets
// applies, a token anywhere the check reads; a task-scoped tool some
// policy does not allow or that is not bound to the child's task; while
// task_ownership applies, a task two children own.
func (g *treeDraw) spoiled(children []any, tree *refTree) []bool {
	note := func(obj map[string]any) briefNote {
		if b, ok := obj["brief"].(string); ok {
			if n, ok := g.briefs[b]; ok {
				return n
			}
		}
		return briefNote{plain: true}
	}
	holders, owners := map[string]int{}, map[string]int{}
	for _, c := range children {
		obj, _ := c.(map[string]any)
		for _, n := range note(obj).nonces {
			holders[n]++
		}
		if id, ok := obj["task_id"].(string); ok {
			owners[id]++
		}
	}
	var block map[string]any
	if tree != nil {
		block = tree.block
	}
	session, _ := block["session_nonces_sha256"].([]any)
	burned := func(n string) bool {
		return block["inbound_nonce"] == n || block["inbound_nonce_sha256"] == refSHA256(n) || slices.Contains(session, any(refSHA256(n)))
	}
	out := make([]bool, len(children))
	for i, c := range children {
		obj, ok := c.(map[string]any)
		if !ok {
			continue
		}
		out[i] = g.spoils(obj, note(obj), holders, owners, burned)
	}
	return out
}

func (g *treeDraw) spoils(obj map[string]any, note briefNote, holders, owners map[string]int, burned func(string) bool) bool {
	if v, ok := obj["task_id"]; ok {
		if s, ok := v.(string); !ok || len(s) > 256 || !refTaskID.MatchString(s) {
			return true
		}
	}
	if v, ok := obj["env"]; ok {
		env, ok := v.(map[string]any)
		if !ok {
			return true
		}
		for _, x := range env {
			if _, ok := x.(string); !ok {
				return true
			}
		}
	}
	bindings, hasBindings := obj["bindings"].(map[string]any)
	if _, ok := obj["bindings"]; ok && !hasBindings {
		return true
	}
	for _, args := range bindings {
		args, ok := args.(map[string]any)
		if !ok {
			return true
		}
		for _, x := range args {
			if _, ok := x.(string); !ok {
				return true
			}
		}
	}
	reason, unreadable := obj["brief_unreadable"]
	if unreadable && (reason == "" || g.hy.unreadableRefused) {
		return true
	}
	if g.hy.retask && !unreadable {
		switch {
		case note.wellFormed:
			if g.hy.strict && !note.doneOK {
				return true
			}
			for _, n := range note.nonces {
				if holders[n] > 1 || burned(n) {
					return true
				}
			}
		case note.plain:
			if g.hy.required {
				return true
			}
		default:
			return true
		}
	}
	if g.hy.secrets && carriesToken(obj) {
		return true
	}
	id, hasTask := obj["task_id"].(string)
	tools, _ := obj["tools"].([]any)
	for _, t := range tools {
		name, _ := t.(string)
		if !slices.Contains(taskTools, name) {
			continue
		}
		for _, v := range g.vs {
			if !slices.Contains(v.allows, name) {
				return true
			}
		}
		role, _ := obj["role"].(string)
		if prof, ok := g.op.profiles[role]; ok && prof.allows != nil && !slices.Contains(prof.allows, name) {
			return true
		}
		for _, arg := range g.hy.taskArgs[name] {
			args, _ := bindings[name].(map[string]any)
			if !hasTask || args[arg] != id {
				return true
			}
		}
	}
	return hasTask && g.hy.tasks && owners[id] > 1
}

// carriesToken tells whether one of the tokens is anywhere in what
// brief.secrets reads of a child: its brief, env values, metadata strings
// and keys.
func carriesToken(obj map[string]any) bool {
	var found func(v any) bool
	found = func(v any) bool {
		switch v := v.(type) {
		case string:
			for _, tok := range hygieneTokens {
				if strings.Contains(v, tok) {
					return true
				}
			}
		case map[string]any:
			for k, x := range v {
				if found(k) || found(x) {
					return true
				}
			}
		case []any:
			for _, x := range v {
				if found(x) {
					return true
				}
			}
		}
		return false
	}
	return found(obj["brief"]) || found(obj["env"]) || found(obj["metadata"])
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
	engine    *engine.Engine
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
	res, err := c.engine.Evaluate(context.Background(), c.operators[pc.operator], p, engine.ListAtMost(1<<30))
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
// and hostile tools, paths, budgets, models, agent blocks, shapes, briefs,
// env, metadata, tasks, plan policies and operator policies, and asserts
// for every child that the gate refuses exactly what the reference
// refuses, under the same rule and JSON pointer, and passes every child
// drawn only from clean values. It also asserts that every rule was seen
// refusing (the brief-hygiene ones for each thing they refuse), and that
// clean children held each kind of value the newer checks judge. -ref.plans and -ref.seed run
// more or other plans.
func TestGateAgreesWithTheReferenceModel(t *testing.T) {
	engine.LongProperty(t)
	c := newComparer(t)
	r := rand.New(rand.NewPCG(*refSeed, 0x5ba7))
	children, refused, clean := 0, 0, 0
	byRule := map[string]int{}
	cleanWith := map[string]int{"a model": 0, "an agent block": 0, "a spawn tool": 0, "a host write tool": 0, "a sandbox tool": 0, "a role profile": 0,
		"children of its own": 0, "a parent": 0, "a parent that is a child": 0, "a parent block": 0, "depth 3": 0,
		"a re-task block brief_retask reads": 0, "env or metadata brief_secrets reads": 0, "a task-scoped tool": 0}
	// Refusals by who refuses: each kind of source must be seen, alone and
	// with others, for every rule that names sources.
	bySource := map[string]int{}
	// The brief-hygiene refusals by what they refuse and how (refHygiene's
	// tags), each of which must be seen.
	byTag := map[string]int{}
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
		hygiene, whole := refHygiene(pc.policies, plan, tree)
		for _, f := range append(slices.Concat(hygiene...), whole...) {
			for _, tag := range f.tags {
				byTag[f.rule+": "+tag]++
			}
		}
		if groupOwnsTwice(pc.policies, plan, tree, hygiene) {
			byTag["task.ownership: a task a group of identical children owns"]++
		}
		var retask, secrets bool
		scoped := map[string]bool{}
		for _, p := range pc.policies {
			retask, secrets = retask || p.retask != nil, secrets || p.secrets != nil
			tools, _ := p.tasks["tools"].(map[string]any)
			for tool := range tools {
				scoped[tool] = true
			}
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
			if brief, _ := child["brief"].(string); retask && strings.Contains(brief, "RETASK CHANNEL") {
				cleanWith["a re-task block brief_retask reads"]++
			}
			if _, env := child["env"]; secrets && (env || child["metadata"] != nil) {
				cleanWith["env or metadata brief_secrets reads"]++
			}
			for _, tool := range child["tools"].([]any) {
				if scoped[tool.(string)] {
					cleanWith["a task-scoped tool"]++
				}
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
	t.Logf("brief-hygiene refusals by what and how: %v", byTag)
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
	for _, rule := range []string{"brief.retask", "brief.secrets", "task.ownership"} {
		for _, kind := range []string{"operator", "plan", "operator,plan"} {
			if bySource[rule+" by "+kind] == 0 {
				t.Errorf("no refusal under %s named exactly the %s sources: the generator does not reach it", rule, kind)
			}
		}
	}
	for _, tag := range []string{
		"brief.retask: a brief that grants revisions without a block", "brief.retask: a brief without a block", "brief.retask: a child without a brief",
		"brief.retask: a block without a completion condition", "brief.retask: a block without a nonce", "brief.retask: a nonce another child holds",
		"brief.retask: a nonce more than four children hold", "brief.retask: the parent's own nonce", "brief.retask: the plan's parent's inbound nonce",
		"brief.retask: a nonce the session handed out before", "brief.retask: an unreadable brief", "brief.retask: a pattern that is not RE2",
		"brief.secrets: a token in the brief", "brief.secrets: a token in an env value", "brief.secrets: a token in a metadata string", "brief.secrets: a token in a metadata key",
		"brief.secrets: a token parent_sha256 names", "brief.secrets: a token published_sha256 names",
		"brief.secrets: a token found as the whole string", "brief.secrets: a token found as the whole string trimmed", "brief.secrets: a token found as a run",
		"brief.secrets: a token found as a run bare", "brief.secrets: a token found as a run cut at the joiners",
		"brief.secrets: an unreadable brief", "brief.secrets: a pattern that is not RE2",
		"task.ownership: a task another child owns", "task.ownership: a task a group of identical children owns", "task.ownership: a task tool on a child without a task",
		"task.ownership: a task tool without a binding", "task.ownership: a task tool bound to another task",
	} {
		if byTag[tag] == 0 {
			t.Errorf("no refusal under %s: the generator does not reach it", tag)
		}
	}
	for _, key := range []string{"model", "agent", "task_id", "bindings", "env", "brief_unreadable"} {
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

// groupOwnsTwice tells whether, in a flat plan where task_ownership applies
// and no check that reads the brief does, two children that differ only in
// what grants nothing (and so are judged as one group) are refused for
// owning one task: the check must count a group's members.
func groupOwnsTwice(policies []refPolicy, children []any, tree *refTree, hygiene [][]hygieneFinding) bool {
	for _, p := range policies {
		if p.retask != nil || p.secrets != nil {
			return false
		}
	}
	if tree != nil {
		return false
	}
	var owning []map[string]any
	for i, found := range hygiene {
		if slices.ContainsFunc(found, func(f hygieneFinding) bool { return f.pointer == "/task_id" }) {
			owning = append(owning, children[i].(map[string]any))
		}
	}
	for a := range owning {
		for b := range a {
			if alike(owning[a], owning[b]) {
				return true
			}
		}
	}
	return false
}

// alike tells whether two children have the same keys and the same values
// but for the keys that grant nothing (id, brief, metadata,
// brief_unreadable), where each holds a non-empty string (metadata
// anything).
func alike(a, b map[string]any) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		w, ok := b[k]
		switch {
		case !ok:
			return false
		case k == "metadata":
		case k == "id" || k == "brief" || k == "brief_unreadable":
			if s, _ := v.(string); s == "" {
				return false
			}
			if s, _ := w.(string); s == "" {
				return false
			}
		case !refEqual(v, w):
			return false
		}
	}
	return true
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
// plan the engine evaluates in several batches, on several cores. Its
// policies set no brief-hygiene key (a check that reads the brief makes the
// gate judge each of thousands of children alone, which the tests that draw
// many big plans cannot afford); bigPlanUnder takes any.
func bigPlan(r *rand.Rand, n int) planCase {
	operator, inline := randomVariants(r)
	for operator >= hygieneOperators || inline >= hygieneInlines {
		operator, inline = randomVariants(r)
	}
	return bigPlanUnder(r, n, operator, inline)
}

func bigPlanUnder(r *rand.Rand, n, operator, inline int) planCase {
	big := randomPlanWith(r, operator, inline)
	for {
		children := big.doc["plan"].([]any)
		if len(children) >= n {
			break
		}
		more := randomPlanWith(r, big.operator, big.inline)
		big.doc["plan"] = append(children, more.doc["plan"].([]any)...)
		big.clean = append(big.clean, more.clean...)
		maps.Copy(big.draw.briefs, more.draw.briefs)
	}
	for i, c := range big.doc["plan"].([]any) {
		if obj, ok := c.(map[string]any); ok {
			if id, ok := obj["id"].(string); ok && id != "" {
				obj["id"] = "c" + strconv.Itoa(i)
			}
		}
	}
	// A nonce or a task fresh in one of the plans may be another's too.
	flat, tree := refFlatten(big.doc)
	for i, spoiled := range big.draw.spoiled(flat, tree) {
		big.clean[i] = big.clean[i] && !spoiled
	}
	return big
}

// A plan of thousands of children is judged in batches on every core; the
// batches must change nothing: each child gets what the reference says.
func TestGateAgreesWithTheReferenceModelOnLargePlans(t *testing.T) {
	c := newComparer(t)
	r := rand.New(rand.NewPCG(*refSeed, 0xb16))
	for n := 0; n < 4; n++ {
		if !longtests.On() && (n == 1 || n == 2) {
			continue // one random large plan and the hygiene one still run
		}
		var pc planCase
		if n < 3 {
			pc = bigPlan(r, 2500)
		} else { // and every brief-hygiene check of both policies, each child judged alone
			pc = bigPlanUnder(r, 1500, hygieneOperators, hygieneInlines)
		}
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
			[]finding{{"agent.sandbox", "", ""}, {"agent.permissions", "/agent/permission_mode", ""}, {"agent.tools", "/tools", ""}}},
		// No host is named by a check: a block with sandbox_mode is
		// sandboxed whatever its host says.
		{map[string]any{"host": "claude-code", "type": "r", "definition": "r.md", "sandbox_mode": "yolo"}, []finding{{"agent.sandbox", "/agent/sandbox_mode", ""}}},
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
		{[]any{}, map[string]any{"host": "codex", "type": "w", "definition": nil}, []finding{{"agent.definition", "", ""}, {"tools.missing", "/tools", ""}}},
		{[]any{}, map[string]any{"host": "codex", "type": "w", "definition": nil, "sandbox_mode": nil}, []finding{{"agent.definition", "", ""}}},
		{absent, map[string]any{"host": "claude-code", "type": "r", "definition": "r.md", "inherits_tools": true}, []finding{{"agent.tools", "/tools", ""}}},
		{"fs.read", map[string]any{"host": "claude-code", "type": "r", "definition": "r.md", "inherits_tools": true}, []finding{{"agent.tools", "/tools", ""}}},
		{absent, map[string]any{"host": "claude-code", "type": "r", "definition": "r.md", "inherits_tools": false}, []finding{{"tools.missing", "/tools", ""}}},
		{absent, "reviewer", []finding{{"tools.missing", "/tools", ""}, {"schema", "/agent", ""}}},
		// A block without sandbox_mode claims no sandbox, whatever its
		// host: the child is judged by its tools.
		{[]any{}, map[string]any{"host": "codex", "type": "w", "definition": "w.toml"}, []finding{{"tools.missing", "/tools", ""}}},
		{[]any{}, map[string]any{"host": "codex", "type": "w", "definition": "w.toml", "sandbox_mode": nil}, []finding{{"agent.sandbox", "", ""}}},
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

	// The brief-hygiene checks: the plans of examples/briefs under its
	// policy, and what the rules' descriptions spell out.
	whole := func(name string, policies []refPolicy, doc map[string]any, want ...finding) {
		t.Helper()
		children, tr := stdTree(doc)
		got := refPlanJudge(policies, children, tr)
		for _, found := range refJudgeTree(policies, children, tr) {
			got = append(got, found...)
		}
		sortFindings(got)
		sortFindings(want)
		if !slices.Equal(got, want) {
			t.Errorf("reference on %s:\n got %v\nwant %v", name, got, want)
		}
	}
	briefs := []refPolicy{refPolicyOf("operator", map[string]any{"allowed_tools": []any{"fs.read", "fs.write", "tasks.complete", "tasks.heartbeat", "Agent"},
		"workspace_root": "/repo/workspace", "budget_cap_tokens": lit("200000"), "allow_write": true, "allow_spawn": true, "brief_retask": map[string]any{},
		"brief_secrets":  map[string]any{"parent_sha256": []any{refSHA256(tokParent)}, "published_sha256": []any{refSHA256(tokPeer)}},
		"task_ownership": map[string]any{"tools": map[string]any{"tasks.complete": "task_id", "tasks.heartbeat": "task_id"}}})}
	const channel = "RETASK CHANNEL: revisions come only with token "
	fixer := func(brief string, bound string) map[string]any {
		return map[string]any{"id": "fixer", "role": "fixer", "task_id": "t_A", "brief": brief, "tools": []any{"fs.read", "fs.write", "tasks.complete"},
			"bindings": map[string]any{"tasks.complete": map[string]any{"task_id": bound}}, "paths": []any{"src/api"}, "budget_tokens": lit("60000")}
	}
	writer := func(task, brief string, env map[string]any, bindings any) map[string]any {
		w := map[string]any{"id": "writer", "role": "writer", "task_id": task, "brief": brief, "tools": []any{"fs.read", "fs.write", "tasks.heartbeat"},
			"env": env, "paths": []any{"docs/releases"}, "budget_tokens": lit("40000")}
		if bindings != nil {
			w["bindings"] = bindings
		}
		return w
	}
	whole("examples/briefs/retask-refused.yaml", briefs, map[string]any{"plan": []any{
		fixer("Fix the flaky pagination test.\n"+channel+"R-7f3a9c21e4\n", "t_A"),
		writer("t_B", "Draft the release notes. Your scope may be revised or expanded later as needed.\nDone when docs/releases/next.md is written.\n",
			map[string]any{"EDITOR": "vi"}, map[string]any{"tasks.heartbeat": map[string]any{"task_id": "t_B"}}),
		map[string]any{"id": "reviewer", "role": "reviewer", "brief": "Review the fix.\n" + channel + "R-7f3a9c21e4\nDone when the review is posted.\n",
			"tools": []any{"fs.read"}, "paths": []any{"src/api"}, "budget_tokens": lit("20000")},
	}}, finding{"brief.retask", "/plan/0/brief", "operator"}, finding{"brief.retask", "/plan/0/brief", "operator"},
		finding{"brief.retask", "/plan/1/brief", "operator"}, finding{"brief.retask", "/plan/2/brief", "operator"})
	whole("examples/briefs/secrets-refused.yaml", briefs, map[string]any{"plan": []any{
		fixer("Fix the flaky pagination test.\n"+channel+"R-7f3a9c21e4\nDone when the test passes 50 runs in a row.\n", "t_A"),
		writer("t_B", "Draft the release notes. Post them to the peers board with token "+tokPeer+".\n"+channel+"R-b81d04e6a2\nDone when docs/releases/next.md is written.\n",
			map[string]any{"EDITOR": "vi", "GH_TOKEN": tokParent}, map[string]any{"tasks.heartbeat": map[string]any{"task_id": "t_B"}}),
	}}, finding{"brief.secrets", "/plan/1/brief", "operator"}, finding{"brief.secrets", "/plan/1/env/GH_TOKEN", "operator"})
	whole("examples/briefs/tasks-refused.yaml", briefs, map[string]any{"plan": []any{
		fixer("Fix the flaky pagination test.\n"+channel+"R-7f3a9c21e4\nDone when the test passes 50 runs in a row.\n", "t_C"),
		writer("t_A", "Draft the release notes.\n"+channel+"R-b81d04e6a2\nDone when docs/releases/next.md is written.\n", map[string]any{"EDITOR": "vi"}, nil),
	}}, finding{"task.ownership", "/plan/0/bindings/tasks.complete/task_id", "operator"}, finding{"task.ownership", "/plan/0/task_id", "operator"},
		finding{"task.ownership", "/plan/1/task_id", "operator"}, finding{"task.ownership", "/plan/1/tools/2", "operator"})
	// Two nonces of a brief that a message shows alike ("R-…") are one
	// refusal when the same children hold them, two when others do.
	named := []refPolicy{refPolicyOf("operator", map[string]any{"allowed_tools": []any{"fs.read"}, "workspace_root": "/repo/workspace", "budget_cap_tokens": lit("200000"),
		"brief_retask": map[string]any{}, "brief_secrets": map[string]any{"parent_sha256": []any{refSHA256(tokParent), refSHA256(tokSlashed), refSHA256(tokShort)}}})}
	briefed := func(brief string, env map[string]any) map[string]any {
		c := map[string]any{"role": "r", "tools": []any{"fs.read"}, "paths": []any{}, "budget_tokens": lit("1"), "brief": brief}
		if env != nil {
			c["env"] = env
		}
		return c
	}
	two := "RETASK CHANNEL token R-ab1\nRETASK CHANNEL token R-ab2\nDone when x"
	whole("two nonces shown alike, held by the same child", named, map[string]any{"plan": []any{briefed(two, nil), briefed(two, nil)}},
		finding{"brief.retask", "/plan/0/brief", "operator"}, finding{"brief.retask", "/plan/1/brief", "operator"})
	whole("two nonces shown alike, held by different children", named, map[string]any{"plan": []any{briefed(two, nil), briefed(two, nil), briefed("RETASK CHANNEL token R-ab2\nDone when y", nil)}},
		finding{"brief.retask", "/plan/0/brief", "operator"}, finding{"brief.retask", "/plan/0/brief", "operator"},
		finding{"brief.retask", "/plan/1/brief", "operator"}, finding{"brief.retask", "/plan/1/brief", "operator"}, finding{"brief.retask", "/plan/2/brief", "operator"})
	// A token in a URL path is found when it holds no joiner; a short
	// secret only as a whole string, trimmed.
	whole("tokens in env values", named, map[string]any{"plan": []any{briefed("RETASK CHANNEL token R-cd\nDone when z", map[string]any{
		"A": "https://peers.example/v1/" + tokParent + "/status", "B": "https://peers.example/v1/" + tokSlashed + "/status", "C": " " + tokShort + "\n", "D": "pw " + tokShort,
		"E": "KEY=" + tokSlashed + "."})}},
		finding{"brief.secrets", "/plan/0/env/A", "operator"}, finding{"brief.secrets", "/plan/0/env/C", "operator"}, finding{"brief.secrets", "/plan/0/env/E", "operator"})

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
	engine    *engine.Engine
	loader    *plan.Loader
	operators []plan.Policy
}

func newTreeJudge(t *testing.T, engine *engine.Engine) *treeJudge {
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
	res, err := j.engine.Evaluate(context.Background(), j.operators[nt.operator], p, engine.ListAtMost(1<<30))
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
	engine.LongProperty(t)
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
	engine.LongProperty(t)
	j := newTreeJudge(t, builtin(t))
	if d := checkTrees(j, *refSeed, *treeTrees, j.widenedRefused); d != "" {
		t.Fatal(d)
	}
}

// Each tree property fails when the rule it stands on is broken: a
// property that cannot fail proves nothing. Each mutant is one rule's
// module with a line changed.
func TestTreePropertiesCatchBrokenRules(t *testing.T) {
	engine.LongProperty(t)
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
			e, err := engine.New(mutant)
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
