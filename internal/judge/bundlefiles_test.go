package judge_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"

	"github.com/open-policy-agent/opa/v1/bundle"

	"github.com/spawngate/spawngate/internal/judge"
)

// entry is one file of a hand-made bundle archive.
type entry struct {
	name string
	data []byte
	typ  byte // tar.TypeReg unless set
}

// junk is a comment-only module of n bytes: it compresses about a
// thousand times, so a small archive holds a great many of them.
func junk(n int) []byte {
	b := bytes.Repeat([]byte("x"), n)
	b[0] = '#'
	return b
}

// signature is the .signatures.json entry opa sign would write for the
// files, with the private key (PEM) and alg.
func signature(t testing.TB, files []entry, key, alg string) entry {
	t.Helper()
	var infos []bundle.FileInfo
	for _, f := range files {
		sum := sha256.Sum256(f.data)
		infos = append(infos, bundle.NewFile(strings.TrimPrefix(f.name, "/"), hex.EncodeToString(sum[:]), "SHA-256"))
	}
	token, err := bundle.GenerateSignedToken(infos, bundle.NewSigningConfig(key, alg, ""), "default")
	if err != nil {
		t.Fatal(err)
	}
	data, err := json.Marshal(bundle.SignaturesConfig{Signatures: []string{token}})
	if err != nil {
		t.Fatal(err)
	}
	return entry{name: "/.signatures.json", data: data}
}

// writeArchive writes the entries, in their order, as a .tar.gz.
func writeArchive(t testing.TB, dir string, entries []entry) string {
	t.Helper()
	var out bytes.Buffer
	gw, err := gzip.NewWriterLevel(&out, gzip.BestCompression)
	if err != nil {
		t.Fatal(err)
	}
	tw := tar.NewWriter(gw)
	for _, e := range entries {
		typ := e.typ
		if typ == 0 {
			typ = tar.TypeReg
		}
		if err := tw.WriteHeader(&tar.Header{Name: e.name, Mode: 0o644, Size: int64(len(e.data)), Typeflag: typ}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write(e.data); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := gw.Close(); err != nil {
		t.Fatal(err)
	}
	name := filepath.Join(dir, "hostile.tar.gz")
	if err := os.WriteFile(name, out.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return name
}

// allocated is how many bytes the heap gave out while f ran: what a
// reader held, even for a moment, whenever the collector ran.
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// A hostile bundle is refused having held little of it: the decompressed
// bundle is held to --max-bytes, the signature is verified before any
// other file is held, an unsigned bundle is refused without holding a
// file when a key is required, and a file the signature does not list, or
// lists with another digest, stops the reading there (before what would
// go over the budget). A signed file missing, or a second signature, is
// refused too.
func TestHostileBundles(t *testing.T) {
	const (
		budget = 4 << 20 // --max-bytes for these bundles
		each   = 3 << 20 // each junk module: under the budget alone
		many   = 12      // junk modules: 36 MiB in all
		held   = 1 << 20 // what refusing one may allocate: none of its junk
	)
	signer, other := rsaKeys(t), rsaKeys(t)
	junkFiles := func(n int) []entry {
		var files []entry
		for i := range n {
			files = append(files, entry{name: "/checks/junk" + string(rune('a'+i)) + ".rego", data: junk(each)})
		}
		return files
	}
	small := []entry{{name: "/checks/no_http.rego", data: []byte(noHTTP)}}
	tampered := []entry{{name: "/checks/no_http.rego", data: []byte(strings.ReplaceAll(noHTTP, `"http.get" in child.tools`, "false"))}}
	tests := []struct {
		name    string
		entries func() []entry
		key     string // the public key to verify with
		want    string
		limit   bool // a --max-bytes error
	}{
		{
			name:    "many large modules, unsigned",
			entries: func() []entry { return junkFiles(many) },
			want:    "holds more than 4194304 bytes (at checks/junkb.rego)",
			limit:   true,
		},
		{
			name:    "many large modules, unsigned, and a key given",
			entries: func() []entry { return junkFiles(many) },
			key:     signer.public,
			want:    "holds more than 4194304 bytes (at checks/junkb.rego)",
			limit:   true,
		},
		{
			name: "large entries that are not files",
			entries: func() []entry {
				return append(append([]entry{}, small...), entry{name: "/x", data: junk(each), typ: 'Z'}, entry{name: "/y", data: junk(each), typ: 'Z'})
			},
			want:  "holds more than 4194304 bytes (after checks/no_http.rego)",
			limit: true,
		},
		{
			name:    "one large module, unsigned, and a key given",
			entries: func() []entry { return junkFiles(1) },
			key:     signer.public,
			want:    "is not signed (it holds no .signatures.json), and a verification key is given",
		},
		{
			name: "many large modules, a wrong signature at the end",
			entries: func() []entry {
				files := junkFiles(many)
				return append(files, signature(t, files, signer.private, "RS256"))
			},
			key:   other.public,
			want:  "holds more than 4194304 bytes (at checks/junkb.rego)",
			limit: true,
		},
		{
			name: "one large module, a wrong signature at the end",
			entries: func() []entry {
				files := junkFiles(1)
				return append(files, signature(t, files, signer.private, "RS256"))
			},
			key:  other.public,
			want: "the signature does not verify with the key given: failed to verify JWT signature",
		},
		{
			// The reading stops at the signature: the modules after it
			// would go over the budget.
			name: "a wrong signature first, then more than the budget",
			entries: func() []entry {
				files := junkFiles(many)
				return append([]entry{signature(t, files, signer.private, "RS256")}, files...)
			},
			key:  other.public,
			want: "the signature does not verify with the key given: failed to verify JWT signature",
		},
		{
			// The reading stops at the first file not listed, before
			// what would go over the budget.
			name: "a signature first, a signed module, then modules it does not list",
			entries: func() []entry {
				return append(append([]entry{signature(t, small, signer.private, "RS256")}, small...), junkFiles(many)...)
			},
			key:  signer.public,
			want: "file checks/junka.rego is not listed in the signature",
		},
		{
			// The reading stops at the first digest that differs.
			name: "a signature first, a module changed after signing, then more than the budget",
			entries: func() []entry {
				signed := append(append([]entry{}, small...), junkFiles(many)...)
				return append(append([]entry{signature(t, signed, signer.private, "RS256")}, tampered...), junkFiles(many)...)
			},
			key:  signer.public,
			want: "checks/no_http.rego: digest mismatch",
		},
		{
			name: "a signed file missing",
			entries: func() []entry {
				signed := append(append([]entry{}, small...), junkFiles(1)...)
				return append(append([]entry{}, small...), signature(t, signed, signer.private, "RS256"))
			},
			key:  signer.public,
			want: "the signature does not verify with the key given: it lists checks/junka.rego, which the bundle does not hold",
		},
		{
			name: "a second signature",
			entries: func() []entry {
				sig := signature(t, small, signer.private, "RS256")
				second := sig
				second.name = "/checks/.signatures.json"
				return append(append([]entry{sig}, small...), second)
			},
			key:  signer.public,
			want: "holds more than one .signatures.json (checks/.signatures.json is another)",
		},
		{
			name: "a signed bundle, and no key given",
			entries: func() []entry {
				files := junkFiles(1)
				return append(files, signature(t, files, signer.private, "RS256"))
			},
			want: "is signed (it holds .signatures.json), and no verification key is given",
		},
	}
	// What the gate sets up once per process is not what a bundle costs.
	warm := bundleOptions(writeArchive(t, t.TempDir(), small), "", "")
	warm.ListOnly = true // a bundle of checks alone
	if _, err := judge.New(context.Background(), warm, ""); err != nil {
		t.Fatal(err)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			name := writeArchive(t, dir, tt.entries())
			key := ""
			if tt.key != "" {
				key = keyFile(t, dir, tt.key)
			}
			opts := bundleOptions(name, key, "RS256")
			opts.Limits.MaxBytes = budget
			var err error
			got := allocated(func() { _, err = judge.New(context.Background(), opts, "") })
			var e *judge.Error
			if !errors.As(err, &e) || e.Source != name || !strings.Contains(e.Msg, tt.want) {
				t.Fatalf("err %v, want an error about %s containing %q", err, name, tt.want)
			}
			if wantLimit := map[bool]string{true: "max-bytes"}[tt.limit]; e.Limit != wantLimit {
				t.Errorf("limit %q, want %q", e.Limit, wantLimit)
			}
			if got > held {
				t.Errorf("allocated %d bytes refusing it, more than %d", got, held)
			}
		})
	}
}

// The budget counts every file of a bundle folder, before each is read.
func TestBundleFolderBudget(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, map[string]string{
		"b/checks/no_http.rego": noHTTP,
		"b/checks/junk1.rego":   string(junk(3 << 10)),
		"b/checks/junk2.rego":   string(junk(3 << 10)),
	})
	opts := bundleOptions(filepath.Join(dir, "b"), "", "")
	opts.Limits.MaxBytes = 4 << 10
	_, err := judge.New(context.Background(), opts, "")
	var e *judge.Error
	if !errors.As(err, &e) || e.Source != filepath.Join(dir, "b") || e.Limit != "max-bytes" || !strings.Contains(e.Msg, "holds more than 4096 bytes (at checks/junk2.rego)") {
		t.Fatalf("err %v", err)
	}
}

