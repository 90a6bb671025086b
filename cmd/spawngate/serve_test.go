package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
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
	// A shutdown timeout no busy machine reaches: this test is about the
	// answer, not the bound.
	cmd := exec.Command(bin, "serve", "--addr", "127.0.0.1:0", "--shutdown-timeout", "10m", "--policy", filepath.Join("..", "..", "examples", "policy.yaml"))
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
