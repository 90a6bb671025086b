package engine

import (
	"errors"
	"fmt"
	"github.com/spawngate/spawngate/internal/report"
	"maps"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/open-policy-agent/opa/v1/ast"
	"gopkg.in/yaml.v3"
)

// Check is one Rego package under spawngate.checks: the rule it reports
// under (ID, severity, title, description, whose it is), as its package
// METADATA declares it, and what the engine needs to run it.
type Check struct {
	report.Rule
	Package string // Rego package, such as spawngate.checks.paths_escape; "" for the schema step
	// Scope says what the check sees: ScopeChild (the default) judges each
	// child on its own, and sees the children in batches; ScopePlan sees
	// every child at once, with input.members, to judge the plan as a
	// whole (a count, a sum).
	Scope string
	// WhenSet, for a check of the whole plan, names the policy keys it
	// depends on (custom.when_set): it can refuse only when a policy that
	// applies sets one of them, and the gate runs it only then. A check of
	// every child of a large plan at once is costly, and most policies set
	// no plan limit.
	WhenSet []string
	// Reads, for such a check, names the child keys that grant nothing
	// which it reads (custom.reads: brief, metadata...). No other check
	// may mention them, and when a check that reads applies, the gate
	// judges every child on its own: children that differ only in those
	// keys are no longer alike.
	Reads []string
	// WhenNested says the check can refuse only in a nested plan, one
	// whose children have parents or that has a parent block
	// (custom.when_nested: true). The built-in ones are compiled only when
	// a plan reaches a module the lean engine leaves out (lean.go); an
	// operator's own check is always compiled, and the key documents it.
	WhenNested bool
}

// The scopes a check may declare in custom.scope.
const (
	ScopeChild = "child"
	ScopePlan  = "plan"
)

// SchemaCheck is the rule of the schema step: a child that breaks
// schemas/child.schema.json in a way no Rego check reports more exactly.
var SchemaCheck = Check{Rule: report.Rule{
	ID:          "schema",
	Severity:    "high",
	Title:       "A child must follow the child schema",
	Description: "Every child is an object with the keys of schemas/child.schema.json and no others, each of the right type; ids are unique within the plan.",
}}

// checksRoot is the package every check lives under; each check is exactly
// one level below it.
var checksRoot = ast.MustParseRef("data.spawngate.checks")

var (
	ruleID     = regexp.MustCompile(`^[a-z][a-z0-9_-]*(\.[a-z][a-z0-9_-]*)+$`)
	policyKey  = regexp.MustCompile(`^[a-z][a-z0-9_]*$`)
	severities = map[string]bool{"critical": true, "high": true, "medium": true, "low": true}
)

// discoverChecks finds every check package in the compiled modules and
// reads its METADATA. A check without a valid ID, severity, title and
// description, or without a deny set, is an error: a rule that cannot be
// named must not run silently. custom names the operator's modules (see
// Custom): their checks are marked Custom, and one that takes a built-in
// check's rule ID is told so. Every error is a *ModuleError naming the
// module and its package line, or the offending rule's.
func discoverChecks(c *ast.Compiler, custom map[string]bool) ([]Check, error) {
	return findChecks(c.Modules, c.GetRulesExact, custom)
}

