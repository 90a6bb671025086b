package cli

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/spawngate/spawngate/internal/document"
	"github.com/spawngate/spawngate/internal/plan"
)

// The deployment examples stay true to the command: every manifest
// parses, the container runs serve with flags serve has (the Dockerfile's
// command too), its probes are the two endpoints, and the policy in the
// ConfigMap is one the gate loads.
func TestDeploymentExamplesUseWhatExists(t *testing.T) {
	dir := filepath.Join("..", "..", "examples", "deploy")
	files, err := filepath.Glob(filepath.Join(dir, "kubernetes", "*.yaml"))
	if err != nil || len(files) < 3 {
		t.Fatalf("manifests: %v %v", files, err)
	}
	kinds := map[string]map[string]any{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		dec := yaml.NewDecoder(bytes.NewReader(data))
		for {
			var doc map[string]any
			if err := dec.Decode(&doc); errors.Is(err, io.EOF) {
				break
			} else if err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			kind, _ := doc["kind"].(string)
			kinds[kind] = doc
		}
	}
	for _, k := range []string{"Deployment", "Service", "ConfigMap"} {
		if kinds[k] == nil {
			t.Fatalf("no %s among the manifests", k)
		}
	}
	container := dig(t, kinds["Deployment"], "spec", "template", "spec", "containers").([]any)[0].(map[string]any)
	var args []string
	for _, a := range container["args"].([]any) {
		args = append(args, a.(string))
	}
	checkServeArgs(t, "deployment.yaml", args)
	for probe, path := range map[string]string{"readinessProbe": "/readyz", "livenessProbe": "/healthz"} {
		if got := dig(t, container, probe, "httpGet", "path"); got != path {
			t.Errorf("%s is %v, want %s", probe, got, path)
		}
	}
	if _, ok := dig(t, container, "resources", "limits").(map[string]any); !ok {
		t.Error("the container has no resource limits")
	}
	// A tag that moves, or none, with no pull policy: the node pulls
	// :latest from a registry and never uses the image built and loaded
	// locally.
	image, _ := container["image"].(string)
	if _, tag, ok := strings.Cut(image, ":"); !ok || tag == "latest" || container["imagePullPolicy"] != "IfNotPresent" {
		t.Errorf("image %q with pull policy %v: want a fixed tag and IfNotPresent", image, container["imagePullPolicy"])
	}
	// The pod leaves the Service as it is told to stop: the server must
	// keep answering until no more requests are routed to it (a refused
	// connection lets Claude Code's HTTP hook spawn), then have its whole
	// --shutdown-timeout and the grace to answer what outlives it.
	sleep, _ := dig(t, container, "lifecycle", "preStop", "sleep", "seconds").(int)
	if sleep <= 0 {
		t.Errorf("no preStop sleep before the server is told to stop")
	}
	opts, err := parseServe(args[1:], io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	grace, _ := dig(t, kinds["Deployment"], "spec", "template", "spec", "terminationGracePeriodSeconds").(int)
	if need := time.Duration(sleep)*time.Second + opts.shutdown + answerGrace; time.Duration(grace)*time.Second <= need {
		t.Errorf("terminationGracePeriodSeconds %d: the preStop sleep, --shutdown-timeout and the grace to answer take %s", grace, need)
	}
	policy := dig(t, kinds["ConfigMap"], "data", "policy.yaml").(string)
	l, err := plan.NewLoader(document.DefaultLimits)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.Policy(context.Background(), "policy.yaml", []byte(policy)); err != nil {
		t.Fatalf("the ConfigMap's policy does not load: %v", err)
	}
	docker, err := os.ReadFile(filepath.Join(dir, "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^CMD \[(.*)\]$`).FindSubmatch(docker)
	if m == nil {
		t.Fatal("the Dockerfile has no CMD")
	}
	var cmd []string
	for _, part := range strings.Split(string(m[1]), ",") {
		cmd = append(cmd, strings.Trim(strings.TrimSpace(part), `"`))
	}
	checkServeArgs(t, "Dockerfile", cmd)
	if !bytes.Contains(docker, []byte("USER nonroot")) || !bytes.Contains(docker, []byte("CGO_ENABLED=0")) {
		t.Error("the image is not a static binary run as non-root")
	}
	checkReleaseDockerfile(t, docker)
	// Every image a manifest runs is pinned by digest, but the one built
	// and loaded locally.
	for _, f := range files {
		data, _ := os.ReadFile(f)
		for _, m := range regexp.MustCompile(`(?m)^\s*(?:- )?image:\s*(\S+)`).FindAllSubmatch(data, -1) {
			if img := string(m[1]); img != image && !pinnedImage.MatchString(img) {
				t.Errorf("%s: image %s is not pinned by digest (name:tag@sha256:...)", filepath.Base(f), img)
			}
		}
	}
}

// pinnedImage is an image named by a tag and the digest that tag had.
var pinnedImage = regexp.MustCompile(`^[a-z0-9./_-]+:[A-Za-z0-9._-]+@sha256:[0-9a-f]{64}$`)

// The Dockerfile is the release's (.goreleaser.yaml's dockers_v2 builds
// it): it compiles nothing, takes the binary of the platform it builds
// for from where goreleaser puts it ($TARGETPLATFORM/spawngate), and
// starts from a base pinned by digest.
func checkReleaseDockerfile(t *testing.T, docker []byte) {
	t.Helper()
	froms := regexp.MustCompile(`(?m)^FROM\s+(\S+)`).FindAllSubmatch(docker, -1)
	if len(froms) != 1 {
		t.Errorf("the Dockerfile has %d stages, want one: the binary is built before it runs", len(froms))
	}
	for _, m := range froms {
		if !pinnedImage.Match(m[1]) || bytes.Contains(m[1], []byte("golang")) {
			t.Errorf("FROM %s: want the runtime base alone, pinned by digest", m[1])
		}
	}
	for _, want := range []string{"\nARG TARGETPLATFORM\n", "\nCOPY $TARGETPLATFORM/spawngate /usr/local/bin/spawngate\n"} {
		if !bytes.Contains(docker, []byte(want)) {
			t.Errorf("the Dockerfile has no line %q", strings.TrimSpace(want))
		}
	}
	if bytes.Contains(docker, []byte("\nRUN ")) {
		t.Error("the Dockerfile runs something: the distroless base has no shell, and nothing is built in it")
	}
	data, err := os.ReadFile(filepath.Join("..", "..", ".goreleaser.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var cfg struct {
		DockersV2 []struct {
			Dockerfile string   `yaml:"dockerfile"`
			Platforms  []string `yaml:"platforms"`
		} `yaml:"dockers_v2"`
	}
	if err := yaml.Unmarshal(data, &cfg); err != nil {
		t.Fatalf(".goreleaser.yaml: %v", err)
	}
	if len(cfg.DockersV2) != 1 || cfg.DockersV2[0].Dockerfile != "examples/deploy/Dockerfile" {
		t.Errorf(".goreleaser.yaml's dockers_v2 does not build examples/deploy/Dockerfile: %+v", cfg.DockersV2)
	}
}

// checkServeArgs parses a command line as spawngate serve would: it must
// be serve, and every flag one serve has.
func checkServeArgs(t *testing.T, where string, args []string) {
	t.Helper()
	if len(args) == 0 || args[0] != "serve" {
		t.Fatalf("%s does not run serve: %v", where, args)
	}
	if _, err := parseServe(args[1:], io.Discard); err != nil {
		t.Fatalf("%s: serve %v: %v", where, args[1:], err)
	}
}

func dig(t *testing.T, v any, path ...string) any {
	t.Helper()
	for _, p := range path {
		m, ok := v.(map[string]any)
		if !ok {
			t.Fatalf("no %s in %v", p, v)
		}
		v = m[p]
	}
	return v
}

// The build context leaves out the history, local binaries and local
// settings, and keeps every file the image's build reads: the Go sources
// and what they embed. Patterns are read as docker reads them: from the
// root, * within one folder, ** across folders, a folder with all it holds.
func TestDockerignore(t *testing.T) {
	root := filepath.Join("..", "..")
	data, err := os.ReadFile(filepath.Join(root, ".dockerignore"))
	if err != nil {
		t.Fatal(err)
	}
	var patterns []*regexp.Regexp
	for line := range strings.SplitSeq(string(data), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if strings.HasPrefix(line, "!") {
			t.Fatalf("%q: this test does not read exceptions", line)
		}
		var re strings.Builder
		for i := 0; i < len(line); i++ {
			switch {
			case strings.HasPrefix(line[i:], "**/"):
				re.WriteString("(.*/)?")
				i += 2
			case line[i] == '*':
				re.WriteString("[^/]*")
			case line[i] == '?':
				re.WriteString("[^/]")
			default:
				re.WriteString(regexp.QuoteMeta(line[i : i+1]))
			}
		}
		patterns = append(patterns, regexp.MustCompile("^"+strings.TrimPrefix(re.String(), "/")+"(/.*)?$"))
	}
	ignored := func(path string) bool {
		for _, re := range patterns {
			if re.MatchString(path) {
				return true
			}
		}
		return false
	}
	for _, gone := range []string{".git/config", "spawngate", "bin/spawngate", "internal/server/server.test", "cpu.prof",
		".claude/settings.local.json", ".codex/config.toml", "examples/deploy/tls-key.pem", ".env"} {
		if !ignored(gone) {
			t.Errorf("%s is sent to docker build", gone)
		}
	}
	kept := 0
	err = filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if rel == ".git" {
				return filepath.SkipDir
			}
			return nil
		}
		build := (strings.HasSuffix(rel, ".go") && !strings.HasSuffix(rel, "_test.go")) || rel == "go.mod" || rel == "go.sum" ||
			regexp.MustCompile(`^(policy/[^/]+\.rego|schemas/[^/]+\.schema\.json)$`).MatchString(rel)
		if build {
			kept++
			if ignored(rel) {
				t.Errorf("%s is left out of the build context, and the build needs it", rel)
			}
		}
		return nil
	})
	if err != nil || kept < 50 {
		t.Fatalf("%d files of the build found: %v", kept, err)
	}
}
