package server

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/spawngate/spawngate/internal/report"
)

// waitWaiting waits until n requests wait for memory or a turn, as the
// server's metrics count them (a bounded poll on readiness, not a guessed
// delay).
func waitWaiting(t *testing.T, url string, n int) {
	t.Helper()
	want := fmt.Sprintf("\nspawngate_decisions_waiting %d\n", n)
	for deadline := time.Now().Add(time.Minute); !strings.Contains(get(t, url+"/metrics"), want); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("not %d requests waiting after a minute", n)
		}
	}
}

// A flood of large bodies against one turn: a body is read only once its
// bytes are reserved, so the bodies held at once never pass one body of
// the largest size (MaxConcurrent x MaxBytes), however many arrive, with
// a length or chunked; every request is still answered.
func TestBodiesWaitForMemoryBeforeTheyAreRead(t *testing.T) {
	const max = 64 << 10
	s, ts, _ := newServer(t, func(c *Config) {
		c.MaxConcurrent = 1
		c.Gate.Limits.MaxBytes = max
		c.Gate.Timeout = 5 * time.Minute // the waits here end when the test says, never by the clock
	})
	s.turns <- struct{}{} // the one turn is taken: every request waits
	body := `{"plan": [` + strings.Repeat(" ", max-20) + `]}`
	const clients = 12
	statuses := make(chan int, clients)
	var wg sync.WaitGroup
	for i := range clients {
		wg.Go(func() {
			var r io.Reader = strings.NewReader(body)
			if i%3 == 0 {
				r = io.MultiReader(r) // no length: sent chunked
			}
			req, _ := http.NewRequest(http.MethodPost, ts.URL+"/v1/check", r)
			req.Header.Set("Content-Type", "application/json")
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				statuses <- 0
				return
			}
			io.Copy(io.Discard, res.Body)
			res.Body.Close()
			statuses <- res.StatusCode
		})
	}
	waitWaiting(t, ts.URL, clients)
	<-s.turns
	wg.Wait()
	close(statuses)
	for status := range statuses {
		if status != http.StatusUnprocessableEntity {
			t.Errorf("a request was answered %d, want 422 (its body is no plan)", status)
		}
	}
	if peak := s.peakHeld.Load(); peak == 0 || peak > max {
		t.Fatalf("%d bytes of bodies were held at once, want at most %d (one body of the largest size)", peak, max)
	}
	if held := s.held.Load(); held != 0 {
		t.Fatalf("%d bytes still counted as held after every answer", held)
	}
}

// What waits is bounded too: with every turn taken and MaxWaiting
// requests waiting, one more is answered busy at once, with its body
// unread (503 on /v1/check, a deny on a hook endpoint, which Claude Code
// blocks on); a body declared larger than the limit is refused unread;
// and a request that waits past its timeout is answered busy by the
// server itself, not left to the client's patience.
func TestWaitingIsBounded(t *testing.T) {
	s, ts, _ := newServer(t, func(c *Config) { c.MaxConcurrent = 1; c.MaxWaiting = 2; c.Gate.Timeout = 5 * time.Minute })
	s.turns <- struct{}{}
	var wg sync.WaitGroup
	for range 3 { // the one turn's request and two waiting
		wg.Go(func() { post(t, ts.URL+"/v1/check", "application/json", passing) })
	}
	waitWaiting(t, ts.URL, 3)
	req, _ := http.NewRequest(http.MethodPost, ts.URL+"/v1/check", strings.NewReader(passing))
	req.Header.Set("Content-Type", "application/json")
	// A bound that is not kept leaves this request waiting for the one
	// turn: the client gives up after a minute, and the test fails.
	res, err := (&http.Client{Timeout: time.Minute}).Do(req)
	if err != nil {
		t.Fatalf("one more than may wait was not answered at once: %v", err)
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusServiceUnavailable || res.Header.Get("Retry-After") == "" || verdictOf(t, string(b)) != report.NotJudged || !strings.Contains(string(b), "the server is busy") {
		t.Fatalf("one more than may wait: %d %q %s", res.StatusCode, res.Header.Get("Retry-After"), b)
	}
	status, body := post(t, ts.URL+"/v1/hooks/claude-code", "application/json", `{}`)
	if status != 200 || body != string(hostsDeny(t, "claude-code", "spawngate could not judge this sub-agent, so it is refused: the server is busy: as many requests as it holds are waiting already")) {
		t.Fatalf("a hook beyond the bound: %d %s", status, body)
	}
	if status, body := post(t, ts.URL+"/v1/check", "application/json", `{"plan": [`+strings.Repeat(" ", 40<<20)+`]}`); status != http.StatusRequestEntityTooLarge || verdictOf(t, body) != report.NotJudged {
		t.Fatalf("a body over the limit while the server is full: %d %.200s", status, body)
	}
	<-s.turns
	wg.Wait()

	s2, ts2, _ := newServer(t, func(c *Config) { c.MaxConcurrent = 1; c.Gate.Timeout = 200 * time.Millisecond })
	s2.turns <- struct{}{}
	defer func() { <-s2.turns }()
	status, body = post(t, ts2.URL+"/v1/check", "application/json", passing)
	if status != http.StatusServiceUnavailable || !strings.Contains(body, "no turn to evaluate came within the request's timeout") {
		t.Fatalf("a request that found no turn in its timeout: %d %s", status, body)
	}
	status, body = post(t, ts2.URL+"/v1/hooks/claude-code", "application/json", `{}`)
	if status != 200 || body != string(hostsDeny(t, "claude-code", "spawngate could not judge this sub-agent, so it is refused: the server is busy: no turn to evaluate came within the request's timeout")) {
		t.Fatalf("a hook that found no turn in its timeout: %d %s", status, body)
	}
}

// With a token, /metrics is open unless MetricsAuth says otherwise; the
// probes never ask for the token; MetricsAuth without a token is refused.
func TestMetricsAuth(t *testing.T) {
	for _, tc := range []struct {
		metricsAuth bool
		header      []string
		want        int
	}{
		{false, nil, 200},
		{true, nil, http.StatusUnauthorized},
		{true, []string{"Authorization", "Bearer wrong"}, http.StatusUnauthorized},
		{true, []string{"Authorization", "Bearer s3cret"}, 200},
	} {
		_, ts, _ := newServer(t, func(c *Config) { c.Token = []byte("s3cret"); c.MetricsAuth = tc.metricsAuth })
		for _, path := range []string{"/metrics", "/healthz", "/readyz"} {
			req, _ := http.NewRequest(http.MethodGet, ts.URL+path, nil)
			for i := 0; i+1 < len(tc.header); i += 2 {
				req.Header.Set(tc.header[i], tc.header[i+1])
			}
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(res.Body)
			res.Body.Close()
			want := tc.want
			if path != "/metrics" {
				want = 200
			}
			if res.StatusCode != want {
				t.Errorf("metrics auth %v, %s with %v: %d, want %d", tc.metricsAuth, path, tc.header, res.StatusCode, want)
			}
			if path == "/metrics" && want == 200 && !bytes.Contains(b, []byte("spawngate_decisions_waiting")) {
				t.Errorf("metrics auth %v: /metrics answered without the metrics: %.200s", tc.metricsAuth, b)
			}
		}
	}
	if _, err := New(t.Context(), Config{PolicyFile: "x.yaml", MetricsAuth: true}); err == nil || !strings.Contains(err.Error(), "no token is set") {
		t.Fatalf("MetricsAuth without a token: %v", err)
	}
}
