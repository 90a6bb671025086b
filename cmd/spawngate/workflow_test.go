package main

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// The GitHub Actions workflow docs/ci.md tells users to copy, run step by
// step as the runner would run it, in fresh repositories of each kind.
// Each run: step runs in bash as the runner starts it, with the variables
// the runner sets and what earlier steps wrote to GITHUB_PATH and
// GITHUB_OUTPUT; if: conditions and ${{ }} templates are evaluated; the
// actions are stood in for by what they do here (checkout: the fresh
// repository is the workspace; cache: a hit, or with SPAWNGATE_LONG=1 a
// miss, so the build step really fetches the pinned commit from this
// repository and builds it; setup-go: the machine's Go; upload-sarif: the
// log must exist and point code scanning at files of the repository).
const workflowFile = "../../examples/github/workflows/spawngate.yml"

type workflow struct {
	Env  map[string]string `yaml:"env"`
	Jobs map[string]struct {
		Steps []workflowStep `yaml:"steps"`
	} `yaml:"jobs"`
}

type workflowStep struct {
	Name            string            `yaml:"name"`
	ID              string            `yaml:"id"`
	If              string            `yaml:"if"`
	Uses            string            `yaml:"uses"`
	With            map[string]string `yaml:"with"`
	Env             map[string]string `yaml:"env"`
	Run             string            `yaml:"run"`
	ContinueOnError bool              `yaml:"continue-on-error"`
}

// repositoryKind is a fresh repository and what the job must do in it.
type repositoryKind struct {
	name  string
	files map[string]string
	// outcomes of the steps that judge (plans, agents), and whether the
	// job passes.
	plans, agents string
	pass          bool
	uploads       []string // the SARIF categories uploaded
}

func TestWorkflowInFreshRepositories(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash")
	}
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	plansPolicy := readExample(t, "github/spawngate/plans.yaml")
	agentsPolicy := readExample(t, "github/spawngate/agents.yaml")
	policies := map[string]string{
		".github/spawngate/plans.yaml":  plansPolicy,
		".github/spawngate/agents.yaml": agentsPolicy,
	}
	with := func(files ...map[string]string) map[string]string {
		all := map[string]string{}
		for _, f := range append([]map[string]string{policies}, files...) {
			for k, v := range f {
				all[k] = v
			}
		}
		return all
	}
	plans := map[string]string{
		"plans/review.yaml":         "plan:\n  - role: reviewer\n    tools: [fs.read]\n    paths: [/workspace/src]\n    budget_tokens: 50000\n",
		"plans/docs/summarize.json": `{"plan": [{"role": "summarizer", "tools": ["fs.read", "http.get"], "paths": ["/workspace/docs"], "budget_tokens": 20000}]}` + "\n",
	}
	agents := map[string]string{
		".claude/agents/reviewer.md":  "---\nname: reviewer\ndescription: Reviews a change.\ntools: Read, Grep, Glob\n---\nReview the change.\n",
		".gemini/agents/searcher.md":  "---\nname: searcher\ndescription: Finds code.\ntools:\n  - read_file\n  - grep_search\n---\nFind it.\n",
		".codex/agents/explorer.toml": "name = \"explorer\"\ndescription = \"Explores.\"\ndeveloper_instructions = \"Explore.\"\nsandbox_mode = \"read-only\"\n",
	}
	kinds := []repositoryKind{
		{name: "plans only", files: with(plans), plans: "success", agents: "success", pass: true,
			uploads: []string{"spawngate-plans", "spawngate-agents"}},
		{name: "plans and agent definitions", files: with(plans, agents), plans: "success", agents: "success", pass: true,
			uploads: []string{"spawngate-plans", "spawngate-agents"}},
		{name: "agent definitions only", files: with(agents), plans: "skipped", agents: "success", pass: true,
			uploads: []string{"spawngate-agents"}},
		// The same job must also be able to fail.
		{name: "a refused plan", files: with(plans, agents, map[string]string{
			"plans/writer.yaml": "plan:\n  - role: writer\n    tools: [fs.write]\n    paths: [/workspace/src]\n    budget_tokens: 50000\n",
		}), plans: "failure", agents: "success", uploads: []string{"spawngate-plans", "spawngate-agents"}},
		{name: "a refused agent definition", files: with(plans, map[string]string{
			".claude/agents/fixer.md": "---\nname: fixer\ndescription: Fixes.\ntools: Read, Edit\n---\nFix it.\n",
		}), plans: "success", agents: "failure", uploads: []string{"spawngate-plans", "spawngate-agents"}},
		{name: "nothing to judge", files: with(map[string]string{"README.md": "nothing here\n"}),
			plans: "skipped", agents: "failure", uploads: []string{"spawngate-agents"}},
		{name: "plans but no policy", files: plans, plans: "failure", agents: "failure",
			uploads: []string{"spawngate-plans", "spawngate-agents"}},
	}
	var wf workflow
	raw, err := os.ReadFile(workflowFile)
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(raw, &wf); err != nil {
		t.Fatal(err)
	}
	job, ok := wf.Jobs["spawngate"]
	if !ok || len(wf.Jobs) != 1 {
		t.Fatalf("the workflow should have the one job spawngate: %v", wf.Jobs)
	}
	long := os.Getenv("SPAWNGATE_LONG") != ""
	for _, kind := range kinds {
		t.Run(kind.name, func(t *testing.T) {
			r := newRunner(t, wf.Env, kind.files, long)
			pass := r.run(job.Steps)
			if got := r.steps["plans"].outcome; got != kind.plans {
				t.Errorf("the plans step: %s, want %s", got, kind.plans)
			}
			if got := r.steps["agents"].outcome; got != kind.agents {
				t.Errorf("the agent definitions step: %s, want %s", got, kind.agents)
			}
			if pass != kind.pass {
				t.Errorf("the job passed: %v, want %v", pass, kind.pass)
			}
			if !slices.Equal(r.uploads, kind.uploads) {
				t.Errorf("uploaded %v, want %v", r.uploads, kind.uploads)
			}
			// The binary built from the pinned commit says which it is.
			if c := r.env["SPAWNGATE_COMMIT"]; r.miss && !strings.Contains(r.log.String(), c[:12]) {
				t.Errorf("spawngate version does not name the pinned commit %s", c)
			}
			if t.Failed() || testing.Verbose() {
				t.Logf("the job's log:\n%s", r.log.String())
			}
		})
		if !long {
			continue
		}
		// One build from the pinned commit is enough: later runs hit the
		// cache the first one filled, as on GitHub.
		long = false
	}
}

