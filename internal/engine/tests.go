package engine

import (
	"github.com/open-policy-agent/opa/v1/ast"
	"maps"
	"slices"

	"github.com/spawngate/spawngate/policy"
)

// Tests are Rego test modules ready for OPA's tester (spawngate verify):
// parsed beside the modules they test, with a compiler that has the
// gate's capabilities, so that a test sees exactly the checks the gate
// runs and can call no built-in they cannot.
type Tests struct {
	// Compiler is configured and not yet used: the tester compiles
	// Modules with it, adding its own stages.
	Compiler *ast.Compiler
	// Modules are every module: the built-in ones, the operator's and the
	// tests, by name.
	Modules map[string]*ast.Module
	// Covered are the modules whose coverage is reported: the operator's,
	// and the built-in ones when their tests run too.
	Covered map[string]*ast.Module
}

// PrepareTests parses the test modules with the modules they test: the
// built-in modules, the operator's own (already held to the contract by
// New), the operator's tests and, when builtinTests is not empty, the
// built-in tests. A test module of the operator's may not be in the
// package of a module it tests, nor in or above spawngate.lib: rules it
// added there would change what it tests, so that a test could pass where
// the gate would refuse. Errors are *ModuleError.
func PrepareTests(builtins, builtinTests, custom, tests []policy.Module) (*Tests, error) {
	parsed, err := parseModules(append(append([]policy.Module{}, builtins...), builtinTests...))
	if err != nil {
		return nil, moduleError("policy", err)
	}
	mine, err := parseCustom(append(append([]policy.Module{}, custom...), tests...), parsed)
	if err != nil {
		return nil, err
	}
	covered := map[string]*ast.Module{}
	tested := map[string]bool{} // the packages of the modules under test
	for _, m := range builtins {
		tested[parsed[m.Name].Package.Path.String()] = true
		if len(builtinTests) > 0 {
			covered[m.Name] = parsed[m.Name]
		}
	}
	for _, m := range custom {
		tested[mine[m.Name].Package.Path.String()] = true
		covered[m.Name] = mine[m.Name]
	}
	lib := ast.MustParseRef("data.spawngate.lib")
	for _, m := range tests {
		mod := mine[m.Name]
		path := mod.Package.Path
		refuse := func(why string) error {
			return &ModuleError{File: m.Name, Line: mod.Package.Location.Row, Msg: "package " + pkgName(path) + " " + why + ": put a test in a package of its own (spawngate.checks.<name>_test), so that it tests the checks exactly as the gate runs them"}
		}
		if tested[path.String()] {
			return nil, refuse("is the package of a module it tests")
		}
		if path.HasPrefix(lib) || lib.HasPrefix(path) {
			return nil, refuse("would add to spawngate.lib, the built-in library")
		}
		for _, p := range slices.Sorted(maps.Keys(tested)) {
			if ast.MustParseRef(p).HasPrefix(path) {
				return nil, refuse("would add to " + pkgName(ast.MustParseRef(p)))
			}
		}
	}
	for name, m := range mine {
		parsed[name] = m
	}
	c := ast.NewCompiler().
		WithCapabilities(capabilities()).
		WithEnablePrintStatements(true)
	return &Tests{Compiler: c, Modules: parsed, Covered: covered}, nil
}

// TestsError says an error of compiling tests (what the tester returns
// when the modules do not compile) as a *ModuleError naming the first
// module and line.
func TestsError(err error) error { return moduleError("tests", err) }
