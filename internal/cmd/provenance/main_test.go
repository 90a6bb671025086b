package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

const (
	sumA   = "1111111111111111111111111111111111111111111111111111111111111111"
	sumB   = "2222222222222222222222222222222222222222222222222222222222222222"
	sumC   = "3333333333333333333333333333333333333333333333333333333333333333"
	commit = "0123456789abcdef0123456789abcdef01234567"
)

// flags are the git facts .ci/release passes.
var flags = []string{
	"-repo", "https://github.com/spawngate/spawngate",
	"-commit", commit,
	"-ref", "refs/tags/v1.2.3",
	"-go-version", "go1.26.8",
	"-builder-id", "https://github.com/spawngate/spawngate/blob/main/.ci/release",
}

func writeChecksums(t *testing.T, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "checksums.txt")
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func runOK(t *testing.T, args ...string) []byte {
	t.Helper()
	var stdout, stderr bytes.Buffer
	if code := run(args, &stdout, &stderr); code != 0 {
		t.Fatalf("run %v: exit %d, stderr %s", args, code, stderr.String())
	}
	if stderr.Len() > 0 {
		t.Fatalf("stderr on success: %s", stderr.String())
	}
	return stdout.Bytes()
}

// The statement names exactly the artifacts of the checksums file, each
// with its digest, sorted by name, and the source the flags gave.
func TestSubjectsAreTheChecksums(t *testing.T) {
	p := writeChecksums(t, sumB+"  spawngate_1.2.3_linux_amd64.tar.gz\n"+
		sumA+"  spawngate_1.2.3_darwin_arm64.tar.gz\n"+
		sumC+" *spawngate_1.2.3_windows_amd64.zip\n")
	out := runOK(t, append([]string{"-checksums", p}, flags...)...)
	var st struct {
		Type    string `json:"_type"`
		Subject []struct {
			Name   string
			Digest map[string]string
		}
		PredicateType string
		Predicate     struct {
			BuildDefinition struct {
				BuildType          string
				ExternalParameters struct {
					Source struct{ Repository, Ref, Commit string }
				}
				ResolvedDependencies []struct {
					URI    string
					Digest map[string]string
				}
			}
			RunDetails struct {
				Builder  struct{ ID string }
				Metadata *json.RawMessage
			}
		}
	}
	if err := json.Unmarshal(out, &st); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if st.Type != "https://in-toto.io/Statement/v1" || st.PredicateType != "https://slsa.dev/provenance/v1" {
		t.Errorf("_type %q, predicateType %q", st.Type, st.PredicateType)
	}
	var got []string
	for _, s := range st.Subject {
		if len(s.Digest) != 1 {
			t.Errorf("%s: digests %v, want sha256 alone", s.Name, s.Digest)
		}
		got = append(got, s.Name+" "+s.Digest["sha256"])
	}
	want := []string{
		"spawngate_1.2.3_darwin_arm64.tar.gz " + sumA,
		"spawngate_1.2.3_linux_amd64.tar.gz " + sumB,
		"spawngate_1.2.3_windows_amd64.zip " + sumC,
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("subjects\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	bd := st.Predicate.BuildDefinition
	if src := bd.ExternalParameters.Source; src.Repository != flags[1] || src.Commit != commit || src.Ref != "refs/tags/v1.2.3" {
		t.Errorf("source %+v", src)
	}
	if !strings.HasPrefix(bd.BuildType, "https://github.com/spawngate/spawngate/") {
		t.Errorf("buildType %q does not name this project's build", bd.BuildType)
	}
	if len(bd.ResolvedDependencies) != 1 || bd.ResolvedDependencies[0].Digest["gitCommit"] != commit ||
		bd.ResolvedDependencies[0].URI != "git+https://github.com/spawngate/spawngate@refs/tags/v1.2.3" {
		t.Errorf("resolvedDependencies %+v", bd.ResolvedDependencies)
	}
	if st.Predicate.RunDetails.Builder.ID != flags[9] {
		t.Errorf("builder.id %q", st.Predicate.RunDetails.Builder.ID)
	}
	// No time unless one is passed: the same build gives the same bytes.
	if st.Predicate.RunDetails.Metadata != nil {
		t.Errorf("metadata %s, with no time or invocation passed", *st.Predicate.RunDetails.Metadata)
	}
}

// The same checksums and flags give the same bytes, whatever the order of
// the checksums file's lines; a time is in them only when passed.
func TestDeterministic(t *testing.T) {
	one := writeChecksums(t, sumA+"  a.tar.gz\n"+sumB+"  b.zip\n"+sumC+"  checksums-of-nothing.txt\n")
	two := writeChecksums(t, "\n"+sumC+"  checksums-of-nothing.txt\n"+sumB+"  b.zip\r\n"+sumA+"  a.tar.gz")
	first := runOK(t, append([]string{"-checksums", one}, flags...)...)
	if again := runOK(t, append([]string{"-checksums", one}, flags...)...); !bytes.Equal(first, again) {
		t.Fatalf("two runs differ:\n%s\n%s", first, again)
	}
	if other := runOK(t, append([]string{"-checksums", two}, flags...)...); !bytes.Equal(first, other) {
		t.Fatalf("the order of the lines changed the statement:\n%s\n%s", first, other)
	}
	timed := runOK(t, append([]string{"-checksums", one, "-started", "2026-09-29T10:00:00+02:00",
		"-finished", "2026-09-29T08:05:00Z", "-invocation-id", "https://example.com/run/1"}, flags...)...)
	for _, want := range []string{`"startedOn": "2026-09-29T08:00:00Z"`, `"finishedOn": "2026-09-29T08:05:00Z"`, `"invocationId": "https://example.com/run/1"`} {
		if !bytes.Contains(timed, []byte(want)) {
			t.Errorf("no %s in\n%s", want, timed)
		}
	}
	// Written to a file, the same bytes.
	p := filepath.Join(t.TempDir(), "provenance.intoto.json")
	runOK(t, append([]string{"-checksums", one, "-o", p}, flags...)...)
	if b, err := os.ReadFile(p); err != nil || !bytes.Equal(b, first) {
		t.Fatalf("-o wrote %q (%v), want the stdout bytes", b, err)
	}
}

// A checksums file that is not one is refused on one line naming the file
// and the line, and nothing is written.
func TestBadChecksums(t *testing.T) {
	for _, tc := range []struct{ name, text, want string }{
		{"short digest", sumA + "  a.tar.gz\n" + sumB[:63] + "  b.zip\n", ":2: not a sha256 checksum line"},
		{"upper case", strings.Repeat("AB", 32) + "  a.tar.gz\n", ":1: not a sha256 checksum line"},
		{"no name", sumA + "  \n", ":1: not a sha256 checksum line"},
		{"one space", sumA + " a.tar.gz\n", ":1: not a sha256 checksum line"},
		{"md5", "d41d8cd98f00b204e9800998ecf8427e  a.tar.gz\n", ":1: not a sha256 checksum line"},
		{"twice", sumA + "  a.tar.gz\n\n" + sumB + "  a.tar.gz\n", ":3: a.tar.gz is listed twice (first on line 1)"},
		{"escape", sumA + "  ../a.tar.gz\n", `:1: file name "../a.tar.gz" is not a plain relative path`},
		{"absolute", sumA + "  /etc/passwd\n", `:1: file name "/etc/passwd" is not a plain relative path`},
		{"empty", "\n\n", ": no checksum in it"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := writeChecksums(t, tc.text)
			var stdout, stderr bytes.Buffer
			code := run(append([]string{"-checksums", p}, flags...), &stdout, &stderr)
			msg := stderr.String()
			if code != 2 || stdout.Len() > 0 {
				t.Fatalf("exit %d, stdout %q", code, stdout.String())
			}
			if !strings.HasPrefix(msg, "provenance: "+p+tc.want) || strings.Count(msg, "\n") != 1 || !strings.HasSuffix(msg, "\n") {
				t.Errorf("stderr %q, want one line starting %q", msg, "provenance: "+p+tc.want)
			}
		})
	}
}

// A statement without the facts that make it one is not written.
func TestMissingFacts(t *testing.T) {
	p := writeChecksums(t, sumA+"  a.tar.gz\n")
	for i, want := range map[int]string{1: "-repo is required", 3: `-commit "" is not a full commit hash in lowercase hex`, 7: "-go-version is required", 9: "-builder-id is required"} {
		args := append([]string{"-checksums", p}, flags...)
		args[2+i] = ""
		var stdout, stderr bytes.Buffer
		if code := run(args, &stdout, &stderr); code != 2 || stderr.String() != "provenance: "+want+"\n" || stdout.Len() > 0 {
			t.Errorf("without %s: exit %d, stderr %q", flags[i-1], code, stderr.String())
		}
	}
	var stdout, stderr bytes.Buffer
	if code := run(append([]string{"-checksums", p, "-started", "yesterday"}, flags...), &stdout, &stderr); code != 2 ||
		stderr.String() != "provenance: -started \"yesterday\" is not an RFC 3339 time\n" {
		t.Errorf("-started yesterday: exit %d, stderr %q", code, stderr.String())
	}
	if code := run([]string{"-checksums", filepath.Join(t.TempDir(), "none.txt")}, &stdout, &stderr); code != 2 {
		t.Errorf("a checksums file that is not there: exit %d", code)
	}
}
