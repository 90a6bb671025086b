package server

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/spawngate/spawngate/internal/report"
)

// unknownKeysPlan is a YAML plan of n top-level keys the schema does not
// know: each is a problem of the document. Placing them on their lines
// read every key once per problem: 50,000 keys took 7 s.
func unknownKeysPlan(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "k%06d: x\n", i)
	}
	b.WriteString("plan:\n  - {role: r, tools: [fs.read], paths: [], budget_tokens: 1}\n")
	return b.String()
}

// A plan of 50,000 unknown keys is answered, and answered as the
// documentation says: 422 with the error verdict when it is judged in
// time, 504 when it is not. It got no answer at all: judging it ran on
// past the timeout, in a step that did not look at its deadline, and
// past the write timeout, which closed the connection under it. The
// server here has serve's write timeout (the gate's timeout, and some
// room), so an answer written late is no answer, as it would be there.
func TestHostilePlanIsAnsweredWithinTheTimeout(t *testing.T) {
	const timeout = time.Second
	s, _, _ := newServer(t, func(c *Config) { c.Gate.Timeout = timeout })
	ts := httptest.NewUnstartedServer(s.Handler())
	ts.Config.WriteTimeout = timeout + 2*time.Second
	ts.Start()
	t.Cleanup(ts.Close)
	req, err := http.NewRequest(http.MethodPost, ts.URL+"/v1/check", strings.NewReader(unknownKeysPlan(50000)))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/yaml")
	res, err := ts.Client().Do(req)
	if err != nil {
		t.Fatalf("no answer: %v", err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatalf("the answer was cut off: %v", err)
	}
	var rep report.Report
	if err := json.Unmarshal(body, &rep); err != nil {
		t.Fatalf("status %d, not a JSON report: %v\n%.300s", res.StatusCode, err, body)
	}
	want := map[int]string{http.StatusUnprocessableEntity: "49000 more schema problems", http.StatusGatewayTimeout: "timed out"}[res.StatusCode]
	if want == "" || rep.Verdict != report.NotJudged || !strings.Contains(string(body), want) {
		t.Fatalf("status %d, verdict %s; want 422 or 504 with the error verdict\n%.300s", res.StatusCode, rep.Verdict, body)
	}
}

// When the client goes, the request's work stops: the decision ends as
// interrupted, not judged to its end for nobody. The client leaves while
// the gate holds the document it is about to judge, and the test waits
// for the decision's line in the log, never for a time.
func TestJudgingStopsWhenTheClientGoes(t *testing.T) {
	lines := make(chan string, 4)
	requests := make(chan context.Context, 1)
	judging := make(chan struct{})
	s, _, _ := newServer(t, func(c *Config) {
		c.DecisionLog = lineWriter(lines)
		c.Gate.OnRead = func(string, []byte) {
			// The whole body is read and the gate is about to judge it:
			// the client may go now, and the gate goes on once the
			// server has seen it go.
			request := <-requests
			close(judging)
			<-request.Done()
		}
	})
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests <- r.Context()
		s.Handler().ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)

	ctx, leave := context.WithCancel(context.Background())
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, ts.URL+"/v1/check", strings.NewReader(unknownKeysPlan(50000)))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/yaml")
	answered := make(chan error, 1)
	go func() {
		res, err := ts.Client().Do(req)
		if err == nil {
			res.Body.Close()
		}
		answered <- err
	}()
	select {
	case <-judging:
	case err := <-answered:
		t.Fatalf("answered before judging: %v", err)
	}
	leave()
	<-answered
	select {
	case line := <-lines:
		var ev struct {
			Error  string
			Result struct{ Verdict report.Verdict }
		}
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Fatal(err)
		}
		if ev.Result.Verdict != report.NotJudged || !strings.Contains(ev.Error, "interrupted") {
			t.Fatalf("the decision after the client left: verdict %s, error %q; want it interrupted", ev.Result.Verdict, ev.Error)
		}
	case <-time.After(time.Minute): // a hang, never a measure
		t.Fatal("the decision did not end within a minute of the client leaving")
	}
}

// lineWriter sends each line written to it (the decision log writes one
// line a call).
type lineWriter chan string

func (w lineWriter) Write(p []byte) (int, error) {
	w <- string(p)
	return len(p), nil
}
