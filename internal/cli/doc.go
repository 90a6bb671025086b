// Package cli is the spawngate command line. Run is the whole program as a
// function of its arguments and streams, so tests call it in-process; Main
// binds it to the process. Nothing else in spawngate exits the process.
//
// # Exit codes
//
//	0  every child of every plan may be dispatched
//	1  at least one child is refused, and nothing errored
//	2  the gate could not evaluate: a usage error, a plan or policy that is
//	   absent, empty, unreadable or invalid, or an internal error
//
// The code comes from the report's verdict (report.Verdict.ExitCode), never
// from the format it is rendered in.
package cli
