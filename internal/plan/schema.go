package plan

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"regexp"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v5"

	"github.com/spawngate/spawngate/internal/document"
	"github.com/spawngate/spawngate/internal/jsonpointer"
	"github.com/spawngate/spawngate/internal/memo"
	"github.com/spawngate/spawngate/internal/spelling"
	"github.com/spawngate/spawngate/schemas"
)

// The format that budgets and caps use: a JSON number written as a whole
// number, without a fraction or an exponent. JSON Schema's "integer"
// accepts 4e4 and 40000.0; the gate does not, so the schemas say so.
const decimalIntegerFormat = "decimal-integer"

// decimalInteger is a number as decimalIntegerFormat wants it written: an
// optional minus sign, then digits without a leading zero.
var decimalInteger = regexp.MustCompile(`^-?(0|[1-9][0-9]*)$`)

func init() {
	jsonschema.Formats[decimalIntegerFormat] = func(v any) bool {
		n, ok := v.(json.Number)
		return !ok || decimalInteger.MatchString(string(n))
	}
}

// schemaSet is the embedded schemas, compiled.
type schemaSet struct {
	compiler *jsonschema.Compiler
	plan     *jsonschema.Schema
	policy   *jsonschema.Schema
	// abstract holds the child properties whose values the schema sees
	// only by type and length (see group.go).
	abstract map[string]*jsonschema.Schema
	// child is the schema of one child, when the plan schema constrains
	// its children only through it, so that they can be validated one at
	// a time; nil when the whole document must be validated at once.
	child *jsonschema.Schema

	mu  sync.Mutex
	sub map[string]*jsonschema.Schema // sub-schemas, compiled when a message needs one
}

