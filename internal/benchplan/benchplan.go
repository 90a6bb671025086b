// Package benchplan generates large spawn plans for the benchmarks and the
// comparison script: the fan-out of an orchestrator that splits a backlog
// into many tasks, each child made from one of a few role templates, with a
// few percent of children that ask for too much.
package benchplan

import (
	"bytes"
	"strconv"
)

// Options shape a generated plan.
type Options struct {
	// Children is how many children the plan lists.
	Children int
	// RefusedEvery makes every n-th child ask for too much (a write tool,
	// a path out of the workspace, a budget over the cap); 0 for none.
	RefusedEvery int
	// Shards is how many distinct task directories the children share;
	// 0 gives every child its own, so no two children are granted alike.
	Shards int
	// Distinct gives every child its own role, budget, absolute task
	// directory and relative docs path, as real fan-outs are written: no
	// two children can be judged as one. Templates decide only the tools.
	Distinct bool
	// ToolsOnly makes every child that asks for too much ask for a tool
	// outside the allowlist (shell.run), never a path or a budget: the
	// violations an exception on that tool (PolicyExcepting) lets through.
	ToolsOnly bool
}

// Distinct is the plan real fan-outs write: every child its own role,
// budget and paths, 1% of children asking for too much.
func Distinct(children int) Options {
	return Options{Children: children, RefusedEvery: 100, Distinct: true}
}

// Default is the benchmark's plan: 3% of children refused, 64 task
// directories.
func Default(children int) Options {
	return Options{Children: children, RefusedEvery: 33, Shards: 64}
}

type template struct {
	role   string
	tools  string
	paths  string
	budget int
}

var templates = []template{
	{"doc-reader", `["fs.read"]`, `"/repo/workspace/docs"`, 40000},
	{"code-reader", `["fs.read","http.get"]`, `"/repo/workspace/src"`, 80000},
	{"researcher", `["http.get","mcp__github__get_issue","mcp__github__get_pull_request"]`, ``, 60000},
	{"summarizer", `["fs.read"]`, `"docs/summaries"`, 20000},
	{"test-reader", `["fs.read"]`, `"/repo/workspace/tests","/repo/workspace/src"`, 50000},
	{"triager", `["mcp__github__get_issue","http.get"]`, ``, 30000},
}

// Policy is the operator policy the generated plans are judged by, in
// JSON.
const Policy = `{"allowed_tools": ["fs.read", "fs.write", "http.get", "mcp__github__get_*"], "workspace_root": "/repo/workspace", "budget_cap_tokens": 200000}`

// PolicyExcepting is Policy with exceptions that let a refused tool
// through for every child (it is outside the allowlist, and it writes):
// the violations of a ToolsOnly plan are all excepted, and each is still
// judged and reported.
const PolicyExcepting = `{"allowed_tools": ["fs.read", "fs.write", "http.get", "mcp__github__get_*"], "workspace_root": "/repo/workspace", "budget_cap_tokens": 200000,
 "exceptions": [
  {"rule": "tools.allowlist", "tool": "shell.run", "reason": "benchmark: every refused child's violations excepted", "expires": "2999-12-31"},
  {"rule": "tools.write", "tool": "shell.run", "reason": "benchmark: every refused child's violations excepted", "expires": "2999-12-31"}]}`

// Generate writes a plan as JSON.
func Generate(o Options) []byte {
	var b bytes.Buffer
	b.Grow(o.Children * 200)
	b.WriteString(`{"plan":[`)
	for i := 0; i < o.Children; i++ {
		if i > 0 {
			b.WriteString(",\n")
		}
		t := templates[i%len(templates)]
		shard := i
		if o.Shards > 0 {
			shard = i % o.Shards
		}
		tools, paths, budget := t.tools, t.paths, t.budget
		if o.RefusedEvery > 0 && i%o.RefusedEvery == o.RefusedEvery-1 {
			kind := (i / o.RefusedEvery) % 3
			if o.ToolsOnly {
				kind = 0
			}
			switch kind {
			case 0:
				tools = `["fs.read","shell.run"]`
			case 1:
				paths = `"~/.ssh"`
			case 2:
				budget = 5000000
			}
		}
		if o.Distinct {
			writeDistinct(&b, i, tools, paths != t.paths, budget != t.budget)
			continue
		}
		b.WriteString(`{"id":"task-`)
		b.WriteString(strconv.Itoa(i))
		b.WriteString(`","role":"`)
		b.WriteString(t.role)
		b.WriteString(`","brief":"Work through item `)
		b.WriteString(strconv.Itoa(i))
		b.WriteString(` of the backlog.","tools":`)
		b.WriteString(tools)
		b.WriteString(`,"paths":[`)
		if paths != "" {
			b.WriteString(paths)
			b.WriteString(",")
		}
		b.WriteString(`"/repo/workspace/tasks/`)
		b.WriteString(strconv.Itoa(shard))
		b.WriteString(`"],"budget_tokens":`)
		b.WriteString(strconv.Itoa(budget))
		b.WriteString("}")
	}
	b.WriteString("]}\n")
	return b.Bytes()
}

// writeDistinct writes child i of a distinct plan: its own role, budget,
// task directory and docs path; escape and overBudget make it ask for too
// much.
func writeDistinct(b *bytes.Buffer, i int, tools string, escape, overBudget bool) {
	n := strconv.Itoa(i)
	b.WriteString(`{"id":"task-` + n + `","role":"worker-` + n + `","brief":"Work through item ` + n + ` of the backlog.","tools":`)
	b.WriteString(tools)
	b.WriteString(`,"paths":["/repo/workspace/task-` + n + `",`)
	if escape {
		b.WriteString(`"~/.ssh/` + n + `"`)
	} else {
		b.WriteString(`"docs/` + n + `"`)
	}
	b.WriteString(`],"budget_tokens":`)
	budget := 1000 + i%150000
	if overBudget {
		budget = 5000000 + i
	}
	b.WriteString(strconv.Itoa(budget))
	b.WriteString("}")
}
