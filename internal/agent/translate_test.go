package agent

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/spawngate/spawngate/internal/document"
	"github.com/spawngate/spawngate/internal/plan"
)

func TestLineOf(t *testing.T) {
	tr := Translation{Lines: map[string]int{"/tools": 4, "/tools/0": 5, "/tools/1": 0, "/agent/permission_mode": 7, "/model": 0}}
	for pointer, want := range map[string]int{
		"/tools/0":               5,
		"/tools/1":               4, // a line of 0 is not known: the one above it is taken
		"/tools/12":              4,
		"/tools":                 4,
		"/agent/permission_mode": 7,
		"/agent/sandbox_mode":    0,
		"/agent":                 0,
		"/model":                 0,
		"":                       0,
		"tools":                  0,
		"/tools/0/x/y":           5,
	} {
		if got := tr.LineOf(pointer); got != want {
			t.Errorf("LineOf(%q) = %d, want %d", pointer, got, want)
		}
	}
	if got := (Translation{}).LineOf("/tools/0"); got != 0 {
		t.Errorf("LineOf without lines = %d", got)
	}
}

// TestStart holds what every host's child starts from: the call's facts,
// and with a definition its name, file and budget.
func TestStart(t *testing.T) {
	def := &Definition{File: "/r/x.md", Name: "reader", Fields: map[string]any{"budget_tokens": json.Number("7")}, Lines: map[string]int{"budget_tokens": 6}}
	call := Call{Host: "h", Type: "Reader", Paths: []string{"/p", "/q"}, Brief: "b", ID: "i", Caller: "c", Budget: "5"}
	tr, facts := Start(call, def, "ignored")
	want := `{"agent":{"caller":"c","definition":"/r/x.md","host":"h","type":"Reader"},"brief":"b","budget_tokens":7,"id":"i","paths":["/p","/q"],"role":"reader"}`
	if got := asJSON(t, tr.Child); got != want {
		t.Errorf("child %s\nwant  %s", got, want)
	}
	if facts["host"] != "h" || tr.File != "/r/x.md" || tr.LineOf("/budget_tokens") != 6 {
		t.Errorf("facts %v, File %q, budget line %d", facts, tr.File, tr.LineOf("/budget_tokens"))
	}
	facts["extra"] = true
	if tr.Child["agent"].(map[string]any)["extra"] != true {
		t.Error("the facts returned are not the child's agent block")
	}
	tr, _ = Start(Call{Host: "h", Type: "t"}, nil, "")
	want = `{"agent":{"definition":null,"host":"h","problem":"no definition applies","type":"t"},"paths":[],"role":"t"}`
	if got := asJSON(t, tr.Child); got != want || tr.File != "" {
		t.Errorf("no definition: %s, File %q\nwant %s", got, tr.File, want)
	}
	tr, _ = Start(Call{Host: "h", Type: "t"}, nil, "why")
	if p := tr.Child["agent"].(map[string]any)["problem"]; p != "why" {
		t.Errorf("problem %v", p)
	}
}

// TestModel: an inheriting model is left out, and a line kept only for a
// model the definition gave.
func TestModel(t *testing.T) {
	tr, _ := Start(Call{Host: "h", Type: "t"}, nil, "")
	tr.Model("sonnet", 5)
	if tr.Child["model"] != "sonnet" || tr.LineOf("/model") != 5 {
		t.Errorf("model %v line %d", tr.Child["model"], tr.LineOf("/model"))
	}
	tr.Model("opus", 0)
	if tr.Child["model"] != "opus" || tr.LineOf("/model") != 0 {
		t.Errorf("a later model without a line: %v line %d", tr.Child["model"], tr.LineOf("/model"))
	}
	// An inheriting model written in the definition keeps its line, for a
	// refusal at /model to point at.
	for _, m := range []string{"", "inherit"} {
		tr.Model(m, 5)
		if _, set := tr.Child["model"]; set || tr.LineOf("/model") != 5 {
			t.Errorf("Model(%q, 5): %v line %d", m, tr.Child["model"], tr.LineOf("/model"))
		}
		tr.Model(m, 0)
		if _, set := tr.Child["model"]; set || tr.LineOf("/model") != 0 {
			t.Errorf("Model(%q, 0): %v line %d", m, tr.Child["model"], tr.LineOf("/model"))
		}
	}
}

// TestPlanBytes pins the plan document of a spawn: JSON, keys in order,
// indented, with nothing escaped for HTML, the same on every call; with a
// parent block before the children.
func TestPlanBytes(t *testing.T) {
	build := func() Translation {
		def := &Definition{File: "/repo/.codex/agents/x.toml", Name: "reader", Fields: map[string]any{"budget_tokens": json.Number("900")}, Lines: map[string]int{}}
		tr, facts := Start(Call{Host: "codex", Type: "reader", Paths: []string{"/w"}, Brief: "<a & b>", ID: "x", Budget: "5"}, def, "")
		facts["sandbox_mode"] = "read-only"
		tr.Child["tools"] = []any{"sandbox:read-only", "mcp__a", "mcp__b"}
		return tr
	}
	got := build().Plan()
	want := `{
  "plan": [
    {
      "agent": {
        "definition": "/repo/.codex/agents/x.toml",
        "host": "codex",
        "sandbox_mode": "read-only",
        "type": "reader"
      },
      "brief": "<a & b>",
      "budget_tokens": 900,
      "id": "x",
      "paths": [
        "/w"
      ],
      "role": "reader",
      "tools": [
        "sandbox:read-only",
        "mcp__a",
        "mcp__b"
      ]
    }
  ]
}
`
	if string(got) != want {
		t.Errorf("Plan() =\n%s\nwant\n%s", got, want)
	}
	for range 20 {
		if b := build().Plan(); !bytes.Equal(b, got) {
			t.Fatalf("a second translation gives other bytes:\n%s", b)
		}
	}
	other, _ := Start(Call{Host: "codex", Type: "w", Paths: []string{"/w"}}, nil, "p")
	nested := Plan([]Translation{build(), other}, map[string]any{"depth": 1, "paths": []any{"/w"}, "tools": []any{"Read"}})
	const head = "{\n  \"parent\": {\n    \"depth\": 1,\n    \"paths\": [\n      \"/w\"\n    ],\n    \"tools\": [\n      \"Read\"\n    ]\n  },\n  \"plan\": [\n"
	if !bytes.HasPrefix(nested, []byte(head)) {
		t.Errorf("Plan with a parent =\n%s\nwant it to start\n%s", nested, head)
	}
	var doc struct {
		Plan []map[string]any `json:"plan"`
	}
	if err := json.Unmarshal(nested, &doc); err != nil || len(doc.Plan) != 2 || doc.Plan[1]["role"] != "w" {
		t.Errorf("Plan with two children: %v %v", doc.Plan, err)
	}
	// The gate's loader reads it as a nested plan of two children.
	loader, err := plan.NewLoader(document.DefaultLimits)
	if err != nil {
		t.Fatal(err)
	}
	if p, err := loader.Plan(t.Context(), "spawn.json", nested); err != nil || len(p.Children) != 2 {
		t.Errorf("the loader reads %v, %v", p, err)
	}
}

func asJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
