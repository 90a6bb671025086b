package render_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/spawngate/spawngate/internal/report"
	"github.com/spawngate/spawngate/internal/report/render"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// sample is a report with every kind of result: a blocked plan, a passing

// plan, a plan that could not be evaluated, and text that must not reach a

// terminal as it is.

func sample() *report.Report {
	r := &report.Report{Results: []report.Result{
		{
			Source: "plans/refused.yaml", Verdict: report.Block, Policies: []string{"operator", "plan"},
			Children: []report.Child{
				{Index: 0, Role: "home-cleaner", Verdict: report.Block, Violations: []report.Violation{
					{Rule: "budget.cap", Severity: "medium", Message: "budget_tokens 5000000 exceeds the cap of 200000 tokens set by the operator policy", Path: "/plan/0/budget_tokens"},
					{Rule: "paths.escape", Severity: "critical", Message: `path "~" contains '~' (home directory expansion)`, Path: "/plan/0/paths/0"},
				}},
				{Index: 1, Role: "doc-reader", Verdict: report.Pass, Violations: []report.Violation{}},
				{Index: 2, Role: "evil\x1b[32m PASS\nforged", Verdict: report.Block, Violations: []report.Violation{
					{Rule: "schema", Severity: "high", Message: "unknown key \"x\u202e\"", Path: "/plan/2/x\u202e"},
				}},
				{Index: 3, Role: "doc-reader: PASS", Verdict: report.Pass, Violations: []report.Violation{}},
				{Index: 4, Role: "", Verdict: report.Block, Violations: []report.Violation{
					{Rule: "schema", Severity: "high", Message: "must be an object, not a string", Path: "/plan/4"},
				}},
			},
		},
		{
			Source: "plans/ok.json", Verdict: report.Pass, Policies: []string{"operator"},
			Children: []report.Child{{Index: 0, Role: "reader", Verdict: report.Pass, Violations: []report.Violation{}}},
		},
		report.Failed("plans/missing.yaml", "plans/missing.yaml: cannot read: no such file or directory",
			&report.Problem{Msg: "cannot read: no such file or directory"}),
		report.Failed("plans/dup.json", `plans/dup.json:3:5: /plan/0: duplicate key "tools": consumers disagree on which value wins`,
			&report.Problem{Line: 3, Column: 5, Pointer: "/plan/0", Msg: `duplicate key "tools": consumers disagree on which value wins`}),
		report.Failed("plans/deep.yaml", `plans/deep.yaml:7: mapping values are not allowed in this context`,
			&report.Problem{Line: 7, Msg: "mapping values are not allowed in this context"}),
	}}
	r.Finish()
	return r
}

// findings is a report with what the CI formats must carry apart: lines

// and columns, a plan refused as a whole, excepted violations (on a child

// that passes and on one that is refused), exceptions that expired or

// matched nothing, a child whose violations are not listed, a custom rule

// the front end did not describe, and a file name with the characters

// workflow commands escape.

func findings() *report.Report {
	exception := func(i int, rule, reason, expires string) report.Exception {
		return report.Exception{Index: i, Pointer: "/exceptions/" + string(rune('0'+i)), Rule: rule, Reason: reason, Expires: expires}
	}
	migration := exception(0, "tools.write", "one-off schema migration, ticket OPS-1234", "2027-01-31")
	r := &report.Report{
		Rules: []report.Rule{
			{ID: "schema", Severity: "high", Title: "A child must follow the child schema", Description: "Every child is an object with the keys of the child schema."},
			{ID: "paths.escape", Severity: "critical", Title: "Paths stay inside the workspace", Description: "A path must be provably inside every workspace root."},
			{ID: "tools.write", Severity: "high", Title: "Writing needs allow_write", Description: "A write tool needs allow_write: true in every policy."},
			{ID: "budget.cap", Severity: "medium", Title: "Budgets stay under the cap", Description: "A budget must not exceed the lowest cap."},
			{ID: "plan.children", Severity: "medium", Title: "A plan has at most so many children", Description: "The operator policy bounds the children of one plan."},
		},
		Results: []report.Result{
			{
				Source: "plans/migrate.yaml", Verdict: report.Block, Policies: []string{"operator"},
				Violations: []report.Violation{
					{Rule: "plan.children", Severity: "medium", Message: "the plan has 4 children, more than the 3 the operator policy allows", Path: "/plan", Line: 3, Column: 1, Policies: []string{"operator"}},
				},
				Children: []report.Child{
					{Index: 0, Role: "migrator", Verdict: report.Pass, Violations: []report.Violation{
						{Rule: "tools.write", Severity: "high", Message: `tool "fs.write" writes, and allow_write: true is not set by the operator policy`, Path: "/plan/0/tools/0", Line: 6, Column: 13, Policies: []string{"operator"}, Excepted: &migration},
					}},
					{Index: 1, Role: "home-cleaner", Verdict: report.Block, Violations: []report.Violation{
						{Rule: "budget.cap", Severity: "medium", Message: "budget_tokens 5000000 exceeds the cap of 200000 tokens set by the operator policy", Path: "/plan/1/budget_tokens", Line: 12, Column: 20, Policies: []string{"operator"}},
						{Rule: "paths.escape", Severity: "critical", Message: `path "~" contains '~' (home directory expansion)`, Path: "/plan/1/paths/0", Line: 11, Column: 14},
						{Rule: "tools.write", Severity: "high", Message: `tool "fs.write" writes, and allow_write: true is not set by the operator policy`, Path: "/plan/1/tools/0", Line: 10, Column: 13, Policies: []string{"operator"}, Excepted: &migration},
					}},
					{Index: 2, Role: "bulk", Verdict: report.Block, Violations: []report.Violation{}, Unlisted: 4},
					{Index: 3, Role: "namer", Verdict: report.Block, Violations: []report.Violation{
						{Rule: "acme.naming", Severity: "low", Message: "role \"namer\" does not start with the team prefix", Path: "/plan/3/role", Line: 20},
					}},
				},
				Exceptions: []report.ExceptionNote{
					{Exception: exception(1, "budget.cap", "the old importer", "2025-12-31"), Status: report.ExceptionExpired},
					{Exception: exception(2, "paths.escape", "shared cache", "2027-06-30"), Status: report.ExceptionUnused, Blocks: true},
				},
			},
			{
				Source: "plans/odd,name:1%.yaml", Verdict: report.Pass, Policies: []string{"operator"},
				Children: []report.Child{{Index: 0, Role: "reader", Verdict: report.Pass, Violations: []report.Violation{
					{Rule: "tools.write", Severity: "high", Message: `tool "fs.write" writes, and allow_write: true is not set by the operator policy`, Path: "/plan/0/tools/0", Line: 2, Column: 9, Excepted: &migration},
				}}},
			},
		},
	}
	r.Finish()
	return r
}

