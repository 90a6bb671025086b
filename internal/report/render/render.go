// Package render shows a report in each output format: text for a person,
// JSON, SARIF, JUnit XML, GitHub workflow commands, and an HTML page for a
// person. Each format is one Renderer, chosen from one table (Formats)
// that also feeds --format and its help. A renderer reads the report model and changes nothing in it.
package render

import (
	"fmt"
	"io"
	"strings"

	"github.com/spawngate/spawngate/internal/report"
)

// Renderer writes a report in one format.
type Renderer interface {
	Render(w io.Writer, r *report.Report) error
}

// Format is one output format of spawngate check.
type Format struct {
	Name     string
	Help     string
	Renderer Renderer
	// ShowsText tells that the format shows each document's own text
	// (report.Result.Text): front ends read it for such a format only, so
	// that the others pay nothing.
	ShowsText bool
}

// Formats lists every output format; the first is the default. It feeds the
// --format flag and its help.
var Formats = []Format{
	{Name: "text", Help: "a report for a person: each child, its verdict and every reason", Renderer: Text{}},
	{Name: "json", Help: "one JSON document on stdout, also on errors", Renderer: JSON{}},
	{Name: "sarif", Help: "SARIF 2.1.0 for GitHub code scanning", Renderer: SARIF{}},
	{Name: "junit", Help: "JUnit XML for CI test reports", Renderer: JUnit{}},
	{Name: "github", Help: "GitHub Actions annotations", Renderer: GitHub{}},
	{Name: "html", Help: "one self-contained page for a person, with each refused value marked in the plan's text", Renderer: HTML{}, ShowsText: true},
}

// FormatNamed finds a format by name.
func FormatNamed(name string) (Format, error) {
	names := make([]string, len(Formats))
	for i, f := range Formats {
		if f.Name == name {
			return f, nil
		}
		names[i] = f.Name
	}
	return Format{}, fmt.Errorf("not a format: choose %s or %s", strings.Join(names[:len(names)-1], ", "), names[len(names)-1])
}
