package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode"

	"github.com/spawngate/spawngate/internal/mutate"
	"github.com/spawngate/spawngate/internal/report"
)

// FuzzGate runs the whole gate, from the bytes of a plan on stdin to the
// exit code, in both formats. Whatever the bytes: the exit code is 0, 1 or
// 2 and agrees with the verdict; --format json prints exactly one JSON
// document; both formats give the same exit code; every line on stderr is
// one clean "spawngate: " line; a pass has no violation at all.
func FuzzGate(f *testing.F) {
	for _, seed := range gateSeeds() {
		f.Add(seed)
	}
	f.Fuzz(gateProperty(f))
}

func gateSeeds() [][]byte {
	var seeds [][]byte
	examples, _ := filepath.Glob(filepath.Join("..", "..", "examples", "*"))
	for _, name := range examples {
		if data, err := os.ReadFile(name); err == nil {
			seeds = append(seeds, data)
		}
	}
	for _, doc := range []string{
		``, ` `, `{}`, `[]`, `null`, `{"plan": []}`, `{"plan": [{}]}`, `{"plan": ["x"]}`,
		`{"plan": [{"role": "r", "tools": ["fs.read"], "paths": ["docs"], "budget_tokens": 4e4}]}`,
		`{"plan": [{"role": "r", "tools": ["fs.read"], "paths": ["docs"], "budget_tokens": 1}], "plan": []}`,
		"plan:\n  - role: r\n    tools: [fs.read]\n    paths: [docs]\n    budget_tokens: 1\n",
		"plan:\n  - &c {role: r, tools: [fs.read], paths: [docs], budget_tokens: 1}\n  - *c\n",
		"plan: [{role: r, tools: [fs.read], paths: ['\\u202e'], budget_tokens: 0x10}]\n",
		"---\nplan: []\n---\nplan: []\n",
		"\xef\xbb\xbf{}", "{\"plan\": [\"\xff\"]}",
	} {
		seeds = append(seeds, []byte(doc))
	}
	return seeds
}

func gateProperty(tb testing.TB) func(t *testing.T, plan []byte) {
	policy := filepath.Join(tb.TempDir(), "policy.yaml")
	err := os.WriteFile(policy, []byte("allowed_tools: [fs.read, fs.write, http.get]\nworkspace_root: /repo/workspace\nbudget_cap_tokens: 200000\n"), 0o644)
	if err != nil {
		tb.Fatal(err)
	}
	return func(t *testing.T, plan []byte) {
		var jsonOut, jsonErr bytes.Buffer
		code := Run(context.Background(), []string{"check", "--policy", policy, "--format", "json", "-"}, bytes.NewReader(plan), &jsonOut, &jsonErr)
		if code < 0 || code > 2 {
			t.Fatalf("exit code %d", code)
		}
		var rep report.Report
		dec := json.NewDecoder(bytes.NewReader(jsonOut.Bytes()))
		if err := dec.Decode(&rep); err != nil {
			t.Fatalf("stdout is not a JSON document: %v\n%s", err, jsonOut.String())
		}
		if dec.More() || dec.InputOffset() != int64(len(bytes.TrimRight(jsonOut.Bytes(), "\n"))) {
			t.Fatalf("stdout holds more than one JSON document:\n%s", jsonOut.String())
		}
		if exitCode(rep.Verdict) != code {
			t.Fatalf("verdict %q with exit code %d", rep.Verdict, code)
		}
		if code == 0 {
			for _, res := range rep.Results {
				for _, ch := range res.Children {
					if ch.Verdict != report.Pass || len(ch.Violations) > 0 {
						t.Fatalf("exit 0 with child %d %s: %+v", ch.Index, ch.Verdict, ch.Violations)
					}
				}
			}
		}
		checkStderr(t, jsonErr.String(), code)

		var textOut, textErr bytes.Buffer
		if textCode := Run(context.Background(), []string{"check", "--policy", policy, "-"}, bytes.NewReader(plan), &textOut, &textErr); textCode != code {
			t.Fatalf("text exits %d, json exits %d", textCode, code)
		}
		if textErr.String() != jsonErr.String() {
			t.Fatalf("stderr differs between formats:\n%q\n%q", textErr.String(), jsonErr.String())
		}
		for _, r := range textOut.String() {
			if r != '\n' && (unicode.IsControl(r) || unicode.Is(unicode.Cf, r)) {
				t.Fatalf("text report carries %U:\n%s", r, textOut.String())
			}
		}
	}
}

// TestFuzzGateShort runs FuzzGate's property over plans mutated from its
// seeds.
func TestFuzzGateShort(t *testing.T) {
	check := gateProperty(t)
	for _, in := range mutate.Bytes(gateSeeds(), 4000, 1) {
		check(t, in)
	}
}

func checkStderr(t *testing.T, stderr string, code int) {
	t.Helper()
	if code == 2 && stderr == "" {
		t.Fatal("exit 2 without a reason on stderr")
	}
	if code != 2 && stderr != "" {
		t.Fatalf("exit %d with stderr %q", code, stderr)
	}
	for _, line := range strings.Split(strings.TrimSuffix(stderr, "\n"), "\n") {
		if line == "" && stderr == "" {
			continue
		}
		if !strings.HasPrefix(line, "spawngate: ") {
			t.Fatalf("stderr line %q", line)
		}
		for _, r := range line {
			if unicode.IsControl(r) {
				t.Fatalf("stderr line carries %U: %q", r, line)
			}
		}
	}
}
