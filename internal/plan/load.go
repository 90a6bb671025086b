package plan

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/spawngate/spawngate/internal/jsonpointer"
)

// Plan is a spawn plan read from one document.
type Plan struct {
	// Source names the document: a file name as given, or <stdin>.
	Source string
	// Policy is the plan's own policy, or nil when it has none.
	Policy Policy
	// Children are the children as written, each a JSON-shaped value.
	Children []any
	// Issues are schema violations inside children, in child and pointer
	// order. Each refuses its child.
	Issues []Issue
	// Reps holds, for each group of children the schema and the checks
	// cannot tell apart, the index of its first child; Group holds each
	// child's group. See group.go.
	Reps, Group []int
}

// Policy is a validated policy object (see schemas/policy.schema.json).
type Policy map[string]any

// Issue is a schema violation inside one child.
type Issue struct {
	Child   int    // index of the child in the plan
	Field   string // JSON pointer relative to the child; "" for the child itself
	Message string
}

// Loader reads plans and policies against the embedded schemas. Build one
// per process; it is safe for concurrent use.
type Loader struct {
	limits  Limits
	schemas *schemaSet
}

// NewLoader returns a loader that reads with the given limits.
func NewLoader(lim Limits) (*Loader, error) {
	s, err := embeddedSchemas()
	if err != nil {
		return nil, err
	}
	return &Loader{limits: lim, schemas: s}, nil
}

// The embedded schemas are compiled once per process, by whoever needs
// them first.
var (
	schemasOnce     sync.Once
	compiledSchemas *schemaSet
	schemasErr      error
)

func embeddedSchemas() (*schemaSet, error) {
	schemasOnce.Do(func() {
		compiledSchemas, schemasErr = compileSchemas()
		if schemasErr != nil {
			schemasErr = fmt.Errorf("compiling the embedded schemas: %w", schemasErr)
		}
	})
	return compiledSchemas, schemasErr
}

// Limits returns the limits the loader reads with.
func (l *Loader) Limits() Limits { return l.limits }

// Plan reads a spawn plan. A document the gate cannot evaluate is an
// *Error; a child that breaks the schema is an Issue of the plan.
func (l *Loader) Plan(source string, data []byte) (*Plan, error) {
	doc, err := l.object(source, data)
	if err != nil {
		return nil, err
	}
	p := &Plan{Source: source}
	shell := doc
	var members [][]int
	if children, ok := doc["plan"].([]any); ok {
		if len(children) > l.limits.MaxChildren {
			return nil, &Error{Source: source, Pointer: "/plan", Msg: fmt.Sprintf("%d children, more than %d (limit --max-children)", len(children), l.limits.MaxChildren)}
		}
		// The document is validated with one representative per group of
		// children the schema cannot tell apart (group.go); what the
		// schema says of a representative it says of every member.
		g := grouper{abstract: l.schemas.abstract}
		p.Children = children
		p.Reps, p.Group = g.group(children)
		members = make([][]int, len(p.Reps))
		for i, k := range p.Group {
			members[k] = append(members[k], i)
		}
		reps := make([]any, len(p.Reps))
		for k, i := range p.Reps {
			reps[k] = children[i]
		}
		shell = make(map[string]any, len(doc))
		for k, v := range doc {
			shell[k] = v
		}
		shell["plan"] = reps
	}
	var docProblems []problem
	for _, pr := range l.schemas.validate(l.schemas.plan, shell) {
		if rep, field, ok := splitChild(pr.pointer); ok {
			for _, child := range members[rep] {
				p.Issues = append(p.Issues, Issue{Child: child, Field: field, Message: pr.msg})
			}
			continue
		}
		if pr.pointer == "/plan" && pr.msg == "must not be empty" {
			pr.msg = "the plan lists no children: nothing to check"
		}
		docProblems = append(docProblems, pr)
	}
	if len(docProblems) > 0 {
		return nil, documentError(source, docProblems)
	}
	if pol, ok := doc["policy"].(map[string]any); ok {
		p.Policy = pol
	}
	p.Issues = append(p.Issues, duplicateIDs(p.Children)...)
	sort.SliceStable(p.Issues, func(i, j int) bool {
		a, b := p.Issues[i], p.Issues[j]
		if a.Child != b.Child {
			return a.Child < b.Child
		}
		return jsonpointer.Compare(a.Field, b.Field) < 0
	})
	return p, nil
}

