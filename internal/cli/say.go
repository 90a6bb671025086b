package cli

import (
	"github.com/spawngate/spawngate/internal/judge"
	"github.com/spawngate/spawngate/internal/report"
)

// wording is how the command line names what its user can do about an
// error: a limit or a document by the flag that sets it. The server it
// starts phrases errors the same way.
var wording = judge.Wording{
	Setting:       func(name string) string { return "--" + name },
	WriteBuiltins: "spawngate rules --write-rego DIR",
}

// say phrases why a document could not be judged the way the command line
// says it: one line, and the parts the text report shows under the
// document's name.
func say(err error) (string, *report.Problem) { return wording.Problem(err) }

// sayEach is every problem behind err, one line each as say phrases it,
// when there is more than one; nil otherwise.
func sayEach(err error) []string { return wording.Each(err) }
