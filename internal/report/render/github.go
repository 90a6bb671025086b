package render

import (
	"github.com/spawngate/spawngate/internal/report"

	"bufio"
	"io"
	"strconv"
	"strings"
)

// GitHub renders the report as GitHub Actions workflow commands, which the
// runner turns into annotations on the file and line: an error per
// violation that refuses, a notice per excepted one, an error per document
// that could not be evaluated, a warning per exception that did not apply
// (an error when it refuses the plan), and last the verdict line of the
// text report.
//
// Every value is escaped as the runner unescapes it, so no plan can end a
// command early or start one of its own: in a message '%', CR and LF; in a
// property also ':' and ','. Before that, every value is cleaned of
// control characters (see Clean), which a log viewer would act on; a file
// name with one cannot be annotated anyway, and any other file name
// (spaces, commas, colons, '%') reaches the runner as it is.
type GitHub struct{}

// Render writes the report.
func (GitHub) Render(w io.Writer, r *report.Report) error {
	b := bufio.NewWriter(w)
	if r.Error != "" {
		writeCommand(b, "error", []property{{"title", toolName}}, report.Clean(r.Error))
	}
	if r.Note != "" && len(r.Results) == 0 {
		writeCommand(b, "notice", []property{{"title", toolName}}, report.Clean(r.Note))
	}
	for _, res := range r.Results {
		if res.Verdict == report.NotJudged || res.Error != "" {
			var p report.Problem
			if res.Problem != nil {
				p = *res.Problem
			}
			msg := p.Msg
			if p.Pointer != "" {
				msg = p.Pointer + ": " + msg
			}
			if res.Problem == nil {
				msg = res.Error
			}
			writeCommand(b, "error", fileProperties(res.Source, p.Line, p.Column), report.Clean(msg))
			continue
		}
		for _, v := range res.Violations {
			writeViolation(b, res.Source, planSubject, v)
		}
		for _, c := range res.Children {
			for _, v := range c.Violations {
				writeViolation(b, res.Source, subject(c), v)
			}
			if c.Unlisted > 0 {
				writeCommand(b, "error", append(fileProperties(res.Source, 0, 0), property{"title", toolName}), report.Clean(unlistedText(c)))
			}
		}
		for _, n := range res.Exceptions {
			kind := "warning"
			if n.Blocks {
				kind = "error"
			}
			// On the plan the note is about, so that the runner shows it
			// beside that file's other annotations.
			writeCommand(b, kind, append(fileProperties(res.Source, 0, 0), property{"title", "exception " + strconv.Itoa(n.Index)}), report.Clean(res.Source+": "+noteText(n)))
		}
	}
	b.WriteString("verdict: " + closing(r) + "\n")
	return b.Flush()
}

// property is one name=value of a workflow command.
type property struct{ name, value string }

// fileProperties place an annotation: the file, and the line and column
// when they are known.
func fileProperties(file string, line, column int) []property {
	ps := []property{{"file", report.Clean(file)}}
	if line > 0 {
		ps = append(ps, property{"line", strconv.Itoa(line)})
		if column > 0 {
			ps = append(ps, property{"col", strconv.Itoa(column)})
		}
	}
	return ps
}

func writeViolation(b *bufio.Writer, source, who string, v report.Violation) {
	ps := append(fileProperties(source, v.Line, v.Column), property{"title", report.Clean(v.Rule)})
	if e := v.Excepted; e != nil {
		writeCommand(b, "notice", ps, report.Clean(finding(who, v)+" ("+exceptedBy(*e)+")"))
		return
	}
	writeCommand(b, "error", ps, report.Clean(finding(who, v)))
}

// writeCommand writes one workflow command: ::kind name=value,...::message.
func writeCommand(b *bufio.Writer, kind string, ps []property, msg string) {
	b.WriteString("::")
	b.WriteString(kind)
	for i, p := range ps {
		if i == 0 {
			b.WriteByte(' ')
		} else {
			b.WriteByte(',')
		}
		b.WriteString(p.name)
		b.WriteByte('=')
		b.WriteString(EscapeProperty(p.value))
	}
	b.WriteString("::")
	b.WriteString(EscapeData(msg))
	b.WriteByte('\n')
}

var (
	dataEscaper     = strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A")
	propertyEscaper = strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A", ":", "%3A", ",", "%2C")
)

// EscapeData escapes a workflow command's message: '%', CR and LF.
func EscapeData(s string) string { return dataEscaper.Replace(s) }

// EscapeProperty escapes a workflow command's property value: '%', CR, LF,
// ':' and ','.
func EscapeProperty(s string) string { return propertyEscaper.Replace(s) }
