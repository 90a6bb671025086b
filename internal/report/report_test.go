package report_test

import (
	"testing"

	"github.com/spawngate/spawngate/internal/report"
)

func TestFinish(t *testing.T) {
	res := func(v report.Verdict) report.Result { return report.Result{Verdict: v} }
	tests := []struct {
		name    string
		report  report.Report
		verdict report.Verdict
	}{
		{"nothing checked", report.Report{}, report.NotJudged},
		{"all pass", report.Report{Results: []report.Result{res(report.Pass), res(report.Pass)}}, report.Pass},
		{"one block", report.Report{Results: []report.Result{res(report.Pass), res(report.Block)}}, report.Block},
		{"error beats block", report.Report{Results: []report.Result{res(report.Block), res(report.NotJudged), res(report.Pass)}}, report.NotJudged},
		{"run error", report.Report{Error: "bad flag", Results: []report.Result{res(report.Pass)}}, report.NotJudged},
		{"unknown verdict", report.Report{Results: []report.Result{res("maybe")}}, report.NotJudged},
		{"empty verdict", report.Report{Results: []report.Result{res("")}}, report.NotJudged},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := tt.report
			r.Finish()
			if r.Verdict != tt.verdict {
				t.Fatalf("verdict %s, want %s", r.Verdict, tt.verdict)
			}
		})
	}
}

func TestSortViolations(t *testing.T) {
	vs := []report.Violation{
		{Rule: "b", Path: "/plan/0/tools/10"},
		{Rule: "b", Path: "/plan/0/tools/2"},
		{Rule: "a", Path: "/plan/0/tools/2"},
		{Rule: "a", Path: "/plan/0"},
	}
	report.SortViolations(vs)
	var got []string
	for _, v := range vs {
		got = append(got, v.Rule+v.Path)
	}
	want := []string{"a/plan/0", "a/plan/0/tools/2", "b/plan/0/tools/2", "b/plan/0/tools/10"}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("order %v, want %v", got, want)
		}
	}
}

func TestClean(t *testing.T) {
	tests := map[string]string{
		"plain text":        "plain text",
		"tab\there":         `tab\u0009here`,
		"esc\x1b[31m":       `esc\u001b[31m`,
		"line\nbreak":       `line\u000abreak`,
		"rtl\u202eoverride": `rtl\u202eoverride`,
		"résumé ∕ ok":       "résumé ∕ ok",
		"bad \xff byte":     `bad \ufffd byte`,
	}
	for in, want := range tests {
		if got := report.Clean(in); got != want {
			t.Errorf("Clean(%q) = %q, want %q", in, got, want)
		}
	}
}
