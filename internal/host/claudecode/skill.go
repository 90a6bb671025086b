package claudecode

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/spawngate/spawngate/internal/agent"
	"github.com/spawngate/spawngate/internal/document"
	"github.com/spawngate/spawngate/internal/host"
)

// skill is one definition of a skill (or command) Claude Code could run
// for a Skill call or a /command.
type skill struct {
	file string
	// fork says whether it runs in a sub-agent (context: fork), and agent
	// names the agent it forks ("" for the default).
	fork  bool
	agent string
	// model is the skill's own model:, which overrides the agent's.
	model string
	// noModel (disable-model-invocation) keeps the Skill tool from running
	// it; noUser (user-invocable: false) keeps a /command from it.
	noModel, noUser bool
	body            string
	// problem says why the file cannot be read as the host reads it.
	problem string
}

// skillFiles lists where a skill of a name may be defined, in Claude
// Code's order, the first found winning: skills/NAME/SKILL.md in the
// managed folder, the user's, the project's folders from the start folder
// up to the repository root, and the --add-dir folders; then
// commands/NAME.md in the same folders (a name with ':' is a command in a
// subfolder: a:b is commands/a/b.md; skills are one level deep).
func skillFiles(env host.Env, s session, name string) []string {
	var bases []string
	bases = append(bases, filepath.Join(rootOf(env), "etc", "claude-code", ".claude"))
	if u := userDir(env, s); s.loads("user") && u != "" {
		bases = append(bases, u)
	}
	if s.loads("project") {
		for _, d := range projectDirs(env, s) {
			bases = append(bases, filepath.Join(d, ".claude"))
		}
		for _, d := range s.addDirs {
			if !filepath.IsAbs(d) {
				d = filepath.Join(s.project, d)
			}
			bases = append(bases, filepath.Join(d, ".claude"))
		}
	}
	var files []string
	if !strings.Contains(name, ":") {
		for _, b := range bases {
			files = append(files, filepath.Join(b, "skills", name, "SKILL.md"))
		}
	}
	rel := filepath.Join(strings.Split(name, ":")...)
	for _, b := range bases {
		files = append(files, filepath.Join(b, "commands", rel+".md"))
	}
	return files
}

// forkLine finds a context: fork line in frontmatter the gate cannot read
// as YAML, which the host might read all the same.
var forkLine = regexp.MustCompile(`(?m)^\s*["']?context["']?\s*:\s*["']?fork\b`)

// readSkill reads a skill file's frontmatter as Claude Code reads it.
func readSkill(file string, lim document.Limits) skill {
	sk := skill{file: file}
	data, err := document.ReadFile(file, lim.MaxBytes)
	if err != nil {
		sk.problem = document.OneLine(err.Error())
		return sk
	}
	front, body, ok := hostFrontmatter(data)
	if !ok {
		sk.body = string(data)
		return sk // no frontmatter: it runs inline
	}
	var fields map[string]any
	if err := yaml.Unmarshal(front, &fields); err != nil {
		// The host runs such a skill inline; one that says context: fork
		// all the same is refused rather than guessed at.
		if forkLine.Match(front) {
			sk.problem = "its frontmatter is not YAML the gate can read, and it says context: fork: " + document.OneLine(err.Error())
		}
		sk.body = string(data)
		return sk
	}
	sk.body = string(body)
	sk.fork = fields["context"] == "fork"
	if a, set := fields["agent"]; set && a != nil {
		sk.agent = fmt.Sprint(a)
	}
	if m, ok := fields["model"].(string); ok && m != "inherit" {
		sk.model = m
	}
	sk.noModel = fields["disable-model-invocation"] == true
	sk.noUser = fields["user-invocable"] == false
	return sk
}

// bundledSkills are the skills that come with Claude Code itself and fork
// a sub-agent, by name, with the agent they fork. Read from the client
// (2.1.332): the others run inline.
var bundledSkills = map[string]skill{
	"code-review": {file: "(bundled with Claude Code)", fork: true, agent: DefaultType},
	"review":      {file: "(bundled with Claude Code)", fork: true, agent: DefaultType},
}

// findSkill finds the skill a name runs, as Claude Code finds it: the
// first definition in skillFiles' order that the caller may run (the
// Skill tool skips disable-model-invocation, a /command user-invocable:
// false), else a bundled one. ok is false when none is found.
func findSkill(env host.Env, s session, name string, byModel bool) (skill, bool) {
	for _, f := range skillFiles(env, s, name) {
		info, err := os.Stat(f)
		if err != nil || info.IsDir() {
			continue
		}
		sk := readSkill(f, env.Limits)
		if sk.problem == "" && (byModel && sk.noModel || !byModel && sk.noUser) {
			continue
		}
		return sk, true
	}
	sk, ok := bundledSkills[name]
	return sk, ok
}

