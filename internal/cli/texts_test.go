package cli

import (
	"testing"

	"github.com/spawngate/spawngate/internal/report"
	"github.com/spawngate/spawngate/internal/report/render"
)

// TestTextsOnlyForTheFormatsThatShowThem: a run keeps the documents' text
// only when a report it writes shows it, and each result gets its own.
func TestTextsOnlyForTheFormatsThatShowThem(t *testing.T) {
	format := func(name string) render.Format {
		f, err := render.FormatNamed(name)
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	for _, f := range render.Formats {
		if f.ShowsText != (f.Name == "html") {
			t.Errorf("format %s: ShowsText %v", f.Name, f.ShowsText)
		}
	}
	if keepTexts(format("text"), []reportOutput{{format("sarif"), "r.sarif"}, {format("json"), "-"}}) != nil {
		t.Error("a run without an HTML report keeps texts")
	}
	for _, outs := range [][]reportOutput{nil, {{format("html"), "r.html"}}} {
		f := format("html")
		if outs != nil {
			f = format("text")
		}
		d := keepTexts(f, outs)
		if d == nil {
			t.Fatalf("--format %s with %v keeps no text", f.Name, outs)
		}
		data := []byte("plan: []\n")
		d.read("a.yaml", data)
		d.read("policy.yaml", []byte("x"))
		data[0] = 'X' // OnRead must not keep data: the copy is the run's own
		rep := &report.Report{Results: []report.Result{{Source: "a.yaml"}, {Source: "b.yaml"}}}
		d.fill(rep)
		if string(rep.Results[0].Text) != "plan: []\n" || rep.Results[1].Text != nil {
			t.Errorf("texts %q, %q", rep.Results[0].Text, rep.Results[1].Text)
		}
	}
}
