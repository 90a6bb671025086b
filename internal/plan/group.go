package plan

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"reflect"
	"slices"
	"strconv"
	"unicode/utf8"

	"github.com/santhosh-tekuri/jsonschema/v5"
)

// Children that neither the schema nor the checks can tell apart are
// judged once. Two children fall in one group when they have the same keys
// and the same values, except for the keys whose schema constrains a value
// only by its type and length (id, brief, metadata: the fields that grant
// nothing; Abstracted lists them). For those, the group records only the
// type, and for a string whether it is long enough. The schema gives every
// child of a group the same verdict and the same messages, and the checks
// may not read such keys (engine.New refuses a check that does), so one
// representative per group is validated and evaluated, and its findings
// hold for all members.

// abstractable finds the properties of the child schema that constrain a
// value only by type and minimum length, comparing each property's schema
// with a schema that constrains nothing. It reads the compiled schemas, so
// it follows the schema files: give a property a pattern, an enum or a
// format, and its values count again. It abstracts nothing when anything
// else could constrain a child: a keyword of the child schema beyond type,
// required, properties and additionalProperties (allOf, if, dependencies,
// patternProperties...), or a keyword beside the $ref to it in the plan
// schema's items.
func abstractable(items, neutral *jsonschema.Schema) map[string]*jsonschema.Schema {
	out := map[string]*jsonschema.Schema{}
	if items == nil || items.Ref == nil || !constrainsOnly(items, neutral, "Ref") {
		return out
	}
	child := items.Ref
	if !constrainsOnly(child, neutral, "Types", "Required", "Properties", "AdditionalProperties") {
		return out
	}
	for name, s := range child.Properties {
		// Whether a number is an integer depends on its value, not its type.
		if constrainsOnly(s, neutral, "Types", "MinLength") && !slices.Contains(s.Types, "integer") {
			out[name] = s
		}
	}
	return out
}

// constrainsOnly tells whether a schema has no keyword but the given ones
// (and annotations) set differently from a schema that constrains nothing.
func constrainsOnly(s, neutral *jsonschema.Schema, keywords ...string) bool {
	sv, nv := reflect.ValueOf(s).Elem(), reflect.ValueOf(neutral).Elem()
	for i := 0; i < sv.NumField(); i++ {
		f := sv.Type().Field(i)
		if !f.IsExported() || slices.Contains(keywords, f.Name) {
			continue
		}
		switch f.Name {
		case "Location", "Draft", "Title", "Description", "Default", "Comment", "ReadOnly", "WriteOnly", "Examples", "Deprecated":
			continue
		}
		if !reflect.DeepEqual(sv.Field(i).Interface(), nv.Field(i).Interface()) {
			return false
		}
	}
	return true
}

// grouper assigns children to groups.
type grouper struct {
	abstract map[string]*jsonschema.Schema
	buf      []byte
	keys     []string
	index    map[string]int
	// suffix, when set, is added to each child's key: where the child sits
	// in a nested plan (tree.go).
	suffix []string
}

// group returns, for each group, the index of its first child (the
// representative) and its key, and for each child its group. A key stands
// for everything the schema and the checks can see of a child, written
// out, so that two children with equal keys are judged alike, in this plan
// or in another: it is the SHA-256 of that writing, 32 bytes where the
// writing is a few hundred for a child of its own (a plan of 100,000
// distinct children held 18 MB of keys), and no one can write two
// children that share one. The writing itself groups the children of this
// plan, and is let go with the grouper.
func (g *grouper) group(ctx context.Context, children []any) (reps []int, keys []string, group []int, err error) {
	g.index = make(map[string]int, len(children)/4+1)
	group = make([]int, len(children))
	for i, c := range children {
		if err := ctxErr(ctx, i); err != nil {
			return nil, nil, nil, err
		}
		g.buf = g.buf[:0]
		g.child(c)
		if g.suffix != nil {
			g.buf = append(g.buf, g.suffix[i]...)
		}
		k, ok := g.index[string(g.buf)]
		if !ok {
			k = len(reps)
			g.index[string(g.buf)] = k
			sum := sha256.Sum256(g.buf) // once per group
			reps = append(reps, i)
			keys = append(keys, string(sum[:]))
		}
		group[i] = k
	}
	return reps, keys, group, nil
}

// Key writes out a JSON-shaped value exactly, numbers as written: the
// encoding whose digest keys the groups, for keying anything else that
// the checks judge alike when it is equal (the policies of a plan).
func Key(v any) string {
	var g grouper
	g.value(v)
	return string(g.buf)
}

func (g *grouper) child(c any) {
	obj, ok := c.(map[string]any)
	if !ok {
		g.value(c)
		return
	}
	keys := g.keys[:0]
	for k := range obj {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	g.keys = keys
	g.buf = append(g.buf, 'o')
	g.buf = strconv.AppendInt(g.buf, int64(len(keys)), 10)
	for _, k := range keys {
		g.str(k)
		if s, ok := g.abstract[k]; ok {
			g.class(obj[k], s)
		} else {
			g.value(obj[k])
		}
	}
}

// class records what the schema can see of an abstracted value.
func (g *grouper) class(v any, s *jsonschema.Schema) {
	switch v := v.(type) {
	case string:
		long := s.MinLength < 0 || utf8.RuneCountInString(v) >= s.MinLength
		g.buf = append(g.buf, 'C', 's', map[bool]byte{true: '1', false: '0'}[long])
	case json.Number:
		g.buf = append(g.buf, 'C', 'n')
	case bool:
		g.buf = append(g.buf, 'C', 'b')
	case nil:
		g.buf = append(g.buf, 'C', 'z')
	case []any:
		g.buf = append(g.buf, 'C', 'a')
	case map[string]any:
		g.buf = append(g.buf, 'C', 'o')
	}
}

// value records a value exactly, numbers as written.
func (g *grouper) value(v any) {
	switch v := v.(type) {
	case string:
		g.str(v)
	case json.Number:
		g.buf = append(g.buf, 'n')
		g.buf = strconv.AppendInt(g.buf, int64(len(v)), 10)
		g.buf = append(g.buf, ':')
		g.buf = append(g.buf, v...)
	case bool:
		g.buf = append(g.buf, map[bool]byte{true: 't', false: 'f'}[v])
	case nil:
		g.buf = append(g.buf, 'z')
	case []any:
		g.buf = append(g.buf, 'a')
		g.buf = strconv.AppendInt(g.buf, int64(len(v)), 10)
		for _, x := range v {
			g.value(x)
		}
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		g.buf = append(g.buf, 'o')
		g.buf = strconv.AppendInt(g.buf, int64(len(keys)), 10)
		for _, k := range keys {
			g.str(k)
			g.value(v[k])
		}
	}
}

func (g *grouper) str(s string) {
	g.buf = append(g.buf, 's')
	g.buf = strconv.AppendInt(g.buf, int64(len(s)), 10)
	g.buf = append(g.buf, ':')
	g.buf = append(g.buf, s...)
}
