package gate

import (
	"sync"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/topdown"
)

// What a rule computes from the policies alone is the same in every
// evaluation under the same policies: the profiles, the roots' prefixes,
// the lowest cap, whether a policy allows a tool, how a message names the
// sources that refuse. OPA keeps such values for one evaluation (its
// virtual cache); the engine keeps them across evaluations too, by
// policies, so a decision on a small plan computes only what its children
// bring. The Rego decides every value as before: this only remembers what
// it decided, for rules that provably read nothing else.
//
// A rule or function is pure when everything it reads of the input is
// under input.policies, and every rule and function it refers to is pure.
// A function's value is remembered by its arguments as well. A module
// that uses with (which changes what a rule sees) turns sharing off.

// sharing is an engine's memory of pure values, by policies.
type sharing struct {
	pure *purity
	mu   sync.Mutex
	sets map[int][]policyValues // by the hash of the policies
	n    int
}

type policyValues struct {
	policies ast.Value
	values   *sharedValues
}

// maxPolicySets bounds how many sets of policies an engine remembers
// values for. A server judging plans that bring policies of their own
// forgets them all when it passes this, and starts again.
const maxPolicySets = 64

// newSharing finds the compiled modules' pure rules; nil when none can be
// trusted to be (a module uses with).
func newSharing(c *ast.Compiler) *sharing {
	p := pureRules(c)
	if p == nil {
		return nil
	}
	return &sharing{pure: p}
}

var policiesKey = ast.StringTerm("policies")

// cacheFor is the virtual cache of one evaluation on input: one that
// reads and adds to the values shared under input.policies. nil (OPA's
// own cache) when nothing is shared.
func (s *sharing) cacheFor(input ast.Value) *layered {
	if s == nil {
		return nil
	}
	obj, ok := input.(ast.Object)
	if !ok {
		return nil
	}
	pol := obj.Get(policiesKey)
	if pol == nil {
		return nil
	}
	return &layered{local: topdown.NewVirtualCache(), shared: s.valuesFor(pol.Value), pure: s.pure}
}

func (s *sharing) valuesFor(policies ast.Value) *sharedValues {
	h := policies.Hash()
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, set := range s.sets[h] {
		if set.policies.Compare(policies) == 0 {
			return set.values
		}
	}
	if s.sets == nil || s.n == maxPolicySets {
		s.sets, s.n = map[int][]policyValues{}, 0
	}
	v := &sharedValues{vc: topdown.NewVirtualCache()}
	s.sets[h] = append(s.sets[h], policyValues{policies, v})
	s.n++
	return v
}

// pureRules tells, by rule path, which rules and functions of the
// compiled modules are pure; nil when a module uses with.
func pureRules(c *ast.Compiler) *purity {
	var rules []*ast.Rule
	with := false
	for _, m := range c.Modules {
		ast.WalkRules(m, func(r *ast.Rule) bool {
			rules = append(rules, r)
			return false
		})
		ast.WalkExprs(m, func(x *ast.Expr) bool {
			with = with || len(x.With) > 0
			return with
		})
	}
	if with {
		return nil
	}
	const (
		unknown = iota
		visiting
		isPure
		notPure
	)
	state := map[*ast.Rule]int{}
	var pure func(r *ast.Rule) bool
	pure = func(r *ast.Rule) bool {
		switch state[r] {
		case visiting, notPure:
			return false // a cycle is never trusted
		case isPure:
			return true
		}
		state[r] = visiting
		ok := readsOnlyPolicies(r)
		for _, ref := range dataRefs(r) {
			if !ok {
				break
			}
			// Every rule the ref may reach: those at or under its ground
			// prefix, and those whose document holds it.
			for _, d := range c.GetRules(ref.GroundPrefix()) {
				if !pure(d) {
					ok = false
					break
				}
			}
		}
		if ok && r.Else != nil {
			ok = pure(r.Else)
		}
		state[r] = notPure
		if ok {
			state[r] = isPure
		}
		return ok
	}
	out := &purity{}
	for _, r := range rules {
		out.add(r.Path(), pure(r))
	}
	return out
}

// readsOnlyPolicies tells whether every read of the input in a rule (its
// head and body) is a read of input.policies or under it.
func readsOnlyPolicies(r *ast.Rule) bool {
	ok := true
	var vis *ast.GenericVisitor
	vis = ast.NewGenericVisitor(func(x any) bool {
		if !ok {
			return true
		}
		switch x := x.(type) {
		case ast.Ref:
			if x[0].Value.Compare(ast.InputRootDocument.Value) == 0 {
				if len(x) < 2 || !x[1].Equal(policiesKey) {
					ok = false
					return true
				}
			} else {
				vis.Walk(x[0])
			}
			for _, t := range x[1:] {
				vis.Walk(t) // input may be read inside a ref: p[input.x]
			}
			return true
		case ast.Var:
			// The whole input, as a value (object.get(input, ...)).
			ok = !x.Equal(ast.InputRootDocument.Value)
		}
		return false
	})
	vis.Walk(r.Head)
	vis.Walk(r.Body)
	return ok
}

