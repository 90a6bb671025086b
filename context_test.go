package spawngate_test

import (
	"context"
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/spawngate/spawngate"
)

// A nil context is the caller's slip, answered as one: every exported
// function and method that takes a context returns an *Error of kind
// ErrOption that names the function and the argument, beside a Result
// that is not judged, instead of panicking in the caller's goroutine.
// The table must cover every such function: one added without a row
// fails the test.
func TestANilContextIsAnError(t *testing.T) {
	// A variable, as a caller's nil context is: the literal nil is what
	// staticcheck's SA1012 flags.
	var ctx context.Context
	g := gate(t)
	payload := []byte(`{"tool_name": "Agent", "tool_input": {"subagent_type": "general-purpose", "prompt": "p"}, "cwd": "/repo/workspace"}`)
	for _, tc := range []struct {
		name string
		call func() (*spawngate.Result, error) // the Result beside the error; nil from New
	}{
		{"New", func() (*spawngate.Result, error) {
			built, err := spawngate.New(ctx, spawngate.WithPolicy("operator.json", []byte(operator)))
			if built != nil {
				t.Error("New built a gate with a nil context")
			}
			return nil, err
		}},
		{"Gate.Check", func() (*spawngate.Result, error) {
			res, err := g.Check(ctx, "plan.json", []byte(`{"plan": [{"role": "r", "tools": ["fs.read"], "paths": [], "budget_tokens": 1}]}`))
			return &res, err
		}},
		{"Gate.CheckPlan", func() (*spawngate.Result, error) {
			res, err := g.CheckPlan(ctx, spawngate.Plan{Children: []spawngate.Spawn{{Role: "r", Tools: []string{"fs.read"}, BudgetTokens: 1}}})
			return &res, err
		}},
		{"Gate.Hook", func() (*spawngate.Result, error) {
			a, err := g.Hook(ctx, spawngate.ClaudeCode, payload)
			if a.Decision != 0 || a.Body != nil {
				t.Errorf("Hook answered %v with a nil context", a.Decision)
			}
			return &a.Result, err
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var (
				res *spawngate.Result
				err error
			)
			func() {
				defer func() {
					if r := recover(); r != nil {
						t.Fatalf("panicked in the caller's goroutine: %v", r)
					}
				}()
				res, err = tc.call()
			}()
			var e *spawngate.Error
			if !errors.As(err, &e) || !errors.Is(err, spawngate.ErrOption) {
				t.Fatalf("error %v (%T), want an *Error of kind ErrOption", err, err)
			}
			function := tc.name[strings.LastIndex(tc.name, ".")+1:]
			if e.Source != function || !strings.Contains(e.Msg, "ctx") {
				t.Errorf("error %q: want the source %q and a message that names ctx", err, function)
			}
			if res != nil && (res.Verdict != spawngate.NotJudged || res.Error != err.Error() || spawngate.Allowed(*res, err)) {
				t.Errorf("result %+v beside %v: want it not judged", res, err)
			}
		})
	}
	if got, want := contextTakers(t), []string{"Gate.Check", "Gate.CheckPlan", "Gate.Hook", "New"}; !slices.Equal(got, want) {
		t.Fatalf("the exported functions that take a context are %v; the table covers %v", got, want)
	}
}

// contextTakers lists the package's exported functions and methods that
// take a context.Context, as "New" or "Gate.Check", sorted.
func contextTakers(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	fset := token.NewFileSet()
	for _, file := range files {
		if strings.HasSuffix(file, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, file, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, decl := range f.Decls {
			d, ok := decl.(*ast.FuncDecl)
			if !ok || !d.Name.IsExported() || (d.Recv != nil && !exportedReceiver(d.Recv)) {
				continue
			}
			for _, p := range d.Type.Params.List {
				if sel, ok := p.Type.(*ast.SelectorExpr); ok && sel.Sel.Name == "Context" {
					if pkg, ok := sel.X.(*ast.Ident); ok && pkg.Name == "context" {
						name := d.Name.Name
						if d.Recv != nil {
							name = receiverName(d.Recv) + "." + name
						}
						names = append(names, name)
						break
					}
				}
			}
		}
	}
	slices.Sort(names)
	return names
}

// receiverName is the type a method belongs to, without its pointer.
func receiverName(recv *ast.FieldList) string {
	typ := recv.List[0].Type
	if star, ok := typ.(*ast.StarExpr); ok {
		typ = star.X
	}
	if id, ok := typ.(*ast.Ident); ok {
		return id.Name
	}
	return ""
}
