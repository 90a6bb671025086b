// Package document is a strict reader of JSON and YAML documents: it turns
// bytes into one JSON-shaped value (JSON or YAML, never both for one
// document) within limits that bound what reading may cost, and says why it
// cannot as an *Error that names the source, the line and column, and the
// JSON pointer of the problem. Around the parsers it reads files and
// standard input within a size limit (ReadFile, Read), walks folders for the
// documents they hold (Walk), and finds the line and column of the value at
// a JSON pointer (Locate).
//
// The parsers refuse what two consumers could read differently: duplicate
// keys, several YAML documents, YAML tags, merge keys, plain scalars that
// YAML 1.1 reads as booleans, numbers or dates, numbers JSON cannot carry,
// a byte-order mark and invalid UTF-8.
package document
