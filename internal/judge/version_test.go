package judge_test

import (
	"regexp"
	"testing"

	"github.com/spawngate/spawngate/internal/judge"
)

// Versions names the OPA version also where the build records no
// dependencies, as in this test binary: spawngate version and the decision
// log never say "unknown" for the engine that judged.
func TestVersionsNamesOPA(t *testing.T) {
	_, opa := judge.Versions()
	if !regexp.MustCompile(`^v1\.\d+\.\d+`).MatchString(opa) {
		t.Fatalf("Versions gives OPA %q, want v1.x.y", opa)
	}
}
