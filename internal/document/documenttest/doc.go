// Package documenttest is the test kit the strict reader
// (internal/document) and the plan model (internal/plan) share, as
// net/http/httptest is net/http's: documents written to a shape, and the
// checks every document a reader gives back, or refuses, is held to. It is
// imported only by tests (docs/ARCHITECTURE.md puts it on the tests floor,
// so a package that is not a test cannot import it). It imports
// internal/document, so package document's own tests that use it are
// external ones (package document_test, with export_test.go for what they
// need of its inside).
//
//   - UnknownKeys writes a document of one of UnknownKeysShapes with n keys
//     no schema knows; KeysAt is where it puts them.
//   - Children writes a plan of n children, in JSON and in YAML.
//   - Input and Mutated are the inputs of the short fuzz runs.
//   - WithinDeadline, CheckError and CheckShape check what reading a
//     document gave: in time, a one-line *document.Error, or only the
//     values Decode promises; DecodeStd is encoding/json's reading to
//     compare with.
package documenttest
