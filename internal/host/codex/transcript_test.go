package codex

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"github.com/spawngate/spawngate/internal/document"
	"github.com/spawngate/spawngate/internal/host"
	"github.com/spawngate/spawngate/internal/host/hosttest"
)

// imageLine writes to w a response_item line as Codex records an attached
// image: inline, base64, size bytes of it, after a text that quotes a
// turn_context line (which must not count as one).
func imageLine(t testing.TB, w *bufio.Writer, size int) {
	t.Helper()
	w.WriteString(`{"timestamp":"2026-12-03T00:00:01Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"look: {\"type\":\"turn_context\",\"payload\":{}}"},{"type":"input_image","image_url":"data:image/png;base64,`)
	chunk := strings.Repeat("iVBORw0KGgoAAAANSUhEUgAA", 1<<12)
	for n := 0; n < size; n += len(chunk) {
		w.WriteString(chunk[:min(len(chunk), size-n)])
	}
	w.WriteString(`"}]}}` + "\n")
}

// streamTranscript writes a transcript of lines to a file in dir, each
// "IMAGE:n" line an image of n bytes, and returns its path.
func streamTranscript(t testing.TB, dir string, lines ...string) string {
	t.Helper()
	path := filepath.Join(dir, "rollout.jsonl")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriter(f)
	w.WriteString(`{"timestamp":"2026-12-03T00:00:00Z","type":"session_meta","payload":{"id":"s"}}` + "\n")
	for _, l := range lines {
		if n, ok := strings.CutPrefix(l, "IMAGE:"); ok {
			var size int
			fmt.Sscan(n, &size)
			imageLine(t, w, size)
			continue
		}
		w.WriteString(l + "\n")
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// appServer is a hook's environment under codex app-server, whose
// command line names no sandbox.
var appServer = host.Env{Limits: document.DefaultLimits, CommandLine: func(int) ([]string, error) { return []string{"codex", "app-server"}, nil }}

// TestTranscriptLongLines: a line of another kind is read past however
// long it is (five images attached in codex exec made a real transcript
// of more than 64 MiB), and the session is judged exactly as without it.
func TestTranscriptLongLines(t *testing.T) {
	noTmp := map[string]any{"exclude_slash_tmp": true, "exclude_tmpdir_env_var": true}
	before := turnLine("t1", "workspace-write", "on-request", "m1", map[string]any{"network_access": true, "writable_roots": []any{"/srv"}, "exclude_slash_tmp": true, "exclude_tmpdir_env_var": true})
	after := turnLine("t2", "read-only", "never", "m2", noTmp)
	plain := streamTranscript(t, t.TempDir(), before, after)
	big := streamTranscript(t, t.TempDir(), before, "IMAGE:73400320", after) // 70 MiB
	for _, turn := range []string{"t2", "t1", ""} {
		want, err := readSession(context.Background(), appServer, plain, turn, "/w", "")
		if err != nil {
			t.Fatal(err)
		}
		got, err := readSession(context.Background(), appServer, big, turn, "/w", "")
		if err != nil {
			t.Fatalf("turn %q: %v", turn, err)
		}
		got.source, want.source = "", ""
		if !reflect.DeepEqual(got, want) {
			t.Errorf("turn %q: %+v, want %+v as without the image", turn, got, want)
		}
	}
	// However the long line is laid out: its type after the payload,
	// last in the file without a newline, a line of spaces.
	for name, lines := range map[string][]string{
		"type after the payload":    {before, `{"payload":{"image_url":"` + strings.Repeat("A", 2<<20) + `"},"type":"response_item"}`, after},
		"the last line, no newline": {before, after, `{"type":"event_msg","payload":{"text":"` + strings.Repeat(`\"turn_context\"`, 200_000) + `"}}`},
		"spaces":                    {before, strings.Repeat(" ", 3<<20), after},
		"not JSON":                  {before, `{"type":"turn_context` + strings.Repeat("x", 2<<20), after},
	} {
		path := filepath.Join(t.TempDir(), "rollout.jsonl")
		if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")), 0o600); err != nil {
			t.Fatal(err)
		}
		s, err := readSession(context.Background(), appServer, path, "t2", "/w", "")
		if err != nil || s.sandbox != "workspace-write" || s.model != "m2" {
			t.Errorf("%s: %+v %v", name, s, err)
		}
	}
}

// TestTranscriptBounds: a turn_context line longer than the hook reads,
// or one that does not parse, cannot be judged, with the line named; one
// just under the bound is read.
func TestTranscriptBounds(t *testing.T) {
	long := func(n int) string {
		return turnLine("t1", "read-only", "never", "m", map[string]any{"pad": strings.Repeat("x", n)})
	}
	for _, tc := range []struct {
		name  string
		lines []string
		want  string // the error, "" for none
	}{
		{"just under the bound", []string{long(maxContextLine - 300)}, ""},
		{"over the bound", []string{turnLine("t0", "read-only", "never", "m", nil), long(maxContextLine)}, "rollout.jsonl:3: a turn_context line is longer than 1 MiB, more than the hook reads, so the sandbox and approval the child gets cannot be known"},
		{"its type after a long payload", []string{`{"payload":{"pad":"` + strings.Repeat("x", maxContextLine) + `"},"type":"turn_context"}`}, "rollout.jsonl:2: a turn_context line is longer than 1 MiB"},
		{"its type escaped", []string{`{"\u0074ype":"turn\u005fcontext","payload":{"pad":"` + strings.Repeat("x", maxContextLine) + `"}}`}, "rollout.jsonl:2: a turn_context line is longer than 1 MiB"},
		{"a short one that does not parse", []string{`{"type":"turn_context","payload":{"sandbox_policy":}`}, "rollout.jsonl:2: a turn_context line cannot be read"},
		{"the type written twice, the last another", []string{`{"type":"turn_context","type":"response_item"}`, turnLine("t1", "read-only", "never", "m", nil)}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := writeTranscript(t, tc.lines...)
			_, err := readSession(context.Background(), appServer, path, "t1", "/w", "")
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("%v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("got  %v\nwant %s", err, tc.want)
			case err != nil && strings.ContainsAny(err.Error(), "\n\r"):
				t.Errorf("not one line: %q", err)
			}
		})
	}
	// More turn_context lines than the hook reads.
	var b strings.Builder
	b.WriteString(`{"type":"session_meta","payload":{}}` + "\n")
	line := turnLine("t1", "read-only", "never", "m", nil) + "\n"
	for range maxContexts + 1 {
		b.WriteString(line)
	}
	path := filepath.Join(t.TempDir(), "rollout.jsonl")
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := readSession(context.Background(), appServer, path, "t1", "/w", ""); err == nil || !strings.Contains(err.Error(), fmt.Sprintf("rollout.jsonl:%d: the session transcript holds more than 100000 turn_context lines", maxContexts+2)) {
		t.Errorf("too many: %v", err)
	}
}

