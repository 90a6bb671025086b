package spawngate_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/spawngate/spawngate"
)

// go doc of the package is all a caller has: every exported type is
// declared here (an alias of an internal type shows no fields), every
// exported field carries a comment (its own, or one it shares with the
// field before it, as "Line and Column ..."), and no exported name leads
// into an internal package, which a caller can neither import nor read.
func TestGoDocShowsEveryField(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	var problems []string
	report := func(at token.Pos, format string, args ...any) {
		problems = append(problems, fset.Position(at).String()+": "+fmt.Sprintf(format, args...))
	}
	checked := 0
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		internal := map[string]string{} // import name -> path, internal ones only
		for _, imp := range f.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			if !strings.Contains(path, "/internal/") {
				continue
			}
			local := path[strings.LastIndex(path, "/")+1:]
			if imp.Name != nil {
				local = imp.Name.Name
			}
			internal[local] = path
		}
		leaks := func(n ast.Node, what string) {
			ast.Inspect(n, func(n ast.Node) bool {
				if sel, ok := n.(*ast.SelectorExpr); ok {
					if id, ok := sel.X.(*ast.Ident); ok && internal[id.Name] != "" {
						report(sel.Pos(), "%s shows %s.%s, from %s", what, id.Name, sel.Sel.Name, internal[id.Name])
					}
				}
				return true
			})
		}
		for _, decl := range f.Decls {
			switch d := decl.(type) {
			case *ast.FuncDecl:
				if !d.Name.IsExported() || (d.Recv != nil && !exportedReceiver(d.Recv)) {
					continue
				}
				checked++
				if d.Doc == nil {
					report(d.Pos(), "func %s has no doc comment", d.Name.Name)
				}
				leaks(d.Type, "func "+d.Name.Name)
			case *ast.GenDecl:
				for _, spec := range d.Specs {
					switch s := spec.(type) {
					case *ast.TypeSpec:
						if !s.Name.IsExported() {
							continue
						}
						checked++
						if s.Assign.IsValid() {
							report(s.Pos(), "type %s is an alias: go doc shows none of its fields", s.Name.Name)
						}
						if s.Doc == nil && d.Doc == nil {
							report(s.Pos(), "type %s has no doc comment", s.Name.Name)
						}
						st, ok := s.Type.(*ast.StructType)
						if !ok {
							leaks(s.Type, "type "+s.Name.Name)
							continue
						}
						undocumentedFields(s.Name.Name, st, report)
						for _, f := range st.Fields.List {
							// go doc hides unexported fields.
							if len(f.Names) == 0 || f.Names[0].IsExported() {
								leaks(f.Type, "type "+s.Name.Name)
							}
						}
					case *ast.ValueSpec:
						for _, n := range s.Names {
							if n.IsExported() {
								checked++
								leaks(s, "const or var "+n.Name)
								break
							}
						}
					}
				}
			}
		}
	}
	if checked < 40 {
		t.Fatalf("only %d exported declarations found: is the test reading the package?", checked)
	}
	for _, p := range problems {
		t.Error(p)
	}
}

// exportedReceiver tells whether a method's receiver type is exported.
func exportedReceiver(recv *ast.FieldList) bool {
	typ := recv.List[0].Type
	if star, ok := typ.(*ast.StarExpr); ok {
		typ = star.X
	}
	id, ok := typ.(*ast.Ident)
	return ok && id.IsExported()
}

// undocumentedFields reports the exported fields of a struct that have no
// comment of their own and are not named by the comment of the field
// before them.
func undocumentedFields(typ string, st *ast.StructType, report func(token.Pos, string, ...any)) {
	shared := "" // the comment above the last documented field
	for _, f := range st.Fields.List {
		names := f.Names
		if len(names) == 0 { // embedded: named by its type
			id, _ := ast.Unparen(f.Type).(*ast.Ident)
			if id == nil {
				continue
			}
			names = []*ast.Ident{id}
		}
		if f.Doc != nil {
			shared = f.Doc.Text()
		}
		for _, n := range names {
			if !n.IsExported() || f.Doc != nil || f.Comment != nil {
				continue
			}
			if !regexp.MustCompile(`\b` + n.Name + `\b`).MatchString(shared) {
				report(n.Pos(), "field %s.%s has no comment", typ, n.Name)
			}
		}
	}
}