// dataRefs lists the refs to data in a rule: the rules it reads and the
// functions it calls.
func dataRefs(r *ast.Rule) []ast.Ref {
	var refs []ast.Ref
	collect := func(x ast.Ref) bool {
		if x[0].Value.Compare(ast.DefaultRootDocument.Value) == 0 {
			refs = append(refs, x)
		}
		return false
	}
	ast.WalkRefs(r.Head, collect)
	ast.WalkRefs(r.Body, collect)
	return refs
}

// purity is a tree of rule paths, by segment after data: whether the
// rules at a path are pure (all of them; a path some impure rule shares is
// not).
type purity struct {
	next map[string]*purity
	rule bool // rules are defined at this path
	pure bool
}

func (p *purity) add(path ast.Ref, pure bool) {
	n := p
	for _, t := range path[1:] {
		s, ok := t.Value.(ast.String)
		if !ok {
			return // not a path of ground strings: never shared
		}
		if n.next == nil {
			n.next = map[string]*purity{}
		}
		c := n.next[string(s)]
		if c == nil {
			c = &purity{}
			n.next[string(s)] = c
		}
		n = c
	}
	if n.rule {
		n.pure = n.pure && pure
	} else {
		n.rule, n.pure = true, pure
	}
}

// of tells whether a key of OPA's virtual cache (a rule's ref, perhaps
// with a key into its document, or a function's ref followed by its
// arguments) is a pure rule's or function's.
func (p *purity) of(key ast.Ref) bool {
	if len(key) == 0 {
		return false
	}
	if fn, ok := key[0].Value.(ast.Ref); ok {
		key = fn
	}
	if key[0].Value.Compare(ast.DefaultRootDocument.Value) != 0 {
		return false
	}
	n := p
	for _, t := range key[1:] {
		s, ok := t.Value.(ast.String)
		if !ok {
			return false
		}
		if n = n.next[string(s)]; n == nil {
			return false
		}
		if n.rule {
			return n.pure
		}
	}
	return false
}

// sharedValues is what pure rules and functions evaluated to under one
// set of policies, shared by every evaluation under them.
type sharedValues struct {
	mu sync.RWMutex
	vc topdown.VirtualCache
	n  int
}

// maxShared bounds how many values one set of policies keeps: past it,
// they are forgotten and gathered again by the evaluations that follow.
const maxShared = 4096

// maxFromOne bounds how many function values one evaluation shares. One
// that computed more (a large plan of distinct children) shares only its
// rules' values: its values of paths and budgets would push out what
// small plans judged again and again keep, and are seldom met again.
const maxFromOne = 256

// layered is the virtual cache of one evaluation: its own values, over
// the values shared under its policies, to which it adds the pure ones it
// computed once the evaluation succeeded (commit).
type layered struct {
	local   topdown.VirtualCache
	shared  *sharedValues
	pure    *purity
	depth   int // frames pushed by with: nothing is shared inside one
	rules   []pendingValue
	funcs   []pendingValue
	tooMany bool // more than maxFromOne function values
}

type pendingValue struct {
	ref   ast.Ref
	value *ast.Term
}

func (l *layered) Push() { l.local.Push(); l.depth++ }
func (l *layered) Pop()  { l.local.Pop(); l.depth-- }

func (l *layered) Keys() []ast.Ref { return l.local.Keys() }

func (l *layered) Get(ref ast.Ref) (*ast.Term, bool) {
	if v, undefined := l.local.Get(ref); v != nil || undefined {
		return v, undefined
	}
	if l.depth != 0 || !l.pure.of(ref) {
		return nil, false
	}
	l.shared.mu.RLock()
	defer l.shared.mu.RUnlock()
	return l.shared.vc.Get(ref)
}

func (l *layered) Put(ref ast.Ref, value *ast.Term) {
	l.local.Put(ref, value)
	if l.depth != 0 || !l.pure.of(ref) {
		return
	}
	p := pendingValue{append(ast.Ref(nil), ref...), value} // OPA reuses the key's slice
	if _, fn := ref[0].Value.(ast.Ref); !fn {
		l.rules = append(l.rules, p)
		return
	}
	switch {
	case l.tooMany:
	case len(l.funcs) == maxFromOne:
		l.funcs, l.tooMany = nil, true
	default:
		l.funcs = append(l.funcs, p)
	}
}

// commit shares what the evaluation computed of pure rules and functions.
// Only an evaluation that succeeded may commit: OPA keeps a function's
// value before its other bodies have confirmed it (a conflict aborts the
// evaluation), so an aborted one may hold a value none should reuse.
func (l *layered) commit() {
	if l == nil {
		return
	}
	n := len(l.rules) + len(l.funcs)
	if n == 0 {
		return
	}
	l.shared.mu.Lock()
	defer l.shared.mu.Unlock()
	if l.shared.n+n > maxShared {
		l.shared.vc, l.shared.n = topdown.NewVirtualCache(), 0
	}
	for _, vs := range [][]pendingValue{l.rules, l.funcs} {
		for _, p := range vs {
			l.shared.vc.Put(p.ref, p.value)
		}
	}
	l.shared.n += n
}