// TestTranscriptMemory: reading past a 70 MiB line holds the read
// buffer and at most one line the size of the bound, not the line.
func TestTranscriptMemory(t *testing.T) {
	path := streamTranscript(t, t.TempDir(), turnLine("t1", "read-only", "never", "m", nil), "IMAGE:73400320")
	read := func() {
		if _, err := readSession(context.Background(), appServer, path, "t1", "/w", ""); err != nil {
			t.Fatal(err)
		}
	}
	read() // warm up
	var m0, m1 runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&m0)
	read()
	runtime.ReadMemStats(&m1)
	if got := m1.TotalAlloc - m0.TotalAlloc; got > 3<<20 {
		t.Errorf("reading a 70 MiB line allocated %d bytes, want at most 3 MiB", got)
	}
}

// BenchmarkReadSessionImage reads a transcript holding a 70 MiB image
// between two turn_context lines.
func BenchmarkReadSessionImage(b *testing.B) {
	path := streamTranscript(b, b.TempDir(), turnLine("t1", "read-only", "never", "m", nil), "IMAGE:73400320", turnLine("t2", "read-only", "never", "m", nil))
	info, _ := os.Stat(path)
	b.SetBytes(info.Size())
	b.ReportAllocs()
	for b.Loop() {
		if _, err := readSession(context.Background(), appServer, path, "t2", "/w", ""); err != nil {
			b.Fatal(err)
		}
	}
}

