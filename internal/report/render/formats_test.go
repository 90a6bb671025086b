package render_test

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/owenrumney/go-sarif/v3/pkg/report/v210/sarif"
	"github.com/santhosh-tekuri/jsonschema/v5"

	"github.com/spawngate/spawngate/internal/report"
	"github.com/spawngate/spawngate/internal/report/render"
)

// ciReports are the reports every CI format must carry: each kind of
// result, and the ways a run fails.
func ciReports() map[string]func() *report.Report {
	finished := func(r *report.Report) *report.Report { r.Finish(); return r }
	pass := func() *report.Report {
		return finished(&report.Report{Results: []report.Result{{
			Source: "examples/authorized-plan.yaml", Verdict: report.Pass, Policies: []string{"operator"},
			Children: []report.Child{{Index: 0, Role: "doc-reader", Verdict: report.Pass, Violations: []report.Violation{}}},
		}}})
	}
	exceptedOnly := func() *report.Report {
		e := report.Exception{Index: 0, Pointer: "/exceptions/0", Rule: "tools.write", Reason: "migration", Expires: "2027-01-31"}
		return finished(&report.Report{Results: []report.Result{{
			Source: "plan.yaml", Verdict: report.Pass,
			Children: []report.Child{{Index: 0, Role: "migrator", Verdict: report.Pass, Violations: []report.Violation{
				{Rule: "tools.write", Severity: "high", Message: "writes", Path: "/plan/0/tools/0", Line: 4, Column: 7, Excepted: &e},
			}}},
		}}})
	}
	planLevel := func() *report.Report {
		return finished(&report.Report{Results: []report.Result{{
			Source: "plan.json", Verdict: report.Block,
			Violations: []report.Violation{{Rule: "plan.budget", Severity: "medium", Message: "the plan's budgets add up to 900000 tokens, more than 500000", Path: "/plan"}},
			Children:   []report.Child{{Index: 0, Role: "a", Verdict: report.Pass, Violations: []report.Violation{}}},
		}}})
	}
	notes := func() *report.Report {
		return finished(&report.Report{Results: []report.Result{{
			Source: "plan.yaml", Verdict: report.Block,
			Children: []report.Child{{Index: 0, Role: "a", Verdict: report.Pass, Violations: []report.Violation{}}},
			Exceptions: []report.ExceptionNote{
				{Exception: report.Exception{Index: 0, Pointer: "/exceptions/0", Rule: "budget.cap", Reason: "r", Expires: "2025-01-01"}, Status: report.ExceptionExpired},
				{Exception: report.Exception{Index: 1, Pointer: "/exceptions/1", Rule: "budget.cap", Reason: "r", Expires: "2027-01-01"}, Status: report.ExceptionUnused, Blocks: true},
			},
		}}})
	}
	runError := func() *report.Report {
		return finished(&report.Report{Error: "--policy policy.yaml: cannot read: no such file or directory", Results: []report.Result{}})
	}
	nothing := func() *report.Report { return finished(&report.Report{Results: []report.Result{}}) }
	allowedNone := func() *report.Report {
		return finished(&report.Report{Note: "no agent definitions found under .", Results: []report.Result{}})
	}
	hostile := func() *report.Report {
		bad := "x\x00\x1b[2J\r\n::error::forged\u202e\ufffe%,:"
		return finished(&report.Report{Results: []report.Result{
			{
				Source: "<stdin>", Verdict: report.Block,
				Children: []report.Child{{Index: 0, Role: bad, Verdict: report.Block, Violations: []report.Violation{
					{Rule: "schema", Severity: "bogus", Message: bad, Path: "/plan/0/" + bad, Line: 1, Column: 2},
				}}},
			},
			report.Failed("dir with space/"+bad+".yaml", "cannot read "+bad, &report.Problem{Line: 2, Pointer: "/" + bad, Msg: bad}),
		}})
	}
	return map[string]func() *report.Report{
		"pass": pass, "block": findings, "document errors": sample, "excepted only": exceptedOnly,
		"plan level": planLevel, "exception notes": notes, "run error": runError, "nothing checked": nothing,
		"nothing, allowed": allowedNone, "hostile": hostile,
	}
}

