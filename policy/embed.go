// Package policy holds the built-in Rego checks of spawngate. Each check is
// one rego.v1 module in package spawngate.checks.<name> that defines a deny
// set and carries # METADATA with a title, a description and custom.id and
// custom.severity. lib.rego holds what the checks share. Every module has a
// _test.rego beside it; those files are never part of the evaluated policy.
package policy

import (
	"embed"
	"strings"
)

// FS holds the Rego modules of this directory, tests included; use Modules
// to read the ones that are evaluated.
//
//go:embed *.rego
var FS embed.FS

// Modules returns the source of every evaluated module, by file name, in
// name order. Test files (*_test.rego) are left out.
func Modules() ([]Module, error) {
	return read(func(name string) bool { return !strings.HasSuffix(name, "_test.rego") })
}

// TestModules returns the source of every *_test.rego module, by file
// name, in name order: the tests of the built-in checks and their
// fixtures, which spawngate verify --builtin runs. They are never part of
// the evaluated policy.
func TestModules() ([]Module, error) {
	return read(func(name string) bool { return strings.HasSuffix(name, "_test.rego") })
}

// read returns the .rego files that keep takes, in name order.
func read(keep func(name string) bool) ([]Module, error) {
	entries, err := FS.ReadDir(".")
	if err != nil {
		return nil, err
	}
	var mods []Module
	for _, e := range entries {
		name := e.Name()
		if !strings.HasSuffix(name, ".rego") || !keep(name) {
			continue
		}
		src, err := FS.ReadFile(name)
		if err != nil {
			return nil, err
		}
		mods = append(mods, Module{Name: name, Source: string(src)})
	}
	return mods, nil
}

// Module is one Rego source file.
type Module struct {
	Name   string
	Source string
}
