package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// SIGTERM stops the real server gracefully: the request in flight is
// answered in full, new connections are refused, and it exits 0.
func TestServeStopsGracefullyOnSIGTERM(t *testing.T) {
	bin, err := exec.LookPath("spawngate")
	if err != nil {
		t.Fatal(err)
	}
	// A shutdown timeout, and a request timeout, no busy machine reaches:
	// this test is about the answer, not the bounds (the slow request
	// below took more than the default 30 s at a load of 20 on two cores).
	cmd := exec.Command(bin, "serve", "--addr", "127.0.0.1:0", "--shutdown-timeout", "10m", "--timeout", "10m", "--policy", filepath.Join("..", "..", "examples", "policy.yaml"))
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	lines := bufio.NewScanner(stderr)
	serving := regexp.MustCompile(`"msg":"serving","addr":"([^"]+)"`)
	var addr string
	for lines.Scan() {
		if m := serving.FindStringSubmatch(lines.Text()); m != nil {
			addr = m[1]
			break
		}
	}
	if addr == "" {
		t.Fatal("the server did not say where it serves")
	}
	go io.Copy(io.Discard, stderr)

	// A request that takes seconds to judge: children that cannot be
	// judged as one, each refused forty times.
	var slow strings.Builder
	slow.WriteString(`{"plan": [`)
	for i := range 6000 {
		if i > 0 {
			slow.WriteByte(',')
		}
		fmt.Fprintf(&slow, `{"role": "r%d", "tools": [%s], "paths": [], "budget_tokens": 1}`, i, strings.TrimSuffix(strings.Repeat(`"shell.run",`, 20), ","))
	}
	slow.WriteString("]}")
	type answer struct {
		status int
		body   string
		err    error
		at     time.Time
	}
	inFlight := make(chan answer, 1)
	go func() {
		res, err := http.Post("http://"+addr+"/v1/check", "application/json", strings.NewReader(slow.String()))
		if err != nil {
			inFlight <- answer{err: err}
			return
		}
		b, err := io.ReadAll(res.Body)
		res.Body.Close()
		inFlight <- answer{res.StatusCode, string(b), err, time.Now()}
	}()
	// Signal once the server says the request is being judged, never
	// after a guessed delay: on a busy machine the request may take
	// seconds to arrive.
	inFlightNow := regexp.MustCompile(`(?m)^spawngate_decisions_in_flight 1$`)
	for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the slow request was not seen in flight in two minutes")
		}
		select {
		case a := <-inFlight:
			t.Fatalf("the slow request was answered before it was seen in flight (make it slower): %d %v", a.status, a.err)
		default:
		}
		res, err := http.Get("http://" + addr + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(res.Body)
		res.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		if inFlightNow.Match(b) {
			break
		}
	}
	signalled := time.Now()
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	// The listener closes as the signal is handled; on a loaded machine
	// that takes a moment, so look until it has (or a minute passes).
	refused := false
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		res, err := http.Get("http://" + addr + "/healthz")
		if err != nil {
			refused = true
			break
		}
		res.Body.Close()
	}
	if !refused {
		t.Fatal("new connections were still accepted a minute after SIGTERM")
	}
	a := <-inFlight
	if a.err != nil || a.status != http.StatusOK || !strings.Contains(a.body, `"verdict": "block"`) {
		t.Fatalf("the request in flight: %d %v %.200s", a.status, a.err, a.body)
	}
	if a.at.Before(signalled) {
		t.Fatal("the slow request was answered before SIGTERM: nothing was in flight (make it slower)")
	}
	err = cmd.Wait()
	var exit *exec.ExitError
	if errors.As(err, &exit) || err != nil {
		t.Fatalf("the server exited with %v, want 0", err)
	}
}

// startServer runs the real server on a free port of 127.0.0.1 and
// returns it and its address; its stderr is kept in the returned buffer.
func startServer(t *testing.T, args ...string) (*exec.Cmd, string, *syncBuffer) {
	t.Helper()
	bin, err := exec.LookPath("spawngate")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, append([]string{"serve", "--addr", "127.0.0.1:0", "--policy", filepath.Join("..", "..", "examples", "policy.yaml")}, args...)...)
	stderr := &syncBuffer{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	serving := regexp.MustCompile(`"msg":"serving","addr":"([^"]+)"`)
	for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(10 * time.Millisecond) {
		if m := serving.FindStringSubmatch(stderr.String()); m != nil {
			return cmd, m[1], stderr
		}
		if time.Now().After(deadline) {
			t.Fatalf("the server did not say where it serves: %s", stderr.String())
		}
	}
}

// syncBuffer is a buffer a process writes while a test reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// waitMetric polls /metrics until a line matches (two minutes at most).
func waitMetric(t *testing.T, addr, line string) {
	t.Helper()
	re := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(line) + `$`)
	for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(10 * time.Millisecond) {
		res, err := http.Get("http://" + addr + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if re.Match(b) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the metrics did not show %q in two minutes", line)
		}
	}
}

// manyChildren is a plan of n children that cannot be judged as one,
// each refused forty times: about a second of judging per 1,000.
func manyChildren(n int) string {
	var slow strings.Builder
	slow.WriteString(`{"plan": [`)
	for i := range n {
		if i > 0 {
			slow.WriteByte(',')
		}
		fmt.Fprintf(&slow, `{"role": "r%d", "tools": [%s], "paths": [], "budget_tokens": 1}`, i, strings.TrimSuffix(strings.Repeat(`"shell.run",`, 20), ","))
	}
	slow.WriteString("]}")
	return slow.String()
}