// findChecks is discoverChecks over modules, compiled or only parsed, with
// rules finding the rules of a path.
func findChecks(modules map[string]*ast.Module, rules func(ast.Ref) []*ast.Rule, custom map[string]bool) ([]Check, error) {
	byPkg := map[string]*Check{}
	firstAt := map[string]*ModuleError{} // where a package is first declared, for messages
	var order []string
	for _, name := range slices.Sorted(maps.Keys(modules)) {
		mod := modules[name]
		path := mod.Package.Path
		if !path.HasPrefix(checksRoot) {
			continue
		}
		at := func(format string, args ...any) error {
			return &ModuleError{File: name, Line: mod.Package.Location.Row, Msg: fmt.Sprintf(format, args...)}
		}
		if len(path) != len(checksRoot)+1 {
			return nil, at("package %s: a check must be one level below spawngate.checks", pkgName(path))
		}
		pkg := pkgName(path)
		chk, seen := byPkg[pkg]
		if !seen {
			chk = &Check{Rule: report.Rule{Custom: custom[name]}, Package: pkg}
			byPkg[pkg] = chk
			firstAt[pkg] = &ModuleError{File: name, Line: mod.Package.Location.Row}
			order = append(order, pkg)
		}
		meta, err := packageMetadata(mod)
		if err != nil {
			return nil, at("package %s: %v", pkg, err)
		}
		if meta != nil {
			if chk.ID != "" {
				return nil, at("package %s has METADATA in more than one module (%s too)", pkg, chk.File)
			}
			if err := fromMetadata(chk, meta); err != nil {
				return nil, at("package %s: %v", pkg, err)
			}
			chk.File = name
		}
	}
	ids := map[string]*Check{} // "schema" cannot collide: a check ID has a dot
	var checks []Check
	for _, pkg := range order {
		chk := byPkg[pkg]
		first := firstAt[pkg]
		at := func(file string, line int, format string, args ...any) error {
			return &ModuleError{File: file, Line: line, Msg: fmt.Sprintf(format, args...)}
		}
		if chk.ID == "" {
			return nil, at(first.File, first.Line, "package %s: no # METADATA with custom.id: every check needs a rule ID (a # METADATA block right above the package line, with title, description, custom.id and custom.severity)", pkg)
		}
		if other, dup := ids[chk.ID]; dup {
			if chk.Custom == other.Custom {
				return nil, at(chk.File, first.Line, "package %s: rule ID %s is already used by package %s (%s)", pkg, chk.ID, other.Package, other.File)
			}
			mine, builtin := chk, other
			if other.Custom {
				mine, builtin = other, chk
			}
			line := modules[mine.File].Package.Location.Row
			return nil, at(mine.File, line, "package %s: rule ID %s is already a built-in check's (%s): a check of your own needs an ID of its own", mine.Package, mine.ID, builtin.Package)
		}
		ids[chk.ID] = chk
		denies := rules(denyRef(pkg))
		if len(denies) == 0 {
			return nil, at(first.File, first.Line, "package %s: no deny rule: a check reports with deny contains lib.violation(child, field, message) if { ... }", pkg)
		}
		for _, r := range denies {
			// An operator's check is told at start-up; the engine also
			// refuses a deny that is not a set when it reads one.
			if chk.Custom && r.Head.RuleKind() != ast.MultiValue {
				line := 0
				if r.Location != nil {
					line = r.Location.Row
				}
				file := first.File
				if r.Location != nil && r.Location.File != "" {
					file = r.Location.File
				}
				return nil, at(file, line, "package %s: deny must be a set of violations, written deny contains lib.violation(child, field, message) if { ... }", pkg)
			}
		}
		checks = append(checks, *chk)
	}
	if len(checks) == 0 {
		return nil, fmt.Errorf("no checks under spawngate.checks: nothing would ever be refused")
	}
	if len(custom) > 0 && !slices.ContainsFunc(checks, func(c Check) bool { return c.Custom }) {
		// Checks the operator meant to add, and none of them a check: the
		// gate would run as if they were not there.
		first := slices.Sorted(maps.Keys(custom))[0]
		return nil, &ModuleError{File: first, Line: modules[first].Package.Location.Row, Msg: "none of the operator's modules is a check: a check is a module in package spawngate.checks.<name> (spawngate.custom holds helpers only)"}
	}
	sort.Slice(checks, func(i, j int) bool { return checks[i].ID < checks[j].ID })
	return checks, nil
}

// metadata is a package's # METADATA block, the fields the gate reads.
type metadata struct {
	Scope       string         `yaml:"scope"`
	Title       string         `yaml:"title"`
	Description string         `yaml:"description"`
	Custom      map[string]any `yaml:"custom"`
}

