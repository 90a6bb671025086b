package engine_test

import (
	"context"
	"errors"
	"regexp"
	"strings"
	"testing"

	"github.com/spawngate/spawngate/internal/engine"
	"github.com/spawngate/spawngate/policy"
)

// meta is a valid METADATA block for an operator's check with the given
// rule ID: five lines, so the package line of a module starting with it is
// line 7 (after the # METADATA line).
func meta(id string) string {
	return "# METADATA\n# title: T\n# description: D\n# custom:\n#   id: " + id + "\n#   severity: low\n"
}

func builtinModules(t testing.TB) []policy.Module {
	t.Helper()
	mods, err := policy.Modules()
	if err != nil {
		t.Fatal(err)
	}
	return mods
}

// Every part of the check contract an operator's module can break is a
// start-up error naming the module and the line: the package line, or the
// rule or call at fault.
func TestCustomChecksBreakingTheContract(t *testing.T) {
	tests := []struct {
		name    string
		modules []policy.Module
		file    string
		line    int
		want    string
	}{
		{"no METADATA", []policy.Module{{Name: "checks/a.rego", Source: "package spawngate.checks.a\n\ndeny contains 1 if false\n"}},
			"checks/a.rego", 1, "no # METADATA with custom.id"},
		{"no custom.id", []policy.Module{{Name: "checks/a.rego", Source: "# METADATA\n# title: T\n# description: D\n# custom:\n#   severity: low\npackage spawngate.checks.a\n\ndeny contains 1 if false\n"}},
			"checks/a.rego", 6, "METADATA has no custom.id"},
		{"bad id", []policy.Module{{Name: "checks/a.rego", Source: meta("Org") + "package spawngate.checks.a\n\ndeny contains 1 if false\n"}},
			"checks/a.rego", 7, `custom.id "Org" is not a rule ID`},
		{"no title", []policy.Module{{Name: "checks/a.rego", Source: "# METADATA\n# description: D\n# custom:\n#   id: org.a\n#   severity: low\npackage spawngate.checks.a\n\ndeny contains 1 if false\n"}},
			"checks/a.rego", 6, "METADATA has no title"},
		{"no severity", []policy.Module{{Name: "checks/a.rego", Source: "# METADATA\n# title: T\n# description: D\n# custom:\n#   id: org.a\npackage spawngate.checks.a\n\ndeny contains 1 if false\n"}},
			"checks/a.rego", 6, `custom.severity ""`},
		{"reuses a built-in rule ID", []policy.Module{{Name: "checks/a.rego", Source: meta("budget.cap") + "package spawngate.checks.a\n\ndeny contains 1 if false\n"}},
			"checks/a.rego", 7, "rule ID budget.cap is already a built-in check's (spawngate.checks.budget_cap)"},
		{"two of one's own with one ID", []policy.Module{
			{Name: "checks/a.rego", Source: meta("org.a") + "package spawngate.checks.a\n\ndeny contains 1 if false\n"},
			{Name: "checks/b.rego", Source: meta("org.a") + "package spawngate.checks.b\n\ndeny contains 1 if false\n"}},
			"checks/b.rego", 7, "rule ID org.a is already used by package spawngate.checks.a (checks/a.rego)"},
		{"no deny", []policy.Module{{Name: "checks/a.rego", Source: meta("org.a") + "package spawngate.checks.a\n\nallow := true\n"}},
			"checks/a.rego", 7, "no deny rule"},
		{"deny not a set", []policy.Module{{Name: "checks/a.rego", Source: meta("org.a") + "package spawngate.checks.a\n\ndeny := {}\n"}},
			"checks/a.rego", 9, "deny must be a set of violations"},
		{"two levels below spawngate.checks", []policy.Module{{Name: "checks/a.rego", Source: meta("org.a") + "package spawngate.checks.a.b\n\ndeny contains 1 if false\n"}},
			"checks/a.rego", 7, "a check must be one level below spawngate.checks"},
		{"spawngate.checks itself", []policy.Module{{Name: "checks/a.rego", Source: "package spawngate.checks\n\nx := 1\n"}},
			"checks/a.rego", 1, "a check must be one level below spawngate.checks"},
		{"network", []policy.Module{{Name: "checks/a.rego", Source: meta("org.a") + "package spawngate.checks.a\n\ndeny contains v if {\n\tv := http.send({\"method\": \"get\", \"url\": \"http://x\"})\n}\n"}},
			"checks/a.rego", 10, "calls http.send, which reaches the network: checks may not reach the network, the clock or randomness"},
		{"clock", []policy.Module{{Name: "checks/a.rego", Source: meta("org.a") + "package spawngate.checks.a\n\ndeny contains v if {\n\tv := time.now_ns()\n}\n"}},
			"checks/a.rego", 10, "calls time.now_ns, which reads the clock"},
		{"randomness", []policy.Module{{Name: "checks/a.rego", Source: meta("org.a") + "package spawngate.checks.a\n\ndeny contains v if {\n\tv := rand.intn(\"x\", 3)\n}\n"}},
			"checks/a.rego", 10, "calls rand.intn, which draws random numbers"},
		{"a uuid", []policy.Module{{Name: "checks/a.rego", Source: meta("org.a") + "package spawngate.checks.a\n\ndeny contains v if {\n\tv := uuid.rfc4122(\"x\")\n}\n"}},
			"checks/a.rego", 10, "calls uuid.rfc4122, which draws random numbers"},
		{"the runtime", []policy.Module{{Name: "checks/a.rego", Source: meta("org.a") + "package spawngate.checks.a\n\ndeny contains v if {\n\tv := opa.runtime()\n}\n"}},
			"checks/a.rego", 10, "calls opa.runtime, which reads the environment"},
		{"an unknown function", []policy.Module{{Name: "checks/a.rego", Source: meta("org.a") + "package spawngate.checks.a\n\ndeny contains v if {\n\tv := foo.bar(1)\n}\n"}},
			"checks/a.rego", 10, "does not compile: undefined function foo.bar (rego_type_error)"},
		{"parse error", []policy.Module{{Name: "checks/a.rego", Source: meta("org.a") + "package spawngate.checks.a\n\ndeny contains v if {\n\tv :=\n}\n"}},
			"checks/a.rego", 11, "does not parse: unexpected } token (rego_parse_error)"},
		{"Rego v0", []policy.Module{{Name: "checks/a.rego", Source: meta("org.a") + "package spawngate.checks.a\n\ndeny[v] {\n\tv := 1\n}\n"}},
			"checks/a.rego", 9, "does not parse"},
		{"compile error", []policy.Module{{Name: "checks/a.rego", Source: meta("org.a") + "package spawngate.checks.a\n\ndeny contains v if {\n\tv == 1\n}\n"}},
			"checks/a.rego", 10, "does not compile: var v is unsafe (rego_unsafe_var_error)"},
		{"type error, found at start-up for an operator's check", []policy.Module{{Name: "checks/a.rego", Source: meta("org.a") + "package spawngate.checks.a\n\ndeny contains v if {\n\tv := concat(\"\", 5)\n}\n"}},
			"checks/a.rego", 10, "does not compile: concat: invalid argument(s)"},
		{"recursion", []policy.Module{{Name: "checks/a.rego", Source: meta("org.a") + "package spawngate.checks.a\n\ndeny contains v if {\n\tv := f(1)\n}\n\nf(x) := f(x)\n"}},
			"checks/a.rego", 13, "rego_recursion_error"},
		{"empty file", []policy.Module{{Name: "checks/a.rego", Source: "# nothing yet\n"}},
			"checks/a.rego", 0, "does not parse"},
		{"overrides spawngate.lib", []policy.Module{{Name: "checks/lib.rego", Source: "package spawngate.lib\n\nviolation(child, field, message) := {}\n"}},
			"checks/lib.rego", 1, "package spawngate.lib is built in (lib.rego), and this module is not the built-in one: a module of your own cannot add rules to a built-in package"},
		{"adds below spawngate.lib", []policy.Module{{Name: "checks/lib.rego", Source: "package spawngate.lib.more\n\nx := 1\n"}},
			"checks/lib.rego", 1, "would add to the built-in package spawngate.lib"},
		{"adds to a built-in check", []policy.Module{{Name: "checks/cap.rego", Source: "package spawngate.checks.budget_cap\n\nwithin_every_cap(budget) if true\n"}},
			"checks/cap.rego", 1, "package spawngate.checks.budget_cap is built in (budget_cap.rego)"},
		{"above every built-in package", []policy.Module{{Name: "checks/s.rego", Source: "package spawngate\n\nx := 1\n"}},
			"checks/s.rego", 1, "would add to the built-in package"},
		{"outside the operator's packages", []policy.Module{{Name: "checks/h.rego", Source: "package acme.helpers\n\nx := 1\n"}},
			"checks/h.rego", 1, "is neither a check (spawngate.checks.<name>) nor a helper library (spawngate.custom.<name>)"},
		{"helpers and no check", []policy.Module{{Name: "checks/h.rego", Source: "package spawngate.custom.h\n\nx := 1\n"}},
			"checks/h.rego", 1, "none of the operator's modules is a check"},
		{"the name of a built-in module", []policy.Module{{Name: "lib.rego", Source: meta("org.a") + "package spawngate.checks.a\n\ndeny contains 1 if false\n"}},
			"lib.rego", 0, "has the name of a built-in module"},
		{"reads a field that grants nothing", []policy.Module{{Name: "checks/a.rego", Source: meta("org.a") + "package spawngate.checks.a\n\nimport data.spawngate.lib\n\ndeny contains lib.violation(i, \"/id\", \"m\") if {\n\tsome i, child in lib.children\n\tchild.id == \"x\"\n}\n"}},
			"checks/a.rego", 13, `mentions "id"`},
		{"a check of each child reads input.pointers", []policy.Module{{Name: "checks/a.rego", Source: meta("org.a") + "package spawngate.checks.a\n\nimport data.spawngate.lib\n\ndeny contains lib.violation(i, \"\", input.pointers[i]) if {\n\tsome i, _ in lib.children\n}\n"}},
			"checks/a.rego", 11, "check org.a reads input.pointers in Rego rule deny: a check of each child"},
		{"a check of each child calls lib.pointer", []policy.Module{{Name: "checks/a.rego", Source: meta("org.a") + "package spawngate.checks.a\n\nimport data.spawngate.lib\n\ndeny contains lib.violation(i, \"\", msg) if {\n\tsome i, _ in lib.children\n\tmsg := where(i)\n}\n\nwhere(i) := sprintf(\"at %s\", [lib.pointer(i)])\n"}},
			"checks/a.rego", 11, "check org.a reads input.pointers in Rego rule deny (through data.spawngate.lib.pointer)"},
		{"a check of each child reads input.pointers through a helper library", []policy.Module{
			{Name: "checks/a.rego", Source: meta("org.a") + "package spawngate.checks.a\n\nimport data.spawngate.custom.where\nimport data.spawngate.lib\n\ndeny contains lib.violation(i, \"\", where.at(i)) if {\n\tsome i, _ in lib.children\n}\n"},
			{Name: "checks/where.rego", Source: "package spawngate.custom.where\n\nat(i) := sprintf(\"%v\", [input[\"pointers\"][i]])\n"}},
			"checks/a.rego", 12, "check org.a reads input.pointers in Rego rule deny (through data.spawngate.custom.where.at)"},
	}
	builtins := builtinModules(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := engine.New(builtins, engine.Custom(tt.modules))
			var me *engine.ModuleError
			if !errors.As(err, &me) {
				t.Fatalf("New: %v, want a *engine.ModuleError", err)
			}
			if me.File != tt.file || me.Line != tt.line || !strings.Contains(me.Msg, tt.want) {
				t.Fatalf("error %q (file %q, line %d), want %s:%d and %q", me, me.File, me.Line, tt.file, tt.line, tt.want)
			}
			if strings.ContainsAny(me.Error(), "\n\r") {
				t.Fatalf("error is not one line: %q", me)
			}
			if frontEnd.MatchString(me.Msg) {
				t.Fatalf("error %q names a front end's command or flag: the front end adds its own", me)
			}
			if claims := strings.Contains(tt.want, " is built in ("); me.Builtin != claims {
				t.Fatalf("error %q: Builtin %v, want %v", me, me.Builtin, claims)
			}
		})
	}
}

