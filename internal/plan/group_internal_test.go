package plan

import (
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v5"
)

// abstractable must abstract nothing the schema could see beyond type and
// minimum length, wherever the constraint is written.
func TestAbstractableFollowsTheSchema(t *testing.T) {
	const base = "https://test.invalid/"
	child := func(extra, idSchema string) string {
		return `{"type": "object", "required": ["role"], "additionalProperties": false` + extra + `,
			"properties": {"role": {"type": "string", "pattern": "\\S"}, "id": ` + idSchema + `, "brief": {"type": "string"}}}`
	}
	tests := []struct {
		name, items, child string
		want               []string
	}{
		{"type and length only", `{"$ref": "child.json"}`, child("", `{"type": "string", "minLength": 1}`), []string{"brief", "id"}},
		{"a pattern counts", `{"$ref": "child.json"}`, child("", `{"type": "string", "pattern": "^t"}`), []string{"brief"}},
		{"a maximum length counts", `{"$ref": "child.json"}`, child("", `{"type": "string", "maxLength": 3}`), []string{"brief"}},
		{"an enum counts", `{"$ref": "child.json"}`, child("", `{"enum": ["a"]}`), []string{"brief"}},
		{"integer needs the value", `{"$ref": "child.json"}`, child("", `{"type": "integer"}`), []string{"brief"}},
		{"allOf on the child", `{"$ref": "child.json"}`, child(`, "allOf": [{"required": ["id"]}]`, `{"type": "string"}`), nil},
		{"if on the child", `{"$ref": "child.json"}`, child(`, "if": {"required": ["id"]}, "then": {"required": ["brief"]}`, `{"type": "string"}`), nil},
		{"dependentRequired on the child", `{"$ref": "child.json"}`, child(`, "dependentRequired": {"id": ["brief"]}`, `{"type": "string"}`), nil},
		{"a keyword beside the $ref", `{"$ref": "child.json", "not": {"required": ["id"]}}`, child("", `{"type": "string"}`), nil},
		{"no $ref at all", child("", `{"type": "string"}`), `{}`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := jsonschema.NewCompiler()
			c.Draft = jsonschema.Draft2020
			for name, src := range map[string]string{"items.json": tt.items, "child.json": tt.child, "neutral.json": "{}"} {
				if err := c.AddResource(base+name, strings.NewReader(src)); err != nil {
					t.Fatal(err)
				}
			}
			items, err := c.Compile(base + "items.json")
			if err != nil {
				t.Fatal(err)
			}
			neutral, err := c.Compile(base + "neutral.json")
			if err != nil {
				t.Fatal(err)
			}
			got := slices.Sorted(maps.Keys(abstractable(items, neutral)))
			if !slices.Equal(got, tt.want) {
				t.Fatalf("abstracted %v, want %v", got, tt.want)
			}
		})
	}
}
