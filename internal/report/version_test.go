package report

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestStampedVersion: a version given with -ldflags -X wins over the
// build's, and the container image's Dockerfile stamps this very variable.
func TestStampedVersion(t *testing.T) {
	before := Version()
	stamped = "v1.2.3-test"
	defer func() { stamped = "" }()
	if got := Version(); got != "v1.2.3-test" {
		t.Fatalf("Version() = %q with a stamped version", got)
	}
	if before == "v1.2.3-test" || before == "" {
		t.Fatalf("unstamped Version() = %q", before)
	}
	docker, err := os.ReadFile(filepath.Join("..", "..", "examples", "deploy", "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(docker), "-X github.com/spawngate/spawngate/internal/report.stamped=${VERSION}") || !strings.Contains(string(docker), "ARG VERSION") {
		t.Fatal("the Dockerfile does not stamp internal/report.stamped from its VERSION argument")
	}
}
