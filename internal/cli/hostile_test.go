package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/spawngate/spawngate/internal/report"
)

const shellPolicy = `{"allowed_tools": ["fs.read"], "workspace_root": "/repo/ws", "budget_cap_tokens": 100}`

// flood is a plan of n children with 20 shell.run tools each: two
// violations per tool. With distinct roles no two children can be judged
// as one.
func flood(n int, distinct bool) string {
	tools := strings.TrimSuffix(strings.Repeat(`"shell.run",`, 20), ",")
	var b strings.Builder
	b.WriteString(`{"policy": ` + shellPolicy + `, "plan": [`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		role := "x"
		if distinct {
			role = fmt.Sprintf("x%d", i)
		}
		fmt.Fprintf(&b, `{"role": %q, "tools": [%s], "paths": [], "budget_tokens": 1}`, role, tools)
	}
	b.WriteString("]}")
	return b.String()
}

// A flood of violations is counted, not listed: 1.6 million of them give a
// report of the children and the bound, with the counts exact.
func TestAFloodOfViolationsIsCountedAndTheReportStaysSmall(t *testing.T) {
	const children = 40000
	var stdout, stderr bytes.Buffer
	code := Run(context.Background(), []string{"check", "--policy", openPolicy(t), "--format", "json", "-"}, strings.NewReader(flood(children, false)), &stdout, &stderr)
	if code != exitBlock {
		t.Fatalf("exit %d, stderr %q", code, stderr.String())
	}
	var rep struct {
		Results []struct {
			Children []struct {
				Violations []json.RawMessage
				Unlisted   int
			}
		}
	}
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
		t.Fatal(err)
	}
	listed, total := 0, 0
	for _, c := range rep.Results[0].Children {
		listed += len(c.Violations)
		total += len(c.Violations) + c.Unlisted
	}
	if listed != report.DefaultMaxListed || total != children*40 {
		t.Fatalf("listed %d of %d violations, want %d of %d", listed, total, report.DefaultMaxListed, children*40)
	}
	// Each child costs its line of JSON, the listed violations theirs.
	if max := children*160 + report.DefaultMaxListed*360; stdout.Len() > max { // a violation also names its line, column and refusing policies
		t.Fatalf("report of %d bytes, more than %d", stdout.Len(), max)
	}
}

// A YAML role of 64 KiB aliased by 9,998 children would be 650 MB of
// report (a role of 1 MiB, 10 GB, and out of memory): the bytes aliases
// expand to are bounded like the values.
func TestAliasesCannotAmplifyTheReport(t *testing.T) {
	var b strings.Builder
	b.WriteString("policy:\n  allowed_tools: [fs.read]\n  workspace_root: /repo/ws\n  budget_cap_tokens: 100\nplan:\n")
	b.WriteString("  - {role: &r " + strings.Repeat("x", 64<<10) + ", tools: [fs.read], paths: [], budget_tokens: 1}\n")
	for range 9998 {
		b.WriteString("  - {role: *r, tools: [fs.read], paths: [], budget_tokens: 1}\n")
	}
	var stdout, stderr bytes.Buffer
	code := Run(context.Background(), []string{"check", "--policy", openPolicy(t), "--format", "json", "-"}, strings.NewReader(b.String()), &stdout, &stderr)
	if code != exitError {
		t.Fatalf("exit %d, want %d", code, exitError)
	}
	if want := "aliases expand to more than 4194304 bytes of text (limit --max-alias-bytes)"; !strings.Contains(stderr.String(), want) {
		t.Fatalf("stderr %q, want it to say %q", stderr.String(), want)
	}
	if stdout.Len() > 1024 {
		t.Fatalf("a %d-byte report for a plan that was not evaluated", stdout.Len())
	}
}

// The deadline holds in every phase: a plan whose 1.6 million violations
// take seconds to find (distinct children cannot be judged as one) is
// stopped at the timeout, with exit 2, not when it is done.
func TestTheTimeoutStopsAnEvaluationThatWouldRunOn(t *testing.T) {
	doc := flood(20000, true)
	cpu := cpuTime(t)
	var stdout, stderr bytes.Buffer
	code := Run(context.Background(), []string{"check", "--policy", openPolicy(t), "--timeout", "300ms", "-"}, strings.NewReader(doc), &stdout, &stderr)
	used := cpuTime(t) - cpu
	if code != exitError || !strings.Contains(stderr.String(), "timed out after 300ms") {
		t.Fatalf("exit %d, stderr %q", code, stderr.String())
	}
	// The whole evaluation costs more than ten seconds of CPU; one stopped
	// at its timeout, well under one second on each core. CPU time, unlike
	// the time on the clock, does not grow when the machine is busy, so
	// the bound holds at any load and still fails an evaluation that
	// runs to its end and only then reports the timeout.
	if used > 4*time.Second {
		t.Fatalf("the run used %s of CPU with a timeout of 300ms: it was not stopped at the timeout", used)
	}
}

// cpuTime is the CPU time this process has used, user and system.
func cpuTime(t *testing.T) time.Duration {
	t.Helper()
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		t.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// Plans are judged on every core, and the report is the same bytes as one
// core gives: plans in the order named, errors on stderr in that order,
// and the listing bounded over the run in that order.
func TestManyPlansAreReportedInTheOrderGiven(t *testing.T) {
	dir := t.TempDir()
	var args []string
	for i := range 120 {
		name := filepath.Join(dir, fmt.Sprintf("plan-%03d.json", i))
		var doc string
		switch i % 4 {
		case 0:
			doc = fmt.Sprintf(`{"policy": %s, "plan": [{"role": "r%d", "tools": ["fs.read"], "paths": [], "budget_tokens": 1}]}`, shellPolicy, i)
		case 1:
			doc = fmt.Sprintf(`{"policy": %s, "plan": [{"role": "r%d", "tools": ["shell.run", "x"], "paths": ["/etc"], "budget_tokens": 1}]}`, shellPolicy, i)
		case 2:
			doc = `{"plan": [` // does not parse
		case 3:
			name = filepath.Join(dir, fmt.Sprintf("missing-%03d.json", i))
		}
		if doc != "" {
			if err := os.WriteFile(name, []byte(doc), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		args = append(args, name)
	}
	run := func() (int, string, string) {
		var stdout, stderr bytes.Buffer
		code := Run(context.Background(), append([]string{"check", "--policy", openPolicy(t), "--format", "json", "--max-listed", "50"}, args...), nil, &stdout, &stderr)
		return code, stdout.String(), stderr.String()
	}
	code, out, errs := run()
	if code != exitError {
		t.Fatalf("exit %d", code)
	}
	for range 3 {
		if c, o, e := run(); c != code || o != out || e != errs {
			t.Fatal("two runs over the same plans differ")
		}
	}
	prev := runtime.GOMAXPROCS(1)
	c, o, e := run()
	runtime.GOMAXPROCS(prev)
	if c != code || o != out || e != errs {
		t.Fatal("one core and every core give different reports")
	}
	var rep report.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	for i, res := range rep.Results {
		if want := args[i]; res.Source != want {
			t.Fatalf("result %d is %s, want %s", i, res.Source, want)
		}
	}
	if c := rep.Count(); c.Violations-c.Unlisted != 50 {
		t.Fatalf("%d violations listed, want 50", c.Violations-c.Unlisted)
	}
}
