package cli

import (
	"errors"

	"github.com/spawngate/spawngate/internal/judge"
	"github.com/spawngate/spawngate/internal/plan"
	"github.com/spawngate/spawngate/internal/report"
)

// say phrases why a document could not be judged the way the command line
// says it: one line, a limit with the flag that raises it, a missing
// policy with the flag that gives one. It returns the whole line and the
// parts the text report shows under the document's name.
func say(err error) (string, *report.Problem) {
	var e *judge.Error
	if !errors.As(err, &e) {
		msg := "internal error: " + plan.OneLine(err.Error())
		return msg, &report.Problem{Msg: msg}
	}
	msg := e.Msg
	switch {
	case e.Kind == judge.NoPolicy:
		msg = "no policy applies: pass --policy FILE"
	case e.Limit != "":
		msg += " (limit --" + e.Limit + ")"
	}
	msg += plan.MoreProblems(len(e.More))
	return e.Where() + msg, &report.Problem{Line: e.Line, Column: e.Column, Pointer: plan.ShowPointer(e.Pointer), Msg: msg}
}

// sayEach is every problem behind err, one line each as say phrases it,
// when there is more than one (a document that breaks its schema in
// several places); nil otherwise.
func sayEach(err error) []string {
	var e *judge.Error
	if !errors.As(err, &e) || len(e.More) == 0 {
		return nil
	}
	first := *e
	first.More = nil
	line, _ := say(&first)
	lines := []string{line}
	for _, m := range e.More {
		line, _ := say(m)
		lines = append(lines, line)
	}
	return lines
}
