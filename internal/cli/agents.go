package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spawngate/spawngate/internal/agent"
	"github.com/spawngate/spawngate/internal/document"
	"github.com/spawngate/spawngate/internal/host"
	"github.com/spawngate/spawngate/internal/hosts"
	"github.com/spawngate/spawngate/internal/judge"
	"github.com/spawngate/spawngate/internal/report"
	"github.com/spawngate/spawngate/internal/report/render"
)

// agentsOptions are the flags and arguments of spawngate agents.
type agentsOptions struct {
	policy    string
	gate      judge.Options
	format    render.Format
	outputs   []reportOutput
	maxListed int
	cwd       string
	budget    string
	paths     []string
	// allowNone lets a run that finds no definition pass, where the user
	// says the repository may hold none (a CI job that also judges plans).
	allowNone bool
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
	g, err := newGate(ctx, "agents", opts.gate, opts.policy)
	if err != nil {
		rep.Error = err.Error()
		fmt.Fprintf(stderr, "spawngate: %s\n", report.Clean(rep.Error))
	} else {
		judgeDefinitions(ctx, g, opts, rep, stderr)
		rep.Rules = reportRules(g)
	}
	rep.Finish()
	return writeReports(stdout, stderr, opts.format, opts.outputs, rep)
}

func judgeDefinitions(ctx context.Context, g *judge.Gate, opts *agentsOptions, rep *report.Report, stderr io.Writer) {
	fail := func(source string, err error) {
		line, problem := say(err)
		fmt.Fprintf(stderr, "spawngate: %s\n", report.Clean(line))
		rep.Results = append(rep.Results, report.Failed(source, line, problem))
	}
	budget := g.Budget(json.Number(opts.budget))
	withText := showsText(opts.format, opts.outputs)
	left := opts.maxListed
	found := 0
	for _, root := range opts.paths {
		folders, err := definitionFolders(ctx, root)
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
			env := host.Env{Cwd: cwd, Budget: budget, Limits: g.Options().Limits}
			audited, err := f.host.Audit(ctx, f.dir, env)
			if err != nil {
				fail(f.dir, judge.AsError(f.dir, err))
				continue
			}
			for _, a := range audited {
				found++
				res, err := judgeDefinition(ctx, g, a, left)
				if err != nil {
					fail(a.File, err)
					continue
				}
				left = res.Trim(left)
				if withText {
					res.Text = definitionText(a.File, g.Options().Limits.MaxBytes)
				}
				rep.Results = append(rep.Results, res)
			}
		}
	}
	if found == 0 && rep.Error == "" && len(rep.Results) == 0 {
		// Nothing to check is never a pass, unless the user said so.
		var looked []string
		for _, a := range hosts.All {
			looked = append(looked, a.DefinitionsFolder())
		}
		none := fmt.Sprintf("no agent definitions found under %s (looked for %s)", strings.Join(opts.paths, ", "), orList(looked, "and"))
		if opts.allowNone {
			rep.Note = none + ", and --allow-none lets that pass"
			fmt.Fprintf(stderr, "spawngate: %s\n", report.Clean(rep.Note))
			return
		}
		rep.Error = none
		fmt.Fprintf(stderr, "spawngate: %s\n", report.Clean(rep.Error))
	}
}

