// Package gate evaluates spawn plans against the Rego checks and turns what
// they find, together with the schema step's findings, into a report.
//
// The policy is compiled and the query prepared once per process (New);
// each plan is then one evaluation. Evaluation is fail-closed: strict
// built-in errors, a restricted set of built-ins (no network, no clock, no
// randomness), and any undefined or malformed result is an error, never a
// pass.
//
// The operator's own checks (Custom) are compiled beside the built-in
// ones under a stricter contract (custom.go): a package of their own, no
// rule added to a built-in package, every compiler stage; a module that
// breaks it is a *ModuleError naming its file and line.
package engine