type answer struct {
	status int
	body   string
	err    error
}

// postAsync POSTs a body and sends the answer on the channel it returns.
func postAsync(url, contentType, body string) <-chan answer {
	out := make(chan answer, 1)
	go func() {
		res, err := http.Post(url, contentType, strings.NewReader(body))
		if err != nil {
			out <- answer{err: err}
			return
		}
		b, err := io.ReadAll(res.Body)
		res.Body.Close()
		out <- answer{res.StatusCode, string(b), err}
	}()
	return out
}

// A client that sends "Expect: 100-continue" (curl does for bodies over
// about 1 MiB) and is still waiting for the server's go-ahead when
// SIGTERM comes is in flight like any other: its body is asked for once
// memory for it is free, judged, and answered, and the server exits 0.
// The client here is raw TCP on 127.0.0.1, so that the test sees exactly
// when "100 Continue" comes.
func TestServeAnswersAnExpectContinueRequestOnSIGTERM(t *testing.T) {
	// One body of at most 4 MB in memory at once: the slow plan takes
	// half of it, and the raw client's declared 3 MB must wait.
	cmd, addr, stderr := startServer(t, "--max-concurrent", "1", "--max-bytes", "4000000", "--timeout", "10m", "--shutdown-timeout", "10m")
	slow := manyChildren(6000)
	if len(slow) > 2000000 {
		t.Fatalf("the slow plan is %d bytes: it must leave less than 3 MB of the 4 MB", len(slow))
	}
	first := postAsync("http://"+addr+"/v1/check", "application/json", slow)
	waitMetric(t, addr, "spawngate_decisions_in_flight 1")

	body := []byte(`{"plan": [{"role": "doc-reader", "tools": ["fs.read"], "paths": ["/repo/workspace/docs"], "budget_tokens": 10}]}`)
	body = append(body, bytes.Repeat([]byte(" "), 3000000-len(body))...)
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(5 * time.Minute))
	fmt.Fprintf(conn, "POST /v1/check HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\nExpect: 100-continue\r\n\r\n", addr, len(body))
	waitMetric(t, addr, "spawngate_decisions_waiting 1") // its headers are in: it waits for memory

	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	r := bufio.NewReader(conn)
	res, err := http.ReadResponse(r, nil)
	if err != nil || res.StatusCode != http.StatusContinue {
		t.Fatalf("the server did not ask for the body: %v %v (stderr %s)", res, err, stderr.String())
	}
	if _, err := conn.Write(body); err != nil {
		t.Fatal(err)
	}
	res, err = http.ReadResponse(r, nil)
	if err != nil {
		t.Fatalf("the request that waited for 100 Continue got no answer: %v", err)
	}
	got, _ := io.ReadAll(res.Body)
	if res.StatusCode != http.StatusOK || !bytes.Contains(got, []byte(`"verdict": "pass"`)) {
		t.Fatalf("the request that waited for 100 Continue: %d %.300s", res.StatusCode, got)
	}
	if a := <-first; a.err != nil || a.status != http.StatusOK || !strings.Contains(a.body, `"verdict": "block"`) {
		t.Fatalf("the request in flight: %d %v %.200s", a.status, a.err, a.body)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("the server exited with %v, want 0 (stderr %s)", err, stderr.String())
	}
}

// Requests still in flight when --shutdown-timeout runs out are answered
// before the process exits, never cut off with no answer (an empty reply
// lets Claude Code's HTTP hook spawn): the one judging gets 503 with the
// error verdict, the hook waiting behind it the deny; the exit is 2.
func TestServeAnswersWhatOutlivesTheShutdownTimeout(t *testing.T) {
	// A second to shut down, against a decision of tens of seconds: the
	// margin is the plan's size, not the machine's speed.
	cmd, addr, stderr := startServer(t, "--max-concurrent", "1", "--timeout", "10m", "--shutdown-timeout", "1s")
	judging := postAsync("http://"+addr+"/v1/check", "application/json", manyChildren(30000))
	waitMetric(t, addr, "spawngate_decisions_in_flight 1")
	payload, err := os.ReadFile(filepath.Join("..", "..", "examples", "claude-code", "payloads", "code-reviewer.json"))
	if err != nil {
		t.Fatal(err)
	}
	hooked := postAsync("http://"+addr+"/v1/hooks/claude-code", "application/json", string(payload))
	waitMetric(t, addr, "spawngate_decisions_waiting 1")
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	a := <-judging
	if a.err != nil || a.status != http.StatusServiceUnavailable || !strings.Contains(a.body, `"verdict": "error"`) {
		cmd.Wait() // its stderr says why
		t.Fatalf("the request judging at the deadline: %d %v %.300s (stderr %s)", a.status, a.err, a.body, stderr.String())
	}
	h := <-hooked
	// Its payload was never read, so the deny is the one every event
	// blocks on.
	if h.err != nil || h.status != http.StatusOK || !strings.Contains(h.body, `"decision":"block"`) || !strings.Contains(h.body, "the server is stopping") {
		t.Fatalf("the hook waiting at the deadline: %d %v %.300s", h.status, h.err, h.body)
	}
	err = cmd.Wait()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 2 || !strings.Contains(stderr.String(), "after --shutdown-timeout 1s; they were answered as interrupted") {
		t.Fatalf("the server exited with %v, want 2 (stderr %s)", err, stderr.String())
	}
}