// TestTranscriptContext: reading stops when the context ends, with its
// error (the hook's timeout, a signal), however much is left to read.
func TestTranscriptContext(t *testing.T) {
	path := streamTranscript(t, t.TempDir(), turnLine("t1", "read-only", "never", "m", nil), "IMAGE:1048576")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := readSession(ctx, appServer, path, "t1", "/w", ""); !errors.Is(err, context.Canceled) {
		t.Errorf("a canceled context: %v", err)
	}
}

// TestTranscriptNotAFile: a transcript path that is not a regular file
// (a FIFO would hold the open past the deadline) cannot be read.
func TestTranscriptNotAFile(t *testing.T) {
	if _, err := readSession(context.Background(), appServer, t.TempDir(), "t1", "/w", ""); err == nil || !strings.Contains(err.Error(), "the session transcript cannot be read, so the sandbox and approval the child gets cannot be known: it is not a regular file") {
		t.Errorf("a folder: %v", err)
	}
}

// lineKindCases are lines and whether encoding/json reads each as a
// turn_context line (Type "turn_context").
var lineKindCases = []struct {
	line string
	want bool
}{
	{`{"timestamp":"x","type":"turn_context","payload":{}}`, true},
	{`  { "type" : "turn_context" }  `, true},
	{`{"TYPE":"turn_context"}`, true},
	{`{"Type":"turn_context"}`, true},
	{`{"\u0074ype":"turn\u005fcontext"}`, true},
	{`{"type":"turn_context","type":"response_item"}`, true}, // errs towards yes
	{`{"type":"response_item","type":"turn_context"}`, true},
	{`{"a":{"type":"x"},"type":"turn_context"}`, true},
	{`{"a":"\\","type":"turn_context"}`, true},
	{`{"a":"\"","type":"turn_context"}`, true},
	{`{"a":"\\\\","type":"turn_context"}`, true},
	{`{"a":"\"\\\"","type":"turn_context"}`, true},
	{`{"a":"\",\"type\":\"turn_context","b":1}`, false},
	{`{"a":"\\\",\"type\":\"turn_context","b":1}`, false},
	{`{"type":"response_item","payload":{"type":"turn_context"}}`, false},
	{`{"type":"response_item","payload":"{\"type\":\"turn_context\"}"}`, false},
	{`{"turn_context":"type"}`, false},
	{`{"type":["turn_context"]}`, false},
	{`{"types":"turn_context"}`, false},
	{`{"type":"turn_context "}`, false},
	{`{"type":"Turn_context"}`, false},
	{`["type","turn_context"]`, false},
	{`"type"`, false},
	{``, false},
}

// TestLineKind: a line is a turn_context line when encoding/json reads it
// as one, whatever the pieces it comes in.
func TestLineKind(t *testing.T) {
	for _, tc := range lineKindCases {
		for _, size := range []int{1, 2, 7, len(tc.line) + 1} {
			if got := kindOf(tc.line, size); got != tc.want {
				t.Errorf("%s in pieces of %d: %t, want %t", tc.line, size, got, tc.want)
			}
		}
	}
}

func kindOf(line string, size int) bool {
	var k lineKind
	for b := []byte(line); len(b) > 0; {
		n := min(size, len(b))
		k.feed(b[:n])
		b = b[n:]
	}
	return k.turnContext
}

// FuzzLineKind: whatever encoding/json reads as a turn_context line,
// lineKind says is one, in pieces of any size.
func FuzzLineKind(f *testing.F) {
	for _, tc := range lineKindCases {
		f.Add(tc.line, uint8(3))
	}
	f.Fuzz(func(t *testing.T, line string, size uint8) {
		if strings.Contains(line, "\n") {
			return
		}
		whole := kindOf(line, len(line)+1)
		if pieces := kindOf(line, int(size)+1); pieces != whole {
			t.Errorf("%q: whole %t, in pieces of %d %t", line, whole, int(size)+1, pieces)
		}
		var l struct {
			Type string `json:"type"`
		}
		if json.Unmarshal([]byte(line), &l) == nil && l.Type == "turn_context" && !whole {
			t.Errorf("%q: encoding/json reads a turn_context line, lineKind does not", line)
		}
	})
}

// contextLine is a turn_context line of turn t1, working in cwd, approval
// never, with this sandbox_policy.
func contextLine(cwd string, policy map[string]any) string {
	b, _ := json.Marshal(map[string]any{"timestamp": "2026-12-03T00:00:00Z", "type": "turn_context", "payload": map[string]any{
		"turn_id": "t1", "approval_policy": "never", "sandbox_policy": policy, "model": "m", "cwd": cwd,
	}})
	return string(b)
}