func TestRenderersMatchGoldenFiles(t *testing.T) {
	for _, f := range render.Formats {
		for name, sample := range map[string]func() *report.Report{"sample": sample, "findings": findings} {
			t.Run(f.Name+"/"+name, func(t *testing.T) {
				testGolden(t, f, name, sample)
			})
		}
	}
}

// testGolden renders a sample in a format, compares it with its golden

// file, and renders it again: the same report must give the same bytes.

func testGolden(t *testing.T, f render.Format, name string, sample func() *report.Report) {
	t.Helper()
	var got bytes.Buffer
	if err := f.Renderer.Render(&got, sample()); err != nil {
		t.Fatal(err)
	}
	golden := filepath.Join("testdata", name+"."+f.Name)
	if *update {
		if err := os.WriteFile(golden, got.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Bytes(), want) {
		t.Errorf("%s output differs from %s (run go test ./internal/report/render -update to accept):\n%s", f.Name, golden, got.String())
	}
	var again bytes.Buffer
	if err := f.Renderer.Render(&again, sample()); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Bytes(), again.Bytes()) {
		t.Error("two renderings of the same report differ")
	}
}

func TestTextNeverCarriesControlCharacters(t *testing.T) {
	var b bytes.Buffer
	if err := (render.Text{}).Render(&b, sample()); err != nil {
		t.Fatal(err)
	}
	for i, c := range b.Bytes() {
		if (c < 0x20 && c != '\n') || c == 0x7f {
			t.Fatalf("byte %d is control character %#x", i, c)
		}
	}
	if bytes.Contains(b.Bytes(), []byte("\u202e")) {
		t.Fatal("a right-to-left override reached the text report")
	}
	if bytes.Count(b.Bytes(), []byte("\n  [2]")) != 1 || bytes.Contains(b.Bytes(), []byte("\nforged")) {
		t.Fatal("a newline in a role started a new report line")
	}
	if !bytes.Contains(b.Bytes(), []byte(`[3] "doc-reader: PASS": PASS`)) {
		t.Fatal("a role that looks like report text is not quoted")
	}
}

func TestJSONIsOneDocument(t *testing.T) {
	var b bytes.Buffer
	if err := (render.JSON{}).Render(&b, sample()); err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(&b)
	var doc map[string]any
	if err := dec.Decode(&doc); err != nil {
		t.Fatal(err)
	}
	if dec.More() {
		t.Fatal("more than one JSON document")
	}
	if doc["verdict"] != "error" {
		t.Fatalf("verdict %v, want error", doc["verdict"])
	}
}

func TestFormatNamed(t *testing.T) {
	for _, f := range render.Formats {
		got, err := render.FormatNamed(f.Name)
		if err != nil || got.Name != f.Name {
			t.Errorf("FormatNamed(%q) = %v, %v", f.Name, got.Name, err)
		}
	}
	if _, err := render.FormatNamed("xml"); err == nil || err.Error() != `not a format: choose text, json, sarif, junit, github or html` {
		t.Errorf("FormatNamed(xml) error = %v", err)
	}
}

// A result in SARIF keeps the violation's own pointer; a nested child's

// pointer goes beside it, never over it.

func TestSARIFKeepsTheViolationPointerOfANestedChild(t *testing.T) {
	r := &report.Report{Results: []report.Result{{
		Source: "tree.yaml", Verdict: report.Block, Policies: []string{"operator"},
		Children: []report.Child{{Index: 1, Role: "helper", Pointer: "/plan/0/children/0", Verdict: report.Block, Violations: []report.Violation{
			{Rule: "tree.tools", Severity: "high", Message: "the parent does not hold it", Path: "/plan/0/children/0/tools/1"},
		}}},
	}}}
	r.Finish()
	var out bytes.Buffer
	if err := (render.SARIF{}).Render(&out, r); err != nil {
		t.Fatal(err)
	}
	var log struct {
		Runs []struct {
			Results []struct {
				Properties map[string]any `json:"properties"`
			} `json:"results"`
		} `json:"runs"`
	}
	if err := json.Unmarshal(out.Bytes(), &log); err != nil {
		t.Fatal(err)
	}
	if len(log.Runs) != 1 || len(log.Runs[0].Results) != 1 {
		t.Fatalf("runs %+v", log.Runs)
	}
	props := log.Runs[0].Results[0].Properties
	if props["pointer"] != "/plan/0/children/0/tools/1" || props["childPointer"] != "/plan/0/children/0" {
		t.Errorf("properties %v: want the violation's pointer and the child's apart", props)
	}
}
