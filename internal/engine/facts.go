package engine

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/open-policy-agent/opa/v1/ast"
)

// Facts are what the checks read most, per child or per distinct value,
// and what the input alone says: which tools and paths a batch requests
// and where, which of those tools are plain names, the name each plain path stands
// for, which budgets are whole numbers written as one, which children lack
// a list of tools or of paths. OPA spends about a
// microsecond per expression, and these take several each per child, so
// the engine computes them here and hands them to the checks as
// input.facts. Each fact says what a value is, never whether it is
// allowed: every decision stays in the Rego. policy/lib.rego defines each
// fact from the input too, and reads that definition when the input lacks
// the fact (opa test, opa eval, a bundle); facts_test.go holds the two
// equal on random and hostile inputs.

// The patterns of policy/lib.rego, compiled as OPA compiles them (its
// regex.match is Go's regexp). TestFactPatternsAreLibs holds them equal.
var (
	toolNamePattern = regexp.MustCompile(`^[A-Za-z0-9_]([A-Za-z0-9_.:-]*[A-Za-z0-9_])?$`)
	plainPattern    = regexp.MustCompile(`^(/|/?[.]*[A-Za-z0-9_@-]([A-Za-z0-9._@-]*[A-Za-z0-9_@-])?(/[.]*[A-Za-z0-9_@-]([A-Za-z0-9._@-]*[A-Za-z0-9_@-])?)*/?)$`)
	windowsDevice   = regexp.MustCompile(`(?i)(^|/)(con|prn|aux|nul|com[1-9]|lpt[1-9])(\.[^/]*)?(/|$)`)
	wholePattern    = regexp.MustCompile(`^-?[0-9]+$`)
)

var (
	factsKey          = ast.InternedTerm("facts")
	requestedToolsKey = ast.InternedTerm("requested_tools")
	requestedPathsKey = ast.InternedTerm("requested_paths")
	toolNamesKey      = ast.InternedTerm("tool_names")
	pathNamesKey      = ast.InternedTerm("path_names")
	wholeBudgetsKey   = ast.InternedTerm("whole_budgets")
	toolPlacesKey     = ast.InternedTerm("tool_places")
	pathPlacesKey     = ast.InternedTerm("path_places")
	budgetTokensKey   = ast.InternedTerm("budget_tokens")
	withoutToolsKey   = ast.InternedTerm("without_tools")
	withoutPathsKey   = ast.InternedTerm("without_path_list")
	nonstringPathsKey = ast.InternedTerm("nonstring_paths")
	toolsKey          = ast.InternedTerm("tools")
	pathsKey          = ast.InternedTerm("paths")
)

// factsOf is batchFacts; a test sets it to give no facts, and holds the
// checks' findings the same either way.
var factsOf = batchFacts

