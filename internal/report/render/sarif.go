package render

import (
	"github.com/spawngate/spawngate/internal/report"

	"bytes"
	"crypto/sha256"

	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"path/filepath"

	"github.com/owenrumney/go-sarif/v3/pkg/report/v210/sarif"
)

// SARIF renders the report as a SARIF 2.1.0 log that GitHub code scanning
// takes as it is: one rule per check, one result per listed violation at
// its file, line and column, and everything that kept the gate from
// judging as a tool execution notification. The log is built with
// go-sarif, whose types follow the SARIF schema, and it holds no time, no
// random GUID and nothing of the machine, so the same report gives the same
// bytes.
type SARIF struct{}

// Render writes the report, with only what is set: go-sarif writes every
// property of the schema, empty lists and -1 placeholders included, which
// took a passing two-child plan to 31 KB.
func (SARIF) Render(w io.Writer, r *report.Report) error {
	raw, err := json.Marshal(SARIFLog(r))
	if err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return err
	}
	v, _ = compactSARIF(v)
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return err
	}
	_, err = w.Write(b.Bytes())
	return err
}

// sarifDefaults are properties whose value is the one SARIF 2.1.0 gives
// them when they are left out (its -1 "not set" indices, the default
// language and line ends): written, they say nothing.
var sarifDefaults = map[string]string{
	"byteOffset": "-1", "charOffset": "-1", "id": "-1", "index": "-1", "parentIndex": "-1", "rank": "-1",
	"ruleIndex": "-1", "isComprehensive": "false", "enabled": "true", "language": `"en-US"`,
	"contents": `["localizedData","nonLocalizedData"]`, "newlineSequences": `["\r\n","\n"]`,
}

// compactSARIF leaves out of a SARIF log what is empty or has the schema's
// default value; a property bag keeps what it holds. It tells whether
// anything is left of v.
func compactSARIF(v any) (any, bool) {
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			if k != "properties" {
				x, keep := compactSARIF(x)
				if !keep {
					delete(v, k)
					continue
				}
				v[k] = x
			} else if bag, ok := x.(map[string]any); ok && len(bag) == 0 {
				delete(v, k)
				continue
			}
			if def, ok := sarifDefaults[k]; ok {
				if b, err := json.Marshal(v[k]); err == nil && string(b) == def {
					delete(v, k)
				}
			}
		}
		return v, len(v) > 0
	case []any:
		out := v[:0]
		for _, x := range v {
			if x, keep := compactSARIF(x); keep {
				out = append(out, x)
			}
		}
		return out, len(out) > 0
	}
	return v, true
}

// The tool as SARIF names it.
const (
	toolName = "spawngate"
	toolURI  = "https://github.com/spawngate/spawngate"
	// fingerprintKey names the result's partial fingerprint; the /v1 says
	// how it is computed, so a new way would be a new key.
	fingerprintKey = "spawngate/v1"
)

