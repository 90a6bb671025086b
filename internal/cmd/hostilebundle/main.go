// Command hostilebundle writes the hostile bundles of issue 20 (item 9) to
// measure what a refusal costs: a .tar.gz of comment-only .rego files, each
// compressing about a thousand times, optionally signed (verify it with
// another key for a wrong signature):
//
//	go run ./internal/cmd/hostilebundle -files 10 -o wrong.tar.gz -sign private.pem
//	spawngate check --bundle wrong.tar.gz --bundle-verification-key other.pem plan.yaml
//
// The files are streamed to the archive: the generator holds one line.
package main

import (
	"archive/tar"
	"bufio"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/open-policy-agent/opa/v1/bundle"
)

func main() {
	files := flag.Int("files", 10, "comment-only .rego files in the bundle")
	size := flag.Int64("bytes", 30<<20, "size of each file")
	out := flag.String("o", "hostile.tar.gz", "the bundle `FILE` to write")
	sign := flag.String("sign", "", "sign with the private key in this PEM `FILE` (RS256)")
	lineBytes := flag.Int("line", 1<<20, "length of each comment line: the longer, the better it compresses")
	flag.Parse()
	line = "#" + strings.Repeat("x", max(*lineBytes, 2)-2) + "\n"
	if err := write(*out, *files, *size, *sign); err != nil {
		fmt.Fprintln(os.Stderr, "hostilebundle:", err)
		os.Exit(1)
	}
}

// line is one comment line: the files are these lines over and over.
var line string

func write(name string, files int, size int64, signKey string) error {
	f, err := os.Create(name)
	if err != nil {
		return err
	}
	defer f.Close()
	bw := bufio.NewWriter(f)
	gw, err := gzip.NewWriterLevel(bw, gzip.BestCompression)
	if err != nil {
		return err
	}
	tw := tar.NewWriter(gw)
	var signed []bundle.FileInfo
	for i := range files {
		path := fmt.Sprintf("checks/junk%03d.rego", i)
		if err := tw.WriteHeader(&tar.Header{Name: "/" + path, Mode: 0o644, Size: size, Typeflag: tar.TypeReg}); err != nil {
			return err
		}
		h := sha256.New()
		if err := content(io.MultiWriter(tw, h), size); err != nil {
			return err
		}
		signed = append(signed, bundle.NewFile(path, hex.EncodeToString(h.Sum(nil)), "SHA-256"))
	}
	if signKey != "" {
		key, err := os.ReadFile(signKey)
		if err != nil {
			return err
		}
		token, err := bundle.GenerateSignedToken(signed, bundle.NewSigningConfig(string(key), "RS256", ""), "default")
		if err != nil {
			return err
		}
		sig, err := json.Marshal(bundle.SignaturesConfig{Signatures: []string{token}})
		if err != nil {
			return err
		}
		if err := tw.WriteHeader(&tar.Header{Name: "/.signatures.json", Mode: 0o644, Size: int64(len(sig)), Typeflag: tar.TypeReg}); err != nil {
			return err
		}
		if _, err := tw.Write(sig); err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	if err := gw.Close(); err != nil {
		return err
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	return f.Close()
}

// content writes size bytes of comment lines.
func content(w io.Writer, size int64) error {
	bw := bufio.NewWriterSize(w, 1<<16)
	for size > 0 {
		n := min(size, int64(len(line)))
		if _, err := bw.WriteString(line[:n]); err != nil {
			return err
		}
		size -= n
	}
	return bw.Flush()
}
