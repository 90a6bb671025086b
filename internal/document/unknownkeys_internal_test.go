package document

import (
	"context"
	"fmt"
	"strings"
	"testing"
)

// unknownKeysShapes are the places a plan can hold keys its schema does
// not know: the plan's top level, a child, a nested child, the
// plan's own policy, its parent block, and the operator's policy.
var unknownKeysShapes = []string{"top", "child", "nested child", "own policy", "parent", "policy"}

// unknownKeys writes a document of the shape with n unknown keys, in JSON
// or YAML (block style, as the hostile plan was written), a key a line.
func unknownKeys(shape string, n int, yaml bool) []byte {
	if yaml {
		const child = "role: r\n$tools: [fs.read]\n$paths: []\n$budget_tokens: 1\n"
		doc := map[string]string{
			"top":          "KEYSplan:\n  - {role: r, tools: [fs.read], paths: [], budget_tokens: 1}\n",
			"child":        "plan:\n  - " + child + "$KEYS",
			"nested child": "plan:\n  - " + child + "$children:\n      - " + strings.ReplaceAll(child, "$", "$    ") + "$    KEYS",
			"own policy":   "policy:\n  allowed_tools: [fs.read]\n  KEYSplan:\n  - {role: r, tools: [fs.read], paths: [], budget_tokens: 1}\n",
			"parent":       "parent:\n  role: p\n  KEYSplan:\n  - {role: r, tools: [fs.read], paths: [], budget_tokens: 1}\n",
			"policy":       "allowed_tools: [fs.read]\nworkspace_root: /ws\nbudget_cap_tokens: 1\nKEYS",
		}[shape]
		doc = strings.ReplaceAll(doc, "$", "    ")
		indent := doc[strings.LastIndexByte(doc[:strings.Index(doc, "KEYS")], '\n')+1 : strings.Index(doc, "KEYS")]
		var keys strings.Builder
		for i := range n {
			if i > 0 {
				keys.WriteString(indent)
			}
			fmt.Fprintf(&keys, "k%06d: x\n", i)
		}
		return []byte(strings.Replace(doc, "KEYS", keys.String(), 1))
	}
	const child = `"role": "r", "tools": ["fs.read"], "paths": [], "budget_tokens": 1`
	var keys strings.Builder
	for i := range n {
		fmt.Fprintf(&keys, "\"k%06d\": \"x\",\n", i)
	}
	k := keys.String()
	return []byte(map[string]string{
		"top":          `{` + k + `"plan": [{` + child + `}]}`,
		"child":        `{"plan": [{` + k + child + `}]}`,
		"nested child": `{"plan": [{` + child + `, "children": [{` + k + child + `}]}]}`,
		"own policy":   `{"policy": {` + k + `"allowed_tools": ["fs.read"]}, "plan": [{` + child + `}]}`,
		"parent":       `{"parent": {` + k + `"role": "p"}, "plan": [{` + child + `}]}`,
		"policy":       `{` + k + `"allowed_tools": ["fs.read"], "workspace_root": "/ws", "budget_cap_tokens": 1}`,
	}[shape])
}

// keysAt is where the unknown keys of each shape are.
var keysAt = map[string]string{"top": "", "child": "/plan/0", "nested child": "/plan/0/children/0", "own policy": "/policy", "parent": "/parent", "policy": ""}

// Placing a YAML document's problems is linear in the document and the
// problems: a report of one problem per key of a mapping of n keys (a
// report lists up to --max-listed of them) reads each key about once. It
// read every key before it once per problem (50,000 unknown keys: 7.4 s).
// The work is counted, not timed: the keys looked at for 4n keys are about
// four times those for n, where reading them once per problem is sixteen
// times.
func TestPlacingProblemsIsLinearInTheKeys(t *testing.T) {
	const n = 2000
	for _, shape := range unknownKeysShapes {
		t.Run(shape, func(t *testing.T) {
			var steps [2]int
			for i, keys := range []int{n, 4 * n} {
				data := unknownKeys(shape, keys, true)
				ptrs := make([]string, keys)
				for k := range ptrs {
					ptrs[k] = fmt.Sprintf("%s/k%06d", keysAt[shape], k)
				}
				p := &yamlPlacer{ctx: context.Background()}
				at, err := p.locate(data, ptrs)
				if err != nil {
					t.Fatal(err)
				}
				if first, last := at[ptrs[0]], at[ptrs[keys-1]]; last.Line-first.Line != keys-1 {
					t.Fatalf("%d keys: the first at %v, the last at %v; want a key a line", keys, first, last)
				}
				steps[i] = p.steps
			}
			if ratio := float64(steps[1]) / float64(steps[0]); ratio > 6 {
				t.Errorf("placing the problems of %d unknown keys looked at %d keys, of %d keys %d: %.1f times for 4 times the keys, want about 4",
					n, steps[0], 4*n, steps[1], ratio)
			}
		})
	}
}
