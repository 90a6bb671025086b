package judge_test

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/open-policy-agent/opa/v1/bundle"

	"github.com/spawngate/spawngate/internal/judge"
	"github.com/spawngate/spawngate/policy"
)

// keyPair is a private key to sign with, and the public key to verify
// with, both PEM, as opa build --signing-key and opa run
// --verification-key take them.
type keyPair struct{ private, public string }

func rsaKeys(t testing.TB) keyPair {
	t.Helper()
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	return pemPair(t, k, &k.PublicKey)
}

func ecdsaKeys(t testing.TB) keyPair {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return pemPair(t, k, &k.PublicKey)
}

func pemPair(t testing.TB, private, public any) keyPair {
	t.Helper()
	der, err := x509.MarshalPKCS8PrivateKey(private)
	if err != nil {
		t.Fatal(err)
	}
	pub, err := x509.MarshalPKIXPublicKey(public)
	if err != nil {
		t.Fatal(err)
	}
	return keyPair{
		private: string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})),
		public:  string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pub})),
	}
}

// testBundle is the bundle opa build would make of a folder holding the
// no_http check (with a test beside it), copies of the built-in modules
// and, in spawngate/policy/data.json, the operator policy.
func testBundle(t testing.TB, pol map[string]any) bundle.Bundle {
	t.Helper()
	b := bundle.Bundle{Data: map[string]any{}, Manifest: bundle.Manifest{Revision: "r1"}}
	if pol != nil {
		b.Data["spawngate"] = map[string]any{"policy": pol}
	}
	add := func(path, src string) {
		b.Modules = append(b.Modules, bundle.ModuleFile{URL: path, Path: path, Raw: []byte(src)})
	}
	add("/checks/no_http.rego", noHTTP)
	add("/checks/no_http_test.rego", "package spawngate.checks.no_http_test\n\nimport data.spawngate.checks.no_http\n\n"+
		"test_fetching_denied if {\n\tcount(no_http.deny) == 1 with input as {\"policies\": {}, \"children\": [{\"tools\": [\"http.get\"]}]}\n}\n")
	builtins, err := policy.Modules()
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range builtins {
		add("/spawngate-builtins/"+m.Name, m.Source)
	}
	return b
}

func operatorPolicy() map[string]any {
	return map[string]any{"allowed_tools": []any{"fs.read", "http.get"}, "workspace_root": "/repo/workspace", "budget_cap_tokens": json.Number("200000")}
}