// TestTranscriptResolved: whether a workspace-write session can rewrite
// its transcript is judged on the path as named and as resolved, each
// root as written and resolved, a component at a time: ~/.codex a link
// into the workspace is refused exactly as the transcript named inside it.
func TestTranscriptResolved(t *testing.T) {
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	j := filepath.Join
	work, home := j(base, "work"), j(base, "home")
	ww := func(roots ...any) map[string]any {
		return map[string]any{"type": "workspace-write", "writable_roots": roots, "exclude_slash_tmp": true, "exclude_tmpdir_env_var": true}
	}
	hosttest.WriteTree(t, base, map[string]string{
		"work/dotcodex/sessions/": "",
		"home/.codex":             "->" + j(work, "dotcodex"),
		"real/.codex/sessions/":   "",
		"work/linked.jsonl":       "",
		"work/to-real":            "->" + j(base, "real", ".codex"),
		"a/":                      "",
		"ab/.codex/sessions/":     "",
		"loop":                    "->" + j(base, "loop"),
	})
	write := func(path, line string) {
		if err := os.WriteFile(path, []byte(line+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	inWork := j(work, "dotcodex", "sessions", "rollout.jsonl")
	real := j(base, "real", ".codex", "sessions", "rollout.jsonl")
	linkedFile := j(base, "real", ".codex", "sessions", "linked.jsonl")
	if err := os.Symlink(j(work, "linked.jsonl"), linkedFile); err != nil {
		t.Fatal(err)
	}
	prefix := j(base, "ab", ".codex", "sessions", "rollout.jsonl")
	for _, tc := range []struct {
		name, transcript, cwd string
		policy                map[string]any
		want                  string // the error, "" for none
	}{
		{"named inside the workspace", inWork, work, ww(), "the session can rewrite its own transcript (it lies under " + work + ","},
		{"~/.codex a link into the workspace", j(home, ".codex", "sessions", "rollout.jsonl"), work, ww(), "the session can rewrite its own transcript (it lies under " + work + ","},
		{"the file a link into the workspace", linkedFile, work, ww(), "(it lies under " + work + ","},
		{"a root with a trailing slash", inWork, j(base, "a"), ww(work + "/"), "(it lies under " + work + "/,"},
		{"a root that is a link to CODEX_HOME", real, j(base, "a"), ww(j(work, "to-real")), "(it lies under " + j(work, "to-real") + ","},
		{"a root that does not exist", real, j(base, "a"), ww(j(base, "gone")), ""},
		{"a root that cannot be resolved", real, j(base, "a"), ww(j(base, "loop")), "the writable root " + j(base, "loop") + " cannot be resolved"},
		{"a root sharing only a prefix", prefix, j(base, "a"), ww(j(base, "a")), ""},
		{"CODEX_HOME outside the workspace", real, work, ww(), ""},
		{"read-only", inWork, work, map[string]any{"type": "read-only"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			target := tc.transcript
			if resolved, err := filepath.EvalSymlinks(target); err == nil {
				target = resolved
			}
			write(target, contextLine(tc.cwd, tc.policy))
			_, err := readSession(context.Background(), appServer, tc.transcript, "t1", tc.cwd, "")
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("%v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("got  %v\nwant %s", err, tc.want)
			}
			// The hook refuses what readSession cannot trust.
			p := codexPayload(`{"agent_type": "ro"}`)
			p["transcript_path"], p["turn_id"], p["cwd"] = tc.transcript, "t1", tc.cwd
			dir, _ := callerCatalog(t)
			env := appServer
			env.AgentsDirs = []string{dir}
			if _, err := (Adapter{}).Spawn(context.Background(), p, env); (err != nil) != (tc.want != "") {
				t.Errorf("Spawn: %v", err)
			}
		})
	}
	// A transcript whose path cannot be resolved cannot be judged.
	if _, err := readSession(context.Background(), appServer, j(base, "loop", "rollout.jsonl"), "t1", work, ""); err == nil || !strings.Contains(err.Error(), "the session transcript cannot be read") {
		t.Errorf("a loop: %v", err)
	}
}
