package report

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestStampedVersion: a version given with -ldflags -X wins over the
// build's, and the release build (which also makes the container image's
// binary) stamps this very variable.
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
	release, err := os.ReadFile(filepath.Join("..", "..", ".goreleaser.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(release), "-X github.com/spawngate/spawngate/internal/report.stamped={{.Version}}") {
		t.Fatal(".goreleaser.yaml does not stamp internal/report.stamped with the release's version")
	}
}