// packageMetadata reads the # METADATA block right above a module's package
// statement, or returns nil when there is none. The gate reads it itself:
// OPA's annotation processing reads every comment of every module and was
// a sixth of start-up. TestPackageMetadataMatchesOPA keeps the two readings
// equal for the built-in checks.
func packageMetadata(mod *ast.Module) (*metadata, error) {
	row := mod.Package.Location.Row
	var lines []string
	for i := len(mod.Comments) - 1; i >= 0; i-- {
		c := mod.Comments[i]
		if c.Location.Row >= row {
			continue
		}
		if c.Location.Row != row-1-len(lines) {
			break
		}
		lines = append(lines, string(c.Text))
	}
	slices.Reverse(lines)
	for len(lines) > 0 && strings.TrimSpace(lines[0]) != "METADATA" {
		lines = lines[1:]
	}
	if len(lines) == 0 {
		return nil, nil
	}
	var body strings.Builder
	for _, l := range lines[1:] {
		body.WriteString(strings.TrimPrefix(l, " "))
		body.WriteByte('\n')
	}
	var meta metadata
	if err := yaml.Unmarshal([]byte(body.String()), &meta); err != nil {
		return nil, fmt.Errorf("METADATA is not YAML: %w", err)
	}
	if meta.Scope != "" && meta.Scope != "package" {
		return nil, nil
	}
	return &meta, nil
}

func fromMetadata(chk *Check, a *metadata) error {
	id, _ := a.Custom["id"].(string)
	severity, _ := a.Custom["severity"].(string)
	scope := ScopeChild
	if s, ok := a.Custom["scope"]; ok {
		scope, _ = s.(string)
	}
	switch {
	case scope != ScopeChild && scope != ScopePlan:
		return fmt.Errorf("custom.scope %q is not child or plan", a.Custom["scope"])
	case id == "":
		return fmt.Errorf("METADATA has no custom.id")
	case !ruleID.MatchString(id):
		return fmt.Errorf("custom.id %q is not a rule ID like paths.escape", id)
	case !severities[severity]:
		return fmt.Errorf("custom.severity %q is not critical, high, medium or low", severity)
	case strings.TrimSpace(a.Title) == "":
		return fmt.Errorf("METADATA has no title")
	case strings.TrimSpace(a.Description) == "":
		return fmt.Errorf("METADATA has no description")
	}
	var err error
	if raw, ok := a.Custom["when_set"]; ok {
		if chk.WhenSet, err = keyList(raw, scope == ScopePlan, "when_set", "policy key",
			"custom.when_set must be a list of policy keys, for a check of the whole plan (custom.scope: plan)"); err != nil {
			return err
		}
	}
	if raw, ok := a.Custom["reads"]; ok {
		if chk.Reads, err = keyList(raw, len(chk.WhenSet) > 0, "reads", "child key",
			"custom.reads must be a list of child keys, for a check of the whole plan that declares custom.when_set"); err != nil {
			return err
		}
	}
	if raw, ok := a.Custom["when_nested"]; ok {
		on, isBool := raw.(bool)
		if !isBool || !on {
			return fmt.Errorf("custom.when_nested must be true, for a check that can refuse only in a nested plan (or be left out)")
		}
		chk.WhenNested = true
	}
	chk.ID, chk.Severity, chk.Scope = id, severity, scope
	chk.Title, chk.Description = strings.TrimSpace(a.Title), strings.TrimSpace(a.Description)
	return nil
}

func pkgName(path ast.Ref) string {
	return strings.TrimPrefix(path.String(), "data.")
}

func denyRef(pkg string) ast.Ref {
	return ast.MustParseRef("data." + pkg + ".deny")
}

// exceptionsPackage is policy/exceptions.rego's: not a check, and judged
// apart (see excepter).
var exceptionsPackage = ast.MustParseRef("data.spawngate.exceptions")

// readsNoAbstractedField refuses a policy that mentions a child key the
// gate judges only by type and length (id, brief, metadata: see
// plan.Abstracted). The checks never see those keys (Evaluate removes
// them), so a check reading one would silently read nothing; this says so
// at start-up instead.
func readsNoAbstractedField(c *ast.Compiler, names []string, checks []Check) error {
	forbidden := map[string]bool{}
	for _, n := range names {
		forbidden[n] = true
	}
	declared := map[string][]string{} // by package: the keys its check reads
	for _, chk := range checks {
		declared[chk.Package] = chk.Reads
	}
	for _, name := range slices.Sorted(maps.Keys(c.Modules)) {
		if c.Modules[name].Package.Path.Equal(exceptionsPackage) {
			continue // it reads the exceptions, never a child (policy/exceptions.rego)
		}
		reads := declared[pkgName(c.Modules[name].Package.Path)]
		var found string
		line := 0
		ast.WalkTerms(c.Modules[name], func(t *ast.Term) bool {
			if s, ok := t.Value.(ast.String); ok && forbidden[string(s)] && !slices.Contains(reads, string(s)) && found == "" {
				found = string(s)
				if t.Location != nil {
					line = t.Location.Row
				}
			}
			return found != ""
		})
		if found != "" {
			return &ModuleError{File: name, Line: line, Msg: fmt.Sprintf("mentions %q: checks may not read a child's %s, which grants nothing (the gate judges children that differ only in %s once)", found, strings.Join(names, ", "), strings.Join(names, ", "))}
		}
	}
	return nil
}

