package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/spawngate/spawngate/internal/agent"
	"github.com/spawngate/spawngate/internal/judge"
	"github.com/spawngate/spawngate/internal/plan"
	"github.com/spawngate/spawngate/internal/report"
)

// agentsOptions are the flags and arguments of spawngate agents.
type agentsOptions struct {
	policy    string
	gate      judge.Options
	format    report.Format
	maxListed int
	cwd       string
	budget    string
	paths     []string
}

// runAgents is spawngate agents: the CI check of agent definitions. It
// finds every Claude Code and Codex definition under the paths, turns each
// into a plan child exactly as the hooks do, and judges them all, with the
// file and line of each finding. Exit codes are those of check.
func runAgents(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	opts, err := parseAgents(args, stdout)
	if errors.Is(err, flag.ErrHelp) {
		return exitPass
	}
	if err != nil {
		fmt.Fprintf(stderr, "spawngate: %s (see spawngate agents -h)\n", err)
		if opts != nil && opts.format.Name == "json" {
			writeJSONError(stdout, err.Error())
		}
		return exitError
	}
	rep := &report.Report{Results: []report.Result{}}
	g, err := newGate(ctx, opts.gate, opts.policy)
	if err == nil {
		err = needOperator(g, "agents")
	}
	if err != nil {
		rep.Error = err.Error()
		fmt.Fprintf(stderr, "spawngate: %s\n", report.Clean(rep.Error))
	} else {
		judgeDefinitions(ctx, g, opts, rep, stderr)
		rep.Rules = reportRules(g)
	}
	rep.Finish()
	return render(stdout, stderr, opts.format, rep)
}

func judgeDefinitions(ctx context.Context, g *judge.Gate, opts *agentsOptions, rep *report.Report, stderr io.Writer) {
	fail := func(source string, err error) {
		line, problem := say(err)
		fmt.Fprintf(stderr, "spawngate: %s\n", report.Clean(line))
		rep.Results = append(rep.Results, report.Failed(source, line, problem))
	}
	budget := json.Number(opts.budget)
	if budget == "" {
		budget, _ = g.Operator()["budget_cap_tokens"].(json.Number)
	}
	left := opts.maxListed
	found := 0
	for _, root := range opts.paths {
		folders, err := definitionFolders(root)
		if err != nil {
			fail(root, judge.AsError(root, err))
			continue
		}
		cwd := opts.cwd
		if cwd == "" {
			abs, err := filepath.Abs(root)
			if err != nil {
				fail(root, judge.AsError(root, err))
				continue
			}
			cwd = agent.RepoRoot(abs)
		}
		for _, f := range folders {
			catalog, err := agent.Load(ctx, f.host, []string{f.dir}, g.Options().Limits)
			if err != nil {
				fail(f.dir, judge.AsError(f.dir, err))
				continue
			}
			for _, def := range catalog.Definitions() {
				found++
				res, err := judgeDefinition(ctx, g, catalog, def, agent.Call{Host: f.host, Cwd: cwd, Budget: budget}, left)
				if err != nil {
					fail(def.File, err)
					continue
				}
				left = res.Trim(left)
				rep.Results = append(rep.Results, res)
			}
		}
	}
	if found == 0 && rep.Error == "" && len(rep.Results) == 0 {
		// Nothing to check is never a pass.
		rep.Error = fmt.Sprintf("no agent definitions found under %s (looked for %s and %s)", strings.Join(opts.paths, ", "), agent.Folder(agent.ClaudeCode), agent.Folder(agent.Codex))
		fmt.Fprintf(stderr, "spawngate: %s\n", report.Clean(rep.Error))
	}
}

// judgeDefinition judges one definition as the spawn of its own type, and
// points each finding at the line of the file it comes from.
func judgeDefinition(ctx context.Context, g *judge.Gate, catalog *agent.Catalog, def *agent.Definition, call agent.Call, maxListed int) (report.Result, error) {
	call.Type = def.Name
	var problem string
	resolved := def
	switch {
	case def.Skipped != "":
		resolved, problem = nil, fmt.Sprintf("%s defines no agent: %s", def.File, def.Skipped)
		call.Type = strings.TrimSuffix(filepath.Base(def.File), filepath.Ext(def.File))
	case def.Err != nil:
		resolved, problem = nil, "the definition does not parse: "+def.ParseProblem()
		if def.Name == "" {
			call.Type = strings.TrimSuffix(filepath.Base(def.File), filepath.Ext(def.File))
		}
	default:
		// As a spawn of its name would resolve it: a second definition of
		// the name, or an error in this one, is a refusal.
		if r, why := catalog.Resolve(def.Name); r != def {
			resolved, problem = nil, why
		}
	}
	t := agent.Translate(call, resolved, problem)
	res, err := g.JudgeSpawn(ctx, "agent definition", t.Plan(), maxListed)
	if err != nil {
		var e *judge.Error
		if errors.As(err, &e) {
			copied := *e
			copied.Source = shown(def.File)
			return report.Result{}, &copied
		}
		return report.Result{}, err
	}
	res.Source = shown(def.File)
	line := 0
	if def.Err != nil {
		line = def.Err.Line
	}
	for i := range res.Children {
		for j := range res.Children[i].Violations {
			v := &res.Children[i].Violations[j]
			if l := t.LineOf(strings.TrimPrefix(v.Path, "/plan/0")); l > 0 {
				v.Line = l
			} else if line > 0 && v.Rule == "agent.definition" {
				v.Line = line // where the definition stops parsing
			}
		}
	}
	return res, nil
}

