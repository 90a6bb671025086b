package plan

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/spawngate/spawngate/internal/document"
	"github.com/spawngate/spawngate/internal/jsonpointer"
	"github.com/spawngate/spawngate/internal/memo"
)

// Plan is a spawn plan read from one document.
type Plan struct {
	// Source names the document: a file name as given, or <stdin>.
	Source string
	// Policy is the plan's own policy, or nil when it has none.
	Policy Policy
	// Children are the children as written, each a JSON-shaped value.
	Children []any
	// Reps holds, for each group of children the schema and the checks
	// cannot tell apart, the index of its first child (its
	// representative); Group holds each child's group. See group.go.
	Reps, Group []int
	// Keys holds each group's key: the SHA-256 of everything the schema
	// and the checks can see of its children, written out (see group.go).
	// Children with equal keys are judged alike, also across plans.
	Keys []string
	// GroupViolations holds, for each group, the schema violations of its
	// representative, which hold for every member of the group, in pointer
	// order. (Child is the representative's index.) Kept by group, a
	// violation repeated by 100,000 identical children is stored once.
	GroupViolations [][]SchemaViolation
	// OwnViolations are the violations of one child alone: an id another child
	// also uses. Each refuses its child.
	OwnViolations []SchemaViolation
	// Tree places each child in the plan tree when the plan is nested (a
	// child has children) or has a parent block; nil otherwise, and then
	// child i is /plan/i. See tree.go.
	Tree []Node
	// Parent is the plan's parent block, or nil.
	Parent map[string]any
	// Parents holds what the checks may read of each parent, by the
	// pointer its children name it by; nil when Tree is.
	Parents map[string]any
}

// SchemaViolations lists every issue of every child, the group issues repeated
// for each member, in child and pointer order. It is for tests and small
// plans: on a plan of many identical children it is as large as they are.
func (p *Plan) SchemaViolations() []SchemaViolation {
	var out []SchemaViolation
	for i, k := range p.Group {
		for _, is := range p.GroupViolations[k] {
			is.Child = i
			out = append(out, is)
		}
	}
	out = append(out, p.OwnViolations...)
	sortIssues(out)
	return out
}

// sortIssues puts issues in child, pointer and message order; issues equal
// in all three are equal, so the order does not depend on the input's.
func sortIssues(issues []SchemaViolation) {
	slices.SortFunc(issues, func(a, b SchemaViolation) int {
		if a.Child != b.Child {
			return cmp.Compare(a.Child, b.Child)
		}
		if c := jsonpointer.Compare(a.Field, b.Field); c != 0 {
			return c
		}
		return strings.Compare(a.Message, b.Message)
	})
}

// Policy is a validated policy object (see schemas/policy.schema.json).
type Policy map[string]any

// SchemaViolation is a schema violation inside one child.
type SchemaViolation struct {
	Child   int    // index of the child in the plan
	Field   string // JSON pointer relative to the child; "" for the child itself
	Message string
}

// Loader reads plans and policies against the embedded schemas. Build one
// per process; it is safe for concurrent use.
type Loader struct {
	limits  document.Limits
	schemas *schemaSet
	// seen remembers what the schema said of children validated before,
	// by key, so that a child judged again (the same agent spawned again,
	// the same template in another plan) is not validated again.
	seen *memo.Memo[[]schemaError]
	// shells remembers what the schema said of a document with its plan
	// list cut to the first representative, by the rest of the document
	// and that representative's key: a hook's or a server's documents are
	// mostly alike but for the children.
	shells *memo.Memo[[]schemaError]
}

// shellMemoSize is how many documents' shells a loader remembers: a few
// kinds of document around many kinds of child.
const shellMemoSize = 256

