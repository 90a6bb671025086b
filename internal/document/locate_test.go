package document_test

import (
	"context"
	"encoding/json"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/spawngate/spawngate/internal/document"
	"github.com/spawngate/spawngate/internal/jsonpointer"
)

func TestLocate(t *testing.T) {
	json := "{\"plan\": [\n  {\"role\": \"a\",\n   \"tools\": [\"fs.read\", \"shell.run\"],\n   \"a/b~c\": 1, \"ü\": {\"x\": 2}}\n]}\n"
	yamlDoc := "plan:\n  - role: a\n    tools: &t\n      - fs.read\n      - shell.run\n  - role: b\n    tools: *t\n    \"a/b~c\": 1\n    ü: {x: 2}\n"
	tests := []struct {
		name, source, doc string
		want              map[string]document.Position
	}{
		{"json", "p.json", json, map[string]document.Position{
			"":                {1, 1},
			"/plan":           {1, 10},
			"/plan/0":         {2, 3},
			"/plan/0/role":    {2, 12},
			"/plan/0/tools/1": {3, 25},
			"/plan/0/a~1b~0c": {4, 13},
			"/plan/0/ü/x":     {4, 27}, // columns count characters, not bytes
			"/plan/0/paths":   {2, 3},  // missing: the child
			"/plan/0/tools/7": {3, 13}, // missing: the list
			"/plan/9/tools/0": {1, 10}, // missing child: the plan
		}},
		{"yaml", "p.yaml", yamlDoc, map[string]document.Position{
			"/plan/0/tools/1": {5, 9},
			"/plan/1/tools":   {7, 12}, // the alias, where it is written
			"/plan/1/tools/1": {5, 9},  // inside it: the anchored value
			"/plan/1/a~1b~0c": {8, 14},
			"/plan/1/ü/x":     {9, 12},
			"/plan/1/budget":  {6, 5},
		}},
		{"sniffed json", "-", json, map[string]document.Position{"/plan/0/tools/0": {3, 14}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var ptrs []string
			for p := range tt.want {
				ptrs = append(ptrs, p)
			}
			got, err := document.Locate(context.Background(), tt.source, []byte(tt.doc), document.DefaultLimits, ptrs)
			if err != nil {
				t.Fatal(err)
			}
			for p, want := range tt.want {
				if got[p] != want {
					t.Errorf("%q at %v, want %v", p, got[p], want)
				}
			}
		})
	}
}

func TestLocateNothing(t *testing.T) {
	got, err := document.Locate(context.Background(), "p.json", []byte(`{"plan": []}`), document.DefaultLimits, nil)
	if err != nil || got != nil {
		t.Errorf("Locate with no pointers = %v, %v; want nil, nil (and no reading)", got, err)
	}
}

// On random documents, indented or on one line, every value's pointer
// leads to where the value is written: the text there is the value's own
// JSON.
func TestLocateEveryValue(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 5))
	var gen func(depth int) any
	gen = func(depth int) any {
		switch k := r.IntN(6); {
		case k == 0 && depth < 4:
			obj := map[string]any{}
			for range r.IntN(4) {
				obj[[]string{"a", "b/c", "d~e", "ü", `q"t`, "tools"}[r.IntN(6)]] = gen(depth + 1)
			}
			return obj
		case k == 1 && depth < 4:
			arr := []any{}
			for range r.IntN(4) {
				arr = append(arr, gen(depth+1))
			}
			return arr
		case k == 2:
			return []string{"x", "a\nb", `\`, "é"}[r.IntN(4)]
		case k == 3:
			return r.IntN(1000)
		default:
			return []any{true, false, nil}[r.IntN(3)]
		}
	}
	for n := range 300 {
		doc := map[string]any{"plan": gen(0)}
		text, _ := json.MarshalIndent(doc, "", strings.Repeat(" ", r.IntN(3)))
		if r.IntN(3) == 0 {
			text, _ = json.Marshal(doc) // on one line, as JSON.stringify writes it
		}
		var ptrs []string
		var walk func(ptr string, v any)
		walk = func(ptr string, v any) {
			ptrs = append(ptrs, ptr)
			switch v := v.(type) {
			case map[string]any:
				for k, x := range v {
					walk(jsonpointer.Join(ptr, k), x)
				}
			case []any:
				for i, x := range v {
					walk(ptr+"/"+strconv.Itoa(i), x)
				}
			}
		}
		walk("", doc)
		got, err := document.Locate(context.Background(), "doc.json", text, document.DefaultLimits, ptrs)
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(string(text), "\n")
		for _, ptr := range ptrs {
			pos := got[ptr]
			if pos.Line < 1 || pos.Line > len(lines) {
				t.Fatalf("doc %d: %q at %v", n, ptr, pos)
			}
			at := string([]rune(lines[pos.Line-1])[pos.Column-1:])
			v, _ := jsonpointer.Lookup(doc, ptr)
			want, _ := json.Marshal(v)
			switch v.(type) {
			case map[string]any:
				want = []byte("{")
			case []any:
				want = []byte("[")
			}
			if !strings.HasPrefix(at, string(want)) {
				t.Fatalf("doc %d:\n%s\n%q at %v reads %q, want %s", n, text, ptr, pos, at, want)
			}
		}
	}
}

// FuzzLocate: whatever document the readers accept, Locate finds every
// value in it; in JSON, the text at each place is the value's own.
func FuzzLocate(f *testing.F) {
	for _, seed := range []string{
		`{"plan": [{"role": "a", "tools": ["fs.read", "x\"y"], "paths": [], "budget_tokens": 1}]}`,
		"{\"a\\u002fb\": {\"c\": [1, 2.5e3, true, null, \"\\\\\"]}, \"\u00fc\": \"\u00e9\"}",
		"[\n  [],\n  {},\n  \"\"\n]",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := document.Decode(context.Background(), "doc.json", data, document.JSON, document.DefaultLimits)
		if err != nil {
			return
		}
		var ptrs []string
		var walk func(ptr string, v any)
		walk = func(ptr string, v any) {
			if len(ptrs) > 2000 {
				return
			}
			ptrs = append(ptrs, ptr)
			switch v := v.(type) {
			case map[string]any:
				for k, x := range v {
					walk(jsonpointer.Join(ptr, k), x)
				}
			case []any:
				for i, x := range v {
					walk(ptr+"/"+strconv.Itoa(i), x)
				}
			}
		}
		walk("", v)
		got, err := document.Locate(context.Background(), "doc.json", data, document.DefaultLimits, ptrs)
		if err != nil {
			t.Fatalf("Locate: %v", err)
		}
		lines := strings.Split(string(data), "\n")
		for _, ptr := range ptrs {
			pos, ok := got[ptr]
			if !ok || pos.Line < 1 || pos.Line > len(lines) {
				t.Fatalf("%q at %v (found %v)", ptr, pos, ok)
			}
			line := []rune(lines[pos.Line-1])
			if pos.Column < 1 || pos.Column > len(line) {
				t.Fatalf("%q at %v, past its line %q", ptr, pos, string(line))
			}
			at := string(line[pos.Column-1:])
			x, _ := jsonpointer.Lookup(v, ptr)
			var want string
			switch x := x.(type) {
			case map[string]any:
				want = "{"
			case []any:
				want = "["
			case string:
				want = `"`
			case nil:
				want = "null"
			case bool:
				want = strconv.FormatBool(x)
			case json.Number:
				want = string(x)
			}
			if !strings.HasPrefix(at, want) {
				t.Fatalf("%q at %v reads %q, want %q", ptr, pos, at, want)
			}
		}
	})
}
