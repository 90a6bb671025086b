package engine_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spawngate/spawngate/internal/engine"
	"github.com/spawngate/spawngate/internal/mutate"
	"github.com/spawngate/spawngate/internal/plan"
	"github.com/spawngate/spawngate/internal/report"
)

// pathCases are judged under the root /repo/workspace. They seed
// FuzzPathRule too.
var pathCases = []struct {
	path   string
	inside bool
}{
	{"/repo/workspace", true},
	{"/repo/workspace/", true},
	{"/repo/workspace/docs/guide.md", true},
	{"/repo/workspace/node_modules/@types/node", true},
	{"/repo/workspace/.github", true},
	{"docs", true},
	{"docs/", true},
	{".env", true},
	{"", false},
	{"~", false},
	{"~/.ssh", false},
	{"$HOME", false},
	{"/repo/workspace/*", false},
	{" /etc", false},
	{" ../x", false},
	{"/repo/workspace ", false},
	{"/etc/passwd", false},
	{"/", false},
	{"/repo", false},
	{"/repo/workspace-evil", false},
	{"/repo/workspace2", false},
	{"/repo/workspace/../etc", false},
	{"/repo/workspace/docs/../docs", false},
	{"..", false},
	{".", false},
	{"./docs", false},
	{"/repo/workspace/./docs", false},
	{"/repo//workspace", false},
	{"//repo/workspace", false},
	{"/repo/workspace/%2e%2e/etc", false},
	{"/repo/workspace\\..\\etc", false},
	{"C:/repo/workspace", false},
	{"c:docs", false},
	{"file:///repo/workspace", false},
	{"/repo/workspace/\u2215etc", false},
	{"/repo/workspace/\uff0e\uff0e", false},
	{"/repo/workspace/\u00a0", false},
	{"/repo/workspace/a\x00", false},
	{"/repo/workspace/`id`", false},
	{"/repo/workspace/$(id)", false},
	{"%APPDATA%", false},
	{"-rf", false},
	{"/repo/workspace/a:b", false},
	{"/repo/workspace/{a,b}", false},
	{"@etc", false},
	{"/repo/workspace/ab.", false},
	{"/repo/workspace/con", false},
	{"/repo/workspace/Aux.txt/x", false},
	{"/repo/workspace/console.log", true},
	{"/repo/workspace/a@b", true},
}

type pathJudge struct {
	engine   *engine.Engine
	operator plan.Policy
}

func newPathJudge(t testing.TB) *pathJudge {
	return &pathJudge{builtin(t), mustPolicy(t, operatorPolicy)}
}

// inside runs one path through the whole gate and tells whether
// paths.escape let it through.
func (j *pathJudge) inside(t testing.TB, path string) bool {
	t.Helper()
	p := &plan.Plan{
		Source: "fuzz",
		Children: []any{map[string]any{
			"role": "r", "tools": []any{"fs.read"}, "paths": []any{path}, "budget_tokens": json.Number("1"),
		}},
	}
	res, err := j.engine.Evaluate(context.Background(), j.operator, p)
	if err != nil {
		t.Fatalf("path %q: %v", path, err)
	}
	violations := res.Children[0].Violations
	for _, v := range violations {
		if v.Rule != "paths.escape" || v.Path != "/plan/0/paths/0" {
			t.Fatalf("path %q: unexpected violation %+v", path, v)
		}
		if !strings.HasPrefix(v.Message, "path ") {
			t.Fatalf("path %q: message %q does not name the path", path, v.Message)
		}
	}
	return len(violations) == 0
}

func TestPathRule(t *testing.T) {
	j := newPathJudge(t)
	for _, tc := range pathCases {
		if got := j.inside(t, tc.path); got != tc.inside {
			t.Errorf("path %q: inside = %v, want %v", tc.path, got, tc.inside)
		}
	}
}

// plainlyInside is an independent, deliberately simple statement of what
// an accepted path must be: ASCII letters, digits and . _ - @ in segments
// separated by single slashes, no segment ending in a dot (so none of dots
// only) or naming a Windows device, not starting with - or @, and, read
// against the root, the root itself or under root + "/".
func plainlyInside(path, root string) bool {
	if path == "" || strings.HasPrefix(path, "-") || strings.HasPrefix(path, "@") || strings.HasPrefix(path, "//") {
		return false
	}
	for _, r := range path {
		ok := r == '/' || r == '.' || r == '_' || r == '-' || r == '@' ||
			('a' <= r && r <= 'z') || ('A' <= r && r <= 'Z') || ('0' <= r && r <= '9')
		if !ok {
			return false
		}
	}
	abs := path
	if !strings.HasPrefix(path, "/") {
		abs = root + "/" + path
	}
	abs = strings.TrimSuffix(abs, "/")
	for _, seg := range strings.Split(abs, "/")[1:] {
		if seg == "" || strings.HasSuffix(seg, ".") || refDevice(seg) {
			return false
		}
	}
	return abs == root || strings.HasPrefix(abs, root+"/")
}

