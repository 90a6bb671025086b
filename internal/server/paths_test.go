package server

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spawngate/spawngate/internal/report"
)

// rawRequest sends one request whose target is written byte for byte as
// given: no client cleans, decodes or re-encodes it on the way.
func rawRequest(t *testing.T, addr, method, target, contentType, body string) (*http.Response, string) {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "%s %s HTTP/1.1\r\nHost: %s\r\nContent-Type: %s\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s",
		method, target, addr, contentType, len(body), body)
	res, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("%s %s: %v", method, target, err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatalf("%s %s: %v", method, target, err)
	}
	return res, string(b)
}

// The server routes a request by its path exactly as sent, and never
// answers with a redirect: a host does not read one as a refusal (Claude
// Code's HTTP hook spawns on any answer that is not 2xx). A path that is
// not exactly a hook's, but names /v1/hooks or a path below it as sent,
// decoded or cleaned (a doubled slash, a dot, a "..", an encoded slash),
// is refused as a hook that names no host is; any other path that is not
// exactly an endpoint's answers 404, as an unknown path does.
func TestPathsAreNeverCleanedOrRedirected(t *testing.T) {
	_, ts, _ := newServer(t, nil)
	addr := ts.Listener.Addr().String()
	payload, err := os.ReadFile(filepath.Join("..", "..", "examples", "claude-code", "payloads", "code-reviewer.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, target := range []string{
		"/v1/hooks//claude-code",
		"/v1/hooks/./claude-code",
		"/v1/hooks/codex/../claude-code",
		"/v1/hooks/claude-code/.",
		"/v1/hooks/claude-code/..",
		"/v1/hooks/claude-code//",
		"/v1/hooks",
		"//v1/hooks/claude-code",
		"/v1//hooks/claude-code",
		"/./v1/hooks/codex",
		"/v1/check/../hooks/codex",
		"/v1/hooks%2Fclaude-code",
		"/v1/hooks/claude%2Dcode",
		"/v1/hooks//claude-code?session=1",
	} {
		for _, method := range []string{http.MethodPost, http.MethodGet} {
			t.Run(method+" "+target, func(t *testing.T) {
				res, body := rawRequest(t, addr, method, target, "application/json", string(payload))
				var answer struct{ Decision, Reason string }
				sent, _, _ := strings.Cut(target, "?")
				if res.StatusCode != http.StatusOK || res.Header.Get("Location") != "" || json.Unmarshal([]byte(body), &answer) != nil ||
					answer.Decision != "block" || !strings.Contains(answer.Reason, "no hook is served at "+sent+" (the hooks are "+hookPaths()+")") {
					t.Errorf("%d (Location %q) %s; want 200 and the refusal of a path that names no host", res.StatusCode, res.Header.Get("Location"), body)
				}
			})
		}
	}
	for _, target := range []string{
		"/v1//check",
		"/v1/./check",
		"//v1/check",
		"/v1/check/.",
		"/v1/x/../check",
		"/v1/check/",
		"/v1/ch%65ck",
		"/./healthz",
		"//metrics",
		"/readyz/..//readyz",
	} {
		t.Run("POST "+target, func(t *testing.T) {
			res, body := rawRequest(t, addr, http.MethodPost, target, "application/json", passing)
			if res.StatusCode != http.StatusNotFound || res.Header.Get("Location") != "" {
				t.Errorf("%d (Location %q) %s; want 404, the answer to a path the server does not serve", res.StatusCode, res.Header.Get("Location"), body)
			}
		})
	}
	// The endpoints themselves, sent the same way, are served.
	if res, body := rawRequest(t, addr, http.MethodPost, "/v1/check?x=1", "application/json", passing); res.StatusCode != http.StatusOK || verdictOf(t, body) != report.Pass {
		t.Errorf("/v1/check: %d %s", res.StatusCode, body)
	}
	if res, body := rawRequest(t, addr, http.MethodPost, "/v1/hooks/claude-code", "application/json", string(payload)); res.StatusCode != http.StatusOK || body != "" {
		t.Errorf("/v1/hooks/claude-code: %d %q", res.StatusCode, body)
	}
	for _, probe := range []string{"/healthz", "/readyz", "/metrics"} {
		if res, _ := rawRequest(t, addr, http.MethodGet, probe, "", ""); res.StatusCode != http.StatusOK {
			t.Errorf("GET %s: %d", probe, res.StatusCode)
		}
	}
}