func readExample(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "examples", filepath.FromSlash(name)))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// stepResult is what the expressions see of a step that ran.
type stepResult struct {
	outcome string
	outputs map[string]string
}

type runner struct {
	t         *testing.T
	env       map[string]string // the workflow's env, expanded
	workspace string
	temp      string
	path      []string // what steps added to GITHUB_PATH, newest first
	steps     map[string]*stepResult
	uploads   []string
	miss      bool // the cache misses: build the pinned commit
	log       bytes.Buffer
}

func newRunner(t *testing.T, env map[string]string, files map[string]string, miss bool) *runner {
	r := &runner{t: t, env: map[string]string{}, workspace: t.TempDir(), temp: t.TempDir(), steps: map[string]*stepResult{}, miss: miss}
	for k, v := range env {
		r.env[k] = r.expand(v)
	}
	for name, body := range files {
		p := filepath.Join(r.workspace, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	git := exec.Command("git", "init", "--quiet", r.workspace)
	if out, err := git.CombinedOutput(); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}
	return r
}

// run runs the steps as the runner does, and tells whether the job
// passed: a step that fails without continue-on-error fails the job, and
// later steps run only if their condition asks for always().
func (r *runner) run(steps []workflowStep) bool {
	jobOK := true
	for _, s := range steps {
		cond := s.If
		if cond == "" {
			cond = "success()"
		}
		res := &stepResult{outputs: map[string]string{}}
		if s.ID != "" {
			r.steps[s.ID] = res
		}
		if !truthy(r.eval(cond, jobOK)) {
			res.outcome = "skipped"
			fmt.Fprintf(&r.log, "-- %s: skipped\n", cmp.Or(s.Name, s.Uses))
			continue
		}
		ok := true
		if s.Uses != "" {
			ok = r.action(s, res)
		} else {
			ok = r.script(s, res)
		}
		res.outcome = map[bool]string{true: "success", false: "failure"}[ok]
		fmt.Fprintf(&r.log, "-- %s: %s\n", cmp.Or(s.Name, s.Uses), res.outcome)
		if !ok && !s.ContinueOnError {
			jobOK = false
		}
	}
	return jobOK
}

// pinned is an action named by a full commit hash, with its version in a
// comment (the comment is checked by TestPinsAreDigests).
var pinned = regexp.MustCompile(`^([\w.-]+/[\w./-]+)@[0-9a-f]{40}$`)

// action stands in for the actions the workflow uses.
func (r *runner) action(s workflowStep, res *stepResult) bool {
	t := r.t
	m := pinned.FindStringSubmatch(s.Uses)
	if m == nil {
		t.Fatalf("step %q uses %q, not an action pinned to a commit", s.Name, s.Uses)
	}
	with := map[string]string{}
	for k, v := range s.With {
		with[k] = r.expand(v)
	}
	switch m[1] {
	case "actions/checkout":
		// The fresh repository is the workspace already.
		return true
	case "actions/cache":
		key := with["key"]
		for _, part := range []string{r.env["SPAWNGATE_COMMIT"], "go" + r.env["GO_VERSION"]} {
			if part == "" || !strings.Contains(key, part) {
				t.Fatalf("the cache key %q does not name %q: it must change with spawngate's sources and Go", key, part)
			}
		}
		if r.miss {
			res.outputs["cache-hit"] = "false"
			return true
		}
		// A hit restores the binary an earlier run built: this test's
		// own binary, which acts as spawngate when named so.
		dir := with["path"]
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		self, err := os.Executable()
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(self, filepath.Join(dir, "spawngate")); err != nil {
			t.Fatal(err)
		}
		res.outputs["cache-hit"] = "true"
		return true
	case "actions/setup-go":
		if with["go-version"] != r.env["GO_VERSION"] || with["cache"] != "false" {
			t.Errorf("setup-go with %v: want the pinned GO_VERSION and no cache of its own (it would key on this repository's go.sum)", with)
		}
		_, err := exec.LookPath("go")
		return err == nil
	case "github/codeql-action/upload-sarif":
		r.uploads = append(r.uploads, with["category"])
		return r.checkSARIF(with["sarif_file"])
	}
	t.Fatalf("step %q uses %s, which this test does not know: teach it what the action does", s.Name, m[1])
	return false
}

// checkSARIF checks what code scanning needs of an uploaded log: SARIF
// 2.1.0, and every result at a file of the repository named relative to
// its root.
func (r *runner) checkSARIF(name string) bool {
	b, err := os.ReadFile(filepath.Join(r.workspace, name))
	if err != nil {
		fmt.Fprintf(&r.log, "upload-sarif: %v\n", err)
		return false
	}
	var log struct {
		Version string `json:"version"`
		Runs    []struct {
			Results []struct {
				Locations []struct {
					PhysicalLocation struct {
						ArtifactLocation struct {
							URI string `json:"uri"`
						} `json:"artifactLocation"`
					} `json:"physicalLocation"`
				} `json:"locations"`
			} `json:"results"`
		} `json:"runs"`
	}
	if err := json.Unmarshal(b, &log); err != nil || log.Version != "2.1.0" || len(log.Runs) != 1 {
		r.t.Errorf("%s is not a SARIF 2.1.0 log of one run (%v)", name, err)
		return false
	}
	for _, res := range log.Runs[0].Results {
		for _, loc := range res.Locations {
			uri := loc.PhysicalLocation.ArtifactLocation.URI
			if filepath.IsAbs(uri) || !fs.ValidPath(uri) {
				r.t.Errorf("%s: result at %q, not a path relative to the repository", name, uri)
				continue
			}
			if _, err := os.Stat(filepath.Join(r.workspace, filepath.FromSlash(uri))); err != nil {
				r.t.Errorf("%s: result at %q, which code scanning cannot find: %v", name, uri, err)
			}
		}
	}
	return true
}

// script runs a run: step as the runner does on Linux: bash
// --noprofile --norc -eo pipefail, in the workspace, with the runner's
// variables.
func (r *runner) script(s workflowStep, res *stepResult) bool {
	t := r.t
	body := r.expand(s.Run)
	if r.miss {
		// The build fetches the pinned commit from this repository, as
		// it would from GitHub.
		local, err := filepath.Abs(filepath.Join("..", ".."))
		if err != nil {
			t.Fatal(err)
		}
		body = strings.ReplaceAll(body, "https://github.com/spawngate/spawngate", "file://"+local)
	}
	dir := t.TempDir()
	script := filepath.Join(dir, "step.sh")
	output := filepath.Join(dir, "output")
	ghPath := filepath.Join(dir, "path")
	for _, f := range []string{script, output, ghPath} {
		content := ""
		if f == script {
			content = body
		}
		if err := os.WriteFile(f, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command("bash", "--noprofile", "--norc", "-eo", "pipefail", script)
	cmd.Dir = r.workspace
	env := map[string]string{
		"HOME": os.Getenv("HOME"), "GOPATH": os.Getenv("GOPATH"), "GOCACHE": os.Getenv("GOCACHE"),
		"GOMODCACHE": os.Getenv("GOMODCACHE"), "GOFLAGS": os.Getenv("GOFLAGS"), "GOPROXY": os.Getenv("GOPROXY"),
		"PATH":             strings.Join(append(slices.Clone(r.path), basePath()...), string(os.PathListSeparator)),
		"GITHUB_WORKSPACE": r.workspace, "RUNNER_TEMP": r.temp, "GITHUB_OUTPUT": output, "GITHUB_PATH": ghPath,
		"CI": "true", "GITHUB_ACTIONS": "true",
	}
	for k, v := range r.env {
		env[k] = v
	}
	for k, v := range s.Env {
		env[k] = r.expand(v)
	}
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	cmd.Stdout, cmd.Stderr = &r.log, &r.log
	err := cmd.Run()
	if err != nil {
		if _, ok := err.(*exec.ExitError); !ok {
			t.Fatalf("step %q: %v", s.Name, err)
		}
	}
	outs, _ := os.ReadFile(output)
	for _, line := range strings.Split(string(outs), "\n") {
		if k, v, ok := strings.Cut(line, "="); ok {
			res.outputs[k] = v
		}
	}
	added, _ := os.ReadFile(ghPath)
	for _, p := range strings.Split(strings.TrimSpace(string(added)), "\n") {
		if p != "" {
			r.path = append([]string{p}, r.path...)
		}
	}
	return err == nil
}

// basePath is the PATH a runner starts with: this machine's, without the
// folder where the test framework puts its own spawngate, so that only a
// step can put one there.
func basePath() []string {
	var out []string
	for _, p := range filepath.SplitList(os.Getenv("PATH")) {
		if _, err := os.Stat(filepath.Join(p, "spawngate")); err == nil {
			continue
		}
		out = append(out, p)
	}
	return out
}

var template = regexp.MustCompile(`\$\{\{(.*?)\}\}`)

// expand replaces each ${{ expression }} in s by its value.
func (r *runner) expand(s string) string {
	return template.ReplaceAllStringFunc(s, func(m string) string {
		return str(r.eval(template.FindStringSubmatch(m)[1], true))
	})
}

// eval evaluates an expression of the workflow language, as much of it as
// the workflow uses: literals, contexts, ==, !=, !, && and ||, (), and
// the functions success(), failure(), always() and hashFiles(); anything
// else fails the test, so the workflow cannot outgrow what is tested.
func (r *runner) eval(expr string, jobOK bool) any {
	p := &exprParser{r: r, jobOK: jobOK, toks: lexExpr(r.t, expr)}
	v := p.or()
	if p.i != len(p.toks) {
		r.t.Fatalf("expression %q: unexpected %q", expr, p.toks[p.i])
	}
	return v
}

var exprToken = regexp.MustCompile(`\s*('(?:[^']|'')*'|==|!=|&&|\|\||[()!,]|[A-Za-z_][\w.-]*)`)

func lexExpr(t *testing.T, s string) []string {
	var toks []string
	for rest := s; strings.TrimSpace(rest) != ""; {
		m := exprToken.FindStringSubmatchIndex(rest)
		if m == nil || m[0] != 0 {
			t.Fatalf("expression %q: cannot read %q", s, rest)
		}
		toks = append(toks, rest[m[2]:m[3]])
		rest = rest[m[1]:]
	}
	return toks
}

type exprParser struct {
	r     *runner
	jobOK bool
	toks  []string
	i     int
}

func (p *exprParser) peek() string {
	if p.i < len(p.toks) {
		return p.toks[p.i]
	}
	return ""
}

func (p *exprParser) next() string {
	tok := p.peek()
	p.i++
	return tok
}

func (p *exprParser) or() any {
	v := p.and()
	for p.peek() == "||" {
		p.next()
		w := p.and()
		if !truthy(v) {
			v = w
		}
	}
	return v
}

func (p *exprParser) and() any {
	v := p.unary()
	for p.peek() == "&&" {
		p.next()
		w := p.unary()
		if truthy(v) {
			v = w
		}
	}
	return v
}

func (p *exprParser) unary() any {
	if p.peek() == "!" {
		p.next()
		return !truthy(p.unary())
	}
	v := p.primary()
	switch p.peek() {
	case "==":
		p.next()
		return strings.EqualFold(str(v), str(p.primary()))
	case "!=":
		p.next()
		return !strings.EqualFold(str(v), str(p.primary()))
	}
	return v
}

func (p *exprParser) primary() any {
	t := p.r.t
	tok := p.next()
	switch {
	case tok == "(":
		v := p.or()
		if p.next() != ")" {
			t.Fatalf("expression: ) expected")
		}
		return v
	case strings.HasPrefix(tok, "'"):
		return strings.ReplaceAll(tok[1:len(tok)-1], "''", "'")
	case tok == "true" || tok == "false":
		return tok == "true"
	case p.peek() == "(":
		p.next()
		var args []string
		for p.peek() != ")" {
			args = append(args, str(p.or()))
			if p.peek() == "," {
				p.next()
			}
		}
		p.next()
		return p.call(tok, args)
	}
	return p.context(tok)
}

func (p *exprParser) call(name string, args []string) any {
	r := p.r
	switch name {
	case "success":
		return p.jobOK
	case "failure":
		return !p.jobOK
	case "always":
		return true
	case "hashFiles":
		// Non-empty when any file matches; the workflow uses DIR/** only.
		for _, pattern := range args {
			dir, ok := strings.CutSuffix(pattern, "/**")
			if !ok {
				r.t.Fatalf("hashFiles(%q): only DIR/** is stood in for", pattern)
			}
			found := false
			filepath.WalkDir(filepath.Join(r.workspace, filepath.FromSlash(dir)), func(_ string, d fs.DirEntry, err error) error {
				if err == nil && d.Type().IsRegular() {
					found = true
					return filepath.SkipAll
				}
				return nil
			})
			if found {
				return "a hash"
			}
		}
		return ""
	}
	r.t.Fatalf("expression: unknown function %s()", name)
	return nil
}

func (p *exprParser) context(path string) any {
	r := p.r
	parts := strings.Split(path, ".")
	switch {
	case parts[0] == "env" && len(parts) == 2:
		v, ok := r.env[parts[1]]
		if !ok {
			r.t.Fatalf("expression: %s is not set", path)
		}
		return v
	case path == "runner.temp":
		return r.temp
	case path == "runner.os":
		return "Linux"
	case path == "runner.arch":
		return "X64"
	case parts[0] == "steps" && len(parts) >= 3:
		res, ok := r.steps[parts[1]]
		if !ok {
			r.t.Fatalf("expression: %s names a step that has not run", path)
		}
		switch {
		case len(parts) == 3 && parts[2] == "outcome":
			return res.outcome
		case len(parts) == 4 && parts[2] == "outputs":
			return res.outputs[parts[3]]
		}
	}
	r.t.Fatalf("expression: unknown context %s", path)
	return nil
}

func truthy(v any) bool {
	switch v := v.(type) {
	case bool:
		return v
	case string:
		return v != ""
	}
	return v != nil
}

func str(v any) string {
	switch v := v.(type) {
	case bool:
		return fmt.Sprint(v)
	case string:
		return v
	}
	return ""
}