// A check of the whole plan is told where each child is: it may read
// input.pointers, through lib.pointer or directly.
func TestPlanCheckMayReadPointers(t *testing.T) {
	scopePlan := "# METADATA\n# title: T\n# description: D\n# custom:\n#   id: org.a\n#   severity: low\n#   scope: plan\n"
	for _, body := range []string{"lib.pointer(i)", "input.pointers[i]"} {
		mod := policy.Module{Name: "checks/a.rego", Source: scopePlan + "package spawngate.checks.a\n\nimport data.spawngate.lib\n\ndeny contains lib.violation(i, \"\", " + body + ") if {\n\tsome i, _ in lib.children\n}\n"}
		if _, err := engine.New(builtinModules(t), engine.Custom([]policy.Module{mod})); err != nil {
			t.Errorf("a check of the whole plan that reads %s: %v", body, err)
		}
	}
}

// frontEnd matches what only a front end may name: a command of the
// command line, or one of its flags.
var frontEnd = regexp.MustCompile(`spawngate (check|rules|verify|hook|serve|agents|doctor)\b|--[a-z]`)

// An operator's check is judged like a built-in one, reported under its
// own ID, and listed as custom with its file; its helpers come from
// spawngate.custom.
func TestCustomCheckJudgesBesideTheBuiltins(t *testing.T) {
	helper := policy.Module{Name: "checks/lib/web.rego", Source: "package spawngate.custom.web\n\nfetches(tools) if \"http.get\" in tools\n"}
	check := policy.Module{Name: "checks/no_http.rego", Source: meta("org.no-http") + "package spawngate.checks.no_http\n\n" +
		"import data.spawngate.custom.web\nimport data.spawngate.lib\n\n" +
		"deny contains lib.violation(i, \"/tools\", \"no http here\") if {\n\tsome i, child in lib.children\n\tweb.fetches(child.tools)\n}\n"}
	e, err := engine.New(builtinModules(t), engine.Custom([]policy.Module{helper, check}))
	if err != nil {
		t.Fatal(err)
	}
	var found *engine.Check
	for _, c := range e.Checks() {
		if c.ID == "org.no-http" {
			found = &c
		} else if c.Custom {
			t.Errorf("built-in check %s is marked custom", c.ID)
		}
	}
	if found == nil || !found.Custom || found.File != "checks/no_http.rego" || found.Severity != "low" {
		t.Fatalf("check = %+v", found)
	}
	p := mustPlan(t, `{"plan": [{"role": "r", "tools": ["http.get"], "paths": [], "budget_tokens": 1}, {"role": "r", "tools": ["fs.read"], "paths": [], "budget_tokens": 1}]}`)
	res, err := e.Evaluate(context.Background(), mustPolicy(t, operatorPolicy), p)
	if err != nil {
		t.Fatal(err)
	}
	if got := rules(res.Children[0]); got != "org.no-http /plan/0/tools" {
		t.Fatalf("child 0: %q", got)
	}
	if got := rules(res.Children[1]); got != "" {
		t.Fatalf("child 1: %q", got)
	}
}

