package documenttest

import (
	"fmt"
	"strings"
)

// UnknownKeysShapes are the places a document can hold keys its schema
// does not know: the plan's top level, a child, a nested child, the
// plan's own policy, its parent block, and the operator's policy.
var UnknownKeysShapes = []string{"top", "child", "nested child", "own policy", "parent", "policy"}

// KeysAt is the JSON pointer of the object UnknownKeys puts the keys of
// each shape in.
var KeysAt = map[string]string{"top": "", "child": "/plan/0", "nested child": "/plan/0/children/0", "own policy": "/policy", "parent": "/parent", "policy": ""}

// UnknownKeys writes a document of the shape with n unknown keys, in JSON
// or YAML (block style, as the hostile plan was written), a key a line.
func UnknownKeys(shape string, n int, yaml bool) []byte {
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

// Children writes a plan of n children, roles r0 to r(n-1), in JSON and
// in YAML (a child a line, in flow style): large enough, for n a few times
// a reader's checkEvery, that a reader stops deep inside it when its
// context ends.
func Children(n int) (jsonDoc, yamlDoc []byte) {
	var children []string
	for i := range n {
		children = append(children, fmt.Sprintf(`{"role": "r%d", "tools": ["fs.read"], "paths": [], "budget_tokens": 1}`, i))
	}
	return []byte(`{"plan": [` + strings.Join(children, ",") + `]}`),
		[]byte("plan:\n  - " + strings.Join(children, "\n  - ") + "\n")
}