// NewLoader returns a loader that reads with the given limits.
func NewLoader(lim document.Limits) (*Loader, error) {
	s, err := embeddedSchemas()
	if err != nil {
		return nil, err
	}
	return &Loader{limits: lim, schemas: s, seen: memo.New[[]schemaError](memo.Size), shells: memo.New[[]schemaError](shellMemoSize)}, nil
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
func (l *Loader) Limits() document.Limits { return l.limits }

// Plan reads a spawn plan. A document the gate cannot evaluate is an
// *document.Error; a child that breaks the schema is an Issue of the plan. When ctx
// ends first, Plan stops and returns ctx.Err().
func (l *Loader) Plan(ctx context.Context, source string, data []byte) (*Plan, error) {
	return l.plan(ctx, source, data, false)
}

// PlanBesidePolicy reads a spawn plan whose policy block is the
// operator's (PolicyInPlan): the block is passed over, neither validated
// as a plan's own policy (it may set what only the operator may) nor
// applied as one (it would judge every child twice). The rest is read as
// Plan reads it, at the same places in data.
func (l *Loader) PlanBesidePolicy(ctx context.Context, source string, data []byte) (*Plan, error) {
	return l.plan(ctx, source, data, true)
}

func (l *Loader) plan(ctx context.Context, source string, data []byte, policyIsOperator bool) (*Plan, error) {
	doc, err := l.object(ctx, source, data)
	if err != nil {
		return nil, err
	}
	if policyIsOperator {
		delete(doc, PolicyInPlanPointer[1:])
	}
	p := &Plan{Source: source}
	children, isList := doc["plan"].([]any)
	if isList {
		if len(children) > l.limits.MaxChildren {
			return nil, &document.Error{Source: source, Pointer: "/plan", Msg: fmt.Sprintf("%d children, more than %d", len(children), l.limits.MaxChildren), Limit: "max-children"}
		}
		p.Parent, _ = doc["parent"].(map[string]any)
		if children, p.Tree, err = flatten(ctx, source, children, p.Parent, l.limits); err != nil {
			return nil, err
		}
		p.Children = children
		if err := l.checkEntries(source, p); err != nil {
			return nil, err
		}
		// The document is validated with one representative per group of
		// children the schema cannot tell apart (group.go); what the
		// schema says of a representative it says of every member.
		g := grouper{abstract: l.schemas.abstract}
		if p.Tree != nil {
			p.Parents = parentFacts(children, p.Tree, p.Parent)
			g.suffix = p.treeKeys()
		}
		if p.Reps, p.Keys, p.Group, err = g.group(ctx, children); err != nil {
			return nil, err
		}
	}
	reps := make([]any, len(p.Reps))
	for k, i := range p.Reps {
		reps[k] = children[i]
	}
	// What the schema said is remembered by memo's rule (the key holds
	// all it reads): each child by its key, the shell by the rest of the
	// document and its one child (validatePlan). A plan of more kinds of
	// children than seen keeps remembers nothing: its children would only
	// push every entry out in turn, and what earlier plans left would be
	// lost.
	var unkeyed []string
	if len(p.Keys) != len(reps) {
		unkeyed = append(unkeyed, "children without keys")
	}
	seen := l.seen.For("", len(reps), unkeyed)
	if !seen.On() {
		unkeyed = append(unkeyed, "a plan the memory of children does not hold")
	}
	docProblems, repProblems, err := l.schemas.validatePlan(ctx, doc, reps, p.Keys, isList, seen, l.shells, unkeyed)
	if err != nil {
		return nil, err
	}
	for k, i := range p.Reps {
		if err := ctxErr(ctx, k); err != nil {
			return nil, err
		}
		var issues []SchemaViolation
		for _, pr := range repProblems[k] {
			issues = append(issues, SchemaViolation{Child: i, Field: pr.pointer, Message: pr.msg})
		}
		p.GroupViolations = append(p.GroupViolations, issues)
	}
	for i, pr := range docProblems {
		if pr.pointer == "/plan" && pr.msg == "must not be empty" {
			docProblems[i].msg = "the plan lists no children: nothing to check"
		}
	}
	if len(docProblems) > 0 {
		return nil, documentError(ctx, source, data, l.limits, docProblems)
	}
	if pol, ok := doc["policy"].(map[string]any); ok {
		if err := refusePending(source, "/policy", pol); err != nil {
			// At its place in the plan, as the schema's problems are.
			return nil, documentError(ctx, source, data, l.limits, []schemaError{{pointer: err.Pointer, msg: err.Msg}})
		}
		p.Policy = pol
	}
	p.OwnViolations = duplicateIDs(p.Children)
	sortIssues(p.OwnViolations)
	return p, nil
}

// checkEntries refuses a child whose tools or paths list more entries than
// the limit: every entry is judged, and may be reported, on its own.
func (l *Loader) checkEntries(source string, p *Plan) error {
	for i, c := range p.Children {
		obj, ok := c.(map[string]any)
		if !ok {
			continue
		}
		for _, key := range []string{"paths", "tools"} {
			if list, ok := obj[key].([]any); ok && len(list) > l.limits.MaxChildEntries {
				return &document.Error{Source: source, Pointer: p.Pointer(i) + "/" + key, Msg: fmt.Sprintf("%d entries, more than %d", len(list), l.limits.MaxChildEntries), Limit: "max-child-entries"}
			}
		}
	}
	return nil
}

// checkEvery is how many steps of a loop (children flattened, grouped,
// validated) the loader takes between two looks at its context: often
// enough to stop within a millisecond or so, rarely enough to cost nothing.
const checkEvery = 1 << 12

// ctxErr looks at the context every checkEvery steps of a loop.
func ctxErr(ctx context.Context, step int) error {
	if step%checkEvery != 0 {
		return nil
	}
	return ctx.Err()
}

// Policy reads an operator policy: a document whose top level is the policy
// object itself.
func (l *Loader) Policy(ctx context.Context, source string, data []byte) (Policy, error) {
	doc, err := l.object(ctx, source, data)
	if err != nil {
		return nil, err
	}
	return l.policy(ctx, source, data, "", doc)
}

// PolicyInPlanPointer is where PolicyInPlan finds the operator's policy
// in a plan document: its policy block.
const PolicyInPlanPointer = "/policy"

// PolicyInPlan reads the policy block of a plan document as the operator's
// policy, for a document that holds both, as the gate of the essay
// spawngate comes from reads one: the block is validated as Policy
// validates an operator policy's document, and every problem is placed
// in this document, under /policy. A document without one is an error,
// never "no policy".
func (l *Loader) PolicyInPlan(ctx context.Context, source string, data []byte) (Policy, error) {
	doc, err := l.object(ctx, source, data)
	if err != nil {
		return nil, err
	}
	at := PolicyInPlanPointer
	block, ok := doc[at[1:]]
	if !ok {
		return nil, documentError(ctx, source, data, l.limits, []schemaError{{pointer: at,
			msg: `required key "policy" is missing: the operator's policy is to be read from this document's policy block`}})
	}
	return l.policy(ctx, source, data, at, block)
}

// policy validates v, found at the pointer at of data ("" for the whole
// document), as an operator policy.
func (l *Loader) policy(ctx context.Context, source string, data []byte, at string, v any) (Policy, error) {
	if problems := l.schemas.validate(l.schemas.policy, v, nil); len(problems) > 0 {
		for i := range problems {
			problems[i].pointer = at + problems[i].pointer
		}
		return nil, documentError(ctx, source, data, l.limits, problems)
	}
	doc, ok := v.(map[string]any)
	if !ok { // the schema asks for an object: only a broken schema comes here
		return nil, &document.Error{Source: source, Pointer: at, Msg: "the policy is not a mapping of keys"}
	}
	if err := refusePending(source, at, doc); err != nil {
		return nil, err
	}
	if err := profileRoots(source, at, doc); err != nil {
		return nil, err
	}
	return doc, nil
}

// profileRoots refuses a role profile whose workspace_root is not inside
// the policy's own: a profile can only narrow, and a root outside would
// say so falsely (every path of its role would be refused for lying
// outside one root or the other). Inside is the rule paths.escape applies
// to a path: the root itself, or below it with a slash between, so
// /repo/ws/docs is inside /repo/ws and /repo/ws-old is not. The schema
// has already made both roots absolute and normalized.
func profileRoots(source, at string, pol map[string]any) error {
	roles, _ := pol["roles"].(map[string]any)
	root, _ := pol["workspace_root"].(string)
	for _, role := range slices.Sorted(maps.Keys(roles)) {
		profile, _ := roles[role].(map[string]any)
		own, ok := profile["workspace_root"].(string)
		if ok && !strings.HasPrefix(strings.TrimSuffix(own, "/")+"/", strings.TrimSuffix(root, "/")+"/") {
			return &document.Error{Source: source, Pointer: at + jsonpointer.Join("/roles", role, "workspace_root"),
				Msg: fmt.Sprintf("%s is not inside the policy's own workspace_root %s: a role profile can only narrow it", document.Quote(own), document.Quote(root))}
		}
	}
	return nil
}

// object decodes a document whose top level must be an object.
func (l *Loader) object(ctx context.Context, source string, data []byte) (map[string]any, error) {
	syntax, err := document.SyntaxOf(source)
	if err != nil {
		return nil, err
	}
	v, err := document.Decode(ctx, source, data, syntax, l.limits)
	if err != nil {
		return nil, err
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, &document.Error{Source: source, Msg: fmt.Sprintf("the top level must be a mapping of keys, not %s", describeValue(v))}
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

// documentError reports every problem of a document that breaks its
// schema: the first, with the others in More, each at the line and
// column of the value it points at when the document has one there. When
// ctx ends first, it returns ctx.Err(): a document refused after its
// deadline was not judged in time, and placing its problems is work that
// must stop when the caller has gone.
func documentError(ctx context.Context, source string, data []byte, lim document.Limits, problems []schemaError) error {
	pointers := make([]string, len(problems))
	for i, p := range problems {
		pointers[i] = p.pointer
	}
	at, _ := document.Locate(ctx, source, data, lim, pointers) // a place is a help, not a need
	if err := ctx.Err(); err != nil {
		return err
	}
	errs := make([]*document.Error, len(problems))
	for i, p := range problems {
		errs[i] = &document.Error{Source: source, Pointer: p.pointer, Msg: p.msg}
		if pos, ok := at[p.pointer]; ok {
			errs[i].Line, errs[i].Column = pos.Line, pos.Column
		}
	}
	first := errs[0]
	first.More = errs[1:]
	if len(first.More) == 0 {
		first.More = nil
	}
	return first
}

// duplicateIDs refuses every child whose id another child also uses: an
// orchestrator that addresses children by id could mean either. The
// message names a few of the others and counts the rest, so that 100,000
// children sharing one id cost 100,000 short messages, not 10^10 names.
func duplicateIDs(children []any) []SchemaViolation {
	users := map[string][]int{}
	for i, c := range children {
		obj, ok := c.(map[string]any)
		if !ok {
			continue
		}
		id, ok := obj["id"].(string)
		if !ok || id == "" { // an empty id is refused as empty
			continue
		}
		users[id] = append(users[id], i)
	}
	var issues []SchemaViolation
	for id, idx := range users {
		if len(idx) < 2 {
			continue
		}
		for n, i := range idx {
			issues = append(issues, SchemaViolation{Child: i, Field: "/id", Message: fmt.Sprintf("id %s is not unique: %s", document.Quote(id), others(idx, n))})
		}
	}
	return issues
}

// others names the children of idx but the n-th: "child 3 also uses it",
// "children 0, 4 and 9 also use it", or the first three and a count.
func others(idx []int, n int) string {
	const shown = 3
	var names []string
	for j, i := range idx {
		if j != n && len(names) < shown {
			names = append(names, strconv.Itoa(i))
		}
	}
	rest := len(idx) - 1 - len(names)
	switch {
	case len(names) == 1:
		return "child " + names[0] + " also uses it"
	case rest > 0:
		return fmt.Sprintf("children %s and %d more also use it", strings.Join(names, ", "), rest)
	}
	return "children " + strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1] + " also use it"
}

// Abstracted lists the child keys whose values the schema sees only by type
// and length, so that children differing only in them are judged once (see
// group.go). No check may read them.
func Abstracted() ([]string, error) {
	s, err := embeddedSchemas()
	if err != nil {
		return nil, err
	}
	return slices.Sorted(maps.Keys(s.abstract)), nil
}
