package playground

import (
	_ "embed"
	"encoding/json"
	"io/fs"
	"strings"
	"sync"

	"github.com/spawngate/spawngate/examples"
)

// The page, its script and its style sheet: files of their own, so that
// the Content-Security-Policy allows script and style from the playground
// itself and nothing inline.
var (
	//go:embed assets/page.html
	pageHTML []byte
	//go:embed assets/playground.js
	pageJS []byte
	//go:embed assets/playground.css
	pageCSS []byte
)

// Example is one example the page offers to start from: a plan of
// examples/, the operator policy it is judged by there, and the
// operator's checks when it needs them.
type Example struct {
	Name   string `json:"name"`
	Plan   string `json:"plan"`
	Policy string `json:"policy"`
	Checks string `json:"checks"`
}

// exampleFiles are the examples by file, in the order the page lists them.
var exampleFiles = []struct{ name, plan, policy string }{
	{"A refused plan (examples/refused-plan.yaml)", "refused-plan.yaml", "policy.yaml"},
	{"An authorized plan (examples/authorized-plan.yaml)", "authorized-plan.yaml", "policy.yaml"},
	{"A plan that narrows the policy (examples/narrowed-plan.yaml)", "narrowed-plan.yaml", "policy.yaml"},
	{"Your own checks: a deploy (examples/deploy-plan.yaml)", "deploy-plan.yaml", "policy.yaml"},
	{"A release with the policy's checks (examples/release-plan.yaml)", "release-plan.yaml", "release-policy.yaml"},
	{"A delegation tree (examples/trees/plan.yaml)", "trees/plan.yaml", "trees/policy.yaml"},
	{"A delegation tree that widens (examples/trees/widened-plan.yaml)", "trees/widened-plan.yaml", "trees/policy.yaml"},
	{"Exceptions with expiries (examples/exceptions/plan.yaml)", "exceptions/plan.yaml", "exceptions/policy.yaml"},
	{"Role profiles (examples/profiles/plan.yaml)", "profiles/plan.yaml", "profiles/policy.yaml"},
	{"Role profiles, authorized (examples/profiles/authorized-plan.yaml)", "profiles/authorized-plan.yaml", "profiles/policy.yaml"},
	{"Briefs (examples/briefs/plan.yaml)", "briefs/plan.yaml", "briefs/policy.yaml"},
	{"A brief that leaks a secret (examples/briefs/secrets-refused.yaml)", "briefs/secrets-refused.yaml", "briefs/policy.yaml"},
	{"A brief without its retask channel (examples/briefs/retask-refused.yaml)", "briefs/retask-refused.yaml", "briefs/policy.yaml"},
	{"Tasks with two owners (examples/briefs/tasks-refused.yaml)", "briefs/tasks-refused.yaml", "briefs/policy.yaml"},
}

// withChecks are the plans judged with the operator's checks of
// examples/checks, as the examples' own comments run them.
var withChecks = map[string]bool{"deploy-plan.yaml": true, "release-plan.yaml": true}

// checksLine is the release policy's folder of checks: the playground
// reads no folder, so the example carries the folder's modules in its
// checks field instead, and says so where the line was.
const checksLine = "checks: [checks]\n"

// Examples are the examples the page offers, read from the embedded
// examples/.
func Examples() ([]Example, error) {
	read := func(name string) (string, error) {
		b, err := fs.ReadFile(examples.FS, name)
		return string(b), err
	}
	var checks strings.Builder
	for _, name := range []string{"checks/release_deploy.rego", "checks/roles.rego"} {
		text, err := read(name)
		if err != nil {
			return nil, err
		}
		if checks.Len() > 0 {
			checks.WriteString("\n")
		}
		checks.WriteString(text)
	}
	var out []Example
	for _, f := range exampleFiles {
		plan, err := read(f.plan)
		if err != nil {
			return nil, err
		}
		pol, err := read(f.policy)
		if err != nil {
			return nil, err
		}
		ex := Example{Name: f.name, Plan: plan, Policy: strings.Replace(pol, checksLine,
			"# checks: [checks] names a folder, which the playground does not read:\n# its modules are in the checks field instead.\n", 1)}
		if withChecks[f.plan] {
			ex.Checks = checks.String()
		}
		out = append(out, ex)
	}
	return out, nil
}

// examplesJSON is the examples as GET /examples answers them.
var examplesJSON = sync.OnceValue(func() []byte {
	ex, err := Examples()
	if err != nil {
		panic("reading the embedded examples: " + err.Error()) // a build that lacks them is broken
	}
	b, _ := json.Marshal(ex)
	return b
})
