package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDocsShowExamplesWhole: an example file a page shows whole is the
// file, byte for byte (the workflow of docs/ci.md is the one .ci/run lints
// with actionlint), and no page of the documentation shows a stale step.
func TestDocsShowExamplesWhole(t *testing.T) {
	root := filepath.Join("..", "..")
	for _, shown := range []struct{ page, lang, file string }{
		{"docs/ci.md", "yaml", "examples/github/workflows/spawngate.yml"},
		{"docs/codex.md", "json", "examples/codex/hooks.json"},
		{"docs/claude-code.md", "json", "examples/claude-code/managed-settings.json"},
		{"docs/copilot.md", "json", "examples/copilot/policy.d/spawngate.json"},
		{"docs/copilot.md", "json", "examples/copilot/managed-settings.json"},
		{"docs/gemini.md", "json", "examples/gemini/settings.json"},
	} {
		page, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(shown.page)))
		if err != nil {
			t.Fatal(err)
		}
		file, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(shown.file)))
		if err != nil {
			t.Fatal(err)
		}
		block := "```" + shown.lang + "\n" + string(file) + "```\n"
		if !strings.Contains(string(page), block) {
			t.Errorf("%s does not show %s as it is: change both", shown.page, shown.file)
		}
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