func compileSchemas() (*schemaSet, error) {
	c := jsonschema.NewCompiler()
	c.Draft = jsonschema.Draft2020
	c.AssertFormat = true
	c.ExtractAnnotations = true // explain words pattern and format problems with the schema's title
	c.LoadURL = func(url string) (io.ReadCloser, error) {
		return nil, fmt.Errorf("schema %s is not embedded; nothing is fetched", url)
	}
	names, err := fs.Glob(schemas.FS, "*.schema.json")
	if err != nil {
		return nil, err
	}
	for _, name := range names {
		f, err := schemas.FS.Open(name)
		if err != nil {
			return nil, err
		}
		err = c.AddResource(schemas.BaseURL+name, f)
		f.Close()
		if err != nil {
			return nil, err
		}
	}
	s := &schemaSet{compiler: c, sub: map[string]*jsonschema.Schema{}}
	if s.plan, err = c.Compile(schemas.BaseURL + "plan.schema.json"); err != nil {
		return nil, err
	}
	if s.policy, err = c.Compile(schemas.BaseURL + "policy.schema.json"); err != nil {
		return nil, err
	}
	if err := c.AddResource(schemas.BaseURL+"neutral.schema.json", strings.NewReader("{}")); err != nil {
		return nil, err
	}
	neutral, err := c.Compile(schemas.BaseURL + "neutral.schema.json")
	if err != nil {
		return nil, err
	}
	var items *jsonschema.Schema
	if plan := s.plan.Properties["plan"]; plan != nil {
		items = plan.Items2020
	}
	s.abstract = abstractable(items, neutral)
	if plan := s.plan.Properties["plan"]; plan != nil && items != nil && items.Ref != nil &&
		constrainsOnly(s.plan, neutral, "Types", "Required", "Properties", "AdditionalProperties") &&
		constrainsOnly(plan, neutral, "Types", "MinItems", "Items2020") &&
		constrainsOnly(items, neutral, "Ref") {
		s.child = items.Ref
	}
	return s, nil
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

// validatePlan validates a plan document whose plan list is replaced by the
// representatives of its groups. It returns the problems outside the
// children, and each representative's problems with pointers relative to
// it. Children are validated one at a time where the schema allows it, so
// that the work stops when ctx ends. seen remembers what the schema said
// of each child, by its key; shells, what it said of the document without
// its children but one, unless unkeyed names why not.
func (s *schemaSet) validatePlan(ctx context.Context, doc map[string]any, reps []any, keys []string, isList bool, seen memo.View[[]schemaError], shells *memo.Memo[[]schemaError], unkeyed []string) (docProblems []schemaError, repProblems [][]schemaError, err error) {
	repProblems = make([][]schemaError, len(reps))
	shell := doc
	var shellMemo memo.View[[]schemaError]
	shellKey := ""
	if isList {
		alone := 0 // the representatives validated with the document
		if s.child == nil {
			alone = len(reps)
		} else if len(reps) > 0 {
			alone = 1 // one keeps the list non-empty, as the document's is
		}
		shell = make(map[string]any, len(doc))
		for k, v := range doc {
			shell[k] = v
		}
		shell["plan"] = reps[:alone]
		one := func(k int) {
			if !seen.On() {
				repProblems[k] = s.validate(s.child, reps[k], nil)
				return
			}
			if ps, ok := seen.Get(keys[k]); ok {
				repProblems[k] = ps
				return
			}
			repProblems[k] = s.validate(s.child, reps[k], nil)
			seen.Put(keys[k], repProblems[k])
		}
		if err := onEveryCore(ctx, alone, len(reps), one); err != nil {
			return nil, nil, err
		}
		// What the schema says of the shell depends on nothing but the
		// rest of the document and the representatives in it; its key
		// holds one representative's key.
		if alone != 1 {
			unkeyed = append(unkeyed, "more than one child in the shell")
		}
		if shellMemo = shells.For("", 1, unkeyed); shellMemo.On() {
			rest := make(map[string]any, len(doc))
			for k, v := range doc {
				if k != "plan" {
					rest[k] = v
				}
			}
			shellKey = Key(rest) + "\x00" + keys[0]
		}
	}
	problems, known := shellMemo.Get(shellKey)
	if !known {
		var region func(string) string
		if isList {
			region = childRegion
		}
		problems = s.validate(s.plan, shell, region)
		shellMemo.Put(shellKey, problems)
	}
	for _, pr := range problems {
		if k, field, ok := splitChild(pr.pointer); ok && isList {
			repProblems[k] = append(repProblems[k], schemaError{field, pr.msg})
			continue
		}
		docProblems = append(docProblems, pr)
	}
	return docProblems, repProblems, ctx.Err()
}

// subSchema compiles the schema at an absolute location such as
// https://.../policy.schema.json#/properties/workspace_root, or returns nil.
func (s *schemaSet) subSchema(location string) *jsonschema.Schema {
	s.mu.Lock()
	defer s.mu.Unlock()
	if sch, ok := s.sub[location]; ok {
		return sch
	}
	sch, err := s.compiler.Compile(location)
	if err != nil {
		sch = nil
	}
	s.sub[location] = sch
	return sch
}

// schemaError is one schema violation, said plainly, at a JSON pointer.
type schemaError struct {
	pointer string
	msg     string
}

// validate checks doc against sch and returns its violations, sorted: at
// most MaxSchemaProblems, after one problem for each region (the document,
// or a child: see region; nil for a document that is one region) that
// has more, which counts them.
func (s *schemaSet) validate(sch *jsonschema.Schema, doc any, region func(string) string) []schemaError {
	err := sch.Validate(doc)
	if err == nil {
		return nil
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return []schemaError{{msg: err.Error()}}
	}
	found := newProblems(MaxSchemaProblems, region)
	var walk func(*jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) == 0 {
			s.explain(e, doc, found)
			return
		}
		for _, c := range e.Causes {
			walk(c)
		}
	}
	walk(ve)
	return found.list()
}

// childRegion is the region of a pointer in a plan document: the child it
// lies in (/plan/3), or "" for the rest of the document. It is asked of
// every problem the validator finds, so it reads the pointer itself.
func childRegion(ptr string) string {
	rest, ok := strings.CutPrefix(ptr, "/plan/")
	if !ok {
		return ""
	}
	n := strings.IndexByte(rest, '/')
	if n < 0 {
		n = len(rest)
	}
	if n == 0 || (n > 1 && rest[0] == '0') {
		return ""
	}
	for _, c := range rest[:n] {
		if c < '0' || c > '9' {
			return ""
		}
	}
	return ptr[:len("/plan/")+n]
}

