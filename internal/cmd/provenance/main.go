// Command provenance writes the SLSA provenance of a release build made on
// this machine: an in-toto Statement v1 whose predicate is SLSA Provenance
// v1, with one subject per artifact of the build's checksums file.
// .ci/release runs it after goreleaser:
//
//	go run ./internal/cmd/provenance -checksums dist/checksums.txt \
//	    -repo https://github.com/spawngate/spawngate -commit "$(git rev-parse HEAD)" \
//	    -ref "$(git symbolic-ref -q HEAD)" -go-version "$(go env GOVERSION)" \
//	    -builder-id local:$(hostname) > dist/provenance.intoto.json
//
// The statement is UNSIGNED: it records what the build says about itself
// and proves nothing to whoever did not watch it run. The signed one, from
// the same facts, is the release workflow's (actions/attest-build-provenance,
// Sigstore-backed, verified with gh attestation verify); docs/release.md
// says which is which.
//
// The output is deterministic: the subjects sorted by name, no time
// but what -started and -finished pass, the same bytes for the same
// checksums and flags.
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"regexp"
	"sort"
	"strings"
	"time"
)

// The kinds this statement is, and the build it describes.
const (
	statementType = "https://in-toto.io/Statement/v1"
	predicateType = "https://slsa.dev/provenance/v1"
	// buildType names this project's release build: goreleaser run on
	// .goreleaser.yaml at the source commit, as docs/release.md describes.
	buildType = "https://github.com/spawngate/spawngate/blob/main/docs/release.md#the-build-type-v1"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run is the command, for tests: 0 when the statement was written, 2 on a
// usage error or a checksums file it cannot read, with one line on stderr.
func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("provenance", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var o options
	fs.StringVar(&o.checksums, "checksums", "dist/checksums.txt", "the build's checksums file (sha256sum's format)")
	fs.StringVar(&o.repo, "repo", "", "the source repository's URL (required)")
	fs.StringVar(&o.commit, "commit", "", "the source commit, in full hex (required)")
	fs.StringVar(&o.ref, "ref", "", "the ref built, such as refs/tags/v1.2.3 (empty for a detached head)")
	fs.StringVar(&o.goVersion, "go-version", "", "the Go toolchain that built it, such as go1.26.8 (required)")
	fs.StringVar(&o.builderID, "builder-id", "", "who ran the build, as a URI (required)")
	fs.StringVar(&o.invocationID, "invocation-id", "", "this run of the build, as a URI (optional)")
	fs.StringVar(&o.started, "started", "", "when the build started, RFC 3339 (optional)")
	fs.StringVar(&o.finished, "finished", "", "when the build finished, RFC 3339 (optional)")
	fs.StringVar(&o.output, "o", "-", "where to write the statement (- for stdout)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "provenance: unexpected argument %q\n", fs.Arg(0))
		return 2
	}
	data, err := os.ReadFile(o.checksums)
	if err != nil {
		fmt.Fprintf(stderr, "provenance: %v\n", err)
		return 2
	}
	subjects, err := parseChecksums(o.checksums, data)
	if err != nil {
		fmt.Fprintf(stderr, "provenance: %v\n", err)
		return 2
	}
	out, err := statement(o, subjects)
	if err != nil {
		fmt.Fprintf(stderr, "provenance: %v\n", err)
		return 2
	}
	if o.output == "-" {
		_, err = stdout.Write(out)
	} else {
		err = os.WriteFile(o.output, out, 0o644)
	}
	if err != nil {
		fmt.Fprintf(stderr, "provenance: %v\n", err)
		return 2
	}
	return 0
}

type options struct {
	checksums, repo, commit, ref, goVersion, builderID, invocationID, started, finished, output string
}

// subject is one artifact the statement speaks of, by name and digest.
type subject struct {
	Name   string            `json:"name"`
	Digest map[string]string `json:"digest"`
}

var (
	// checksumLine is a line of sha256sum's output: the digest in hex, a
	// space, a space or '*' (binary mode), the file's name.
	checksumLine = regexp.MustCompile(`^([0-9a-f]{64}) [ *](.+)$`)
	commitHex    = regexp.MustCompile(`^(?:[0-9a-f]{40}|[0-9a-f]{64})$`)
)

// parseChecksums reads a checksums file into subjects sorted by name. A
// line that is not a checksum, a name given twice or no line at all is an
// error of one line naming file:line.
func parseChecksums(name string, data []byte) ([]subject, error) {
	var subjects []subject
	seen := map[string]int{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSuffix(sc.Text(), "\r")
		if strings.TrimSpace(line) == "" {
			continue
		}
		m := checksumLine.FindStringSubmatch(line)
		if m == nil {
			return nil, fmt.Errorf("%s:%d: not a sha256 checksum line (64 lowercase hex digits, two spaces, a file name): %.60q", name, n, line)
		}
		file := m[2]
		if strings.ContainsAny(file, "\\") || strings.HasPrefix(file, "/") || strings.Contains("/"+file+"/", "/../") {
			return nil, fmt.Errorf("%s:%d: file name %q is not a plain relative path", name, n, file)
		}
		if first, ok := seen[file]; ok {
			return nil, fmt.Errorf("%s:%d: %s is listed twice (first on line %d)", name, n, file, first)
		}
		seen[file] = n
		subjects = append(subjects, subject{Name: file, Digest: map[string]string{"sha256": m[1]}})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %v", name, err)
	}
	if len(subjects) == 0 {
		return nil, fmt.Errorf("%s: no checksum in it: a statement about nothing attests nothing", name)
	}
	sort.Slice(subjects, func(i, j int) bool { return subjects[i].Name < subjects[j].Name })
	return subjects, nil
}

// The statement's shape: in-toto Statement v1 around SLSA Provenance v1
// (https://slsa.dev/spec/v1.0/provenance). Struct fields keep the order
// of the output fixed.
type (
	inTotoStatement struct {
		Type          string     `json:"_type"`
		Subject       []subject  `json:"subject"`
		PredicateType string     `json:"predicateType"`
		Predicate     provenance `json:"predicate"`
	}
	provenance struct {
		BuildDefinition buildDefinition `json:"buildDefinition"`
		RunDetails      runDetails      `json:"runDetails"`
	}
	buildDefinition struct {
		BuildType            string               `json:"buildType"`
		ExternalParameters   externalParameters   `json:"externalParameters"`
		InternalParameters   internalParameters   `json:"internalParameters"`
		ResolvedDependencies []resourceDescriptor `json:"resolvedDependencies"`
	}
	externalParameters struct {
		Source source `json:"source"`
	}
	source struct {
		Repository string `json:"repository"`
		Ref        string `json:"ref,omitempty"`
		Commit     string `json:"commit"`
	}
	internalParameters struct {
		GoVersion string `json:"goVersion"`
	}
	resourceDescriptor struct {
		URI    string            `json:"uri"`
		Digest map[string]string `json:"digest"`
	}
	runDetails struct {
		Builder  builder   `json:"builder"`
		Metadata *metadata `json:"metadata,omitempty"`
	}
	builder struct {
		ID string `json:"id"`
	}
	metadata struct {
		InvocationID string `json:"invocationId,omitempty"`
		StartedOn    string `json:"startedOn,omitempty"`
		FinishedOn   string `json:"finishedOn,omitempty"`
	}
)

// statement renders the statement as indented JSON ending in a newline.
func statement(o options, subjects []subject) ([]byte, error) {
	switch {
	case o.repo == "":
		return nil, errors.New("-repo is required")
	case !commitHex.MatchString(o.commit):
		return nil, fmt.Errorf("-commit %q is not a full commit hash in lowercase hex", o.commit)
	case o.goVersion == "":
		return nil, errors.New("-go-version is required")
	case o.builderID == "":
		return nil, errors.New("-builder-id is required")
	}
	var md metadata
	md.InvocationID = o.invocationID
	for _, t := range []struct {
		flag, value string
		into        *string
	}{{"-started", o.started, &md.StartedOn}, {"-finished", o.finished, &md.FinishedOn}} {
		if t.value == "" {
			continue
		}
		ts, err := time.Parse(time.RFC3339, t.value)
		if err != nil {
			return nil, fmt.Errorf("%s %q is not an RFC 3339 time", t.flag, t.value)
		}
		*t.into = ts.UTC().Format(time.RFC3339)
	}
	st := inTotoStatement{
		Type:          statementType,
		Subject:       subjects,
		PredicateType: predicateType,
		Predicate: provenance{
			BuildDefinition: buildDefinition{
				BuildType: buildType,
				ExternalParameters: externalParameters{Source: source{
					Repository: o.repo,
					Ref:        o.ref,
					Commit:     o.commit,
				}},
				InternalParameters: internalParameters{GoVersion: o.goVersion},
				ResolvedDependencies: []resourceDescriptor{{
					URI:    "git+" + strings.TrimPrefix(o.repo, "git+") + refSuffix(o.ref),
					Digest: map[string]string{"gitCommit": o.commit},
				}},
			},
			RunDetails: runDetails{Builder: builder{ID: o.builderID}},
		},
	}
	if md != (metadata{}) {
		st.Predicate.RunDetails.Metadata = &md
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(st); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// refSuffix is the ref as SPDX's download location names it (git+URL@ref),
// which is how GitHub's own provenance names the source.
func refSuffix(ref string) string {
	if ref == "" {
		return ""
	}
	return "@" + ref
}