// A bundle exactly at the budget is read: the budget is the most it may
// hold, tar headers included.
func TestBundleAtTheBudget(t *testing.T) {
	dir := t.TempDir()
	name := writeBundle(t, dir, testBundle(t, operatorPolicy()), "", "")
	// The size of the tar stream itself.
	raw, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	zr, err := gzip.NewReader(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	var tarBytes bytes.Buffer
	if _, err := tarBytes.ReadFrom(zr); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		max  int64
		want string
	}{
		{int64(tarBytes.Len()), ""},
		{int64(tarBytes.Len()) - 1, "holds more than"},
	} {
		opts := bundleOptions(name, "", "")
		opts.Limits.MaxBytes = tt.max
		_, err := judgeWith(t, opts, "", fetchingPlan)
		if tt.want == "" && err != nil || tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)) {
			t.Errorf("--max-bytes %d: err %v, want %q", tt.max, err, tt.want)
		}
	}
}

// Of a bundle's modules that do not parse, the first in the bundle is
// named, every time: OPA parses them at once, and would name whichever
// failed first in time.
func TestBundleParseErrorIsTheFirst(t *testing.T) {
	entries := []entry{{name: "/checks/a.rego", data: append(junk(2<<20), "\nthis is not rego\n"...)}}
	for _, n := range "bcdefgh" {
		entries = append(entries, entry{name: "/checks/" + string(n) + ".rego", data: []byte("package x\n\nthis is not rego either\n")})
	}
	name := writeArchive(t, t.TempDir(), entries)
	for range 5 {
		_, err := judge.New(context.Background(), bundleOptions(name, "", ""), "")
		named := regexp.MustCompile(`/checks/\w+\.rego`).FindAllString(fmt.Sprint(err), -1)
		if err == nil || len(named) == 0 || strings.Count(strings.Join(named, " "), "/checks/a.rego") != len(named) {
			t.Fatalf("err %v, want the errors of /checks/a.rego alone", err)
		}
	}
}