var (
	quotedName        = regexp.MustCompile(`'([^']*)'`)
	expectedType      = regexp.MustCompile(`^expected (.+), but got (\w+)$`)
	bound             = regexp.MustCompile(`^must be [<>]= (\S+) but found (\S+)$`)
	dependentRequired = regexp.MustCompile(`/dependentRequired/[^/]+/[0-9]+$`)
)

// explain turns one leaf of the validator's error tree into problems a
// person can act on, and offers them to found. A leaf whose problems
// cannot be listed is only counted.
func (s *schemaSet) explain(e *jsonschema.ValidationError, doc any, found *problems) {
	at := e.InstanceLocation
	keyword := e.KeywordLocation[strings.LastIndexByte(e.KeywordLocation, '/')+1:]
	schemaAt := strings.TrimSuffix(e.AbsoluteKeywordLocation, "/"+keyword)
	if found.skip(at) && keyword != "additionalProperties" && keyword != "required" {
		found.count(at, 1) // one problem, at the value or below it
		return
	}
	value, _ := jsonpointer.Lookup(doc, at)
	if i := strings.LastIndexByte(at, '/'); i >= 0 && s.forbiddenKeys(at[:i])[at[i+1:]] && keyword == at[i+1:] {
		found.offer(at, func() string {
			return fmt.Sprintf("%s is the operator's to set: a plan's own policy cannot set it", document.Quote(at[i+1:]))
		})
		return
	}
	if m := dependentRequired.FindStringSubmatch(e.KeywordLocation); m != nil {
		// dependentRequired/KEY/N: KEY is set and the key it needs is not.
		if names := quotedName.FindAllStringSubmatch(e.Message, -1); len(names) == 2 {
			found.offer(jsonpointer.Join(at, names[0][1]), func() string {
				return fmt.Sprintf("required key %s is missing: %s is set, and needs it beside it", document.Quote(names[0][1]), document.Quote(names[1][1]))
			})
			return
		}
	}
	one := func(msg string) { found.offer(at, func() string { return msg }) }
	switch keyword {
	case "required":
		for _, m := range quotedName.FindAllStringSubmatch(e.Message, -1) {
			found.offer(jsonpointer.Join(at, m[1]), func() string { return fmt.Sprintf("required key %s is missing", document.Quote(m[1])) })
		}
		return
	case "additionalProperties":
		obj, _ := value.(map[string]any)
		sch := s.subSchema(schemaAt)
		if obj == nil || sch == nil {
			break
		}
		forbidden := s.forbiddenKeys(at)
		allowed := make([]string, 0, len(sch.Properties))
		for k := range sch.Properties {
			if !forbidden[k] {
				allowed = append(allowed, k)
			}
		}
		sort.Strings(allowed)
		list := strings.Join(allowed, ", ")
		// Only the first keys can be listed: the others are counted, not
		// given a pointer and a message each.
		first, n := firstKeys(obj, sch.Properties, found.max)
		for _, k := range first {
			found.offer(jsonpointer.Join(at, k), func() string {
				if s := spelling.Closest(k, allowed); s != "" {
					return fmt.Sprintf("unknown key %s: did you mean %s? (allowed: %s)", document.Quote(k), document.Quote(s), list)
				}
				return fmt.Sprintf("unknown key %s (allowed: %s)", document.Quote(k), list)
			})
		}
		found.count(at, n-len(first))
		return
	case "type":
		if m := expectedType.FindStringSubmatch(e.Message); m != nil {
			one(fmt.Sprintf("must be %s, not %s", typeNames(m[1]), typeName(m[2])))
			return
		}
	case "minItems":
		if strings.HasPrefix(e.Message, "minimum 1 items") {
			one("must not be empty")
			return
		}
	case "minLength":
		one("must not be empty")
		return
	case "maxLength":
		if sch := s.subSchema(schemaAt); sch != nil && sch.MaxLength >= 0 {
			one(fmt.Sprintf("must be at most %d characters long", sch.MaxLength))
			return
		}
	case "pattern", "format", "not":
		if sch := s.subSchema(schemaAt); sch != nil && sch.Title != "" {
			one(fmt.Sprintf("must be %s, not %s", sch.Title, show(value)))
			return
		}
	case "minimum", "maximum":
		if m := bound.FindStringSubmatch(e.Message); m != nil {
			word, limit := "at least", m[1]
			if keyword == "maximum" {
				word = "at most"
			}
			// The validator prints the bound as a float64 (9.007199254740991e+15);
			// show it as the schema writes it.
			if sch := s.subSchema(schemaAt); sch != nil {
				r := sch.Minimum
				if keyword == "maximum" {
					r = sch.Maximum
				}
				if r != nil {
					limit = r.RatString()
				}
			}
			one(fmt.Sprintf("must be %s %s, not %s", word, limit, show(value)))
			return
		}
	}
	one(e.Message)
}

