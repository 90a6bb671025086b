package cli

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestPlaygroundRefusesItsFlags: a playground others could reach needs
// both --allow-remote and a token; it takes no plan on its command line.
func TestPlaygroundRefusesItsFlags(t *testing.T) {
	token := filepath.Join(t.TempDir(), "token")
	os.WriteFile(token, []byte("s3cret\n"), 0o600)
	for _, c := range []struct {
		args []string
		says string
	}{
		{[]string{"--addr", "0.0.0.0:0"}, "not a loopback address"},
		{[]string{"--addr", "192.0.2.1:8322", "--auth-token-file", token}, "not a loopback address"},
		{[]string{"--addr", "0.0.0.0:0", "--allow-remote"}, "--allow-remote needs --auth-token-file"},
		{[]string{"--host", "gate.internal"}, "--host needs --allow-remote"},
		{[]string{"--addr", "0.0.0.0:0", "--allow-remote", "--auth-token-file", token}, "--allow-remote needs --tls-cert and --tls-key"},
		{[]string{"--addr", "0.0.0.0:0", "--allow-remote", "--auth-token-file", token, "--tls-cert", "c.pem", "--tls-key", "k.pem"}, "--host must name"},
		{[]string{"--tls-cert", "c.pem"}, "--tls-cert and --tls-key go together"},
		{[]string{"--max-checks-bytes", "0"}, "--max-checks-bytes must be positive"},
		{[]string{"examples/refused-plan.yaml"}, "takes no arguments"},
		{[]string{"--addr", "nope"}, "--addr"},
		{[]string{"--timeout", "0s"}, "--timeout must be positive"},
	} {
		var stdout, stderr strings.Builder
		code := Run(context.Background(), append([]string{"playground"}, c.args...), nil, &stdout, &stderr)
		if code != exitError || !strings.Contains(stderr.String(), c.says) || strings.Count(stderr.String(), "\n") != 1 {
			t.Errorf("playground %v: exit %d, stderr %q; want 2 and one line saying %q", c.args, code, stderr.String(), c.says)
		}
	}
}

// TestPlaygroundServesAndStops: the command prints where it listens,
// serves the page there (over TLS with --tls-cert and --tls-key), and
// exits 0 once its context ends.
func TestPlaygroundServesAndStops(t *testing.T) {
	cert, _, certFile, keyFile := certificate(t, t.TempDir(), "playground", false, nil, nil)
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	for _, c := range []struct {
		name   string
		args   []string
		scheme string
		client *http.Client
	}{
		{"plain", nil, "http://127.0.0.1:", http.DefaultClient},
		{"tls", []string{"--tls-cert", certFile, "--tls-key", keyFile}, "https://127.0.0.1:",
			&http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			out, w := io.Pipe()
			done := make(chan int, 1)
			go func() {
				done <- Run(ctx, append([]string{"playground", "--addr", "127.0.0.1:0"}, c.args...), nil, w, io.Discard)
				w.Close()
			}()
			line, err := bufio.NewReader(out).ReadString('\n')
			if err != nil {
				t.Fatal(err)
			}
			go io.Copy(io.Discard, out)
			url := strings.TrimSpace(strings.TrimPrefix(line, "spawngate playground: "))
			if !strings.HasPrefix(url, c.scheme) {
				t.Fatalf("first line %q names no %s address", line, c.scheme)
			}
			res, err := c.client.Get(url)
			if err != nil {
				t.Fatal(err)
			}
			res.Body.Close()
			if res.StatusCode != 200 || !strings.Contains(res.Header.Get("Content-Security-Policy"), "default-src 'none'") {
				t.Errorf("GET /: %d, CSP %q", res.StatusCode, res.Header.Get("Content-Security-Policy"))
			}
			cancel()
			select {
			case code := <-done:
				if code != exitPass {
					t.Errorf("exit %d after stopping, want 0", code)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("the playground did not stop within 10s of its context's end")
			}
		})
	}
}