// skillSpawn translates a Skill call.
func skillSpawn(_ context.Context, env host.Env, s session, catalog *agent.Catalog, c call, p *host.Payload, input map[string]any) ([]agent.Translation, error) {
	name := strings.TrimPrefix(p.InputString(input, "skill"), "/")
	args := p.InputString(input, "args")
	if err := p.Err(); err != nil {
		return nil, err
	}
	return skillChildren(env, s, catalog, c, name, args, true), nil
}

// skillChildren translates running a skill: the skill is found where
// Claude Code finds it, and when it runs in a sub-agent (context: fork)
// the child is the agent it forks: its agent: setting, matched exactly,
// else general-purpose, on the skill's model when it names one. A skill
// that runs inline starts no sub-agent (nil). A skill that cannot be
// found, or read, cannot be known not to fork, and is refused.
func skillChildren(env host.Env, s session, catalog *agent.Catalog, c call, name, args string, byModel bool) []agent.Translation {
	c.Launch = "skill"
	if name == "" {
		c.Type = "skill"
		t, _ := agent.Start(c.Call, nil, "the Skill call names no skill")
		return []agent.Translation{t}
	}
	sk, found := findSkill(env, s, name, byModel)
	if !found {
		c.Type = "skill:" + name
		return []agent.Translation{translate(c, nil, fmt.Sprintf("skill %q is not defined in a skills or commands folder the gate reads, so whether it runs a sub-agent (context: fork) cannot be known: define it in .claude/skills/%s/SKILL.md", name, strings.ReplaceAll(name, ":", "/")))}
	}
	if sk.problem != "" {
		c.Type = "skill:" + name
		return []agent.Translation{translate(c, nil, fmt.Sprintf("skill %q (%s) cannot be read as Claude Code reads it: %s", name, sk.file, sk.problem))}
	}
	if !sk.fork {
		return nil
	}
	c.Brief = strings.TrimSpace(strings.TrimSpace(sk.body) + "\n\n" + args)
	typ := sk.agent
	if !exists(catalog, typ) {
		typ = DefaultType // the host falls back to general-purpose
	}
	if sk.model != "" {
		c.Model = sk.model
	}
	def, problem := resolve(catalog, typ)
	c.Type = typ
	t := translate(c, def, problem)
	facts, _ := t.Child["agent"].(map[string]any)
	facts["skill"] = name
	return append([]agent.Translation{t}, observers(env, catalog, c, def)...)
}

// expansionSpawn translates a UserPromptExpansion payload: a prompt's
// /command, expanded before the model sees it. A command that names a
// skill with context: fork starts its sub-agent there, with no tool call
// and no PreToolUse. An MCP prompt expands text only.
func expansionSpawn(ctx context.Context, p *host.Payload, env host.Env) (*host.Spawn, error) {
	kind := p.String("expansion_type")
	name := strings.TrimPrefix(p.String("command_name"), "/")
	args := p.String("command_args")
	cwd := p.Cwd()
	if err := p.Err(); err != nil {
		return nil, err
	}
	switch kind {
	case "mcp_prompt":
		return nil, nil
	case "slash_command":
	default:
		return nil, host.Bad("/expansion_type", "expansion_type %s is not one the gate knows (slash_command, mcp_prompt), so what it starts cannot be known", host.Show(kind))
	}
	s, err := sessionOf(p, env, cwd)
	if err != nil {
		return nil, err
	}
	catalog, err := load(ctx, env, s)
	if err != nil {
		return nil, err
	}
	c := call{Call: agent.Call{Host: Name, Caller: p.String("agent_id"), Budget: env.Budget}}
	c.SessionMode = p.String("permission_mode")
	c.Paths = sessionPaths(s, cwd)
	if env.Getenv != nil {
		c.EnvModel = env.Getenv("CLAUDE_CODE_SUBAGENT_MODEL")
		c.EnvForce = truthy(env.Getenv("CLAUDE_CODE_SUBAGENT_MODEL_FORCE"))
	}
	if _, found := findSkill(env, s, name, false); !found && !strings.Contains(name, ":") {
		// Claude Code's own commands (/init, /compact ...) run no
		// sub-agent of their own but through a tool call, which PreToolUse
		// judges; the bundled ones that fork are in bundledSkills. A
		// plugin's command (plugin:name) the gate cannot read is refused
		// below.
		return nil, nil
	}
	children := skillChildren(env, s, catalog, c, name, args, false)
	if children == nil {
		return nil, nil
	}
	refuseStale(catalog, s, children)
	sp := &host.Spawn{Event: Expansion, Session: p.String("session_id"), Children: children, Folders: s.folders(), ByHand: !s.read}
	for _, t := range children {
		if b, ok := t.Child["brief"].(string); ok && sp.Brief == "" {
			sp.Brief = b
		}
	}
	return sp, nil
}

// exists tells whether an agent of exactly this name is available: a
// definition (readable or not) or a built-in.
func exists(c *agent.Catalog, name string) bool {
	if name == "" {
		return false
	}
	if programAt(c) >= 0 {
		return true // the program may define it: never a fallback
	}
	if _, _, found := c.Find(name, func(*agent.Definition) bool { return false }); found {
		return true
	}
	return slices.Contains(Builtin, name)
}