func renderAs(t *testing.T, format string, r *report.Report) []byte {
	t.Helper()
	f, err := render.FormatNamed(format)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := f.Renderer.Render(&b, r); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestEveryFormatIsDeterministic(t *testing.T) {
	for _, f := range render.Formats {
		for name, build := range ciReports() {
			first := renderAs(t, f.Name, build())
			for range 5 {
				if again := renderAs(t, f.Name, build()); !bytes.Equal(first, again) {
					t.Fatalf("%s of %q: two renderings differ:\n%s\n---\n%s", f.Name, name, first, again)
				}
			}
		}
	}
}

func TestSARIFIsValid(t *testing.T) {
	for name, build := range ciReports() {
		t.Run(name, func(t *testing.T) {
			if err := render.SARIFLog(build()).Validate(); err != nil {
				t.Fatalf("the log does not follow the SARIF 2.1.0 schema: %v", err)
			}
			out := renderAs(t, "sarif", build())
			if _, err := sarif.FromBytes(out, sarif.WithStrictValidation()); err != nil {
				t.Fatal(err)
			}
			var raw any
			if err := json.Unmarshal(out, &raw); err != nil {
				t.Fatal(err)
			}
			if err := sarifSchema(t).Validate(raw); err != nil {
				t.Fatalf("the rendered log does not follow the SARIF 2.1.0 schema: %v", err)
			}
			dec := json.NewDecoder(bytes.NewReader(out))
			var doc any
			if err := dec.Decode(&doc); err != nil || dec.More() {
				t.Fatalf("not exactly one JSON document: %v", err)
			}
		})
	}
}

// sarifSchema is the SARIF 2.1.0 schema go-sarif validates with, read
// from its module (where it is a Go string), to validate the rendered
// bytes themselves: go-sarif's own types would write back every property
// the renderer leaves out, as null.
func sarifSchema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	sarifSchemaOnce.Do(func() {
		dir, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/owenrumney/go-sarif/v3").Output()
		if err != nil {
			sarifSchemaErr = fmt.Errorf("go list: %w", err)
			return
		}
		src, err := os.ReadFile(filepath.Join(strings.TrimSpace(string(dir)), "pkg", "report", "v210", "sarif", "schema.go"))
		if err != nil {
			sarifSchemaErr = err
			return
		}
		text := string(src)
		start, end := strings.Index(text, "`"), strings.LastIndex(text, "`")
		if start < 0 || end <= start {
			sarifSchemaErr = fmt.Errorf("no schema in go-sarif's schema.go")
			return
		}
		c := jsonschema.NewCompiler()
		if err := c.AddResource("sarif-schema-2.1.0.json", strings.NewReader(text[start+1:end])); err != nil {
			sarifSchemaErr = err
			return
		}
		sarifSchemaValue, sarifSchemaErr = c.Compile("sarif-schema-2.1.0.json")
	})
	if sarifSchemaErr != nil {
		t.Fatalf("the SARIF schema: %v", sarifSchemaErr)
	}
	return sarifSchemaValue
}

var (
	sarifSchemaOnce  sync.Once
	sarifSchemaValue *jsonschema.Schema
	sarifSchemaErr   error
)

// TestSARIFValidationCanFail makes sure the validation above is not
// vacuous: a log that breaks the schema is caught.
func TestSARIFValidationCanFail(t *testing.T) {
	log := render.SARIFLog(findings())
	log.Runs[0].Results[0].Level = "fatal"
	if err := log.Validate(); err == nil {
		t.Fatal("a result with level \"fatal\" passed the SARIF schema")
	}
	out := renderAs(t, "sarif", findings())
	var raw any
	if err := json.Unmarshal(bytes.Replace(out, []byte(`"level": "error"`), []byte(`"level": "fatal"`), 1), &raw); err != nil {
		t.Fatal(err)
	}
	if err := sarifSchema(t).Validate(raw); err == nil {
		t.Fatal("a rendered log with level \"fatal\" passed the SARIF schema")
	}
}

