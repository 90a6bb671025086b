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
	return e.Where() + msg, &report.Problem{Line: e.Line, Column: e.Column, Pointer: plan.ShowPointer(e.Pointer), Msg: msg}
}
