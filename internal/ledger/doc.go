// Package ledger remembers, for one host session, the re-task nonces that
// spawns in it were handed, so that a hook judging one spawn call can tell
// a nonce that an earlier, separate call already handed out (check
// brief.retask refuses it: one nonce must never serve two children).
//
// # Where it lives
//
// One file per session under a state directory: by default
// $XDG_STATE_HOME/spawngate, else ~/.local/state/spawngate (DefaultDir),
//
//	<dir>/sessions/<sha256 of the session id>.json
//	<dir>/sessions/<sha256 of the session id>.lock
//
// The file name is the SHA-256 of the session id, so that any id the host
// sends is a safe name. Folders are made 0700 and files 0600. Nothing
// removes old sessions' files; each is small (65 bytes a nonce) and can be
// deleted when its session is over.
//
// # What it stores
//
// Hashes only: the file is one JSON object, {"nonces_sha256": [...]}, the
// SHA-256 of each nonce as 64 lowercase hex digits, sorted. Neither a
// nonce, a brief nor the session id is written, so the ledger leaks no
// secret and a reader learns only how many nonces a session handed out.
//
// # Concurrency
//
// Hosts run hooks in parallel (every matching handler, every spawn of a
// turn). Open takes an exclusive flock(2) on the lock file beside the
// ledger and holds it until Close, so that read, judge, add and write are
// one step: two hooks racing on one session keep both nonces, and the
// second sees the first's. The wait for the lock ends with the caller's
// context, and a wait that ends is an error, never an empty ledger.
// Commit writes a temporary file in the same folder and renames it over
// the ledger, so a reader never sees half a file. The lock file is never
// removed: removing it would let two hooks lock two different files.
//
// A ledger that cannot be read, parsed or locked is an error; the caller
// must then refuse to judge (fail closed), never treat it as empty.
package ledger
