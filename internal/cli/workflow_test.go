package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestREADMEWorkflowIsTheExample: the workflow the README shows is the
// file .ci/run lints with actionlint, byte for byte.
func TestREADMEWorkflowIsTheExample(t *testing.T) {
	root := filepath.Join("..", "..")
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	file, err := os.ReadFile(filepath.Join(root, "examples", "github", "workflows", "spawngate.yml"))
	if err != nil {
		t.Fatal(err)
	}
	block := "```yaml\n" + string(file) + "```\n"
	if !strings.Contains(string(readme), block) {
		t.Fatal("the README's GitHub Actions workflow is not examples/github/workflows/spawngate.yml: change both")
	}
	for _, stale := range []string{"upload-sarif@v3", "cmd/spawngate@latest"} {
		if strings.Contains(string(readme), stale) {
			t.Errorf("the README still shows %s", stale)
		}
	}
}
