package judge_test

import (
	"errors"
	"testing"

	"github.com/spawngate/spawngate/internal/judge"
)

// flags is a front end that names its settings by flag, as the command
// line does.
var flags = judge.Wording{
	Setting:       func(name string) string { return "--" + name },
	WriteBuiltins: "spawngate rules --write-rego DIR",
}

// A Wording adds the front end's names to an error and nothing else; the
// zero Wording says what Error says.
func TestWordingLine(t *testing.T) {
	more := &judge.Error{Kind: judge.Document, Source: "p.json", Line: 4, Pointer: "/plan/1", Msg: "second"}
	tests := []struct {
		name        string
		err         error
		flags, zero string
	}{
		{"a limit", &judge.Error{Kind: judge.Limit, Source: "plan.json", Line: 3, Column: 5, Pointer: "/plan/0", Limit: "max-depth", Msg: "nested deeper than 64 levels"},
			"plan.json:3:5: /plan/0: nested deeper than 64 levels (limit --max-depth)",
			"plan.json:3:5: /plan/0: nested deeper than 64 levels (limit max-depth)"},
		{"no policy", &judge.Error{Kind: judge.NoPolicy, Source: "plan.json", Msg: "no policy applies"},
			"plan.json: no policy applies",
			"plan.json: no policy applies"},
		{"a copy of a built-in module", &judge.Error{Kind: judge.Document, Source: "lib/check.rego", Line: 1, Msg: "package spawngate.lib is built in (lib.rego)", Builtin: true},
			"lib/check.rego:1: package spawngate.lib is built in (lib.rego) (a copy from another spawngate version? write this version's with spawngate rules --write-rego DIR)",
			"lib/check.rego:1: package spawngate.lib is built in (lib.rego)"},
		{"more problems", &judge.Error{Kind: judge.Document, Source: "p.json", Line: 2, Pointer: "/plan/0", Msg: "first", More: []*judge.Error{more}},
			"p.json:2: /plan/0: first (and 1 more problem)",
			"p.json:2: /plan/0: first (and 1 more problem)"},
		{"not an *Error", errors.New("boom\nbang"), "internal error: boom bang", "internal error: boom bang"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := flags.Line(tt.err); got != tt.flags {
				t.Errorf("flags: %q, want %q", got, tt.flags)
			}
			if got := (judge.Wording{}).Line(tt.err); got != tt.zero {
				t.Errorf("zero: %q, want %q", got, tt.zero)
			}
			var e *judge.Error
			if errors.As(tt.err, &e) && e.Error() != tt.zero {
				t.Errorf("Error: %q, want the zero Wording's %q", e.Error(), tt.zero)
			}
		})
	}
	line, problem := flags.Problem(tests[0].err)
	if line != tests[0].flags || problem.Line != 3 || problem.Column != 5 || problem.Pointer != "/plan/0" || problem.Msg != "nested deeper than 64 levels (limit --max-depth)" {
		t.Errorf("Problem: %q, %+v", line, problem)
	}
	each := flags.Each(tests[3].err)
	if len(each) != 2 || each[0] != "p.json:2: /plan/0: first" || each[1] != "p.json:4: /plan/1: second" {
		t.Errorf("Each: %q", each)
	}
	if each := flags.Each(tests[0].err); each != nil {
		t.Errorf("Each of one problem: %q, want nil", each)
	}
}

// Why a gate could not be built begins with the setting that gave the
// document, as the front end spells it; a document no setting names, the
// gate's own failure and the zero Wording name none.
func TestWordingGate(t *testing.T) {
	opts := judge.DefaultOptions()
	opts.Checks = []string{"checks"}
	opts.Bundle = "b.tar.gz"
	opts.BundleKey = &judge.BundleKey{File: "key.pem"}
	doc := func(source string) error {
		return &judge.Error{Kind: judge.Document, Source: source, Msg: "cannot be read", More: []*judge.Error{{Kind: judge.Document, Source: source, Msg: "again"}}}
	}
	tests := []struct {
		name   string
		w      judge.Wording
		source string
		prefix string // what the line begins with before the message
	}{
		{"the policy", flags, "p.yaml", "--policy p.yaml: "},
		{"a bundle", flags, "b.tar.gz", "--bundle b.tar.gz: "},
		{"its key", flags, "key.pem", "--bundle-verification-key key.pem: "},
		{"a folder of checks", flags, "checks", "--checks checks: "},
		{"a module in the folder", flags, "checks/a.rego", "checks/a.rego: "},
		{"the zero Wording", judge.Wording{}, "p.yaml", "p.yaml: "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			line, each := tt.w.Gate(doc(tt.source), opts, "p.yaml")
			if want := tt.prefix + "cannot be read (and 1 more problem)"; line != want {
				t.Fatalf("line %q, want %q", line, want)
			}
			if len(each) != 2 || each[0] != tt.prefix+"cannot be read" || each[1] != tt.prefix+"again" {
				t.Fatalf("each %q, want both problems after %q", each, tt.prefix)
			}
		})
	}
	internal := &judge.Error{Kind: judge.Internal, Source: "p.yaml", Msg: "internal error: x"}
	if line, each := flags.Gate(internal, opts, "p.yaml"); line != "p.yaml: internal error: x" || each != nil {
		t.Fatalf("the gate's own failure: %q, %q; want no flag", line, each)
	}
}
