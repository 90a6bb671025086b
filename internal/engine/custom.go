package engine

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/open-policy-agent/opa/v1/ast"

	"github.com/spawngate/spawngate/internal/document"
	"github.com/spawngate/spawngate/policy"
)

// ModuleError is a Rego module the engine cannot be built with: it does
// not parse or compile, or it breaks the check contract. It names the
// module and the line (the package line, or the offending rule or call).
type ModuleError struct {
	File string // the module's name, as it was given to New
	Line int    // 1-based; 0 when not known
	Msg  string // one line, without the file and line
	// Builtin tells that the module claims a built-in package: perhaps a
	// copy of the built-in modules from another version, which a front end
	// may say how to write anew.
	Builtin bool
}

func (e *ModuleError) Error() string { return document.Where(e.File, e.Line, 0, "") + e.Msg }

// Custom adds the operator's own modules (--checks, a bundle) beside the
// built-in ones. They are held to more than the built-ins: each must be a
// check one level below spawngate.checks, in a package of its own, or a
// helper library under spawngate.custom; none may add to a built-in
// package (spawngate.lib, a built-in check) or reuse a built-in rule ID;
// and they are compiled with every stage of the compiler, the type checker
// included. Their checks are reported as Custom, with their file.
func Custom(modules []policy.Module) Option {
	return func(e *Engine) { e.custom = append(e.custom, modules...) }
}

// customRoot is where the operator's helper libraries live: any package
// under it may hold rules the checks import, and none is a check.
var customRoot = ast.MustParseRef("data.spawngate.custom")

// parseCustom parses the operator's modules. OPA's annotation processing
// runs on them, so that a # METADATA block OPA cannot read is an error at
// its line, as opa check would say.
func parseCustom(modules []policy.Module, builtins map[string]*ast.Module) (map[string]*ast.Module, error) {
	out := make(map[string]*ast.Module, len(modules))
	for _, m := range modules {
		if _, taken := builtins[m.Name]; taken {
			return nil, &ModuleError{File: m.Name, Msg: "has the name of a built-in module; name it by its folder (./" + m.Name + ")"}
		}
		if _, taken := out[m.Name]; taken {
			return nil, &ModuleError{File: m.Name, Msg: "is given twice"}
		}
		var mod *ast.Module
		var err error
		func() {
			defer func() {
				if r := recover(); r != nil { // a parser panic is a module that cannot be read
					err = &ModuleError{File: m.Name, Msg: fmt.Sprintf("the Rego parser failed: %v", r)}
				}
			}()
			mod, err = ast.ParseModuleWithOpts(m.Name, m.Source, ast.ParserOptions{RegoVersion: ast.RegoV1, ProcessAnnotation: true})
		}()
		if err != nil {
			return nil, moduleError(m.Name, err)
		}
		if mod == nil { // an empty file, or one holding only comments
			return nil, &ModuleError{File: m.Name, Msg: "holds no package: a check is a Rego module in package spawngate.checks.<name>"}
		}
		out[m.Name] = mod
	}
	return out, nil
}

// checkCustomPackages refuses an operator's module whose package could
// change what a built-in module means. A module may add rules to any
// package it names, so a module in package spawngate.lib could define
// another body for a helper every check relies on (a second
// within_every_cap that is always true) and widen what the gate lets
// through; so could one in a built-in check's package. Only two kinds of
// package are the operator's: a check of its own, one level below
// spawngate.checks, and helpers under spawngate.custom.
func checkCustomPackages(custom, builtins map[string]*ast.Module) error {
	owner := map[string]string{} // built-in package -> its built-in module
	for _, name := range slices.Sorted(maps.Keys(builtins)) {
		pkg := pkgName(builtins[name].Package.Path)
		if _, ok := owner[pkg]; !ok {
			owner[pkg] = name
		}
	}
	for _, name := range slices.Sorted(maps.Keys(custom)) {
		mod := custom[name]
		path := mod.Package.Path
		pkg := pkgName(path)
		fail := func(format string, args ...any) *ModuleError {
			return &ModuleError{File: name, Line: mod.Package.Location.Row, Msg: fmt.Sprintf(format, args...)}
		}
		if b, ok := owner[pkg]; ok {
			err := fail("package %s is built in (%s), and this module is not the built-in one: a module of your own cannot add rules to a built-in package; put a check in a package of its own, spawngate.checks.<name>, and helpers under spawngate.custom", pkg, b)
			err.Builtin = true
			return err
		}
		switch {
		case path.HasPrefix(checksRoot) && len(path) == len(checksRoot)+1:
			// a check of its own: discoverChecks holds it to the contract
		case path.HasPrefix(checksRoot):
			return fail("package %s: a check must be one level below spawngate.checks (spawngate.checks.<name>)", pkg)
		case path.HasPrefix(customRoot):
			// a helper library
		default:
			for _, b := range slices.Sorted(maps.Keys(owner)) {
				if p := ast.MustParseRef("data." + b); p.HasPrefix(path) || path.HasPrefix(p) {
					return fail("package %s would add to the built-in package %s: a module of your own cannot; put helpers under spawngate.custom", pkg, b)
				}
			}
			return fail("package %s is neither a check (spawngate.checks.<name>) nor a helper library (spawngate.custom.<name>)", pkg)
		}
	}
	return nil
}

