package claudecode

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"

	"github.com/spawngate/spawngate/internal/agent"
	"github.com/spawngate/spawngate/internal/document"
	"github.com/spawngate/spawngate/internal/host"
)

// workflowSpawn translates a Workflow call. A workflow is a script that
// starts agents of any type as it runs (agent('...', {agentType: ...})),
// and none of them reaches the hook: what it starts cannot be read from
// the call. The child stands for the script: it holds the tool Workflow,
// its definition is the workflow's file, and check agent.launch refuses it
// unless every policy names the workflow in allowed_workflows. A script
// written into the call, or read from a path, has no name and no
// definition the gate can hold it to, and agent.definition refuses it.
func workflowSpawn(_ context.Context, env host.Env, s session, c call, p *host.Payload, input map[string]any) (agent.Translation, error) {
	name := p.InputString(input, "name")
	if err := p.Err(); err != nil {
		return agent.Translation{}, err
	}
	_, script := input["script"]
	_, path := input["scriptPath"]
	c.Type, c.Launch = "workflow", "workflow"
	var def *agent.Definition
	problem := "the workflow script is written into the call (or read from a path), so the agents it starts cannot be judged: run a named workflow that the policy lists in allowed_workflows"
	if name != "" && !script && !path {
		c.Type = "workflow:" + name
		if file := workflowFile(env, s, name); file != "" {
			def = &agent.Definition{File: file, Name: c.Type, Fields: map[string]any{}, Lines: map[string]int{}}
		} else {
			problem = fmt.Sprintf("workflow %q is not found in a .claude/workflows folder the gate reads, so what it runs cannot be known", name)
		}
	}
	if s.program != "" {
		// The agents a script names may be the program's, which the
		// hook cannot read, and an allowed workflow trusts them all.
		def, problem = nil, fmt.Sprintf("this session takes agent definitions from the program that drives it (%s), and the agents a workflow starts may be the program's, which the hook cannot read: no workflow is judged in such a session", s.program)
	}
	t, facts := agent.Start(c.Call, def, problem)
	facts["launch"] = "workflow"
	facts["workflow"] = nil
	if name != "" && !script && !path {
		facts["workflow"] = name
	}
	facts["permission_mode"] = sessionMode(c, "default")
	t.Child["tools"] = []any{"Workflow"}
	return t, nil
}

// builtinWorkflows are the workflows that come with Claude Code (read
// from the client, 2.1.332), by name.
var builtinWorkflows = []string{"deep-research"}

// workflowMeta finds the name a workflow script gives itself: export const
// meta = { name: '...' }.
var workflowMeta = regexp.MustCompile(`\bmeta\s*=\s*\{[^}]*?\bname\s*:\s*['"\x60]([^'"\x60]+)['"\x60]`)

// workflowFile finds a named workflow's script where Claude Code looks:
// the *.js files directly in .claude/workflows of the project's folders
// from the start folder up to the repository root, then the user's, the
// first whose meta names it (the name is the script's meta.name, not its
// file name); "" when none does. A built-in workflow is named by
// builtinWorkflows' marker.
func workflowFile(env host.Env, s session, name string) string {
	var bases []string
	if s.loads("project") {
		for _, d := range projectDirs(env, s) {
			bases = append(bases, filepath.Join(d, ".claude"))
		}
	}
	if u := userDir(env, s); s.loads("user") && u != "" {
		bases = append(bases, u)
	}
	for _, b := range bases {
		dir := filepath.Join(b, "workflows")
		entries, err := os.ReadDir(dir)
		if err != nil {
			continue
		}
		for _, e := range entries {
			f := filepath.Join(dir, e.Name())
			if filepath.Ext(e.Name()) != ".js" {
				continue
			}
			if info, err := os.Stat(f); err != nil || !info.Mode().IsRegular() {
				continue
			}
			data, err := document.ReadFile(f, env.Limits.MaxBytes)
			if err != nil {
				continue
			}
			if m := workflowMeta.FindSubmatch(data); m != nil && string(m[1]) == name {
				return f
			}
		}
	}
	if slices.Contains(builtinWorkflows, name) {
		return "(built into Claude Code)"
	}
	return ""
}
