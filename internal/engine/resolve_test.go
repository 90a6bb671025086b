package engine_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spawngate/spawngate/internal/engine"
	"github.com/spawngate/spawngate/internal/plan"
	"github.com/spawngate/spawngate/policy"
)

// tree builds a workspace with every kind of link an attacker could plant:
//
//	base/ws/docs/             a directory
//	base/ws/notes.txt         a file
//	base/ws/link-in      ->  base/ws/docs
//	base/ws/link-out     ->  base/outside
//	base/ws/link-etc     ->  /etc
//	base/ws/link-evil    ->  base/ws-evil (a sibling sharing the prefix)
//	base/ws/chain        ->  base/ws/link-out
//	base/ws/dangling     ->  base/ws/nowhere
//	base/ws/loop-a       ->  base/ws/loop-b -> base/ws/loop-a
//	base/ws/rel-out      ->  ../outside (relative target)
//	base/root-link       ->  base/ws
func tree(t *testing.T) (base string) {
	t.Helper()
	base = t.TempDir()
	if resolved, err := filepath.EvalSymlinks(base); err == nil {
		base = resolved
	}
	ws := filepath.Join(base, "ws")
	for _, dir := range []string{filepath.Join(ws, "docs"), filepath.Join(base, "outside"), filepath.Join(base, "ws-evil")} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(ws, "notes.txt"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	links := map[string]string{
		filepath.Join(ws, "link-in"):     filepath.Join(ws, "docs"),
		filepath.Join(ws, "link-out"):    filepath.Join(base, "outside"),
		filepath.Join(ws, "link-etc"):    "/etc",
		filepath.Join(ws, "link-evil"):   filepath.Join(base, "ws-evil"),
		filepath.Join(ws, "chain"):       filepath.Join(ws, "link-out"),
		filepath.Join(ws, "dangling"):    filepath.Join(ws, "nowhere"),
		filepath.Join(ws, "loop-a"):      filepath.Join(ws, "loop-b"),
		filepath.Join(ws, "loop-b"):      filepath.Join(ws, "loop-a"),
		filepath.Join(ws, "rel-out"):     "../outside",
		filepath.Join(base, "root-link"): ws,
	}
	for link, target := range links {
		if err := os.Symlink(target, link); err != nil {
			t.Fatal(err)
		}
	}
	return base
}

func resolvingEngine(t *testing.T) *engine.Engine {
	t.Helper()
	mods, err := policy.Modules()
	if err != nil {
		t.Fatal(err)
	}
	e, err := engine.New(mods, engine.ResolvePaths(true))
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func policyWithRoot(t *testing.T, root string) plan.Policy {
	return mustPolicy(t, `{"allowed_tools": ["fs.read"], "workspace_root": "`+root+`", "budget_cap_tokens": 10}`)
}

// judgePaths runs one child with the given paths and returns the message
// for each refused path, by index.
func judgePaths(t *testing.T, e *engine.Engine, operator plan.Policy, paths ...string) map[int]string {
	t.Helper()
	list := make([]any, len(paths))
	for i, p := range paths {
		list[i] = p
	}
	p := &plan.Plan{Source: "plan.json", Children: []any{map[string]any{
		"role": "r", "tools": []any{"fs.read"}, "paths": list, "budget_tokens": json.Number("1"),
	}}}
	res, err := e.Evaluate(context.Background(), operator, p)
	if err != nil {
		t.Fatal(err)
	}
	out := map[int]string{}
	for _, v := range res.Children[0].Violations {
		var i int
		if _, err := fmt.Sscanf(v.Path, "/plan/0/paths/%d", &i); err != nil || v.Rule != "paths.escape" {
			t.Fatalf("unexpected violation %+v", v)
		}
		out[i] = v.Message
	}
	return out
}

func TestResolvePaths(t *testing.T) {
	base := tree(t)
	ws := filepath.Join(base, "ws")
	e := resolvingEngine(t)
	tests := []struct {
		path string
		want string // "" passes; else a part of the refusal
	}{
		{ws, ""},
		{"docs", ""},
		{"docs/new/file.md", ""}, // does not exist yet: the rest is read as written
		{ws + "/docs/", ""},
		{"link-in", ""},
		{"link-in/deeper/x", ""},
		{"notes.txt", ""},
		{"link-out", `resolves to "` + filepath.Join(base, "outside") + `", outside the workspace root`},
		{"link-out/secret", `resolves to "` + filepath.Join(base, "outside", "secret") + `"`},
		{"link-etc/passwd", `resolves to "/etc/passwd"`},
		{"link-evil", `resolves to "` + filepath.Join(base, "ws-evil") + `"`},
		{"chain/x", `resolves to "` + filepath.Join(base, "outside", "x") + `"`},
		{"rel-out", `resolves to "` + filepath.Join(base, "outside") + `"`},
		{"dangling", "cannot be resolved on this machine: symlink " + filepath.Join(ws, "dangling") + " leads nowhere"},
		{"dangling/x", "cannot be resolved on this machine"},
		{"loop-a", "cannot be resolved on this machine"},
		{"notes.txt/x", "cannot be resolved on this machine: " + filepath.Join(ws, "notes.txt") + " is not a directory"},
		{"../outside", "has a '..' segment"},
	}
	paths := make([]string, len(tests))
	for i, tt := range tests {
		paths[i] = tt.path
	}
	got := judgePaths(t, e, policyWithRoot(t, ws), paths...)
	for i, tt := range tests {
		msg, refused := got[i]
		switch {
		case tt.want == "" && refused:
			t.Errorf("%s: refused: %s", tt.path, msg)
		case tt.want != "" && !refused:
			t.Errorf("%s: passed, want a refusal containing %q", tt.path, tt.want)
		case tt.want != "" && !strings.Contains(msg, tt.want):
			t.Errorf("%s: %q does not contain %q", tt.path, msg, tt.want)
		}
	}

	// Without --resolve-paths the same links pass: the rules only read text.
	lexical := judgePaths(t, builtin(t), policyWithRoot(t, ws), "link-out", "link-etc/passwd", "dangling")
	if len(lexical) != 0 {
		t.Errorf("without --resolve-paths, links were refused: %v", lexical)
	}
}

func TestResolvePathsThroughALinkedRoot(t *testing.T) {
	base := tree(t)
	e := resolvingEngine(t)
	root := filepath.Join(base, "root-link") // a symlink to base/ws
	got := judgePaths(t, e, policyWithRoot(t, root), "docs", root+"/link-in", "link-out")
	if len(got) != 1 || !strings.Contains(got[2], "outside the workspace root") {
		t.Fatalf("got %v, want only link-out refused", got)
	}
}

func TestResolvePathsNeedsTheRootToExist(t *testing.T) {
	e := resolvingEngine(t)
	missing := filepath.Join(t.TempDir(), "nowhere")
	p := &plan.Plan{Source: "plan.json", Children: []any{map[string]any{"role": "r", "tools": []any{"fs.read"}, "paths": []any{}, "budget_tokens": json.Number("1")}}}
	_, err := e.Evaluate(context.Background(), policyWithRoot(t, missing), p)
	if err == nil || !strings.Contains(err.Error(), "cannot be resolved on this machine") {
		t.Fatalf("err = %v, want the root reported unresolvable", err)
	}
}
