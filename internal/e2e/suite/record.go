package suite

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// RecordScript is the hook wrapper a suite puts on the client's PATH as
// record: record LABEL CMD... saves what the client hands a hook (its
// stdin, environment and working folder) under LABEL in capture, runs CMD
// on the same input, and passes its answer and exit code through.
// ReadHookCalls reads back what it saved.
func RecordScript(capture string) string {
	return `#!/bin/sh
label=$1; shift
f=$(mktemp '` + capture + `/call.XXXXXXXX') || exit 2
printf '%s\n' "$label" > "$f.label"
cat > "$f.stdin"
env > "$f.env"
pwd > "$f.cwd"
"$@" < "$f.stdin" > "$f.stdout" 2> "$f.stderr"
rc=$?
echo $rc > "$f.exit"
cat "$f.stdout"; cat "$f.stderr" >&2
exit $rc
`
}

// ReadHookCalls reads the hook runs RecordScript saved in capture, in the
// order before puts them: hooks may run in parallel, and each client
// stamps its payload's time its own way.
func ReadHookCalls(capture string, before func(a, b HookCall) bool) []HookCall {
	names, _ := filepath.Glob(filepath.Join(capture, "call.*.stdin"))
	var calls []HookCall
	for _, n := range names {
		stem := strings.TrimSuffix(n, ".stdin")
		read := func(ext string) string { b, _ := os.ReadFile(stem + ext); return string(b) }
		c := HookCall{Label: strings.TrimSpace(read(".label")), Stdin: read(".stdin"), Stdout: read(".stdout"),
			Stderr: read(".stderr"), Exit: strings.TrimSpace(read(".exit")), Cwd: strings.TrimSpace(read(".cwd"))}
		_ = json.Unmarshal([]byte(c.Stdin), &c.Payload)
		c.Env = map[string]string{}
		for _, l := range strings.Split(read(".env"), "\n") {
			if k, v, ok := strings.Cut(l, "="); ok {
				c.Env[k] = v
			}
		}
		calls = append(calls, c)
	}
	sort.SliceStable(calls, func(i, j int) bool { return before(calls[i], calls[j]) })
	return calls
}
