package codex

import (
	"strings"

	"github.com/spawngate/spawngate/internal/e2e/fakemodel"
)

// childScript answers the requests of one agent.
type childScript = fakemodel.Script

// plan scripts a scenario's model: the main agent spawns once (v1:
// multi_agent_v1.spawn_agent; v2: collaboration.spawn_agent), waits for the
// child if the spawn went through, and ends; each child is scripted by the
// name of the definition whose marker its instructions carry.
type plan struct {
	v2    bool
	spawn map[string]any
	// preface is an assistant message the main agent says beside its spawn
	// call: a secret that only a child given the parent's history can see.
	preface  string
	children map[string]childScript
	// other scripts a sub-agent whose instructions carry no known marker
	// (a forked child, a built-in type); nil ends it at once.
	other childScript
}

func (p plan) scripts() fakemodel.Scripts {
	subs := map[string]fakemodel.Script{}
	for name, f := range p.children {
		subs[marker(name)] = f
	}
	return fakemodel.Scripts{Main: spawnThenWait("main", p.v2, p.spawn, p.preface), Subs: subs, Other: p.other}
}

// spawnThenWait is an agent that spawns once and waits for the child: the
// wait keeps the session (and codex exec) alive until the child's turn is
// over, so what the child did is on disk when the run returns. Its call_ids
// start with prefix.
func spawnThenWait(prefix string, v2 bool, args map[string]any, preface string) childScript {
	return func(r *fakemodel.Request) fakemodel.Turn {
		ns := "multi_agent_v1"
		if v2 {
			ns = "collaboration"
		}
		switch r.Step(prefix) {
		case 0:
			t := call(ns, "spawn_agent", prefix+"_spawn", args)
			t.Text = preface
			return t
		case 1:
			out := r.Output(prefix + "_spawn")
			if !spawned(out) {
				return fakemodel.Say("spawn refused: done")
			}
			if v2 {
				return call(ns, "wait_agent", prefix+"_wait", map[string]any{"timeout_ms": 60000})
			}
			return call(ns, "wait_agent", prefix+"_wait", map[string]any{"targets": []string{agentID(out)}, "timeout_ms": 60000})
		default:
			return fakemodel.Say("done")
		}
	}
}

// spawned tells a started child from a refused or failed spawn by the tool
// result: v1 answers {"agent_id": ...}, v2 {"task_name": ...}; a hook's
// block and Codex's own errors are plain text.
func spawned(out string) bool {
	if agentID(out) != "" {
		return true
	}
	return strings.Contains(out, `"task_name"`)
}

// runs is a child that runs one shell command with exec_command, then ends.
func runs(prefix, cmd string) childScript {
	return func(r *fakemodel.Request) fakemodel.Turn {
		if r.Step(prefix) == 0 {
			return call("", "exec_command", prefix+"_cmd", map[string]any{"cmd": cmd})
		}
		return fakemodel.Say("child done")
	}
}
