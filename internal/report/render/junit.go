package render

import (
	"github.com/spawngate/spawngate/internal/report"

	"encoding/xml"
	"io"
	"slices"
	"strconv"
	"strings"
)

// JUnit renders the report as JUnit XML, the test report most CI systems
// show: one test suite per plan (or agent definition), one test case per
// child, failing with the reasons it is refused; a plan that could not be
// evaluated is a suite whose one case errored. Everything that came from a
// document is escaped as the text report escapes it, so no control
// character reaches the XML (XML 1.0 cannot carry most of them).
type JUnit struct{}

// The JUnit XML elements, as common CI test report readers take them.
type (
	// JUnitSuites is the document: every suite, with totals.
	JUnitSuites struct {
		XMLName  xml.Name     `xml:"testsuites"`
		Name     string       `xml:"name,attr"`
		Tests    int          `xml:"tests,attr"`
		Failures int          `xml:"failures,attr"`
		Errors   int          `xml:"errors,attr"`
		Skipped  int          `xml:"skipped,attr,omitempty"`
		Suites   []JUnitSuite `xml:"testsuite"`
	}
	// JUnitSuite is one plan.
	JUnitSuite struct {
		Name      string      `xml:"name,attr"`
		Tests     int         `xml:"tests,attr"`
		Failures  int         `xml:"failures,attr"`
		Errors    int         `xml:"errors,attr"`
		Skipped   int         `xml:"skipped,attr,omitempty"`
		TestCases []JUnitCase `xml:"testcase"`
	}
	// JUnitCase is one child, or the plan as a whole.
	JUnitCase struct {
		Name      string        `xml:"name,attr"`
		ClassName string        `xml:"classname,attr"`
		Failure   *JUnitProblem `xml:"failure,omitempty"`
		Error     *JUnitProblem `xml:"error,omitempty"`
		Skipped   *JUnitSkipped `xml:"skipped,omitempty"`
		SystemOut JUnitText     `xml:"system-out,omitempty"`
	}
	// JUnitSkipped is a run that judged nothing because the user allowed
	// that (agents --allow-none): why, in one line.
	JUnitSkipped struct {
		Message string `xml:"message,attr"`
	}
	// JUnitProblem is a failure (refused) or an error (not evaluated): a
	// one-line message, and every reason in the body, one per line.
	JUnitProblem struct {
		Message string    `xml:"message,attr"`
		Type    string    `xml:"type,attr"`
		Body    JUnitText `xml:",chardata"`
	}
)

// JUnitText is text of several lines, written with its line breaks as they
// are (encoding/xml writes a string field's as &#xA;, which a person
// reading the file cannot).
type JUnitText string

// MarshalXML writes the text as the content of start.
func (t JUnitText) MarshalXML(e *xml.Encoder, start xml.StartElement) error {
	if err := e.EncodeToken(start); err != nil {
		return err
	}
	if err := e.EncodeToken(xml.CharData(t)); err != nil {
		return err
	}
	return e.EncodeToken(start.End())
}

// MarshalXML writes the problem with its body's line breaks as they are.
func (p JUnitProblem) MarshalXML(e *xml.Encoder, start xml.StartElement) error {
	start.Attr = append(start.Attr,
		xml.Attr{Name: xml.Name{Local: "message"}, Value: p.Message},
		xml.Attr{Name: xml.Name{Local: "type"}, Value: p.Type})
	return p.Body.MarshalXML(e, start)
}

// Render writes the report.
func (JUnit) Render(w io.Writer, r *report.Report) error {
	out, err := xml.MarshalIndent(JUnitOf(r), "", "  ")
	if err != nil {
		return err
	}
	b := append([]byte(xml.Header), out...)
	_, err = w.Write(append(b, '\n'))
	return err
}

// JUnitOf builds the JUnit document of the report.
func JUnitOf(r *report.Report) *JUnitSuites {
	doc := &JUnitSuites{Name: toolName, Suites: []JUnitSuite{}}
	if r.Error == "" && len(r.Results) == 0 && r.Note != "" {
		doc.add(JUnitSuite{Name: toolName, TestCases: []JUnitCase{{
			Name: "run", ClassName: toolName, Skipped: &JUnitSkipped{Message: report.Clean(r.Note)},
		}}})
		return doc
	}
	if r.Error != "" || len(r.Results) == 0 {
		msg := r.Error
		if msg == "" {
			msg = "nothing was checked"
		}
		doc.add(JUnitSuite{Name: toolName, TestCases: []JUnitCase{{
			Name: "run", ClassName: toolName,
			Error: &JUnitProblem{Message: report.Clean(msg), Type: "error", Body: JUnitText(report.Clean(msg))},
		}}})
	}
	for _, res := range r.Results {
		doc.add(junitSuite(res))
	}
	return doc
}

