package spawngate_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/spawngate/spawngate"
)

// The operator's own checks judge through the Go API as they do on the
// command line, and one that breaks the contract is an error of New that
// names its file and line.
func TestWithChecks(t *testing.T) {
	ctx := context.Background()
	deployer := spawngate.Plan{Children: []spawngate.Spawn{
		{Role: "web-deployer", Tools: []string{"fs.read"}, Paths: []string{"/repo/workspace/dist"}, BudgetTokens: 40000},
	}}
	without := gate(t)
	if !spawngate.Allowed(without.CheckPlan(ctx, deployer)) {
		t.Fatal("without the checks, the deployer is refused")
	}
	with := gate(t, spawngate.WithChecks("examples/checks"))
	res, err := with.CheckPlan(ctx, deployer)
	if err != nil || spawngate.Allowed(res, err) {
		t.Fatalf("with the checks: %+v, %v", res, err)
	}
	if v := res.Children[0].Violations; len(v) != 1 || v[0].Rule != "org.release.deploy" || v[0].Path != "/plan/0/role" {
		t.Fatalf("violations %+v", v)
	}
	_, err = spawngate.New(ctx, spawngate.WithPolicyFile("examples/policy.yaml"), spawngate.WithChecks("testdata/no-such-folder"))
	var e *spawngate.Error
	if !errors.As(err, &e) || e.Kind != spawngate.ErrDocument || e.Source != "testdata/no-such-folder" || !strings.Contains(e.Msg, "cannot be read") {
		t.Fatalf("a missing folder: %v", err)
	}
}
