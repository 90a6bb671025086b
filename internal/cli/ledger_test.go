package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"
)

// Ledger flags that contradict each other, or a Redis URL that cannot be
// used, are usage errors: exit 2, one line, never a password.
func TestLedgerFlagUsage(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--ledger", ""}, `--ledger "": is empty: name a Redis server`},
		{[]string{"--ledger", "http://127.0.0.1:6379"}, "--ledger http://127.0.0.1:6379: not a Redis URL the ledger can use: invalid URL scheme: http"},
		{[]string{"--ledger", "redis://:s3cret@127.0.0.1:6379/x"}, "--ledger redis://:xxxxx@127.0.0.1:6379/x: not a Redis URL the ledger can use: invalid database number"},
		{[]string{"--ledger", "redis://127.0.0.1:6379/0", "--state-dir", "state"}, "--ledger and --state-dir go apart"},
		{[]string{"--ledger-ttl", "1h"}, "--ledger-ttl needs --ledger"},
		{[]string{"--ledger", "redis://127.0.0.1:6379/0", "--ledger-ttl", "10ms"}, "--ledger-ttl must be at least 1s"},
		{[]string{"--state-dir", ""}, `--state-dir "": is empty`},
	} {
		for _, cmd := range [][]string{{"serve"}, {"hook", "claude-code"}} {
			var stderr bytes.Buffer
			args := append(append(slicesClone(cmd), "--policy", "x.yaml"), tc.args...)
			code := Run(context.Background(), args, strings.NewReader("{}"), io.Discard, &stderr)
			if code != exitError || !strings.Contains(stderr.String(), tc.want) || strings.Count(stderr.String(), "\n") != 1 || strings.Contains(stderr.String(), "s3cret") {
				t.Errorf("%v: exit %d, stderr %q, want %q", args, code, stderr.String(), tc.want)
			}
		}
	}
}

func slicesClone(s []string) []string { return append([]string(nil), s...) }

// serve does not start when the policy turns the session checks on and
// its ledger cannot be read and written: exit 2, one line naming the
// policy, the ledger and the flag. The default folder under a read-only
// home is such a ledger, as in a container with a read-only root.
func TestServeNeedsAWritableLedger(t *testing.T) {
	dir := t.TempDir()
	policy := filepath.Join(dir, "retask.yaml")
	os.WriteFile(policy, []byte("allowed_tools: [Read]\nworkspace_root: /w\nbudget_cap_tokens: 10\nbrief_retask: {}\n"), 0o644)
	plain := filepath.Join(dir, "plain.yaml")
	os.WriteFile(plain, []byte("allowed_tools: [Read]\nworkspace_root: /w\nbudget_cap_tokens: 10\n"), 0o644)
	blocker := filepath.Join(dir, "a-file")
	os.WriteFile(blocker, nil, 0o644)
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	down := "redis://" + closed.Addr().String() + "/0"
	closed.Close()
	t.Setenv("XDG_STATE_HOME", blocker)
	prefix := "spawngate: " + policy + ": /brief_retask: the operator policy turns the session checks on, and the session ledger cannot be used: "
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, prefix + blocker + "/spawngate/sessions: cannot make the ledger folder: not a directory: give --state-dir DIR for one server, or --ledger redis://HOST:PORT/DB for replicas\n"},
		{[]string{"--state-dir", filepath.Join(blocker, "state")}, prefix + blocker + "/state/sessions: cannot make the ledger folder: not a directory (--state-dir)\n"},
		{[]string{"--ledger", down}, prefix + down + ": the session ledger cannot be used: dial tcp " + strings.TrimPrefix(strings.TrimSuffix(down, "/0"), "redis://") + ": connect: connection refused (--ledger " + down + ")\n"},
	} {
		var stderr bytes.Buffer
		args := append([]string{"serve", "--addr", "127.0.0.1:0", "--policy", policy}, tc.args...)
		// A server that starts anyway stops when the context ends, and
		// the test fails on its exit 0.
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		code := Run(ctx, args, nil, io.Discard, &stderr)
		cancel()
		if code != exitError || stderr.String() != tc.want {
			t.Errorf("%v: exit %d, stderr\n%s\nwant\n%s", tc.args, code, stderr.String(), tc.want)
		}
	}
	// Without the session checks the ledger is not needed, and the server
	// starts.
	_, stop := startServe(t, "--policy", plain, "--ledger", down)
	if code := stop(); code != exitPass {
		t.Fatalf("stopped with %d", code)
	}
}

// The Kubernetes example shares the session ledger: the spawngate
// Deployment names, with --ledger, the Redis Service of redis.yaml, which
// selects Redis pods and not spawngate's, and that Redis never evicts a
// ledger to make room.
func TestDeploymentExampleSharesTheLedger(t *testing.T) {
	docs := map[string]map[string]any{} // by kind and name
	files, _ := filepath.Glob(filepath.Join("..", "..", "examples", "deploy", "kubernetes", "*.yaml"))
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
			docs[fmt.Sprint(doc["kind"], "/", dig(t, doc, "metadata", "name"))] = doc
		}
	}
	need := func(key string) map[string]any {
		if docs[key] == nil {
			t.Fatalf("no %s among the manifests", key)
		}
		return docs[key]
	}
	container := dig(t, need("Deployment/spawngate"), "spec", "template", "spec", "containers").([]any)[0].(map[string]any)
	var args []string
	for _, a := range container["args"].([]any) {
		args = append(args, a.(string))
	}
	opts, err := parseServe(args[1:], io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	svc := need("Service/spawngate-redis")
	port := dig(t, svc, "spec", "ports").([]any)[0].(map[string]any)["port"]
	if want := fmt.Sprintf("redis://spawngate-redis:%v/0", port); opts.ledger.url != want {
		t.Fatalf("the Deployment's --ledger is %q, want %q", opts.ledger.url, want)
	}
	redis := need("StatefulSet/spawngate-redis")
	labels := dig(t, redis, "spec", "template", "metadata", "labels").(map[string]any)
	selector := dig(t, svc, "spec", "selector").(map[string]any)
	for k, v := range selector {
		if labels[k] != v {
			t.Fatalf("the Redis Service selects %v, the Redis pods are %v", selector, labels)
		}
	}
	spawngate := dig(t, need("Service/spawngate"), "spec", "selector").(map[string]any)
	if fmt.Sprint(spawngate) == fmt.Sprint(selector) {
		t.Fatal("the spawngate Service would route to Redis pods")
	}
	redisArgs := fmt.Sprint(dig(t, redis, "spec", "template", "spec", "containers").([]any)[0].(map[string]any)["args"])
	if !strings.Contains(redisArgs, "--maxmemory-policy noeviction") || !strings.Contains(redisArgs, "--appendonly yes") {
		t.Fatalf("Redis may lose a ledger: %s", redisArgs)
	}
	need("NetworkPolicy/spawngate-redis")
}