// writeBundle writes b as a .tar.gz, signed with the private key (PEM, or
// an HMAC secret) when one is given.
func writeBundle(t testing.TB, dir string, b bundle.Bundle, key, alg string) string {
	t.Helper()
	if key != "" {
		if err := b.GenerateSignature(bundle.NewSigningConfig(key, alg, ""), "default", false); err != nil {
			t.Fatal(err)
		}
	}
	var out bytes.Buffer
	if err := bundle.NewWriter(&out).Write(b); err != nil {
		t.Fatal(err)
	}
	name := filepath.Join(dir, "bundle.tar.gz")
	if err := os.WriteFile(name, out.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return name
}

func bundleOptions(name, keyFile, alg string) judge.Options {
	opts := judge.DefaultOptions()
	opts.Bundle = name
	if keyFile != "" {
		opts.BundleKey = &judge.BundleKey{File: keyFile, Alg: alg}
	}
	return opts
}

func keyFile(t testing.TB, dir, key string) string {
	t.Helper()
	name := filepath.Join(dir, "key.pem")
	if err := os.WriteFile(name, []byte(key), 0o600); err != nil {
		t.Fatal(err)
	}
	return name
}

// A bundle carries the operator's checks and policy: it judges like
// --policy with --checks, and the copies of the built-in modules it
// carries for opa build are left out.
func TestBundleCarriesChecksAndPolicy(t *testing.T) {
	dir := t.TempDir()
	name := writeBundle(t, dir, testBundle(t, operatorPolicy()), "", "")
	g, err := judge.New(context.Background(), bundleOptions(name, "", ""), "")
	if err != nil {
		t.Fatal(err)
	}
	res, err := g.JudgeBytes(context.Background(), "plan.json", []byte(fetchingPlan), 10)
	if err != nil {
		t.Fatal(err)
	}
	if got := rulesOf(res); got != "org.no-http" || strings.Join(res.Policies, ",") != "operator" {
		t.Fatalf("rules %q, policies %v", got, res.Policies)
	}
	src := g.Sources()
	if src.Policy != name || src.PolicyDigest == "" || len(src.Modules) != 1 || src.Modules[0] != name+"/checks/no_http.rego" {
		t.Fatalf("sources %+v", src)
	}
}

// Signatures, as opa run checks them: a bundle signed with the key given
// is read; a wrong key, a changed file, a signed bundle with no key and an
// unsigned bundle with a key are errors naming the bundle.
func TestBundleSignatures(t *testing.T) {
	rsaPair, ecPair, other := rsaKeys(t), ecdsaKeys(t), rsaKeys(t)
	tests := []struct {
		name            string
		signWith, alg   string
		verifyWith      string
		tamper          bool
		want            string // "" for a bundle that is read
		wantSourceIsKey bool
	}{
		{name: "RSA signature", signWith: rsaPair.private, alg: "RS256", verifyWith: rsaPair.public},
		{name: "ECDSA signature", signWith: ecPair.private, alg: "ES256", verifyWith: ecPair.public},
		{name: "HMAC secret", signWith: "a shared secret", alg: "HS256", verifyWith: "a shared secret"},
		{name: "unsigned, no key", alg: "RS256"},
		{name: "a wrong key", signWith: rsaPair.private, alg: "RS256", verifyWith: other.public, want: "the signature does not verify with the key given: failed to verify JWT signature"},
		{name: "a wrong secret", signWith: "a shared secret", alg: "HS256", verifyWith: "another secret", want: "the signature does not verify with the key given"},
		{name: "a file changed after signing", signWith: rsaPair.private, alg: "RS256", verifyWith: rsaPair.public, tamper: true, want: "checks/no_http.rego: digest mismatch"},
		{name: "signed, and no key given", signWith: rsaPair.private, alg: "RS256", want: "is signed (it holds .signatures.json), and no verification key is given"},
		{name: "unsigned, and a key given", alg: "RS256", verifyWith: rsaPair.public, want: "is not signed (it holds no .signatures.json), and a verification key is given"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			b := testBundle(t, operatorPolicy())
			name := writeBundle(t, dir, b, tt.signWith, tt.alg)
			if tt.tamper {
				// The signature of the original, over a bundle whose check
				// no longer refuses anything.
				if err := b.GenerateSignature(bundle.NewSigningConfig(tt.signWith, tt.alg, ""), "default", false); err != nil {
					t.Fatal(err)
				}
				b.Modules[0].Raw = []byte(strings.ReplaceAll(noHTTP, `"http.get" in child.tools`, "false"))
				var out bytes.Buffer
				if err := bundle.NewWriter(&out).Write(b); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(name, out.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			key := ""
			if tt.verifyWith != "" {
				key = keyFile(t, dir, tt.verifyWith)
			}
			res, err := judgeWith(t, bundleOptions(name, key, tt.alg), "", fetchingPlan)
			if tt.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				if got := rulesOf(res); got != "org.no-http" {
					t.Fatalf("rules %q", got)
				}
				return
			}
			var e *judge.Error
			if !errors.As(err, &e) || e.Kind != judge.Document || e.Source != name || !strings.Contains(e.Msg, tt.want) {
				t.Fatalf("err %v, want a document error about %s containing %q", err, name, tt.want)
			}
		})
	}
}

// What the bundle's data may hold: the operator policy, valid as a
// --policy file, and nothing else; and the policy comes from one place.
func TestBundlePolicy(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, map[string]string{"policy.yaml": operatorYAML})
	withCap := func(cap any) map[string]any {
		p := operatorPolicy()
		p["budget_cap_tokens"] = cap
		return p
	}
	// A problem of the data is said in the data file that holds it (opa
	// build writes the bundle's data as one data.json), at its line.
	for _, tt := range []struct {
		name    string
		data    map[string]any
		policy  string
		inFile  bool // in the bundle's data.json, not about the bundle
		pointer string
		want    string
	}{
		{"an invalid policy", map[string]any{"spawngate": map[string]any{"policy": withCap(json.Number("2e5"))}}, "", true, "/spawngate/policy/budget_cap_tokens", "whole number"},
		{"a policy that names folders", map[string]any{"spawngate": map[string]any{"policy": func() map[string]any { p := operatorPolicy(); p["checks"] = []any{"x"}; return p }()}}, "", true, "/spawngate/policy/checks", "cannot name folders of checks"},
		{"other data", map[string]any{"teams": map[string]any{}, "spawngate": map[string]any{"policy": operatorPolicy()}}, "", true, "/teams", "may hold only the operator policy"},
		{"other data under spawngate", map[string]any{"spawngate": map[string]any{"policy": operatorPolicy(), "roles": 1}}, "", true, "/spawngate/roles", "may hold only the operator policy"},
		{"two operator policies", map[string]any{"spawngate": map[string]any{"policy": operatorPolicy()}}, filepath.Join(dir, "policy.yaml"), false, "/spawngate/policy", "the operator policy must come from one place"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			b := testBundle(t, nil)
			b.Data = tt.data
			name := writeBundle(t, t.TempDir(), b, "", "")
			_, err := judgeWith(t, bundleOptions(name, "", ""), tt.policy, fetchingPlan)
			source := name
			if tt.inFile {
				source = name + "/data.json"
			}
			var e *judge.Error
			if !errors.As(err, &e) || e.Source != source || e.Pointer != tt.pointer || (e.Line != 0) != tt.inFile || !strings.Contains(e.Msg, tt.want) {
				t.Fatalf("err %v (pointer %q), want %s at %s containing %q", err, e.Pointer, source, tt.pointer, tt.want)
			}
		})
	}
	// A bundle without a policy brings checks to a --policy file.
	name := writeBundle(t, t.TempDir(), testBundle(t, nil), "", "")
	res, err := judgeWith(t, bundleOptions(name, "", ""), filepath.Join(dir, "policy.yaml"), fetchingPlan)
	if err != nil || rulesOf(res) != "org.no-http" {
		t.Fatalf("rules %q, err %v", rulesOf(res), err)
	}
}