// judgeDefinition judges one definition as the spawn of its own type, and
// points each finding at the line of the file it comes from.
func judgeDefinition(ctx context.Context, g *judge.Gate, a host.Audited, maxListed int) (report.Result, error) {
	t := a.Translation
	res, err := g.JudgeSpawn(ctx, "agent definition", t.Plan(), maxListed)
	if err != nil {
		var e *judge.Error
		if errors.As(err, &e) {
			copied := *e
			copied.Source = shown(a.File)
			return report.Result{}, &copied
		}
		return report.Result{}, err
	}
	res.Source = shown(a.File)
	for i := range res.Children {
		for j := range res.Children[i].Violations {
			v := &res.Children[i].Violations[j]
			if l := t.LineOf(strings.TrimPrefix(v.Path, "/plan/0")); l > 0 {
				v.Line = l
			} else if a.Line > 0 && v.Rule == "agent.definition" {
				v.Line = a.Line // where the definition stops parsing
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
	host host.Adapter
	dir  string
}

// definitionFolders finds every host's agents folder (.claude/agents,
// .codex/agents) under root, in path order, not looking into .git. A root
// that is an agents folder itself is one. Links to folders are followed,
// as the hosts follow them; a folder reached twice is looked at once, and
// the walk is bounded (document.Walk).
func definitionFolders(ctx context.Context, root string) ([]folder, error) {
	hostOf := func(path string) host.Adapter {
		slash := filepath.ToSlash(path)
		for _, a := range hosts.All {
			f := filepath.ToSlash(a.DefinitionsFolder())
			if strings.HasSuffix(slash, "/"+f) || slash == f {
				return a
			}
		}
		return nil
	}
	w := document.Walk{
		Hint:      "name the repository, or the folders that hold the agent definitions",
		Folder:    func(path string) bool { return hostOf(path) != nil },
		Recursive: true,
		Skip:      func(name string) bool { return name == ".git" },
		Max:       maxTreeEntries,
	}
	dirs, err := w.Files(ctx, root)
	if err != nil {
		return nil, err
	}
	out := make([]folder, len(dirs))
	for i, d := range dirs {
		out[i] = folder{hostOf(d), d}
	}
	return out, nil
}

// maxTreeEntries bounds the entries spawngate agents looks at under one
// path.
const maxTreeEntries = 1_000_000

func parseAgents(args []string, help io.Writer) (*agentsOptions, error) {
	opts := &agentsOptions{gate: judge.DefaultOptions(), format: render.Formats[0], maxListed: report.DefaultMaxListed}
	c := newCommand("spawngate agents", printAgentsHelp)
	c.gateFlags(&opts.policy, &opts.gate)
	c.reportFlags(&opts.format, &opts.outputs, &opts.maxListed)
	c.fs.StringVar(&opts.cwd, "cwd", "", "the `DIR` each agent is taken to work in, as a session's cwd would be (default: the repository each definition is found in)")
	c.budgetFlag(&opts.budget)
	c.fs.BoolVar(&opts.allowNone, "allow-none", false, "exit 0 when no agent definition is found, for a repository that may hold none (default: exit 2, since nothing to check is not a pass)")
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
	if err := checkBudget(opts.budget); err != nil {
		return opts, err
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
	if err := c.checkOutputs(&opts.format, opts.outputs, []string{opts.policy, opts.gate.Bundle}); err != nil {
		return opts, err
	}
	return opts, nil
}

func printAgentsHelp(w io.Writer, fs *flag.FlagSet) {
	var folders []string
	for _, a := range hosts.All {
		folders = append(folders, a.DefinitionsFolder())
	}
	fmt.Fprint(w, "Usage: spawngate agents --policy FILE [flags] [PATH...]\n\n"+
		"Finds every agent definition under each PATH (default: the current\n"+
		"repository), in the folders the hosts read them from ("+strings.Join(folders, ", ")+"),\n"+
		"judges each as a spawn of it would be judged by spawngate hook, and\n"+
		"reports each finding with its file and line. Exits 0 if every definition\n"+
		"passes, 1 if any is refused, 2 if the gate could not evaluate or found\n"+
		"no definition (but with --allow-none).\n\nFlags:\n")
	printFlags(w, fs)
	fmt.Fprint(w, "\nExamples:\n  spawngate agents --policy .github/spawngate/agents.yaml --cwd /workspace\n"+
		"  spawngate agents --policy .github/spawngate/agents.yaml --cwd /workspace --output sarif=agents.sarif\n"+
		"  spawngate agents --policy .github/spawngate/agents.yaml --format json > agents.json\n")
}