// add adds a suite, counting its cases into its totals and the document's.
func (d *JUnitSuites) add(s JUnitSuite) {
	for _, c := range s.TestCases {
		s.Tests++
		if c.Failure != nil {
			s.Failures++
		}
		if c.Error != nil {
			s.Errors++
		}
		if c.Skipped != nil {
			s.Skipped++
		}
	}
	d.Tests += s.Tests
	d.Failures += s.Failures
	d.Errors += s.Errors
	d.Skipped += s.Skipped
	d.Suites = append(d.Suites, s)
}

func junitSuite(res report.Result) JUnitSuite {
	src := report.Clean(res.Source)
	s := JUnitSuite{Name: src, TestCases: []JUnitCase{}}
	if res.Verdict == report.NotJudged || res.Error != "" {
		msg := problemDetail(res)
		if msg == "" {
			msg = "could not evaluate"
		}
		s.TestCases = append(s.TestCases, JUnitCase{
			Name: "plan", ClassName: src,
			Error: &JUnitProblem{Message: report.Clean(msg), Type: "error", Body: JUnitText(report.Clean(res.Error))},
		})
		return s
	}
	if len(res.Violations) > 0 || len(res.Exceptions) > 0 {
		c := JUnitCase{Name: "plan", ClassName: src}
		var refusals []string
		for _, n := range res.Exceptions {
			if n.Blocks {
				refusals = append(refusals, report.Clean(noteText(n)))
			}
		}
		c.Failure = junitFailure(res.Violations, refusals, res.PlanRefusals() > 0)
		var out []string
		out = append(out, exceptedLines(res.Violations)...)
		for _, n := range res.Exceptions {
			if !n.Blocks {
				out = append(out, report.Clean(noteText(n)))
			}
		}
		c.SystemOut = lines(out)
		s.TestCases = append(s.TestCases, c)
	}
	for _, ch := range res.Children {
		c := JUnitCase{Name: strings.TrimPrefix(ch.Pointer, "/"), ClassName: src}
		if ch.Pointer == "" {
			c.Name = "plan/" + strconv.Itoa(ch.Index)
		}
		if ch.Role != "" {
			c.Name += " " + report.Clean(ch.Role)
		}
		var more []string
		if ch.Unlisted > 0 {
			more = append(more, report.Clean(unlistedText(ch)))
		}
		c.Failure = junitFailure(ch.Violations, more, ch.Verdict != report.Pass)
		c.SystemOut = lines(exceptedLines(ch.Violations))
		s.TestCases = append(s.TestCases, c)
	}
	return s
}

// junitFailure is the failure of a child or a plan that is refused (nil
// when it is not): the rules that refuse it in the message, and each
// blocking violation, then the other reasons, one line each in the body.
func junitFailure(vs []report.Violation, more []string, refused bool) *JUnitProblem {
	if !refused {
		return nil
	}
	var rules, body []string
	for _, v := range vs {
		if !v.Blocks() {
			continue
		}
		if !slices.Contains(rules, report.Clean(v.Rule)) {
			rules = append(rules, report.Clean(v.Rule))
		}
		body = append(body, report.Clean(violationLine(v)))
	}
	body = append(body, more...)
	msg := "refused"
	if len(rules) > 0 {
		msg += " by " + strings.Join(rules, ", ")
	}
	return &JUnitProblem{Message: msg, Type: "refused", Body: lines(body)}
}

// exceptedLines lists the violations an exception lets through, each with
// the exception.
func exceptedLines(vs []report.Violation) []string {
	var out []string
	for _, v := range vs {
		if e := v.Excepted; e != nil {
			out = append(out, report.Clean(violationLine(v)+" ("+exceptedBy(*e)+")"))
		}
	}
	return out
}

// violationLine is one violation on one line: "budget.cap at
// /plan/0/budget_tokens, line 4, column 5: budget_tokens ... exceeds ...".
func violationLine(v report.Violation) string {
	s := v.Rule + " at " + v.Path
	if p := position(v.Line, v.Column); p != "" {
		s += ", " + p
	}
	return s + ": " + v.Message
}

// lines joins lines, each ended by a newline; "" for none.
func lines(ls []string) JUnitText {
	if len(ls) == 0 {
		return ""
	}
	return JUnitText(strings.Join(ls, "\n") + "\n")
}