// forbiddenKeys are the keys the plan schema forbids at a place (the
// operator-only keys of a plan's own policy), which a list of allowed keys
// must not offer.
func (s *schemaSet) forbiddenKeys(at string) map[string]bool {
	if at != "/policy" {
		return nil
	}
	pol := s.plan.Properties["policy"]
	if pol == nil {
		return nil
	}
	out := map[string]bool{}
	for k, sch := range pol.Properties {
		if sch.Always != nil && !*sch.Always {
			out[k] = true
		}
	}
	return out
}

func typeNames(list string) string {
	parts := strings.Split(list, " or ")
	for i, p := range parts {
		parts[i] = typeName(p)
	}
	return strings.Join(parts, " or ")
}

func typeName(t string) string {
	switch t {
	case "object":
		return "an object"
	case "array":
		return "a list"
	case "string":
		return "a string"
	case "integer":
		return "a whole number"
	case "number":
		return "a number"
	case "boolean":
		return "a boolean"
	}
	return t
}

// show renders a document value for a message.
func show(v any) string {
	switch v := v.(type) {
	case string:
		return document.Quote(v)
	case json.Number:
		return string(v)
	case nil:
		return "null"
	case bool:
		return strconv.FormatBool(v)
	case []any:
		return "a list"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprint(v)
}

func sortSchemaErrors(ps []schemaError) {
	slices.SortFunc(ps, func(a, b schemaError) int {
		if c := jsonpointer.Compare(a.pointer, b.pointer); c != 0 {
			return c
		}
		return strings.Compare(a.msg, b.msg)
	})
}

// dedupe keeps the first problem at each pointer: two keywords failing on
// one value (an empty role is too short and matches no pattern) are one
// defect.
func dedupe(ps []schemaError) []schemaError {
	out := ps[:0]
	for i, p := range ps {
		if i > 0 && p.pointer == ps[i-1].pointer {
			continue
		}
		out = append(out, p)
	}
	return out
}

// onEveryCore runs f for every index from start to end-1, on every core
// when there are enough of them to pay for it, looking at the context
// before each: f validates a child, which costs far more than the look.
func onEveryCore(ctx context.Context, start, end int, f func(int)) error {
	const alone = 512 // fewer than this are done on one core
	workers := min(runtime.GOMAXPROCS(0), (end-start)/alone)
	if workers <= 1 {
		for k := start; k < end; k++ {
			if err := ctx.Err(); err != nil {
				return err
			}
			f(k)
		}
		return nil
	}
	var wg sync.WaitGroup
	errs := make([]error, workers)
	panics := make([]any, workers)
	for w := range workers {
		wg.Go(func() {
			defer func() { panics[w] = recover() }()
			for k := start + w; k < end; k += workers {
				if err := ctx.Err(); err != nil {
					errs[w] = err
					return
				}
				f(k)
			}
		})
	}
	wg.Wait()
	for w := range workers {
		if panics[w] != nil {
			panic(panics[w]) // raised again where the caller's recover sees it
		}
		if errs[w] != nil {
			return errs[w]
		}
	}
	return nil
}