// SARIFLog builds the SARIF log of the report, for Render and for tests
// that validate it against the SARIF schema.
func SARIFLog(r *report.Report) *sarif.Report {
	run := sarif.NewRunWithInformationURI(toolName, toolURI)
	run.Tool.Driver.WithVersion(report.Version())
	s := &sarifRun{run: run, index: map[string]int{}}
	for _, rule := range r.Rules {
		s.rule(rule.ID, rule.Severity, rule.Title, rule.Description)
	}
	inv := sarif.NewInvocation().WithExecutionSuccessful(r.Verdict == report.Pass || r.Verdict == report.Block)
	if r.Error != "" {
		inv.AddToolExecutionNotification(notification(sarif.LevelError, r.Error))
	} else if len(r.Results) == 0 && r.Note != "" {
		inv.AddToolExecutionNotification(notification(sarif.LevelNote, r.Note))
	} else if len(r.Results) == 0 {
		inv.AddToolExecutionNotification(notification(sarif.LevelError, "nothing was checked"))
	}
	for _, res := range r.Results {
		if res.Verdict == report.NotJudged || res.Error != "" {
			inv.AddToolExecutionNotification(problemNotification(res))
			continue
		}
		for _, v := range res.Violations {
			s.result(res.Source, planSubject, v, nil)
		}
		for i := range res.Children {
			c := &res.Children[i]
			for _, v := range c.Violations {
				s.result(res.Source, subject(*c), v, c)
			}
			if c.Unlisted > 0 {
				n := notification(sarif.LevelWarning, res.Source+": "+unlistedText(*c))
				n.AddLocation(fileLocation(res.Source, 0, 0))
				inv.AddToolExecutionNotification(n)
			}
		}
		for _, note := range res.Exceptions {
			level := sarif.LevelWarning
			if note.Blocks {
				level = sarif.LevelError
			}
			n := notification(level, res.Source+": "+noteText(note))
			n.AddLocation(fileLocation(res.Source, 0, 0))
			n.WithAssociatedRule(s.ruleReference(note.Rule))
			n.WithProperties(sarif.NewPropertyBag().
				Add("exception", note.Index).
				Add("pointer", note.Pointer).
				Add("status", note.Status).
				Add("expires", note.Expires).
				Add("reason", note.Reason).
				Add("blocks", note.Blocks))
			inv.AddToolExecutionNotification(n)
		}
	}
	run.AddInvocation(inv)
	return sarif.NewReport().AddRun(run)
}

// sarifRun builds one run, and keeps its rules' indices.
type sarifRun struct {
	run   *sarif.Run
	index map[string]int // rule ID -> index in the driver's rules
}

// rule adds a rule unless one with the ID is already there.
func (s *sarifRun) rule(id, severity, title, description string) int {
	if i, ok := s.index[id]; ok {
		return i
	}
	if title == "" {
		title = id
	}
	d := sarif.NewRule(id).
		WithShortDescription(sarif.NewMultiformatMessageString().WithText(title)).
		WithDefaultConfiguration(sarif.NewReportingConfiguration().WithLevel(sarifLevel(severity)))
	if description != "" {
		d.WithFullDescription(sarif.NewMultiformatMessageString().WithText(description))
	}
	props := sarif.NewPropertyBag().Add("severity", severity).AddTag("security")
	if score, ok := securitySeverity[severity]; ok {
		props.Add("security-severity", score)
	}
	d.WithProperties(props)
	s.run.Tool.Driver.Rules = append(s.run.Tool.Driver.Rules, d)
	s.index[id] = len(s.run.Tool.Driver.Rules) - 1
	return s.index[id]
}

func (s *sarifRun) ruleReference(id string) *sarif.ReportingDescriptorReference {
	ref := sarif.NewReportingDescriptorReference().WithID(id)
	if i, ok := s.index[id]; ok {
		ref.WithIndex(i)
	}
	return ref
}

// result adds the result of one violation of the plan in source, by who
// (a child, or the plan as a whole; c is the child, or nil).
func (s *sarifRun) result(source, who string, v report.Violation, c *report.Child) {
	// A rule the front end did not describe still gets a rule, so that
	// every result's ruleIndex is right.
	i := s.rule(v.Rule, v.Severity, "", "")
	loc := resultLocation(source, v.Line, v.Column)
	loc.AddLogicalLocation(sarif.NewLogicalLocation().WithFullyQualifiedName(v.Path).WithKind("value"))
	props := sarif.NewPropertyBag().Add("pointer", v.Path).Add("severity", v.Severity)
	if c != nil {
		props.Add("child", c.Index).Add("role", c.Role)
		if c.Pointer != "" {
			props.Add("childPointer", c.Pointer)
		}
	}
	if len(v.Policies) > 0 {
		props.Add("policies", v.Policies)
	}
	res := sarif.NewRuleResult(v.Rule).
		WithRuleIndex(i).
		WithLevel(sarifLevel(v.Severity)).
		WithMessage(sarif.NewTextMessage(report.Clean(finding(who, v)))).
		AddLocation(loc).
		WithPartialFingerprints(map[string]string{fingerprintKey: Fingerprint(source, v)}). // AddPartialFingerprint writes to a nil map
		WithProperties(props)
	if e := v.Excepted; e != nil {
		res.AddSuppression(sarif.NewSuppression().
			WithKind("external").
			WithStatus("accepted").
			WithJustification(report.Clean(e.Reason)).
			WithProperties(sarif.NewPropertyBag().
				Add("exception", e.Index).
				Add("pointer", e.Pointer).
				Add("expires", e.Expires)))
	}
	s.run.AddResult(res)
}

