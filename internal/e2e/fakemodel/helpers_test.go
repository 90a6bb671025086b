package fakemodel

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"net/http"
	"reflect"
	"strings"
	"testing"
)

// ask posts body to path on the server, as the client would.
func ask(t *testing.T, s *Server, path, body string) *http.Response {
	t.Helper()
	resp, err := http.Post(s.URL()+path, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// event is one server-sent event.
type event struct {
	Name string // "" when the stream names none
	Data string
}

// readEvents parses a server-sent event stream the way the clients'
// libraries do: fields up to a blank line make one event.
func readEvents(t *testing.T, resp *http.Response) []event {
	t.Helper()
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("Content-Type %q, want text/event-stream", ct)
	}
	var out []event
	var cur event
	var data []string
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if data != nil {
				cur.Data = strings.Join(data, "\n")
				out = append(out, cur)
			}
			cur, data = event{}, nil
		case strings.HasPrefix(line, "event: "):
			cur.Name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			data = append(data, strings.TrimPrefix(line, "data: "))
		default:
			t.Fatalf("a line that is no SSE field: %q", line)
		}
	}
	if data != nil {
		t.Fatalf("the stream ends inside an event: %q", data)
	}
	return out
}

// decode unmarshals an event's or a body's JSON.
func decode(t *testing.T, b []byte) map[string]any {
	t.Helper()
	var v map[string]any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("not JSON: %v: %s", err, b)
	}
	return v
}

func readJSON(t *testing.T, resp *http.Response) map[string]any {
	t.Helper()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return decode(t, b)
}

// argsOf parses a call's arguments back, so that a turn read from the
// wire compares with the scripted one.
func argsOf(t *testing.T, s string) any {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatalf("arguments are not JSON: %v: %s", err, s)
	}
	return v
}

// same fails the test with both sides as JSON when got is not want.
func same(t *testing.T, what string, got, want any) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		g, _ := json.MarshalIndent(got, "", "  ")
		w, _ := json.MarshalIndent(want, "", "  ")
		t.Errorf("%s:\ngot  %s\nwant %s", what, g, w)
	}
}

// only is the one request the server recorded.
func only(t *testing.T, s *Server) *Request {
	t.Helper()
	reqs := s.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests recorded, want 1", len(reqs))
	}
	return reqs[0]
}

// parsed is what a codec read from a request, for comparing.
type parsed struct {
	Kind    Kind
	Model   string
	Stream  bool
	System  string
	Texts   []string
	Tools   []string
	Turns   int
	Calls   []string
	Results []Result
}

func parsedOf(r *Request) parsed {
	return parsed{r.Kind, r.Model, r.Stream, r.System, r.Texts, r.Tools, r.Turns, r.Calls, r.Results}
}

// gzipped is b compressed, as Codex may send a body.
func gzipped(t *testing.T, b []byte) *bytes.Buffer {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if _, err := zw.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return &buf
}
