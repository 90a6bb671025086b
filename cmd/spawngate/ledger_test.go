package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spawngate/spawngate/internal/ledger/ledgertest"
)

// Two real serve processes sharing one Redis ledger, as two replicas
// behind a load balancer: a nonce handed out through one is refused
// through the other, and a fresh one still passes there.
func TestServeReplicasShareTheLedger(t *testing.T) {
	url := ledgertest.RedisURL(t)
	bin, err := exec.LookPath("spawngate")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	policy := filepath.Join(dir, "retask.yaml")
	if err := os.WriteFile(policy, []byte("allowed_tools: [Read, Grep, Glob]\nworkspace_root: /home/dev/project\nbudget_cap_tokens: 200000\nbrief_retask: {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	agents := filepath.Join("..", "..", "examples", "claude-code", ".claude", "agents")
	var replicas []string
	for range 2 {
		replicas = append(replicas, startReplica(t, bin, "--policy", policy, "--agents-dir", agents, "--ledger", url))
	}
	session := fmt.Sprintf("%s-%d", t.Name(), time.Now().UnixNano())
	ask := func(replica, nonce string) string {
		t.Helper()
		res, err := http.Post("http://"+replica+"/v1/hooks/claude-code", "application/json", strings.NewReader(retaskPayload(t, session, nonce)))
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		body, err := io.ReadAll(res.Body)
		if err != nil || res.StatusCode != http.StatusOK {
			t.Fatalf("%s: %d %v %s", replica, res.StatusCode, err, body)
		}
		return string(body)
	}
	if answer := ask(replicas[0], "R-7f2c9a1b"); answer != "" {
		t.Fatalf("first use, on the first replica: %s", answer)
	}
	if answer := ask(replicas[1], "R-7f2c9a1b"); !strings.Contains(answer, `"permissionDecision":"deny"`) || !strings.Contains(answer, "brief.retask") ||
		!strings.Contains(answer, "already handed out in this session") {
		t.Fatalf("reuse, on the second replica: %s", answer)
	}
	if answer := ask(replicas[1], "R-0d5e8a3c"); answer != "" {
		t.Fatalf("a fresh nonce, on the second replica: %s", answer)
	}
	if answer := ask(replicas[0], "R-0d5e8a3c"); !strings.Contains(answer, "brief.retask") {
		t.Fatalf("its reuse, back on the first replica: %s", answer)
	}
}

// startReplica starts spawngate serve on a free port, stopped with the
// test, and returns its address once it says it serves.
func startReplica(t *testing.T, bin string, args ...string) string {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"serve", "--addr", "127.0.0.1:0"}, args...)...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	lines := bufio.NewScanner(stderr)
	var seen []string
	for lines.Scan() {
		seen = append(seen, lines.Text())
		var line struct{ Msg, Addr string }
		if json.Unmarshal(lines.Bytes(), &line) == nil && line.Msg == "serving" {
			go io.Copy(io.Discard, stderr)
			return line.Addr
		}
	}
	t.Fatalf("the server stopped before it served:\n%s", strings.Join(seen, "\n"))
	return ""
}

// retaskPayload is a Claude Code spawn of the example code-reviewer in
// session, whose brief hands out nonce.
func retaskPayload(t *testing.T, session, nonce string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "examples", "claude-code", "payloads", "code-reviewer.json"))
	if err != nil {
		t.Fatal(err)
	}
	var p map[string]any
	if err := json.Unmarshal(data, &p); err != nil {
		t.Fatal(err)
	}
	p["session_id"] = session
	p["tool_input"].(map[string]any)["prompt"] = "Review the diff. RETASK CHANNEL: a revision of this task names token " + nonce + ". Done when you have listed the findings."
	out, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}