// shown is a file as the report names it: relative to the working
// directory when it lies under it.
func shown(file string) string {
	wd, err := os.Getwd()
	if err != nil {
		return file
	}
	abs, err := filepath.Abs(file)
	if err != nil {
		return file
	}
	if r, err := filepath.Rel(wd, abs); err == nil && !strings.HasPrefix(r, "..") {
		return r
	}
	return file
}

// folder is a host's agents folder found in a tree.
type folder struct {
	host agent.Host
	dir  string
}

// definitionFolders finds every .claude/agents and .codex/agents folder
// under root, in path order, not looking into .git. A root that is an
// agents folder itself is one.
func definitionFolders(root string) ([]folder, error) {
	info, err := os.Stat(root)
	if err != nil {
		return nil, &plan.Error{Source: root, Msg: "cannot read: " + plan.Reason(err)}
	}
	if !info.IsDir() {
		return nil, &plan.Error{Source: root, Msg: "is not a directory: name the repository, or a folder holding agent definitions"}
	}
	var out []folder
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return &plan.Error{Source: path, Msg: "cannot read: " + plan.Reason(err)}
		}
		if !d.IsDir() {
			return nil
		}
		if d.Name() == ".git" {
			return filepath.SkipDir
		}
		for _, host := range []agent.Host{agent.ClaudeCode, agent.Codex} {
			if strings.HasSuffix(filepath.ToSlash(path), "/"+filepath.ToSlash(agent.Folder(host))) || filepath.ToSlash(path) == filepath.ToSlash(agent.Folder(host)) {
				out = append(out, folder{host, path})
				return filepath.SkipDir
			}
		}
		return nil
	})
	sort.Slice(out, func(i, j int) bool { return out[i].dir < out[j].dir })
	return out, err
}

func parseAgents(args []string, help io.Writer) (*agentsOptions, error) {
	opts := &agentsOptions{gate: judge.DefaultOptions(), format: report.Formats[0], maxListed: report.DefaultMaxListed}
	c := newCommand("spawngate agents", printAgentsHelp)
	c.gateFlags(&opts.policy, &opts.gate)
	c.reportFlags(&opts.format, &opts.maxListed)
	c.fs.StringVar(&opts.cwd, "cwd", "", "the `DIR` each agent is taken to work in, as a session's cwd would be (default: the repository each definition is found in)")
	c.fs.StringVar(&opts.budget, "budget-tokens", "", "the token `budget` a spawn is granted when its definition states none (default: the operator policy's budget_cap_tokens)")
	paths, err := c.parse(args, help)
	if errors.Is(err, flag.ErrHelp) {
		return nil, err
	}
	opts.paths = paths
	if err != nil {
		return opts, err
	}
	if opts.policy == "" && opts.gate.Bundle == "" {
		return opts, &usageError{"agents needs --policy FILE (or a --bundle carrying the policy): the operator's policy judges the definitions"}
	}
	if err := c.checkGate(opts.policy, &opts.gate); err != nil {
		return opts, err
	}
	if opts.maxListed < 0 {
		return opts, &usageError{"--max-listed must not be negative"}
	}
	if opts.budget != "" {
		if n, err := strconv.ParseInt(opts.budget, 10, 64); err != nil || n <= 0 || strconv.FormatInt(n, 10) != opts.budget {
			return opts, &usageError{fmt.Sprintf("--budget-tokens %q: not a positive whole number", opts.budget)}
		}
	}
	if opts.cwd != "" && !filepath.IsAbs(opts.cwd) {
		return opts, &usageError{fmt.Sprintf("--cwd %q: must be an absolute path, as a session's cwd is", opts.cwd)}
	}
	if len(opts.paths) == 0 {
		wd, err := os.Getwd()
		if err != nil {
			return opts, &usageError{"no PATH given, and the current directory cannot be read: " + err.Error()}
		}
		opts.paths = []string{agent.RepoRoot(wd)}
	}
	return opts, nil
}

func printAgentsHelp(w io.Writer, fs *flag.FlagSet) {
	fmt.Fprint(w, "Usage: spawngate agents --policy FILE [flags] [PATH...]\n\n"+
		"Finds every Claude Code (.claude/agents/**/*.md) and Codex\n"+
		"(.codex/agents/*.toml) agent definition under each PATH (default: the\n"+
		"current repository), judges each as a spawn of it would be judged by\n"+
		"spawngate hook, and reports each finding with its file and line. Exits 0\n"+
		"if every definition passes, 1 if any is refused, 2 if the gate could not\n"+
		"evaluate.\n\nFlags:\n")
	printFlags(w, fs)
	fmt.Fprint(w, "\nExample:\n  spawngate agents --policy policy/spawngate.yaml --format json > agents.json\n")
}