// Fingerprint identifies a violation across runs: the same rule, file,
// JSON pointer and message give the same value, and lines do not count, so
// an edit elsewhere in the file does not make it a new finding.
func Fingerprint(source string, v report.Violation) string {
	h := sha256.New()
	for _, part := range []string{v.Rule, source, v.Path, v.Message} {
		h.Write([]byte(part))
		h.Write([]byte{0})
	}
	return fmt.Sprintf("%x", h.Sum(nil))
}

// resultLocation is where a result is. GitHub code scanning needs a line
// for every result, so a value whose line is not known is placed at the
// start of the file; its JSON pointer still says which value it is.
func resultLocation(source string, line, column int) *sarif.Location {
	if line <= 0 {
		line, column = 1, 0
	}
	return fileLocation(source, line, column)
}

// fileLocation is a place in a file: the line and column when known (0
// when not), else the whole file.
func fileLocation(source string, line, column int) *sarif.Location {
	loc := sarif.NewPhysicalLocation().WithArtifactLocation(sarif.NewSimpleArtifactLocation(artifactURI(source)))
	if line > 0 {
		region := sarif.NewRegion().WithStartLine(line)
		if column > 0 {
			region.WithStartColumn(column)
		}
		loc.WithRegion(region)
	}
	return sarif.NewLocationWithPhysicalLocation(loc)
}

// artifactURI writes a file name as the relative URI reference SARIF
// wants, as it was given: examples/plan.yaml stays as it is, a space or a
// '%' is percent-encoded, and <stdin> is %3Cstdin%3E.
func artifactURI(source string) string {
	return (&url.URL{Path: filepath.ToSlash(source)}).String()
}

func notification(level, msg string) *sarif.Notification {
	return sarif.NewNotification().WithLevel(level).WithMessage(sarif.NewTextMessage(report.Clean(msg)))
}

// problemNotification is why a plan could not be evaluated, at its place
// in the document when that is known.
func problemNotification(res report.Result) *sarif.Notification {
	msg := res.Error
	if msg == "" {
		msg = res.Source + ": could not evaluate"
	}
	n := notification(sarif.LevelError, msg)
	p := res.Problem
	if p == nil {
		p = &report.Problem{}
	}
	loc := fileLocation(res.Source, p.Line, p.Column)
	if p.Pointer != "" {
		loc.AddLogicalLocation(sarif.NewLogicalLocation().WithFullyQualifiedName(p.Pointer).WithKind("value"))
	}
	n.AddLocation(loc)
	return n
}

// sarifLevel maps a check's severity to a SARIF level. A severity the gate
// does not know is an error: an unknown is never played down.
func sarifLevel(severity string) string {
	switch severity {
	case "medium":
		return sarif.LevelWarning
	case "low":
		return sarif.LevelNote
	}
	return sarif.LevelError
}

// securitySeverity is the score GitHub code scanning reads from a rule's
// security-severity property, by severity: above 9.0 is critical, 7.0 to
// 8.9 high, 4.0 to 6.9 medium, below that low.
var securitySeverity = map[string]string{
	"critical": "9.5",
	"high":     "8.0",
	"medium":   "5.5",
	"low":      "3.0",
}
