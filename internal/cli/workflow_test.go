package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
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

// TestPinsAreDigests: nothing a workflow, an image or a document tells
// users to run can change under them without a change to the file. Every
// action is named by a full commit hash with its release in a comment (the
// same hash wherever the same release is named), every image by a sha256
// digest, Go by an exact version, and the spawngate the CI workflow
// builds by a full commit hash, one of this repository's.
func TestPinsAreDigests(t *testing.T) {
	root := filepath.Join("..", "..")
	files := docFiles(t)
	for _, glob := range []string{
		"examples/github/workflows/*.yml", ".github/workflows/*.yml", "examples/deploy/Dockerfile*",
		"examples/deploy/kubernetes/*.yaml", ".goreleaser.yaml",
	} {
		matches, err := filepath.Glob(filepath.Join(root, filepath.FromSlash(glob)))
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range matches {
			rel, _ := filepath.Rel(root, m)
			files = append(files, filepath.ToSlash(rel))
		}
	}
	uses := regexp.MustCompile(`(?m)^\s*(?:-\s+)?uses:\s*([^\s#]+)(\s*#\s*(\S+))?`)
	pinnedUse := regexp.MustCompile(`^[\w.-]+/[\w./-]+@[0-9a-f]{40}$`)
	version := regexp.MustCompile(`^v\d+\.\d+\.\d+$`)
	from := regexp.MustCompile(`(?m)^FROM\s+(?:--platform=\S+\s+)?(\S+)`)
	image := regexp.MustCompile(`(?m)^\s*(?:-\s+)?image:\s*["']?([^\s"'#]+)`)
	digest := regexp.MustCompile(`@sha256:[0-9a-f]{64}$`)
	goVersion := regexp.MustCompile(`(?m)(?:go-version|GO_VERSION):\s*"?([^"\s#]+)`)
	commit := regexp.MustCompile(`(?m)SPAWNGATE_COMMIT:\s*(\S+)`)
	seen := map[string]string{} // an action's release, with its hash
	counted := 0
	for _, name := range files {
		b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(name)))
		if err != nil {
			t.Fatal(err)
		}
		text := string(b)
		for _, m := range uses.FindAllStringSubmatch(text, -1) {
			counted++
			if !pinnedUse.MatchString(m[1]) || !version.MatchString(m[3]) {
				t.Errorf("%s: uses: %s %s: name the action by a full commit hash, its release in a comment (# v1.2.3)", name, m[1], m[2])
				continue
			}
			action, hash, _ := strings.Cut(m[1], "@")
			key := action + "@" + m[3]
			if prev, ok := seen[key]; ok && prev != hash {
				t.Errorf("%s: %s is %s here and %s elsewhere", name, key, hash, prev)
			}
			seen[key] = hash
		}
		var images []string
		if strings.Contains(name, "Dockerfile") {
			for _, m := range from.FindAllStringSubmatch(text, -1) {
				images = append(images, m[1])
			}
		}
		if strings.HasSuffix(name, ".yaml") || strings.HasSuffix(name, ".yml") {
			for _, m := range image.FindAllStringSubmatch(text, -1) {
				images = append(images, m[1])
			}
		}
		for _, img := range images {
			counted++
			// spawngate:local is the image the reader builds from their own
			// checkout and loads into their own cluster; no registry has it.
			if img != "spawngate:local" && img != "scratch" && !digest.MatchString(img) {
				t.Errorf("%s: image %s: name it by its digest (image:tag@sha256:...)", name, img)
			}
		}
		for _, m := range goVersion.FindAllStringSubmatch(text, -1) {
			counted++
			v := m[1]
			if strings.HasPrefix(v, "${{") {
				continue // the workflow's own GO_VERSION, checked where it is set
			}
			if !regexp.MustCompile(`^\d+\.\d+\.\d+$`).MatchString(v) {
				t.Errorf("%s: Go %s: name an exact release (1.26.8)", name, v)
			}
		}
		for _, m := range commit.FindAllStringSubmatch(text, -1) {
			counted++
			c := m[1]
			if !regexp.MustCompile(`^[0-9a-f]{40}$`).MatchString(c) {
				t.Errorf("%s: SPAWNGATE_COMMIT %s: a full commit hash", name, c)
				continue
			}
			// In a clone, the commit must be one of this repository's (a
			// source archive has no history to look in).
			if _, err := os.Stat(filepath.Join(root, ".git")); err == nil {
				cmd := exec.Command("git", "-C", root, "cat-file", "-e", c+"^{commit}")
				if out, err := cmd.CombinedOutput(); err != nil {
					t.Errorf("%s: SPAWNGATE_COMMIT %s is no commit of this repository: %v %s", name, c, err, out)
				}
			}
		}
	}
	if counted < 10 {
		t.Errorf("found only %d pins: is the test still reading the files?", counted)
	}
}
