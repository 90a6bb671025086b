package document_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/spawngate/spawngate/internal/document"
)

// tree writes files (by slash-separated name; a name ending in / is an
// empty folder) under a fresh folder, and links name -> target.
func tree(t *testing.T, files []string, links map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for _, f := range files {
		p := filepath.Join(dir, filepath.FromSlash(f))
		if strings.HasSuffix(f, "/") {
			if err := os.MkdirAll(p, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for name, target := range links {
		if err := os.Symlink(target, filepath.Join(dir, filepath.FromSlash(name))); err != nil {
			t.Skipf("no symlinks here: %v", err)
		}
	}
	return dir
}

func yamlFiles(name string) bool { return strings.HasSuffix(name, ".yaml") }

// What one walk lists: files by name, folders by path, links followed and
// each place once, skipped folders passed over, in path order.
func TestWalkFiles(t *testing.T) {
	files := []string{"a.yaml", "b.txt", "sub/c.yaml", ".hidden/d.yaml", "x/.claude/agents/e.md", "x/.claude/agents/deeper/f.md", ".git/.claude/agents/g.md"}
	links := map[string]string{"again": "sub", "loop": ".", "gone.yaml": "nowhere.yaml"}
	agents := func(path string) bool { return strings.HasSuffix(filepath.ToSlash(path), ".claude/agents") }
	for _, tt := range []struct {
		name string
		walk document.Walk
		want []string
	}{
		{"flat", document.Walk{Match: yamlFiles}, []string{"a.yaml", "gone.yaml"}},
		{"recursive, every place once", document.Walk{Match: yamlFiles, Recursive: true}, []string{".hidden/d.yaml", "a.yaml", "gone.yaml", "sub/c.yaml"}},
		{"hidden folders skipped", document.Walk{Match: yamlFiles, Recursive: true, Skip: document.Hidden}, []string{"a.yaml", "gone.yaml", "sub/c.yaml"}},
		{"folders, not walked into", document.Walk{Folder: agents, Recursive: true, Skip: func(n string) bool { return n == ".git" }}, []string{"x/.claude/agents"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := tree(t, files, links)
			got, err := tt.walk.Files(context.Background(), dir)
			if err != nil {
				t.Fatal(err)
			}
			for i := range got {
				got[i] = filepath.ToSlash(strings.TrimPrefix(got[i], dir+string(filepath.Separator)))
			}
			// "again" and "sub" are one folder: whichever path is walked
			// first names its file.
			for i, g := range got {
				if g == "again/c.yaml" {
					got[i] = "sub/c.yaml"
				}
			}
			slices.Sort(got)
			if !slices.Equal(got, tt.want) {
				t.Fatalf("listed %q, want %q", got, tt.want)
			}
		})
	}
}

// Every walk says what it cannot walk in the same words: the noun when it
// has one, "cannot be read", "is not a directory", the bound, and the hint.
func TestWalkErrors(t *testing.T) {
	dir := tree(t, []string{"file.txt", "big/1", "big/2", "big/3"}, nil)
	for _, tt := range []struct {
		name   string
		walk   document.Walk
		folder string
		want   string // the message; "" for no error and nothing listed
	}{
		{"missing", document.Walk{Match: yamlFiles}, "nope", "cannot be read: no such file or directory"},
		{"missing, named", document.Walk{Noun: "folder of plans", Match: yamlFiles}, "nope", "folder of plans cannot be read: no such file or directory"},
		{"missing, optional", document.Walk{Match: yamlFiles, Optional: true}, "nope", ""},
		{"a file", document.Walk{Match: yamlFiles, Hint: "name the folder"}, "file.txt", "is not a directory: name the folder"},
		{"a file, named", document.Walk{Noun: "agents folder", Match: yamlFiles}, "file.txt", "agents folder is not a directory"},
		{"too many entries", document.Walk{Match: yamlFiles, Max: 2, Hint: "name less"}, "big", "holds more than 2 entries: name less"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			source := filepath.Join(dir, tt.folder)
			got, err := tt.walk.Files(context.Background(), source)
			if tt.want == "" {
				if err != nil || len(got) > 0 {
					t.Fatalf("%q, %v; want nothing", got, err)
				}
				return
			}
			var pe *document.Error
			if !errors.As(err, &pe) || pe.Source != source || pe.Msg != tt.want {
				t.Fatalf("err %v, want %s: %s", err, source, tt.want)
			}
		})
	}
}
