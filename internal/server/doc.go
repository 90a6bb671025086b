// Package server answers decisions over HTTP: POST /v1/check judges a plan
// document and answers with the JSON report spawngate check prints, and
// POST /v1/hooks/claude-code and /v1/hooks/codex answer a host's hook
// payload in the host's protocol. It stands on the same pipeline as the
// command line (package judge) and the hooks (package hook), holds no
// state a request leaves behind, and so scales out behind any load
// balancer.
//
// Status codes are chosen so that no client can read an error as a pass:
// /v1/check answers 200 only with a verdict (pass or block); every hook
// answer is 200, and anything the server cannot judge is a deny, because
// Claude Code lets a spawn through on any answer that is not 2xx.
package server