// pointersKey is the input key that tells a check of the whole plan where
// each child it sees is in the document (lib.pointer reads it).
const pointersKey = "pointers"

// childChecksReadNoPointers refuses a check of each child (custom.scope:
// child, the default) that reads input.pointers, in its own rules or in a
// rule they call (lib.pointer, a helper library). Such a check is given
// no pointers: it is judged in batches, and would read its place in the
// batch, which depends on what the engine remembered, and its violations
// would be remembered by the child's key, which holds no place. A check
// of the whole plan is given the pointers, and its memo's key holds them.
// A rule "reads" the key when it mentions the string "pointers", as
// readsNoAbstractedField counts a mention.
func childChecksReadNoPointers(c *ast.Compiler, checks []Check) error {
	byPackage := map[string]Check{}
	for _, chk := range checks {
		if chk.Scope != ScopePlan {
			byPackage[chk.Package] = chk
		}
	}
	// readerOf is the rule that mentions the key, r or one r calls, or
	// nil; known keeps each answer (nil too) so that a shared helper is
	// walked once and a cycle ends.
	known := map[*ast.Rule]*ast.Rule{}
	var readerOf func(r *ast.Rule) *ast.Rule
	readerOf = func(r *ast.Rule) *ast.Rule {
		if reader, ok := known[r]; ok {
			return reader
		}
		known[r] = nil
		var reader *ast.Rule
		ast.WalkTerms(r, func(t *ast.Term) bool {
			if s, ok := t.Value.(ast.String); ok && s == pointersKey {
				reader = r
			}
			return reader != nil
		})
		for dep := range c.Graph.Dependencies(r) {
			if reader != nil {
				break
			}
			if d, ok := dep.(*ast.Rule); ok {
				reader = readerOf(d)
			}
		}
		known[r] = reader
		return reader
	}
	for _, name := range slices.Sorted(maps.Keys(c.Modules)) {
		m := c.Modules[name]
		chk, ok := byPackage[pkgName(m.Package.Path)]
		if !ok {
			continue
		}
		for _, r := range m.Rules {
			reader := readerOf(r)
			if reader == nil {
				continue
			}
			line := 0
			if r.Location != nil {
				line = r.Location.Row
			}
			via := ""
			if reader != r {
				via = fmt.Sprintf(" (through %s)", reader.Ref())
			}
			return &ModuleError{File: name, Line: line, Msg: fmt.Sprintf("check %s reads input.%s in Rego rule %s%s: a check of each child (custom.scope: child, the default) is judged in batches and remembered by what the child holds, never by where it is; only a check of the whole plan (custom.scope: plan) is told each child's pointer", chk.ID, pointersKey, r.Head.Ref(), via)}
		}
	}
	return nil
}

// keyList reads a METADATA custom list of keys (custom.when_set,
// custom.reads): a non-empty list, where it may stand (allowed), of names
// written as policy keys are.
func keyList(raw any, allowed bool, name, what, misplaced string) ([]string, error) {
	list, isList := raw.([]any)
	if !isList || len(list) == 0 || !allowed {
		return nil, errors.New(misplaced)
	}
	keys := make([]string, 0, len(list))
	for _, k := range list {
		key, _ := k.(string)
		if !policyKey.MatchString(key) {
			return nil, fmt.Errorf("custom.%s: %v is not a %s", name, k, what)
		}
		keys = append(keys, key)
	}
	return keys, nil
}