// TestSARIFWritesWhatIsSet: no empty list, no empty object and no -1
// placeholder reaches the rendered log.
func TestSARIFWritesWhatIsSet(t *testing.T) {
	for name, build := range ciReports() {
		out := string(renderAs(t, "sarif", build()))
		for _, bad := range []string{"[]", "{}", ": -1", "\"en-US\"", "isComprehensive", "newlineSequences"} {
			if strings.Contains(out, bad) {
				t.Errorf("%s: the log holds %s", name, bad)
			}
		}
	}
}

func parseSARIF(t *testing.T, r *report.Report) *sarif.Run {
	t.Helper()
	log, err := sarif.FromBytes(renderAs(t, "sarif", r), sarif.WithStrictValidation())
	if err != nil {
		t.Fatal(err)
	}
	if len(log.Runs) != 1 || len(log.Runs[0].Invocations) != 1 {
		t.Fatalf("want one run with one invocation, got %d runs", len(log.Runs))
	}
	return log.Runs[0]
}

func TestSARIFResults(t *testing.T) {
	rep := findings()
	run := parseSARIF(t, rep)
	if got := *run.Tool.Driver.Name; got != "spawngate" {
		t.Errorf("driver %q", got)
	}
	// Every listed violation is a result, plan-level ones first, in report
	// order; excepted ones are suppressed with the exception's reason.
	type want struct {
		rule, level, uri, pointer string
		line, column              int
		suppressed                string
	}
	var wants []want
	for _, res := range rep.Results {
		add := func(v report.Violation) {
			w := want{rule: v.Rule, uri: res.Source, pointer: v.Path, line: max(v.Line, 1), column: v.Column}
			if v.Line == 0 {
				w.column = 0
			}
			w.level = map[string]string{"critical": "error", "high": "error", "medium": "warning", "low": "note"}[v.Severity]
			if v.Excepted != nil {
				w.suppressed = v.Excepted.Reason
			}
			wants = append(wants, w)
		}
		for _, v := range res.Violations {
			add(v)
		}
		for _, c := range res.Children {
			for _, v := range c.Violations {
				add(v)
			}
		}
	}
	wants[len(wants)-1].uri = "plans/odd,name:1%25.yaml"
	if len(run.Results) != len(wants) {
		t.Fatalf("%d results, want %d", len(run.Results), len(wants))
	}
	for i, res := range run.Results {
		w := wants[i]
		rule := run.Tool.Driver.Rules[res.RuleIndex]
		loc := res.Locations[0]
		region := loc.PhysicalLocation.Region
		col := 0
		if region.StartColumn != nil {
			col = *region.StartColumn
		}
		suppressed := ""
		if len(res.Suppressions) > 0 {
			s := res.Suppressions[0]
			if *s.Kind != "external" {
				t.Errorf("result %d: suppression kind %q", i, *s.Kind)
			}
			suppressed = *s.Justification
		}
		got := want{*res.RuleID, res.Level, *loc.PhysicalLocation.ArtifactLocation.URI, *loc.LogicalLocations[0].FullyQualifiedName, *region.StartLine, col, suppressed}
		if got != w {
			t.Errorf("result %d = %+v, want %+v", i, got, w)
		}
		if *rule.ID != w.rule {
			t.Errorf("result %d: ruleIndex %d names %s, not %s", i, res.RuleIndex, *rule.ID, w.rule)
		}
		if res.Properties.Properties["pointer"] != w.pointer {
			t.Errorf("result %d: pointer property %v", i, res.Properties.Properties["pointer"])
		}
	}
	if msg := *run.Results[2].Message.Text; msg != `child 1 (home-cleaner) at /plan/1/budget_tokens: budget_tokens 5000000 exceeds the cap of 200000 tokens set by the operator policy` {
		t.Errorf("message %q does not read alone", msg)
	}
	// The rules: the front end's, then the one it did not describe.
	var ids []string
	for _, r := range run.Tool.Driver.Rules {
		ids = append(ids, *r.ID)
		props := r.Properties.Properties
		want := map[string]string{"critical": "9.5", "high": "8.0", "medium": "5.5", "low": "3.0"}[props["severity"].(string)]
		if props["security-severity"] != want {
			t.Errorf("rule %s: security-severity %v, want %s", *r.ID, props["security-severity"], want)
		}
	}
	if want := []string{"schema", "paths.escape", "tools.write", "budget.cap", "plan.children", "acme.naming"}; !slices.Equal(ids, want) {
		t.Errorf("rules %v, want %v", ids, want)
	}
	if d := run.Tool.Driver.Rules[1]; *d.ShortDescription.Text != "Paths stay inside the workspace" || *d.FullDescription.Text != "A path must be provably inside every workspace root." || d.DefaultConfiguration.Level != "error" {
		t.Errorf("rule paths.escape: %+v", d)
	}
	// The exceptions that did not apply, and the child whose violations
	// are not listed, are notifications; judging went well.
	inv := run.Invocations[0]
	if !*inv.ExecutionSuccessful {
		t.Error("a run that judged every plan is not successful")
	}
	var levels []string
	for _, n := range inv.ToolExecutionNotifications {
		levels = append(levels, n.Level+" "+*n.Message.Text)
	}
	wantNotes := []string{
		"warning plans/migrate.yaml: child 2 (bulk): 4 violations, not listed",
		"warning plans/migrate.yaml: exception 1 (budget.cap, until 2025-12-31): expired, it excepts nothing",
		"error plans/migrate.yaml: exception 2 (paths.escape, until 2027-06-30): unused, it matched nothing in this plan; this refuses the plan",
	}
	if !slices.Equal(levels, wantNotes) {
		t.Errorf("notifications\n%s\nwant\n%s", strings.Join(levels, "\n"), strings.Join(wantNotes, "\n"))
	}
}