// batchFacts computes the facts of one batch: children is input.children
// in OPA's form, policies input.policies, literals input.float_literals.
// A fact the Rego defines with more care than is worth repeating here
// (path_names when the plan root is not a plain string) is left out, and
// the checks compute it themselves.
func batchFacts(children, policies ast.Value, literals map[string]any) ast.Value {
	arr, ok := children.(*ast.Array)
	if !ok {
		return nil
	}
	tools, paths := ast.NewSet(), ast.NewSet()
	var toolPlaces, pathPlaces places
	budgets := ast.NewObject()
	withoutTools, withoutPaths, nonstringPaths := ast.NewSet(), ast.NewSet(), ast.NewSet()
	for i := range arr.Len() {
		child, ok := arr.Elem(i).Value.(ast.Object)
		if !ok {
			continue // lib.children holds objects only
		}
		if list, ok := valueAt(child, toolsKey).(*ast.Array); ok && list.Len() > 0 {
			for j := range list.Len() {
				t := list.Elem(j)
				tools.Add(t)
				toolPlaces.add(t, i, j)
			}
		} else {
			withoutTools.Add(ast.InternedTerm(i))
		}
		if list, ok := valueAt(child, pathsKey).(*ast.Array); ok {
			for j := range list.Len() {
				if p := list.Elem(j); isString(p) {
					paths.Add(p)
					pathPlaces.add(p, i, j)
				} else {
					nonstringPaths.Add(ast.ArrayTerm(ast.InternedTerm(i), ast.InternedTerm(j)))
				}
			}
		} else {
			withoutPaths.Add(ast.InternedTerm(i))
		}
		b := child.Get(budgetTokensKey)
		if b == nil {
			continue
		}
		if n, ok := b.Value.(ast.Number); ok && wholeNumber(n) {
			if _, floated := literals[fmt.Sprintf("/%d/budget_tokens", i)]; !floated {
				budgets.Insert(ast.InternedTerm(i), b)
			}
		}
	}
	names := ast.NewSet()
	tools.Foreach(func(t *ast.Term) {
		if s, ok := t.Value.(ast.String); ok && toolNamePattern.MatchString(string(s)) {
			names.Add(t)
		}
	})
	facts := ast.NewObject(
		ast.Item(requestedToolsKey, ast.NewTerm(tools)),
		ast.Item(requestedPathsKey, ast.NewTerm(paths)),
		ast.Item(toolNamesKey, ast.NewTerm(names)),
		ast.Item(wholeBudgetsKey, ast.NewTerm(budgets)),
		ast.Item(toolPlacesKey, ast.NewTerm(toolPlaces.object())),
		ast.Item(pathPlacesKey, ast.NewTerm(pathPlaces.object())),
		ast.Item(withoutToolsKey, ast.NewTerm(withoutTools)),
		ast.Item(withoutPathsKey, ast.NewTerm(withoutPaths)),
		ast.Item(nonstringPathsKey, ast.NewTerm(nonstringPaths)),
	)
	if prefix, ok := planPrefix(policies); ok {
		named := ast.NewObject()
		paths.Foreach(func(t *ast.Term) {
			if name, ok := pathName(prefix, string(t.Value.(ast.String))); ok {
				named.Insert(t, ast.StringTerm(name))
			}
		})
		facts.Insert(pathNamesKey, ast.NewTerm(named))
	}
	return facts
}

func isString(t *ast.Term) bool {
	_, ok := t.Value.(ast.String)
	return ok
}

// places is where each distinct value appears in a batch: the [child,
// position] pairs of its occurrences in the children's lists, in order.
// Values are told apart as Rego tells them (1 and 1.0 are one value).
type places struct {
	keys    []*ast.Term
	lists   [][]*ast.Term
	strings map[string]int // by text, for the strings (nearly every value)
	others  *ast.ValueMap  // the index of any other value, as a number
}

func (p *places) add(v *ast.Term, i, j int) {
	k, found := 0, false
	if s, ok := v.Value.(ast.String); ok {
		if p.strings == nil {
			p.strings = map[string]int{}
		}
		k, found = p.strings[string(s)]
		if !found {
			p.strings[string(s)] = len(p.keys)
		}
	} else {
		if p.others == nil {
			p.others = ast.NewValueMap()
		}
		if n := p.others.Get(v.Value); n != nil {
			k, _ = n.(ast.Number).Int()
			found = true
		} else {
			p.others.Put(v.Value, ast.InternedTerm(len(p.keys)).Value)
		}
	}
	if !found {
		k = len(p.keys)
		p.keys = append(p.keys, v)
		p.lists = append(p.lists, nil)
	}
	p.lists[k] = append(p.lists[k], ast.ArrayTerm(ast.InternedTerm(i), ast.InternedTerm(j)))
}

func (p *places) object() ast.Object {
	obj := ast.NewObjectWithCapacity(len(p.keys))
	for k, key := range p.keys {
		obj.Insert(key, ast.ArrayTerm(p.lists[k]...))
	}
	return obj
}