// A bundle carries copies of the built-in modules so that opa build can
// compile the operator's checks; a copy that is the built-in module
// (byte for byte, or as OPA parses it) is left out, one that differs is
// kept, and so refused.
func TestWithoutBuiltinCopies(t *testing.T) {
	builtins := builtinModules(t)
	var lib policy.Module
	for _, m := range builtins {
		if m.Name == "lib.rego" {
			lib = m
		}
	}
	exact := policy.Module{Name: "bundle/spawngate-builtins/lib.rego", Source: lib.Source}
	reformatted := policy.Module{Name: "bundle/b/lib.rego", Source: strings.ReplaceAll(lib.Source, "\n\n", "\n\n\n") + "\n# a comment of the copy's own\n"}
	changed := policy.Module{Name: "bundle/c/lib.rego", Source: lib.Source + "\nwithin_every_cap(budget) if true\n"}
	mine := policy.Module{Name: "bundle/checks/a.rego", Source: meta("org.a") + "package spawngate.checks.a\n\ndeny contains 1 if false\n"}
	got := engine.WithoutBuiltinCopies(builtins, []policy.Module{exact, reformatted, changed, mine})
	var names []string
	for _, m := range got {
		names = append(names, m.Name)
	}
	if strings.Join(names, " ") != "bundle/c/lib.rego bundle/checks/a.rego" {
		t.Fatalf("kept %v", names)
	}
	if _, err := engine.New(builtins, engine.Custom(got)); err == nil || !strings.Contains(err.Error(), "bundle/c/lib.rego:7: package spawngate.lib is built in") {
		t.Fatalf("New with a changed copy of lib.rego: %v", err)
	}
}

// The built-in checks alone never mark anything custom, and a module given
// to New without Custom (a test's, or the built-ins) is not held to the
// operator's package rules.
func TestBuiltinChecksAreNotCustom(t *testing.T) {
	for _, c := range builtin(t).Checks() {
		if c.Custom || c.File == "" && c.ID != "schema" {
			t.Errorf("%s: custom %v, file %q", c.ID, c.Custom, c.File)
		}
	}
}
