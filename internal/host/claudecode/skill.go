package claudecode

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/spawngate/spawngate/internal/agent"
	"github.com/spawngate/spawngate/internal/host"
	"github.com/spawngate/spawngate/internal/plan"
)

// skill is one definition of a skill (or command) Claude Code could run
// for a Skill call.
type skill struct {
	file string
	// fork says whether it runs in a sub-agent (context: fork), and agent
	// names the agent it forks ("" for the default).
	fork  bool
	agent string
	body  string
	// problem says why the file cannot be read as the host reads it.
	problem string
}

// skillFiles lists where a skill of a name may be defined, highest
// precedence first: the managed folder, the project's folders from the
// start folder up to the repository root, the --add-dir folders and the
// user's folder; in each, skills/NAME/SKILL.md and commands/NAME.md. A
// name with ':' is a skill in a subfolder (a:b is a/b).
func skillFiles(env host.Env, s session, name string) []string {
	rel := filepath.Join(strings.Split(name, ":")...)
	var bases []string
	bases = append(bases, filepath.Join(rootOf(env), "etc", "claude-code", ".claude"))
	if s.loads("project") {
		for _, d := range agent.UpToRoot(s.project) {
			bases = append(bases, filepath.Join(d, ".claude"))
		}
		for _, d := range s.addDirs {
			if !filepath.IsAbs(d) {
				d = filepath.Join(s.project, d)
			}
			bases = append(bases, filepath.Join(d, ".claude"))
		}
	}
	if s.loads("user") && env.Home != "" {
		bases = append(bases, filepath.Join(env.Home, ".claude"))
	}
	var files []string
	for _, b := range bases {
		files = append(files, filepath.Join(b, "skills", rel, "SKILL.md"), filepath.Join(b, "commands", rel+".md"))
	}
	return files
}

// readSkill reads a skill file's frontmatter as Claude Code reads it.
func readSkill(file string, lim plan.Limits) skill {
	sk := skill{file: file}
	data, err := plan.ReadFile(file, lim.MaxBytes)
	if err != nil {
		sk.problem = plan.OneLine(err.Error())
		return sk
	}
	front, body, ok := hostFrontmatter(data)
	if !ok {
		sk.body = string(data)
		return sk // no frontmatter: it runs inline
	}
	var fields map[string]any
	if err := yaml.Unmarshal(front, &fields); err != nil {
		sk.problem = "its frontmatter is not YAML the gate can read: " + plan.OneLine(err.Error())
		return sk
	}
	sk.body = string(body)
	sk.fork = fields["context"] == "fork"
	if a, set := fields["agent"]; set && a != nil {
		sk.agent = fmt.Sprint(a)
	}
	return sk
}

// bundledSkills are the skills that come with Claude Code itself and that
// the model may run with the Skill tool, by whether they fork a sub-agent
// (and which agent). A name that is neither defined in a folder nor listed
// here cannot be known, and is refused.
var bundledSkills = map[string]skill{}

// skillSpawn translates a Skill call: the skill is found where Claude
// Code finds it, and when it runs in a sub-agent (context: fork) the
// child is the agent it forks: its agent: setting, matched exactly, else
// general-purpose. A skill that runs inline starts no sub-agent (nil). A
// skill that cannot be found, or read, cannot be known not to fork, and is
// refused.
func skillSpawn(_ context.Context, env host.Env, s session, catalog *agent.Catalog, c call, p *host.Payload, input map[string]any) ([]agent.Translation, error) {
	name := strings.TrimPrefix(p.InputString(input, "skill"), "/")
	args := p.InputString(input, "args")
	if err := p.Err(); err != nil {
		return nil, err
	}
	c.Launch = "skill"
	if name == "" {
		c.Type = "skill"
		t, _ := agent.Start(c.Call, nil, "the Skill call names no skill")
		return []agent.Translation{t}, nil
	}
	var found []skill
	for _, f := range skillFiles(env, s, name) {
		if info, err := os.Stat(f); err == nil && !info.IsDir() {
			found = append(found, readSkill(f, env.Limits))
		}
	}
	if len(found) == 0 {
		if b, ok := bundledSkills[name]; ok {
			found = append(found, b)
		} else {
			c.Type = "skill:" + name
			return []agent.Translation{translate(c, nil, fmt.Sprintf("skill %q is not defined in a skills or commands folder the gate reads, so whether it runs a sub-agent (context: fork) cannot be known: define it in .claude/skills/%s/SKILL.md", name, strings.ReplaceAll(name, ":", "/")))}, nil
		}
	}
	var out []agent.Translation
	for _, sk := range found {
		if sk.problem != "" {
			c.Type = "skill:" + name
			out = append(out, translate(c, nil, fmt.Sprintf("skill %q (%s) cannot be read as Claude Code reads it: %s", name, sk.file, sk.problem)))
			continue
		}
		if !sk.fork {
			continue
		}
		c.Brief = strings.TrimSpace(sk.body + "\n\n" + args)
		typ := sk.agent
		if !exists(catalog, typ) {
			typ = DefaultType // the host falls back to general-purpose
		}
		def, problem := resolve(catalog, typ)
		c.Type = typ
		t := translate(c, def, problem)
		facts, _ := t.Child["agent"].(map[string]any)
		facts["skill"] = name
		out = append(out, t)
	}
	return out, nil
}

// exists tells whether an agent of exactly this name is available: a
// definition (readable or not) or a built-in.
func exists(c *agent.Catalog, name string) bool {
	if name == "" {
		return false
	}
	if _, _, found := c.Find(name, func(*agent.Definition) bool { return false }); found {
		return true
	}
	return slices.Contains(Builtin, name)
}
