package engine

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/open-policy-agent/opa/v1/ast"

	"github.com/spawngate/spawngate/internal/plan"
	"github.com/spawngate/spawngate/policy"
)

// TestPackageMetadataMatchesOPA holds the gate's own reading of METADATA to
// OPA's annotation processing for every built-in module.
func TestPackageMetadataMatchesOPA(t *testing.T) {
	mods, err := policy.Modules()
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range mods {
		withOPA, err := ast.ParseModuleWithOpts(m.Name, m.Source, ast.ParserOptions{ProcessAnnotation: true, RegoVersion: ast.RegoV1})
		if err != nil {
			t.Fatal(err)
		}
		plain, err := ast.ParseModuleWithOpts(m.Name, m.Source, ast.ParserOptions{RegoVersion: ast.RegoV1})
		if err != nil {
			t.Fatal(err)
		}
		ours, err := packageMetadata(plain)
		if err != nil {
			t.Fatalf("%s: %v", m.Name, err)
		}
		var theirs *ast.Annotations
		for _, a := range withOPA.Annotations {
			if a.Scope == "package" {
				theirs = a
			}
		}
		if (ours == nil) != (theirs == nil) {
			t.Fatalf("%s: ours %v, OPA's %v", m.Name, ours, theirs)
		}
		if ours == nil {
			continue
		}
		if ours.Title != theirs.Title || ours.Description != theirs.Description ||
			ours.Custom["id"] != theirs.Custom["id"] || ours.Custom["severity"] != theirs.Custom["severity"] {
			t.Errorf("%s:\n ours %+v\nOPA's title %q description %q custom %v", m.Name, *ours, theirs.Title, theirs.Description, theirs.Custom)
		}
	}
}

func TestPackageMetadataOnlyRightAboveThePackage(t *testing.T) {
	for src, wantID := range map[string]string{
		"# METADATA\n# custom:\n#   id: a.b\npackage x\n":                                "a.b",
		"# METADATA\n# custom:\n#   id: a.b\n\npackage x\n":                              "",
		"# a note\n# METADATA\n# custom:\n#   id: a.b\npackage x\n":                      "a.b",
		"# METADATA\n# scope: rule\n# custom:\n#   id: a.b\npackage x\n":                 "",
		"package x\n\n# METADATA\n# custom:\n#   id: a.b\np := 1\n":                      "",
		"# METADATA\n# title: t\n# custom:\n#   id: a.b\n#   severity: low\npackage x\n": "a.b",
	} {
		mod, err := ast.ParseModuleWithOpts("x.rego", src, ast.ParserOptions{RegoVersion: ast.RegoV1})
		if err != nil {
			t.Fatal(err)
		}
		meta, err := packageMetadata(mod)
		if err != nil {
			t.Fatal(err)
		}
		got := ""
		if meta != nil {
			got, _ = meta.Custom["id"].(string)
		}
		if got != wantID {
			t.Errorf("%q: id %q, want %q", src, got, wantID)
		}
	}
}

// TestBuiltinsTypeCheck runs the type checker New skips on the built-in
// checks.
func TestBuiltinsTypeCheck(t *testing.T) {
	mods, err := policy.Modules()
	if err != nil {
		t.Fatal(err)
	}
	parsed, err := parseModules(mods)
	if err != nil {
		t.Fatal(err)
	}
	c := ast.NewCompiler().WithCapabilities(capabilities())
	if c.Compile(parsed); c.Failed() {
		t.Fatal(c.Errors)
	}
}

func TestTypeErrorsAreStillRefusedAtRunTime(t *testing.T) {
	const meta = "# METADATA\n# title: T\n# description: D\n# custom:\n#   id: x.ok\n#   severity: low\n"
	e, err := New([]policy.Module{{Name: "a.rego", Source: meta + "package spawngate.checks.a\n\ndeny contains {\"child\": 0, \"field\": \"\", \"message\": m} if { m := concat(\"\", 5) }\n"}})
	if err != nil {
		t.Fatal(err)
	}
	p := &plan.Plan{Source: "p", Children: []any{map[string]any{}}}
	if _, err := e.Evaluate(context.Background(), plan.Policy{"allowed_tools": []any{}, "workspace_root": "/", "budget_cap_tokens": json.Number("1")}, p); err == nil {
		t.Fatal("a check with a type error evaluated")
	}
}
