package cli

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// lockedBuffer is a buffer two goroutines may use.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

var servingAt = regexp.MustCompile(`"msg":"serving","addr":"([^"]+)"`)

// startServe runs spawngate serve in process on a free port, and returns
// its address and a function that stops it and returns its exit code.
func startServe(t *testing.T, args ...string) (string, func() int) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var stderr lockedBuffer
	done := make(chan int, 1)
	go func() {
		done <- Run(ctx, append([]string{"serve", "--addr", "127.0.0.1:0"}, args...), nil, io.Discard, &stderr)
	}()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if m := servingAt.FindStringSubmatch(stderr.String()); m != nil {
			return m[1], func() int { cancel(); return <-done }
		}
		select {
		case code := <-done:
			t.Fatalf("serve exited %d: %s", code, stderr.String())
		case <-time.After(10 * time.Millisecond):
		}
	}
	cancel()
	t.Fatalf("serve did not start: %s", stderr.String())
	return "", nil
}

// certificate makes a key pair signed by parent (itself when nil), as PEM
// files in dir.
func certificate(t *testing.T, dir, name string, isCA bool, parent *x509.Certificate, parentKey *ecdsa.PrivateKey) (*x509.Certificate, *ecdsa.PrivateKey, string, string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: isCA, BasicConstraintsValid: true,
		KeyUsage:    x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
	}
	if parent == nil {
		parent, parentKey = tmpl, key
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, &key.PublicKey, parentKey)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	certFile, keyFile := filepath.Join(dir, name+".pem"), filepath.Join(dir, name+"-key.pem")
	kder, _ := x509.MarshalECPrivateKey(key)
	os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600)
	os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}), 0o600)
	return cert, key, certFile, keyFile
}

// serve with TLS and client certificates, and a bearer token from a file:
// a client without a certificate cannot connect, one with a certificate
// but no token is refused, one with both is judged.
func TestServeTLSClientCertificatesAndToken(t *testing.T) {
	dir := t.TempDir()
	ca, caKey, caFile, _ := certificate(t, dir, "ca", true, nil, nil)
	_, _, serverCert, serverKey := certificate(t, dir, "server", false, ca, caKey)
	_, _, clientCert, clientKey := certificate(t, dir, "client", false, ca, caKey)
	token := filepath.Join(dir, "token")
	os.WriteFile(token, []byte("t0ken\n"), 0o600)
	addr, stop := startServe(t, "--policy", filepath.Join("..", "..", "examples", "policy.yaml"),
		"--tls-cert", serverCert, "--tls-key", serverKey, "--tls-client-ca", caFile, "--auth-token-file", token)
	pool := x509.NewCertPool()
	pool.AddCert(ca)
	pair, err := tls.LoadX509KeyPair(clientCert, clientKey)
	if err != nil {
		t.Fatal(err)
	}
	client := func(certs []tls.Certificate) *http.Client {
		return &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, Certificates: certs}}}
	}
	plan, _ := os.ReadFile(filepath.Join("..", "..", "examples", "authorized-plan.json"))
	ask := func(c *http.Client, withToken bool) (int, error) {
		req, _ := http.NewRequest(http.MethodPost, "https://"+addr+"/v1/check", bytes.NewReader(plan))
		req.Header.Set("Content-Type", "application/json")
		if withToken {
			req.Header.Set("Authorization", "Bearer t0ken")
		}
		res, err := c.Do(req)
		if err != nil {
			return 0, err
		}
		res.Body.Close()
		return res.StatusCode, nil
	}
	if _, err := ask(client(nil), true); err == nil {
		t.Fatal("a client without a certificate was answered")
	}
	if code, err := ask(client([]tls.Certificate{pair}), false); err != nil || code != http.StatusUnauthorized {
		t.Fatalf("no token: %d %v", code, err)
	}
	if code, err := ask(client([]tls.Certificate{pair}), true); err != nil || code != http.StatusOK {
		t.Fatalf("certificate and token: %d %v", code, err)
	}
	if code := stop(); code != exitPass {
		t.Fatalf("serve exited %d when stopped", code)
	}
}

// serve refuses to start without what it needs, each with one line.
func TestServeUsage(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "serve needs --policy FILE"},
		{[]string{"--policy", "missing.yaml", "--addr", "127.0.0.1:0"}, "--policy missing.yaml: cannot read"},
		{[]string{"--policy", "x.yaml", "--tls-cert", "c.pem"}, "--tls-cert and --tls-key go together"},
		{[]string{"--policy", "x.yaml", "--max-concurrent", "0"}, "--max-concurrent must be positive"},
		{[]string{"--policy", "x.yaml", "extra"}, "serve takes no arguments"},
		{[]string{"--policy", "x.yaml", "--max-waiting", "0"}, "--max-waiting must be positive"},
		{[]string{"--policy", "x.yaml", "--metrics-auth"}, "--metrics-auth needs --auth-token-file"},
	} {
		var stderr bytes.Buffer
		code := Run(context.Background(), append([]string{"serve"}, tc.args...), nil, io.Discard, &stderr)
		if code != exitError || !strings.Contains(stderr.String(), tc.want) || strings.Count(stderr.String(), "\n") != 1 {
			t.Errorf("%v: exit %d, stderr %q, want %q", tc.args, code, stderr.String(), tc.want)
		}
	}
}

// /metrics is open by default, also with a token, for scrapers that carry
// none; --metrics-auth makes it ask for the token; the probes never do.
func TestServeMetricsAuth(t *testing.T) {
	token := filepath.Join(t.TempDir(), "token")
	os.WriteFile(token, []byte("t0ken\n"), 0o600)
	for _, metricsAuth := range []bool{false, true} {
		args := []string{"--policy", filepath.Join("..", "..", "examples", "policy.yaml"), "--auth-token-file", token}
		if metricsAuth {
			args = append(args, "--metrics-auth")
		}
		addr, stop := startServe(t, args...)
		get := func(path, auth string) int {
			req, _ := http.NewRequest(http.MethodGet, "http://"+addr+path, nil)
			if auth != "" {
				req.Header.Set("Authorization", auth)
			}
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			res.Body.Close()
			return res.StatusCode
		}
		want := http.StatusOK
		if metricsAuth {
			want = http.StatusUnauthorized
		}
		if got := get("/metrics", ""); got != want {
			t.Errorf("--metrics-auth=%v: /metrics without the token: %d, want %d", metricsAuth, got, want)
		}
		if got := get("/metrics", "Bearer t0ken"); got != http.StatusOK {
			t.Errorf("--metrics-auth=%v: /metrics with the token: %d", metricsAuth, got)
		}
		if a, b := get("/healthz", ""), get("/readyz", ""); a != http.StatusOK || b != http.StatusOK {
			t.Errorf("--metrics-auth=%v: the probes asked for the token: %d %d", metricsAuth, a, b)
		}
		if code := stop(); code != exitPass {
			t.Fatalf("serve exited %d when stopped", code)
		}
	}
}
