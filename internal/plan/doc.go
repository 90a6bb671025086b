// Package plan reads spawn plans and policies: it turns bytes into one
// JSON-shaped value with a strict parser (JSON or YAML, never both for one
// document), validates it against the embedded JSON Schemas, and sorts what
// it finds into document errors (the gate cannot evaluate: exit 2) and child
// issues (one child is refused: exit 1).
//
// The parsers refuse what two consumers could read differently: duplicate
// keys, several YAML documents, YAML tags, merge keys, plain scalars that
// YAML 1.1 reads as booleans, numbers or dates, numbers JSON cannot carry,
// a byte-order mark and invalid UTF-8.
package plan
