package render

import (
	"bytes"
	"encoding/json"
	"github.com/spawngate/spawngate/internal/report"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// encodingJSON is what the renderer must equal, byte for byte.
func encodingJSON(t *testing.T, r *report.Report) []byte {
	t.Helper()
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(r); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func render(t *testing.T, r *report.Report) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := (JSON{}).Render(&b, r); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestJSONEqualsEncodingJSON(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	pieces := []string{"a", "é", "\"", "\\", "\n", "\r", "\t", "\b", "\f", "\x00", "\x1b", "\x7f", "<", ">", "&", "\u2028", "\u2029", "\u202e", "\xff", "\xe2\x80", "😀", " ", "/"}
	str := func() string {
		var s strings.Builder
		for n := rng.IntN(6); n > 0; n-- {
			s.WriteString(pieces[rng.IntN(len(pieces))])
		}
		return s.String()
	}
	strs := func() []string {
		switch rng.IntN(3) {
		case 0:
			return nil
		case 1:
			return []string{}
		}
		out := []string{str()}
		for rng.IntN(2) == 0 {
			out = append(out, str())
		}
		return out
	}
	num := func() int { return rng.IntN(5) - 1 } // -1 to 3: zero is omitted, a negative is not
	exception := func() report.Exception {
		return report.Exception{Index: num(), Pointer: str(), Rule: str(), Reason: str(), Expires: str()}
	}
	violations := func() []report.Violation {
		var vs []report.Violation
		if rng.IntN(4) > 0 {
			vs = []report.Violation{}
		}
		for k := rng.IntN(3); k > 0; k-- {
			v := report.Violation{Rule: str(), Severity: str(), Message: str(), Path: str(), Line: num(), Column: num(), Policies: strs()}
			if rng.IntN(2) == 0 {
				e := exception()
				v.Excepted = &e
			}
			vs = append(vs, v)
		}
		return vs
	}
	for i := 0; i < 3000; i++ {
		r := &report.Report{Verdict: report.Verdict(str()), Error: str(), Problems: strs(), Note: str()}
		if rng.IntN(3) > 0 {
			r.Results = []report.Result{}
		}
		if rng.IntN(2) == 0 {
			r.Rules = []report.Rule{{ID: str(), Severity: str(), Title: str(), Description: str()}} // never in the JSON
		}
		for n := rng.IntN(3); n > 0; n-- {
			res := report.Result{Source: str(), Verdict: report.Verdict(str()), Error: str(), Problems: strs(), Policies: strs(), PolicyInPlan: rng.IntN(2) == 0}
			if rng.IntN(2) == 0 {
				res.Problem = &report.Problem{Line: num(), Column: num(), Pointer: str(), Msg: str()} // never in the JSON
			}
			if rng.IntN(2) == 0 {
				res.Text = []byte(str()) // never in the JSON
			}
			if rng.IntN(4) > 0 {
				res.Children = []report.Child{}
			}
			for m := rng.IntN(3); m > 0; m-- {
				c := report.Child{Index: rng.IntN(1000) - 10, Pointer: str(), Role: str(), Verdict: report.Verdict(str()), Unlisted: num(), Violations: violations()}
				res.Children = append(res.Children, c)
			}
			if rng.IntN(2) == 0 {
				res.Violations = violations()
			}
			switch rng.IntN(3) {
			case 0:
				res.Exceptions = []report.ExceptionNote{}
			case 1:
				for k := rng.IntN(3) + 1; k > 0; k-- {
					res.Exceptions = append(res.Exceptions, report.ExceptionNote{Exception: exception(), Status: str(), Blocks: rng.IntN(2) == 0})
				}
			}
			r.Results = append(r.Results, res)
		}
		if got, want := render(t, r), encodingJSON(t, r); !bytes.Equal(got, want) {
			t.Fatalf("report %d differs\n got %q\nwant %q", i, got, want)
		}
	}
}

// TestJSONPropertyTestCoversEveryField fails when a field is added to the
// report model without the property test above learning it: the renderer
// is written by hand, so a field it does not know would silently be
// missing from the JSON.
func TestJSONPropertyTestCoversEveryField(t *testing.T) {
	known := map[string][]string{
		"Report":        {"Verdict", "Error", "Problems", "Note", "Results", "Rules"},
		"Result":        {"Source", "Verdict", "Error", "Problem", "Problems", "Policies", "PolicyInPlan", "Children", "Violations", "Exceptions", "Text"},
		"Child":         {"Index", "Pointer", "Role", "Verdict", "Violations", "Unlisted"},
		"Violation":     {"Rule", "Severity", "Message", "Path", "Line", "Column", "Policies", "Excepted"},
		"Exception":     {"Index", "Pointer", "Rule", "Reason", "Expires"},
		"ExceptionNote": {"Exception", "Status", "Blocks"},
	}
	for _, typ := range []reflect.Type{reflect.TypeFor[report.Report](), reflect.TypeFor[report.Result](), reflect.TypeFor[report.Child](), reflect.TypeFor[report.Violation](), reflect.TypeFor[report.Exception](), reflect.TypeFor[report.ExceptionNote]()} {
		var fields []string
		for f := range typ.Fields() {
			fields = append(fields, f.Name)
		}
		if want := known[typ.Name()]; !slices.Equal(fields, want) {
			t.Errorf("%s has fields %v; the generator of TestJSONEqualsEncodingJSON covers %v: teach it (and json.go) the new ones", typ.Name(), fields, want)
		}
	}
}
