// Package hosttest is the test kit of the host adapters: what every
// host's tests need and would otherwise each write again. It is imported
// only by tests (docs/ARCHITECTURE.md puts it on the tests floor, so a
// package that is not a test cannot import it).
//
//   - WriteTree and OutsideRepo lay out the folders a test reads
//     definitions from.
//   - Reading is the property every host's fuzz target holds its agent
//     definition reader to: any bytes are read or refused on one line,
//     never a panic, and whatever is read translates into a child the
//     gate's strict loader reads. A host gives its reader, the spawns to
//     translate and its own invariants; the kit checks the rest.
//   - Translated, Canonical, CanonicalJSON, Fields and Lines compare what a
//     host's translation and reader give with a table's JSON.
//   - Installation, ReadHook and Owners stand in, for a host's doctor
//     tests, for a machine with spawngate installed.
//
// What must hold of a host registered in package hosts (its fixtures, its
// answers) is not here: internal/hosts/conformance_test.go checks it for
// every host at once.
package hosttest