// A bundle folder is read like the archive opa build makes of it, and its
// data files by the gate's strict reader too: what YAML 1.1 would read as
// a boolean is refused, as in a --policy file.
func TestBundleFolder(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, map[string]string{
		"b/checks/no_http.rego":          noHTTP,
		"b/spawngate/policy/data.yaml":   operatorYAML,
		"bad/checks/no_http.rego":        noHTTP,
		"bad/spawngate/policy/data.yaml": operatorYAML + "allow_write: yes\n",
		"lib/checks/no_http.rego":        noHTTP,
		"lib/checks/lib.rego":            "package spawngate.lib\n\nwithin_every_cap(budget) if true\n",
	})
	res, err := judgeWith(t, bundleOptions(filepath.Join(dir, "b"), "", ""), "", fetchingPlan)
	if err != nil || rulesOf(res) != "org.no-http" {
		t.Fatalf("rules %q, err %v", rulesOf(res), err)
	}
	_, err = judgeWith(t, bundleOptions(filepath.Join(dir, "bad"), "", ""), "", fetchingPlan)
	var e *judge.Error
	if !errors.As(err, &e) || e.Source != filepath.Join(dir, "bad")+"/spawngate/policy/data.yaml" || e.Line != 4 || !strings.Contains(e.Msg, `"yes" is a boolean to YAML 1.1 parsers`) {
		t.Fatalf("err %v", err)
	}
	_, err = judgeWith(t, bundleOptions(filepath.Join(dir, "lib"), "", ""), "", fetchingPlan)
	if !errors.As(err, &e) || e.Source != filepath.Join(dir, "lib")+"/checks/lib.rego" || e.Line != 1 || !strings.Contains(e.Msg, "package spawngate.lib is built in") {
		t.Fatalf("err %v", err)
	}
}

// A gate that would judge needs the operator's policy, given or carried by
// the bundle: New refuses one without, with an error of Kind NoPolicy that
// each front end words, and reads nothing when nothing could give one. A
// gate built only to list rules needs none, and judges nothing.
func TestNewNeedsAnOperatorPolicy(t *testing.T) {
	dir := t.TempDir()
	checksOnly := writeBundle(t, dir, testBundle(t, nil), "", "")
	missing := judge.DefaultOptions()
	missing.Checks = []string{filepath.Join(dir, "no-such-folder")} // never read
	for _, tt := range []struct {
		name            string
		opts            judge.Options
		source, pointer string
	}{
		{"nothing gives one", judge.DefaultOptions(), "", ""},
		{"checks, nothing gives one", missing, "", ""},
		{"a bundle that carries none", bundleOptions(checksOnly, "", ""), checksOnly, judge.BundlePolicyPointer},
	} {
		t.Run(tt.name, func(t *testing.T) {
			g, err := judge.New(context.Background(), tt.opts, "")
			var e *judge.Error
			if !errors.As(err, &e) || e.Kind != judge.NoPolicy || e.Source != tt.source || e.Pointer != tt.pointer || g != nil {
				t.Fatalf("New: %v, %v; want no gate and an error of Kind no-policy about %q at %q", g, err, tt.source, tt.pointer)
			}
			listing := tt.opts
			listing.ListOnly = true
			listing.Checks = nil
			g, err = judge.New(context.Background(), listing, "")
			if err != nil {
				t.Fatalf("New with ListOnly: %v", err)
			}
			if rules, err := g.Rules(); err != nil || len(rules) == 0 {
				t.Fatalf("Rules: %d, %v", len(rules), err)
			}
			// A plan with a policy of its own: it never stands in for the
			// operator's.
			own := `{"policy": {"allowed_tools": ["http.get"], "workspace_root": "/w", "budget_cap_tokens": 10}, "plan": [{"role": "r", "tools": ["http.get"], "paths": [], "budget_tokens": 1}]}`
			_, err = g.JudgeBytes(context.Background(), "plan.json", []byte(own), 10)
			if !errors.As(err, &e) || e.Kind != judge.NoPolicy || e.Source != "plan.json" {
				t.Fatalf("a gate built to list rules judged: %v; want an error of Kind no-policy", err)
			}
		})
	}
}