// Policy reads an operator policy: a document whose top level is the policy
// object itself.
func (l *Loader) Policy(source string, data []byte) (Policy, error) {
	doc, err := l.object(source, data)
	if err != nil {
		return nil, err
	}
	if problems := l.schemas.validate(l.schemas.policy, doc); len(problems) > 0 {
		return nil, documentError(source, problems)
	}
	return doc, nil
}

// object decodes a document whose top level must be an object.
func (l *Loader) object(source string, data []byte) (map[string]any, error) {
	syntax, err := SyntaxOf(source)
	if err != nil {
		return nil, err
	}
	v, err := Decode(source, data, syntax, l.limits)
	if err != nil {
		return nil, err
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, &Error{Source: source, Msg: fmt.Sprintf("the top level must be a mapping of keys, not %s", describeValue(v))}
	}
	return obj, nil
}

func describeValue(v any) string {
	switch v.(type) {
	case []any:
		return "a list"
	case string:
		return "a string"
	case nil:
		return "null"
	case bool:
		return "a boolean"
	}
	return "a number"
}

// documentError reports the first problem and counts the rest: one line.
func documentError(source string, problems []problem) *Error {
	first := problems[0]
	msg := first.msg
	if n := len(problems) - 1; n == 1 {
		msg += " (and 1 more problem)"
	} else if n > 1 {
		msg += fmt.Sprintf(" (and %d more problems)", n)
	}
	return &Error{Source: source, Pointer: first.pointer, Msg: msg}
}

var childPointer = regexp.MustCompile(`^/plan/(0|[1-9][0-9]*)(/.*)?$`)

// splitChild tells whether a pointer lies inside one child, and where.
func splitChild(ptr string) (child int, field string, ok bool) {
	m := childPointer.FindStringSubmatch(ptr)
	if m == nil {
		return 0, "", false
	}
	child, err := strconv.Atoi(m[1])
	if err != nil {
		return 0, "", false
	}
	return child, m[2], true
}

// duplicateIDs refuses every child whose id another child also uses: an
// orchestrator that addresses children by id could mean either.
func duplicateIDs(children []any) []Issue {
	first := make(map[string]int, len(children))
	var repeated map[string][]int // only ids used more than once
	for i, c := range children {
		obj, ok := c.(map[string]any)
		if !ok {
			continue
		}
		id, ok := obj["id"].(string)
		if !ok || id == "" { // an empty id is refused as empty
			continue
		}
		j, seen := first[id]
		if !seen {
			first[id] = i
			continue
		}
		if repeated == nil {
			repeated = map[string][]int{}
		}
		if repeated[id] == nil {
			repeated[id] = []int{j}
		}
		repeated[id] = append(repeated[id], i)
	}
	var issues []Issue
	for id, idx := range repeated {
		for _, i := range idx {
			var others []string
			for _, j := range idx {
				if j != i {
					others = append(others, strconv.Itoa(j))
				}
			}
			who := "child " + others[0] + " also uses it"
			if len(others) > 1 {
				who = "children " + strings.Join(others, ", ") + " also use it"
			}
			issues = append(issues, Issue{Child: i, Field: "/id", Message: fmt.Sprintf("id %s is not unique: %s", quote(id), who)})
		}
	}
	return issues
}

// Abstracted lists the child keys whose values the schema sees only by type
// and length, so that children differing only in them are judged once (see
// group.go). No check may read them.
func Abstracted() ([]string, error) {
	s, err := embeddedSchemas()
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(s.abstract))
	for name := range s.abstract {
		names = append(names, name)
	}
	sort.Strings(names)
	return names, nil
}
