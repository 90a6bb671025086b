package engine

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spawngate/spawngate/internal/document"
)

// ResolveError is a plan that cannot be judged on this machine with path
// resolution on: a workspace root that does not resolve.
type ResolveError struct{ msg string }

func (e *ResolveError) Error() string { return e.msg }

// resolveRoots resolves the workspace root of every policy, for
// --resolve-paths: the Rego reads them as input.resolution.roots.
func resolveRoots(policies map[string]any) (map[string]any, error) {
	roots := map[string]any{}
	for _, source := range slices.Sorted(maps.Keys(policies)) {
		root, _ := policies[source].(map[string]any)["workspace_root"].(string)
		real, err := filepath.EvalSymlinks(root)
		if err != nil {
			return nil, &ResolveError{fmt.Sprintf("the workspace root %q of the %s policy cannot be resolved on this machine: %s", root, source, document.Reason(err))}
		}
		roots[source] = real
	}
	return roots, nil
}

// resolvePaths resolves every string path the children list, as written,
// or says why it cannot be: the Rego reads them as
// input.resolution.paths. It stops when ctx ends.
func resolvePaths(ctx context.Context, planRoot string, children []any) (map[string]any, error) {
	paths := map[string]any{}
	for _, c := range children {
		obj, _ := c.(map[string]any)
		list, _ := obj["paths"].([]any)
		for _, p := range list {
			s, ok := p.(string)
			if !ok {
				continue
			}
			if _, done := paths[s]; done {
				continue
			}
			if len(paths)%256 == 0 {
				if err := ctx.Err(); err != nil {
					return nil, err
				}
			}
			abs := s
			if !strings.HasPrefix(s, "/") {
				abs = strings.TrimSuffix(planRoot, "/") + "/" + s
			}
			if real, err := resolvePath(abs); err != nil {
				paths[s] = map[string]any{"error": err.Error()}
			} else {
				paths[s] = map[string]any{"path": real}
			}
		}
	}
	return paths, nil
}

// resolvePath follows symlinks on the longest prefix of an absolute path
// that exists, and appends the rest as written. A dangling symlink, a
// symlink loop, a file where a directory is needed, or any other error on
// the way means the path cannot be resolved.
func resolvePath(abs string) (string, error) {
	if strings.ContainsRune(abs, 0) {
		return "", errors.New("contains a NUL byte")
	}
	segments := strings.Split(strings.Trim(abs, "/"), "/")
	cur := "/"
	for i, seg := range segments {
		if seg == "" {
			continue
		}
		next := filepath.Join(cur, seg)
		info, err := os.Lstat(next)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			// Nothing exists from here on: nothing below can be a link.
			return filepath.Join(append([]string{cur}, segments[i:]...)...), nil
		case err != nil:
			return "", fmt.Errorf("%s: %s", next, document.Reason(err))
		case info.Mode()&fs.ModeSymlink != 0:
			target, err := filepath.EvalSymlinks(next)
			if err != nil {
				return "", fmt.Errorf("symlink %s leads nowhere: %s", next, document.Reason(err))
			}
			next = target
		case i < len(segments)-1 && !info.IsDir():
			return "", fmt.Errorf("%s is not a directory", next)
		}
		cur = next
	}
	return cur, nil
}