// A Result is the caller's own: editing it, even the lists inside its
// violations, changes nothing of what the gate answers next, to this
// caller or any other. (The gate remembers what it found for a child and
// answers again from that memory.)
func TestAResultIsTheCallersOwn(t *testing.T) {
	ctx := context.Background()
	g := gate(t)
	doc := []byte(`{"plan": [{"role": "r", "tools": ["fs.read", "shell.run"], "paths": ["/etc"], "budget_tokens": 1000}, {"role": "s", "tools": ["fs.write"], "paths": [], "budget_tokens": 1}]}`)
	first, err := g.Check(ctx, "plan.json", doc)
	if err != nil {
		t.Fatal(err)
	}
	// The answer as it stands, written out before any edit: a Result
	// that shared the gate's memory would change with it.
	want, err := json.Marshal(first)
	if err != nil {
		t.Fatal(err)
	}
	edited := 0
	for i := range first.Policies {
		first.Policies[i] = "forged"
	}
	for _, c := range first.Children {
		for j := range c.Violations {
			v := &c.Violations[j]
			v.Rule, v.Message = "forged", "forged"
			for k := range v.Policies {
				v.Policies[k] = "forged"
				edited++
			}
		}
		// An append to one child's list must not run into the next's.
		_ = append(c.Violations, spawngate.Violation{Rule: "appended"})
	}
	if edited == 0 {
		t.Fatal("no violation names a policy: the test edits nothing")
	}
	for _, judge := range []func() (spawngate.Result, error){
		func() (spawngate.Result, error) { return g.Check(ctx, "plan.json", doc) },
		func() (spawngate.Result, error) { return g.Check(ctx, "other.json", doc) },
	} {
		again, err := judge()
		if err != nil {
			t.Fatal(err)
		}
		again.Source = first.Source
		if got, _ := json.Marshal(again); string(got) != string(want) {
			t.Fatalf("after a caller edited its result, the gate answers\n%s\nnot\n%s", got, want)
		}
	}
}

// Every error is an *Error whose kind errors.Is finds, also through a
// caller's wrapping; no error is of any other kind.
func TestErrorsIsByKind(t *testing.T) {
	ctx := context.Background()
	kinds := []spawngate.ErrorKind{spawngate.ErrDocument, spawngate.ErrLimit, spawngate.ErrTimeout, spawngate.ErrInterrupted, spawngate.ErrNoPolicy, spawngate.ErrInternal, spawngate.ErrOption}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	late, cancelLate := context.WithDeadline(ctx, time.Now().Add(-time.Second))
	defer cancelLate()
	tight := gate(t, spawngate.WithLimits(func() spawngate.Limits { l := spawngate.DefaultLimits(); l.MaxChildEntries = 1; return l }()))
	one := []byte(`{"plan": [{"role": "r", "tools": ["fs.read", "http.get"], "paths": [], "budget_tokens": 1}]}`)
	var zero spawngate.Gate
	for _, tc := range []struct {
		want spawngate.ErrorKind
		err  func() error
	}{
		{spawngate.ErrDocument, func() error { _, err := gate(t).Check(ctx, "plan.json", []byte(`{`)); return err }},
		{spawngate.ErrLimit, func() error { _, err := tight.Check(ctx, "plan.json", one); return err }},
		{spawngate.ErrTimeout, func() error {
			_, err := gate(t).Check(late, "plan.json", one)
			return err
		}},
		{spawngate.ErrInterrupted, func() error { _, err := gate(t).Check(cancelled, "plan.json", one); return err }},
		{spawngate.ErrNoPolicy, func() error { _, err := spawngate.New(ctx); return err }},
		{spawngate.ErrInternal, func() error { _, err := zero.Check(ctx, "plan.json", one); return err }},
		{spawngate.ErrOption, func() error {
			_, err := spawngate.New(ctx, spawngate.WithPolicy("p.json", nil), spawngate.WithTimeout(0))
			return err
		}},
	} {
		t.Run(tc.want.String(), func(t *testing.T) {
			err := tc.err()
			var e *spawngate.Error
			if !errors.As(err, &e) || e.Kind != tc.want {
				t.Fatalf("error %v (%T), want an *Error of kind %s", err, err, tc.want)
			}
			for _, wrapped := range []error{err, fmt.Errorf("spawn: %w", err)} {
				for _, k := range kinds {
					if got := errors.Is(wrapped, k); got != (k == tc.want) {
						t.Errorf("errors.Is(%q, %s) = %v", wrapped, k, got)
					}
				}
			}
		})
	}
	if errors.Is(errors.New("document"), spawngate.ErrDocument) {
		t.Fatal("a foreign error with the kind's text is of the kind")
	}
}

// Limits.Check says in advance what WithLimits refuses, in the same
// *Error, and lets the defaults through.
func TestLimitsCheckIsWhatNewRefuses(t *testing.T) {
	if err := spawngate.DefaultLimits().Check(); err != nil {
		t.Fatalf("the defaults: %v", err)
	}
	for _, change := range []func(*spawngate.Limits){
		func(l *spawngate.Limits) { *l = spawngate.Limits{} },
		func(l *spawngate.Limits) { l.MaxValues = 0 },
		func(l *spawngate.Limits) { l.MaxAliasBytes = -1 },
		func(l *spawngate.Limits) { l.MaxDepth = 10001 },
	} {
		l := spawngate.DefaultLimits()
		change(&l)
		err := l.Check()
		var e *spawngate.Error
		if !errors.As(err, &e) || e.Kind != spawngate.ErrOption || e.Source != "WithLimits" {
			t.Fatalf("%+v: %v (%T), want an *Error of kind option from WithLimits", l, err, err)
		}
		_, fromNew := spawngate.New(context.Background(), spawngate.WithPolicy("p.json", []byte(operator)), spawngate.WithLimits(l))
		if fromNew == nil || fromNew.Error() != err.Error() {
			t.Fatalf("%+v: New says %v, Check %v", l, fromNew, err)
		}
	}
}