// moduleError turns an error of OPA's parser or compiler into one line
// naming the first module and line it is about, counting the others.
func moduleError(file string, err error) error {
	errs, ok := err.(ast.Errors)
	if !ok {
		var one *ast.Error
		if e, isOne := err.(*ast.Error); isOne {
			one = e
		}
		if one == nil {
			return &ModuleError{File: file, Msg: document.OneLine(err.Error())}
		}
		errs = ast.Errors{one}
	}
	if len(errs) == 0 {
		return &ModuleError{File: file, Msg: "does not compile"}
	}
	errs = slices.Clone(errs)
	slices.SortStableFunc(errs, func(a, b *ast.Error) int {
		la, lb := a.Location, b.Location
		switch {
		case la == nil && lb == nil:
			return 0
		case la == nil:
			return 1
		case lb == nil:
			return -1
		}
		return cmp.Or(cmp.Compare(la.File, lb.File), cmp.Compare(la.Row, lb.Row), cmp.Compare(la.Col, lb.Col))
	})
	first := errs[0]
	out := &ModuleError{File: file, Msg: explainRegoError(first)}
	if first.Location != nil {
		if first.Location.File != "" {
			out.File = first.Location.File
		}
		out.Line = first.Location.Row
	}
	if n := len(errs) - 1; n == 1 {
		out.Msg += " (and 1 more problem)"
	} else if n > 1 {
		out.Msg += fmt.Sprintf(" (and %d more problems)", n)
	}
	return out
}

// explainRegoError says one of OPA's errors on one line: a call to a
// built-in the gate removed, as what it would reach; anything else as OPA
// says it, with its code.
func explainRegoError(e *ast.Error) string {
	msg := e.Message
	if name, ok := strings.CutPrefix(msg, "undefined function "); ok {
		if why := forbiddenReason(name); why != "" {
			return fmt.Sprintf("calls %s, which %s: checks may not reach the network, the clock or randomness, so that the same plan always gets the same answer", name, why)
		}
	}
	verb := "does not compile"
	if e.Code == ast.ParseErr {
		verb = "does not parse"
	}
	if e.Details != nil {
		var lines []string
		for _, l := range e.Details.Lines() {
			if l = strings.TrimSpace(l); l != "" && l != "^" {
				lines = append(lines, l)
			}
		}
		if len(lines) > 0 && e.Code != ast.ParseErr {
			msg += " (" + strings.Join(lines, "; ") + ")"
		}
	}
	return document.OneLine(fmt.Sprintf("%s: %s (%s)", verb, msg, e.Code))
}

// forbiddenReason says why a built-in OPA has and the gate removed may not
// be called, or "" when name is no such built-in.
func forbiddenReason(name string) string {
	known := false
	for _, b := range ast.CapabilitiesForThisVersion().Builtins {
		if b.Name == name {
			known = b.Nondeterministic || forbiddenBuiltins[name]
			break
		}
	}
	if !known {
		return ""
	}
	switch {
	case name == "http.send" || strings.HasPrefix(name, "net."):
		return "reaches the network"
	case strings.HasSuffix(name, "_schema"):
		return "can fetch schemas over the network"
	case strings.HasPrefix(name, "time.") || name == "io.jwt.decode_verify":
		return "reads the clock"
	case strings.HasPrefix(name, "rand.") || strings.HasPrefix(name, "uuid.") || strings.HasPrefix(name, "io.jwt.encode_sign"):
		return "draws random numbers"
	case name == "opa.runtime":
		return "reads the environment of the process running the gate"
	case name == "trace":
		return "writes to the evaluation's trace"
	}
	return "does not always give the same answer"
}

// WithoutBuiltinCopies leaves out of the operator's modules those that are
// the built-in modules themselves: the same source, or the same Rego as
// OPA parses it (formatted differently, comments aside). opa build and opa
// test compile a bundle's checks only with the library they import, so a
// bundle carries a copy of the built-in modules (spawngate rules
// --write-rego); the gate judges with its own, and a copy that is the
// same changes nothing. A module that differs from the built-in one in
// its package is kept, and refused by New.
func WithoutBuiltinCopies(builtins, mods []policy.Module) []policy.Module {
	sources := map[string]bool{}
	for _, b := range builtins {
		sources[b.Source] = true
	}
	opts := ast.ParserOptions{RegoVersion: ast.RegoV1, ProcessAnnotation: true}
	var byPkg map[string][]*ast.Module // the built-in modules, parsed as the operator's are, by package
	var out []policy.Module
	for _, m := range mods {
		if sources[m.Source] {
			continue
		}
		mod, err := ast.ParseModuleWithOpts(m.Name, m.Source, opts)
		if err != nil || mod == nil {
			out = append(out, m) // New says why
			continue
		}
		if byPkg == nil {
			byPkg = map[string][]*ast.Module{}
			for _, b := range builtins {
				if bm, err := ast.ParseModuleWithOpts(b.Name, b.Source, opts); err == nil && bm != nil {
					byPkg[bm.Package.Path.String()] = append(byPkg[bm.Package.Path.String()], bm)
				}
			}
		}
		if !slices.ContainsFunc(byPkg[mod.Package.Path.String()], mod.Equal) {
			out = append(out, m)
		}
	}
	return out
}
