package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCIWorkflowIsTheExample: the workflow docs/ci.md shows is the
// file .ci/run lints with actionlint, byte for byte, and no page of the
// documentation shows a stale step.
func TestCIWorkflowIsTheExample(t *testing.T) {
	root := filepath.Join("..", "..")
	page, err := os.ReadFile(filepath.Join(root, "docs", "ci.md"))
	if err != nil {
		t.Fatal(err)
	}
	file, err := os.ReadFile(filepath.Join(root, "examples", "github", "workflows", "spawngate.yml"))
	if err != nil {
		t.Fatal(err)
	}
	block := "```yaml\n" + string(file) + "```\n"
	if !strings.Contains(string(page), block) {
		t.Fatal("the GitHub Actions workflow of docs/ci.md is not examples/github/workflows/spawngate.yml: change both")
	}
	for _, name := range docFiles(t) {
		doc, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(name)))
		if err != nil {
			t.Fatal(err)
		}
		for _, stale := range []string{"upload-sarif@v3", "cmd/spawngate@latest"} {
			if strings.Contains(string(doc), stale) {
				t.Errorf("%s still shows %s", name, stale)
			}
		}
	}
}
