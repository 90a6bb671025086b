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

	"gopkg.in/yaml.v3"

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
	policy := dig(t, kinds["ConfigMap"], "data", "policy.yaml").(string)
	l, err := plan.NewLoader(plan.DefaultLimits)
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
