// Package examples holds the example plans, policies and checks the
// documentation walks through, embedded so that spawngate playground can
// offer them to start from: the page shows exactly what the repository
// holds.
package examples

import "embed"

// FS holds the example plans and operator policies at the top and in
// trees/, briefs/, exceptions/ and profiles/, and the operator's own
// checks in checks/ (their tests too).
//
//go:embed *.yaml *.json trees/*.yaml briefs/*.yaml exceptions/*.yaml profiles/*.yaml checks/*.rego
var FS embed.FS
