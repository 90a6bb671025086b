package engine

import (
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

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
// that uses with (which changes what a rule sees) turns sharing off, and a
// rule whose ref head is more than a name and one key (flags[k].root)
// keeps everything at and under its prefix unshared (purity.add).

// sharing is an engine's memory of pure values, by policies.
type sharing struct {
	compiler *ast.Compiler
	evals    atomic.Int64
	once     sync.Once
	pure     *purity // found on the second evaluation; nil when nothing can be shared
	mu       sync.Mutex
	sets     map[string]*sharedValues // by the policies as OPA writes them
}

// maxPolicySets bounds how many sets of policies an engine remembers
// values for. A server judging plans that bring policies of their own
// forgets them all when it passes this, and starts again.
const maxPolicySets = 64

func newSharing(c *ast.Compiler) *sharing { return &sharing{compiler: c} }

// purity is what pureRules found of the engine's modules (nil when a
// module uses with), found once, when first asked.
func (s *sharing) purity() *purity {
	s.once.Do(func() { s.pure = pureRules(s.compiler) })
	return s.pure
}

var policiesKey = ast.StringTerm("policies")

// cacheFor is the virtual cache of one evaluation on input: one that
// reads and adds to the values shared under input.policies. nil (OPA's
// own cache) when nothing is shared. The first evaluation of an engine
// shares nothing: a gate that judges one plan (a hook, a check of one
// file) would find the pure rules (about a millisecond) for nothing.
func (s *sharing) cacheFor(input ast.Value) *layered {
	if s == nil || s.evals.Add(1) == 1 {
		return nil
	}
	p := s.purity()
	if p == nil {
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
	return &layered{local: topdown.NewVirtualCache(), shared: s.valuesFor(pol.Value), pure: p}
}

// valuesFor is the shared values under policies. They are told apart by
// their text, not by value: Rego calls 1e3 and 1000 equal, but sprintf
// writes them differently, and a message must never come from the other.
func (s *sharing) valuesFor(policies ast.Value) *sharedValues {
	key := sharedKey(policies) // keys sorted: equal objects, equal text
	s.mu.Lock()
	defer s.mu.Unlock()
	if v, ok := s.sets[key]; ok {
		return v
	}
	if s.sets == nil || len(s.sets) == maxPolicySets {
		s.sets = map[string]*sharedValues{}
	}
	v := &sharedValues{vc: topdown.NewVirtualCache()}
	s.sets[key] = v
	return v
}

// pureRules tells, by rule path, which rules and functions of the
// compiled modules are pure; nil when a module uses with.
func pureRules(c *ast.Compiler) *purity {
	type facts struct {
		direct bool      // reads nothing of the input beyond input.policies
		deps   []ast.Ref // ground prefixes of its refs to data
	}
	var rules []*ast.Rule
	found := make(map[*ast.Rule]facts, 512)
	for _, m := range c.Modules {
		with := false
		ast.WalkRules(m, func(r *ast.Rule) bool {
			rules = append(rules, r)
			direct, deps, w := readsOf(r)
			found[r] = facts{direct, deps}
			with = with || w
			return with
		})
		if with {
			return nil
		}
	}
	const (
		unknown = iota
		visiting
		isPure
		notPure
	)
	state := make(map[*ast.Rule]int, len(rules))
	reached := map[string][]*ast.Rule{} // GetRules by ground prefix
	var pure func(r *ast.Rule) bool
	pure = func(r *ast.Rule) bool {
		switch state[r] {
		case visiting, notPure:
			return false // a cycle is never trusted
		case isPure:
			return true
		}
		state[r] = visiting
		f := found[r]
		ok := f.direct
		for _, dep := range f.deps {
			if !ok {
				break
			}
			key := refKey(dep)
			rs, seen := reached[key]
			if !seen {
				// Every rule the ref may reach: those at or under its
				// ground prefix, and those whose document holds it.
				rs = c.GetRules(dep)
				reached[key] = rs
			}
			for _, d := range rs {
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
		out.add(r.Ref(), pure(r))
	}
	out.seal()
	return out
}

// refKey is a ref of ground terms as a map key, cheaper than its String
// and as unambiguous: each term tagged with its kind and its length, so
// that data.a["b\x00c"] and data.a.b.c, or t[1] and t["1"], differ.
func refKey(ref ast.Ref) string {
	var b strings.Builder
	for _, t := range ref {
		text := ""
		if s, ok := t.Value.(ast.String); ok {
			b.WriteByte('s')
			text = string(s)
		} else {
			b.WriteByte('t')
			text = t.String()
		}
		b.WriteString(strconv.Itoa(len(text)))
		b.WriteByte(':')
		b.WriteString(text)
	}
	return b.String()
}

// readsOf walks a rule (head and body) once: whether every read of the
// input in it is a read of input.policies or under it, the ground
// prefixes of its refs to data (the rules it reads and the functions it
// calls), and whether it uses with.
func readsOf(r *ast.Rule) (direct bool, deps []ast.Ref, with bool) {
	direct = true
	var vis *ast.GenericVisitor
	vis = ast.NewGenericVisitor(func(x any) bool {
		switch x := x.(type) {
		case *ast.Expr:
			with = with || len(x.With) > 0
		case ast.Ref:
			switch {
			case x[0].Value.Compare(ast.InputRootDocument.Value) == 0:
				if len(x) < 2 || !x[1].Equal(policiesKey) {
					direct = false
				}
			case x[0].Value.Compare(ast.DefaultRootDocument.Value) == 0:
				deps = append(deps, x.GroundPrefix())
			default:
				vis.Walk(x[0])
			}
			for _, t := range x[1:] {
				vis.Walk(t) // input may be read inside a ref: p[input.x]
			}
			return true
		case ast.Var:
			// The whole input, as a value (object.get(input, ...)).
			direct = direct && !x.Equal(ast.InputRootDocument.Value)
		}
		return false
	})
	vis.Walk(r.Head)
	vis.Walk(r.Body)
	return direct, deps, with
}

// purity is a tree of rule paths, by segment after data. A key of OPA's
// virtual cache is shared only when the first rule node on its path, and
// every rule node under it, is pure: the document of a rule can hold what
// rules defined under its path add (flags[k].root beside flags.secret),
// so a key is judged by every rule that can write into it.
type purity struct {
	next     map[string]*purity
	rule     bool // rules are defined at this path
	pure     bool // every rule defined at this path is pure
	treePure bool // every rule at or under this path is pure (seal)
}

// add records a rule by its ref (package path and head ref). A head whose
// ref holds anything but strings, except a variable in the last place (a
// partial set or object, p[k]), is recorded at its string prefix as impure:
// OPA keys such rules' values by parts of the ref (and v1.22.3 keys them
// wrongly within one evaluation), so nothing at or under that prefix is
// ever shared.
func (p *purity) add(ref ast.Ref, pure bool) {
	n := p
	for i, t := range ref[1:] {
		s, ok := t.Value.(ast.String)
		if !ok {
			_, isVar := t.Value.(ast.Var)
			if !isVar || i != len(ref)-2 {
				pure = false
			}
			break
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

// seal works out treePure for the whole tree; call it once every rule is
// added.
func (p *purity) seal() bool {
	p.treePure = !p.rule || p.pure
	for _, c := range p.next {
		if !c.seal() {
			p.treePure = false
		}
	}
	return p.treePure
}

// of tells whether a key of OPA's virtual cache (a rule's ref, perhaps
// with a key into its document, or a function's ref followed by its
// arguments) may be shared: the first rule node on its path and all under
// it are pure. A key that reaches no rule node (a package, a prefix of
// rules) is not.
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
			return n.treePure
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
	tooMany bool // more than maxFromOne function values: none shared
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
	if l.depth != 0 || (l.tooMany && isCall(ref)) || !l.pure.of(ref) {
		return nil, false
	}
	// A value found here is not copied into the local cache: a lookup in
	// the shared values costs what one in the local cache costs, and the
	// copy cost a few allocations per key (OPA's cache is a tree of hash
	// maps), a seventh of all a fresh decision made.
	l.shared.mu.RLock()
	v, undefined := l.shared.vc.Get(ref)
	l.shared.mu.RUnlock()
	return v, undefined
}

func (l *layered) Put(ref ast.Ref, value *ast.Term) {
	l.local.Put(ref, value)
	call := isCall(ref)
	if l.depth != 0 || (l.tooMany && call) || !l.pure.of(ref) {
		return
	}
	p := pendingValue{append(ast.Ref(nil), ref...), value} // OPA reuses the key's slice
	switch {
	case !call:
		l.rules = append(l.rules, p)
	case len(l.funcs) == maxFromOne:
		// A large evaluation (a batch of distinct children): it shares
		// no function values, and looks none up, from here on.
		l.funcs, l.tooMany = nil, true
	default:
		l.funcs = append(l.funcs, p)
	}
}

// isCall tells whether a virtual cache key is a function call's: its ref
// followed by its arguments.
func isCall(key ast.Ref) bool {
	_, fn := key[0].Value.(ast.Ref)
	return fn
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