func TestSARIFErrorsAreNotifications(t *testing.T) {
	run := parseSARIF(t, sample())
	inv := run.Invocations[0]
	if *inv.ExecutionSuccessful {
		t.Error("a run with plans that could not be evaluated is successful")
	}
	var got []string
	for _, n := range inv.ToolExecutionNotifications {
		where := ""
		if p := n.Locations[0].PhysicalLocation; p.Region != nil {
			where = fmt.Sprintf(" @%d", *p.Region.StartLine)
			if p.Region.StartColumn != nil {
				where += fmt.Sprintf(":%d", *p.Region.StartColumn)
			}
		}
		if ll := n.Locations[0].LogicalLocations; len(ll) > 0 {
			where += " " + *ll[0].FullyQualifiedName
		}
		got = append(got, n.Level+" "+*n.Locations[0].PhysicalLocation.ArtifactLocation.URI+where+" "+*n.Message.Text)
	}
	want := []string{
		"error plans/missing.yaml plans/missing.yaml: cannot read: no such file or directory",
		`error plans/dup.json @3:5 /plan/0 plans/dup.json:3:5: /plan/0: duplicate key "tools": consumers disagree on which value wins`,
		"error plans/deep.yaml @7 plans/deep.yaml:7: mapping values are not allowed in this context",
	}
	if !slices.Equal(got, want) {
		t.Errorf("notifications\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// The plans that were judged still have their results.
	if len(run.Results) != 4 {
		t.Errorf("%d results, want 4", len(run.Results))
	}

	for name, msg := range map[string]string{"run error": "--policy policy.yaml: cannot read: no such file or directory", "nothing checked": "nothing was checked"} {
		inv := parseSARIF(t, ciReports()[name]()).Invocations[0]
		if *inv.ExecutionSuccessful || len(inv.ToolExecutionNotifications) != 1 || inv.ToolExecutionNotifications[0].Level != "error" || *inv.ToolExecutionNotifications[0].Message.Text != msg {
			t.Errorf("%s: invocation %+v", name, inv)
		}
	}
	// Nothing judged, where the user allowed that: a note, and a success.
	inv = parseSARIF(t, ciReports()["nothing, allowed"]()).Invocations[0]
	if !*inv.ExecutionSuccessful || len(inv.ToolExecutionNotifications) != 1 || inv.ToolExecutionNotifications[0].Level != "note" || *inv.ToolExecutionNotifications[0].Message.Text != "no agent definitions found under ." {
		t.Errorf("nothing, allowed: invocation %+v", inv)
	}
}

func TestSARIFCarriesNoControlCharacters(t *testing.T) {
	run := parseSARIF(t, ciReports()["hostile"]())
	text := *run.Results[0].Message.Text + *run.Invocations[0].ToolExecutionNotifications[0].Message.Text
	if strings.ContainsFunc(text, func(r rune) bool { return r < 0x20 || r == 0x7f || r == '\u202e' }) {
		t.Errorf("a message carries a control character: %q", text)
	}
	if got := *run.Results[0].Locations[0].PhysicalLocation.ArtifactLocation.URI; got != "%3Cstdin%3E" {
		t.Errorf("uri %q", got)
	}
	if run.Results[0].Level != "error" {
		t.Errorf("an unknown severity is level %q, not error", run.Results[0].Level)
	}
}

func TestFingerprint(t *testing.T) {
	v := report.Violation{Rule: "paths.escape", Severity: "critical", Message: `path "~" contains '~'`, Path: "/plan/0/paths/0", Line: 4, Column: 9}
	base := render.Fingerprint("plans/a.yaml", v)
	if len(base) != 64 {
		t.Fatalf("fingerprint %q is not a SHA-256", base)
	}
	moved := v
	moved.Line, moved.Column = 40, 1
	moved.Severity = "high"
	moved.Policies = []string{"operator"}
	if render.Fingerprint("plans/a.yaml", moved) != base {
		t.Error("moving a violation to another line changed its fingerprint")
	}
	others := map[string]string{}
	add := func(what, fp string) {
		if fp == base {
			t.Errorf("a violation with another %s has the same fingerprint", what)
		}
		if prev, ok := others[fp]; ok {
			t.Errorf("%s and %s share a fingerprint", what, prev)
		}
		others[fp] = what
	}
	add("file", render.Fingerprint("plans/b.yaml", v))
	for what, change := range map[string]func(*report.Violation){
		"rule":    func(v *report.Violation) { v.Rule = "tools.write" },
		"pointer": func(v *report.Violation) { v.Path = "/plan/0/paths/1" },
		"message": func(v *report.Violation) { v.Message += "!" },
		"split":   func(v *report.Violation) { v.Path, v.Message = "/plan/0/paths/", "0"+v.Message }, // the same bytes in a row
	} {
		w := v
		change(&w)
		add(what, render.Fingerprint("plans/a.yaml", w))
	}
	// The fingerprint is in the log, under its versioned key.
	run := parseSARIF(t, findings())
	for i, res := range run.Results {
		if len(res.PartialFingerprints) != 1 || len(res.PartialFingerprints["spawngate/v1"]) != 64 {
			t.Errorf("result %d: partialFingerprints %v", i, res.PartialFingerprints)
		}
	}
}

func parseJUnit(t *testing.T, r *report.Report) render.JUnitSuites {
	t.Helper()
	var doc render.JUnitSuites
	if err := xml.Unmarshal(renderAs(t, "junit", r), &doc); err != nil {
		t.Fatalf("the JUnit XML does not parse: %v", err)
	}
	return doc
}

func TestJUnitParsesBackWithExactCounts(t *testing.T) {
	tests := []struct {
		report                  string
		tests, failures, errors int
	}{
		{"pass", 1, 0, 0},
		{"block", 6, 4, 0},
		{"document errors", 9, 3, 3},
		{"excepted only", 1, 0, 0},
		{"plan level", 2, 1, 0},
		{"exception notes", 2, 1, 0},
		{"run error", 1, 0, 1},
		{"nothing checked", 1, 0, 1},
		{"hostile", 2, 1, 1},
	}
	for _, tt := range tests {
		t.Run(tt.report, func(t *testing.T) {
			doc := parseJUnit(t, ciReports()[tt.report]())
			if doc.Tests != tt.tests || doc.Failures != tt.failures || doc.Errors != tt.errors {
				t.Errorf("tests=%d failures=%d errors=%d, want %d %d %d", doc.Tests, doc.Failures, doc.Errors, tt.tests, tt.failures, tt.errors)
			}
			// Every total is what its elements add up to.
			var tests, failures, errors int
			for _, s := range doc.Suites {
				var st, sf, se int
				for _, c := range s.TestCases {
					st++
					if c.Failure != nil {
						sf++
					}
					if c.Error != nil {
						se++
					}
				}
				if s.Tests != st || s.Failures != sf || s.Errors != se {
					t.Errorf("suite %s: tests=%d failures=%d errors=%d, but its cases add up to %d %d %d", s.Name, s.Tests, s.Failures, s.Errors, st, sf, se)
				}
				tests, failures, errors = tests+st, failures+sf, errors+se
			}
			if doc.Tests != tests || doc.Failures != failures || doc.Errors != errors {
				t.Errorf("totals %d %d %d, but the suites add up to %d %d %d", doc.Tests, doc.Failures, doc.Errors, tests, failures, errors)
			}
		})
	}
}

func TestJUnitCases(t *testing.T) {
	doc := parseJUnit(t, findings())
	s := doc.Suites[0]
	if s.Name != "plans/migrate.yaml" {
		t.Fatalf("suite %q", s.Name)
	}
	var names []string
	for _, c := range s.TestCases {
		names = append(names, c.Name)
		if c.ClassName != s.Name {
			t.Errorf("case %s: classname %q", c.Name, c.ClassName)
		}
	}
	if want := []string{"plan", "plan/0 migrator", "plan/1 home-cleaner", "plan/2 bulk", "plan/3 namer"}; !slices.Equal(names, want) {
		t.Errorf("cases %v, want %v", names, want)
	}
	cleaner := s.TestCases[2]
	if cleaner.Failure == nil {
		t.Fatal("a refused child does not fail")
	}
	wantBody := "budget.cap at /plan/1/budget_tokens, line 12, column 20: budget_tokens 5000000 exceeds the cap of 200000 tokens set by the operator policy\n" +
		"paths.escape at /plan/1/paths/0, line 11, column 14: path \"~\" contains '~' (home directory expansion)\n"
	if string(cleaner.Failure.Body) != wantBody || cleaner.Failure.Message != "refused by budget.cap, paths.escape" {
		t.Errorf("failure %q: %q", cleaner.Failure.Message, cleaner.Failure.Body)
	}
	if !strings.Contains(string(cleaner.SystemOut), "tools.write at /plan/1/tools/0") || !strings.Contains(string(cleaner.SystemOut), "excepted by exception 0 until 2027-01-31") {
		t.Errorf("the excepted violation is not in system-out: %q", cleaner.SystemOut)
	}
	if migrator := s.TestCases[1]; migrator.Failure != nil || migrator.SystemOut == "" {
		t.Errorf("a child that passes by an exception: %+v", migrator)
	}
	errs := parseJUnit(t, sample()).Suites[3]
	if c := errs.TestCases[0]; len(errs.TestCases) != 1 || c.Error == nil || c.Error.Message != `line 3, column 5: /plan/0: duplicate key "tools": consumers disagree on which value wins` {
		t.Errorf("a plan that could not be evaluated: %+v", errs)
	}
}

func TestGitHubEscaping(t *testing.T) {
	tests := []struct{ in, data, property string }{
		{"plain text", "plain text", "plain text"},
		{"100%", "100%25", "100%25"},
		{"%25 stays %25", "%2525 stays %2525", "%2525 stays %2525"},
		{"line\nbreak", "line%0Abreak", "line%0Abreak"},
		{"carriage\rreturn", "carriage%0Dreturn", "carriage%0Dreturn"},
		{"crlf\r\n::error::x", "crlf%0D%0A::error::x", "crlf%0D%0A%3A%3Aerror%3A%3Ax"},
		{"a,b:c", "a,b:c", "a%2Cb%3Ac"},
		{"plans/odd,name:1%.yaml", "plans/odd,name:1%25.yaml", "plans/odd%2Cname%3A1%25.yaml"},
		{"title=x,line=1", "title=x,line=1", "title=x%2Cline=1"},
	}
	for _, tt := range tests {
		if got := render.EscapeData(tt.in); got != tt.data {
			t.Errorf("EscapeData(%q) = %q, want %q", tt.in, got, tt.data)
		}
		if got := render.EscapeProperty(tt.in); got != tt.property {
			t.Errorf("EscapeProperty(%q) = %q, want %q", tt.in, got, tt.property)
		}
	}
}

// unescape reads a value back as the Actions runner does.
var unescape = strings.NewReplacer("%0D", "\r", "%0A", "\n", "%3A", ":", "%2C", ",", "%25", "%")

var command = regexp.MustCompile(`^::(error|warning|notice)(?: ([^:]*))?::(.*)$`)

func TestGitHubCommands(t *testing.T) {
	for name, build := range ciReports() {
		t.Run(name, func(t *testing.T) {
			rep := build()
			out := string(renderAs(t, "github", rep))
			lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
			last := lines[len(lines)-1]
			if !strings.HasPrefix(last, "verdict: ") {
				t.Errorf("the last line %q is not the verdict", last)
			}
			files := map[string]bool{}
			for _, res := range rep.Results {
				files[report.Clean(res.Source)] = true
			}
			for _, line := range lines[:len(lines)-1] {
				m := command.FindStringSubmatch(line)
				if m == nil {
					t.Fatalf("not a workflow command: %q", line)
				}
				if m[2] == "" {
					continue
				}
				for _, p := range strings.Split(m[2], ",") {
					name, value, ok := strings.Cut(p, "=")
					if !ok {
						t.Fatalf("property %q of %q", p, line)
					}
					if name == "file" && !files[unescape.Replace(value)] {
						t.Errorf("file %q does not read back as a plan's source", value)
					}
				}
			}
		})
	}
	// One command per blocking violation, document error, exception note
	// and unlisted child; a notice per excepted violation.
	out := string(renderAs(t, "github", findings()))
	count := map[string]int{}
	for _, line := range strings.Split(out, "\n") {
		if m := command.FindStringSubmatch(line); m != nil {
			count[m[1]]++
		}
	}
	if want := map[string]int{"error": 6, "notice": 3, "warning": 1}; !maps.Equal(count, want) {
		t.Errorf("commands %v, want %v", count, want)
	}
	if !strings.Contains(out, "\n::error file=plans/migrate.yaml,line=11,col=14,title=paths.escape::child 1 (home-cleaner) at /plan/1/paths/0: path \"~\" contains '~' (home directory expansion)\n") {
		t.Errorf("no annotation for the escaping path:\n%s", out)
	}
	if !strings.HasSuffix(out, "\nverdict: BLOCK, 3 of 5 children refused in 2 plans, 1 plan refused as a whole, 3 violations excepted (6 of 10 violations listed)\n") {
		t.Errorf("summary line:\n%s", out)
	}
	// A hostile plan cannot start a command of its own.
	hostile := string(renderAs(t, "github", ciReports()["hostile"]()))
	if n := strings.Count("\n"+hostile, "\n::"); n != 2 {
		t.Errorf("%d lines start a command, want 2:\n%s", n, hostile)
	}
	if strings.ContainsFunc(hostile, func(r rune) bool { return (r < 0x20 && r != '\n') || r == 0x7f || r == '\u202e' }) {
		t.Errorf("a control character reached the log:\n%q", hostile)
	}
}

func TestTextExceptedIsNoRefusal(t *testing.T) {
	out := string(renderAs(t, "text", ciReports()["excepted only"]()))
	want := "plan.yaml: PASS, the only child may be dispatched (no policy)\n" +
		"  [0] migrator: PASS, 1 violation excepted\n" +
		"      tools.write  /plan/0/tools/0  line 4, column 7: writes\n" +
		"                                    excepted by exception 0 until 2027-01-31: migration\n" +
		"\nverdict: PASS, the only child of 1 plan may be dispatched, 1 violation excepted\n"
	if out != want {
		t.Errorf("got\n%s\nwant\n%s", out, want)
	}
	out = string(renderAs(t, "text", ciReports()["plan level"]()))
	if !strings.HasPrefix(out, "plan.json: BLOCK, the plan is refused as a whole; 0 of 1 child refused (no policy)\n  plan: BLOCK\n      plan.budget  /plan  the plan's budgets") {
		t.Errorf("a plan refused as a whole:\n%s", out)
	}
}
