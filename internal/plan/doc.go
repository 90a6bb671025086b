// Package plan is the plan model: it loads spawn plans and operator
// policies from the JSON-shaped values package document reads, validates
// them against the embedded JSON Schemas (the schema step), places each
// child of a nested plan in its delegation tree, groups the children the
// schema and the checks cannot tell apart, and sorts what it finds into
// document errors (a *document.Error: the gate cannot evaluate, exit 2)
// and schema violations (one child is refused: exit 1).
package plan