func valueAt(obj ast.Object, key *ast.Term) ast.Value {
	if t := obj.Get(key); t != nil {
		return t.Value
	}
	return nil
}

// pathName is the name a path stands for in lib.path_names, when it is
// plain: with a slash appended, itself when absolute, else read against
// the plan's own root (prefix, as planPrefix gives it).
func pathName(prefix, p string) (string, bool) {
	if !plainPath(p) {
		return "", false
	}
	var b strings.Builder
	if !strings.HasPrefix(p, "/") {
		b.WriteString(prefix)
	}
	b.WriteString(strings.TrimSuffix(p, "/"))
	b.WriteByte('/')
	return b.String(), true
}

// plainPath is lib.plain_path: a path made of plain segments, which names
// no Windows device, is at most 4096 bytes, and does not start with - or @.
// It scans for plainPattern and windowsDevice by hand, since Go's regexp
// took a tenth of a run on 100,000 distinct children;
// TestPlainPathIsThePatterns holds the scan equal to the patterns.
func plainPath(p string) bool {
	if len(p) > 4096 || strings.HasPrefix(p, "-") || strings.HasPrefix(p, "@") {
		return false
	}
	if p == "/" {
		return true
	}
	p = strings.TrimPrefix(p, "/")
	p = strings.TrimSuffix(p, "/")
	for {
		seg, rest, more := strings.Cut(p, "/")
		if !plainSegment(seg) || windowsDeviceSegment(seg) {
			return false
		}
		if !more {
			return true
		}
		p = rest
	}
}

// plainSegment is one segment of plainPattern: A-Z a-z 0-9 . _ - @ only,
// at least one, the last not a dot (so not all dots either).
func plainSegment(seg string) bool {
	if seg == "" || seg[len(seg)-1] == '.' {
		return false
	}
	for i := range len(seg) {
		c := seg[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '.' || c == '_' || c == '-' || c == '@') {
			return false
		}
	}
	return true
}

// windowsDeviceSegment is windowsDevice on one plain segment: a device
// name in any case, alone or before a dot.
func windowsDeviceSegment(seg string) bool {
	name, _, _ := strings.Cut(seg, ".")
	switch len(name) {
	case 3:
		switch strings.ToLower(name) {
		case "con", "prn", "aux", "nul":
			return true
		}
	case 4:
		switch strings.ToLower(name[:3]) {
		case "com", "lpt":
			return '1' <= name[3] && name[3] <= '9'
		}
	}
	return false
}

// planPrefix is lib.plan_prefix, when the root it comes from is plainly a
// string: the plan policy's root when there is a plan policy (an object),
// else the operator's, with a slash appended. Anything else (a plan policy
// without a root, a root that is not a string) is left to the Rego.
func planPrefix(policies ast.Value) (string, bool) {
	obj, ok := policies.(ast.Object)
	if !ok {
		return "", false
	}
	source := ast.InternedTerm("operator")
	if t := obj.Get(ast.InternedTerm("plan")); t != nil {
		source = ast.InternedTerm("plan")
	}
	pol, ok := valueAt(obj, source).(ast.Object)
	if !ok {
		return "", false
	}
	root, ok := valueAt(pol, ast.InternedTerm("workspace_root")).(ast.String)
	if !ok {
		return "", false
	}
	return strings.TrimSuffix(string(root), "/") + "/", true
}

// wholeNumber is lib.rego's whole(n): whether sprintf("%v", [n]) writes n
// as digits alone, as OPA's sprintf writes a number: an integer (however
// large) by its digits, a number with a fraction or an exponent through a
// float64 (so 4e4 is "40000": the float literals tell those apart), or as
// written when no float64 holds it.
func wholeNumber(n ast.Number) bool {
	s := string(n)
	if strings.ContainsAny(s, ".eE") {
		if f, ok := n.Float64(); ok {
			s = fmt.Sprintf("%v", f)
		}
	}
	return wholePattern.MatchString(s)
}