func TestPlainlyInsideAgreesWithTheTable(t *testing.T) {
	for _, tc := range pathCases {
		if got := plainlyInside(tc.path, "/repo/workspace"); got != tc.inside {
			t.Errorf("plainlyInside(%q) = %v, want %v", tc.path, got, tc.inside)
		}
	}
}

// FuzzPathRule throws arbitrary strings at the path rule through the whole
// gate. It must never fail to evaluate; whatever it lets through must be
// plainly inside the root by the independent reading above; and, created
// under a real temporary root, it must resolve inside that root.
func FuzzPathRule(f *testing.F) {
	for _, tc := range pathCases {
		f.Add(tc.path)
	}
	f.Fuzz(pathProperty(f))
}

func pathProperty(tb testing.TB) func(t *testing.T, path string) {
	j := newPathJudge(tb)
	disk := tb.TempDir()
	if real, err := filepath.EvalSymlinks(disk); err == nil {
		disk = real
	}
	return func(t *testing.T, path string) {
		if !j.inside(t, path) {
			return
		}
		if !plainlyInside(path, "/repo/workspace") {
			t.Fatalf("path %q was judged inside /repo/workspace", path)
		}
		// The same path under a real root: /repo/workspace becomes disk.
		onDisk := strings.TrimPrefix(path, "/repo/workspace")
		if onDisk == path { // relative
			onDisk = "/" + path
		}
		created := disk + onDisk
		if err := os.MkdirAll(created, 0o755); err != nil {
			return // too long for this filesystem: nothing to learn
		}
		real, err := filepath.EvalSymlinks(created)
		if err != nil {
			t.Fatalf("created %q but cannot resolve it: %v", created, err)
		}
		if real != disk && !strings.HasPrefix(real, disk+"/") {
			t.Fatalf("path %q, created under %q, resolves to %q", path, disk, real)
		}
	}
}

// TestFuzzPathRuleShort runs FuzzPathRule's property over paths mutated
// from the table.
func TestFuzzPathRuleShort(t *testing.T) {
	engine.LongProperty(t)
	seeds := make([][]byte, len(pathCases))
	for i, tc := range pathCases {
		seeds[i] = []byte(tc.path)
	}
	check := pathProperty(t)
	for _, in := range mutate.Bytes(seeds, 5000, 1) {
		check(t, string(in))
	}
}

// A workspace root follows the path rules: a root the policy schema
// accepts is one the checks read as plain, so a relative path read against
// it gets the same verdict as the absolute path it names. (A root such as
// /repo/ws/nul, accepted once, let "x" pass while /repo/ws/nul/x was
// refused.)
func TestRootsFollowThePathRules(t *testing.T) {
	e, l := builtin(t), loader(t)
	segments := []string{"ws", "nul", "NUL.txt", "con", "com1", "lpt9", "console", "nul2", "a.", "a.b", ".env", "..", ".", "...", "@x", "-x", "a b", "x~", "x$", "aux.tar.gz", "prn."}
	rnd := rand.New(rand.NewPCG(7, 7))
	accepted := 0
	for n := 0; n < 300; n++ {
		root := "/repo"
		for range 1 + rnd.IntN(2) {
			root += "/" + segments[rnd.IntN(len(segments))]
		}
		doc := fmt.Sprintf(`{"policy": {"allowed_tools": ["fs.read"], "workspace_root": %q, "budget_cap_tokens": 10},
			"plan": [{"role": "r", "tools": ["fs.read"], "paths": ["x"], "budget_tokens": 1},
			         {"role": "r", "tools": ["fs.read"], "paths": [%q], "budget_tokens": 1}]}`, root, root+"/x")
		p, err := l.Plan(context.Background(), "plan.json", []byte(doc))
		if err != nil {
			continue // the schema refuses the root: the plan is not evaluated
		}
		accepted++
		res, err := e.Evaluate(context.Background(), nil, p)
		if err != nil {
			t.Fatal(err)
		}
		if rel, abs := res.Children[0].Verdict, res.Children[1].Verdict; rel != abs || rel != report.Pass {
			t.Errorf("root %q accepted, but x is %s and %s/x is %s", root, rel, root, abs)
		}
	}
	if accepted < 30 {
		t.Fatalf("only %d of 300 roots accepted: the property was hardly tried", accepted)
	}
}
