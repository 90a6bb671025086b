package spawngate

import (
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"strconv"
	"testing"

	"github.com/spawngate/spawngate/internal/judge"
	"github.com/spawngate/spawngate/internal/report"
)

// fill sets every field of v, at every depth, to a value no other field
// has; with empty, every slice is an empty list instead (the JSON report
// writes [] and null apart).
func fill(v reflect.Value, n *int, empty bool) { fillTo(v, n, empty, 0) }

// fillTo is fill below depth levels of pointers and lists: a type that
// holds itself (an error's other problems) is filled three levels deep.
func fillTo(v reflect.Value, n *int, empty bool, depth int) {
	*n++
	switch v.Kind() {
	case reflect.String:
		v.SetString("s" + strconv.Itoa(*n))
	case reflect.Int, reflect.Int64:
		v.SetInt(int64(*n))
	case reflect.Uint8:
		v.SetUint(uint64(*n % 256))
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Pointer:
		if !empty && depth < 6 {
			v.Set(reflect.New(v.Type().Elem()))
			fillTo(v.Elem(), n, empty, depth+1)
		}
	case reflect.Slice:
		if empty || depth >= 6 {
			v.Set(reflect.MakeSlice(v.Type(), 0, 0))
			return
		}
		v.Set(reflect.MakeSlice(v.Type(), 2, 2))
		for i := range 2 {
			fillTo(v.Index(i), n, empty, depth+1)
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				fillTo(v.Field(i), n, empty, depth)
			}
		}
	default:
		panic("fill: no value for a " + v.Kind().String())
	}
}

// The caller's Result holds everything the report's has (but the error's
// parts, which the *Error beside it carries): a field the report gains
// and the conversion misses fails here, not in a caller's program. The
// JSON of both is the same, so a caller's json.Marshal writes what
// spawngate check --format json writes.
func TestResultOfCopiesEveryField(t *testing.T) {
	for _, empty := range []bool{false, true} {
		var r report.Result
		n := 0
		fill(reflect.ValueOf(&r).Elem(), &n, empty)
		r.Problem = nil
		got := resultOf(r)
		want, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		have, err := json.Marshal(got)
		if err != nil {
			t.Fatal(err)
		}
		if string(have) != string(want) {
			t.Fatalf("empty lists %v:\nthe caller's %s\nthe report's %s", empty, have, want)
		}
		if !empty {
			// An append to one child's violations stays its own.
			_ = append(got.Children[0].Violations, Violation{Rule: "appended"})
			_ = append(got.Children[0].Violations[0].Policies, "appended")
			if got.Children[1].Violations[0].Rule == "appended" || got.Children[0].Violations[1].Policies[0] == "appended" {
				t.Fatal("an append ran into the next list")
			}
		}
	}
	// Every field of the report but Problem and Text (the document's own
	// bytes, kept for the HTML page; the caller has them) has a field of
	// its name.
	for internal, public := range map[reflect.Type]reflect.Type{
		reflect.TypeFor[report.Result]():    reflect.TypeFor[Result](),
		reflect.TypeFor[report.Child]():     reflect.TypeFor[Child](),
		reflect.TypeFor[report.Violation](): reflect.TypeFor[Violation](),
	} {
		for i := range internal.NumField() {
			f := internal.Field(i)
			if g, ok := public.FieldByName(f.Name); !ok && f.Name != "Problem" && f.Name != "Text" || ok && g.Tag != f.Tag {
				t.Errorf("%s.%s %q is not in %s as it is", internal, f.Name, f.Tag, public)
			}
		}
	}
}

// The kinds are the pipeline's, number for number and name for name.
func TestErrorKindsAreThePipelines(t *testing.T) {
	for k := judge.ErrorKind(0); k <= judge.Option+1; k++ {
		if got := ErrorKind(k).String(); got != k.String() {
			t.Errorf("kind %d is %q here, %q in the pipeline", k, got, k.String())
		}
	}
}

// errorOf keeps every part of the pipeline's error, and says it in the
// same words.
func TestErrorOfKeepsEveryPart(t *testing.T) {
	var je judge.Error
	n := 0
	fill(reflect.ValueOf(&je).Elem(), &n, false)
	je.Kind = judge.Limit
	e := errorOf("elsewhere", &je)
	in, out := reflect.ValueOf(je), reflect.ValueOf(*e)
	for i := range in.NumField() {
		f := in.Type().Field(i)
		g := out.FieldByName(f.Name)
		if !g.IsValid() || fmt.Sprint(g.Interface()) != fmt.Sprint(in.Field(i).Interface()) {
			t.Errorf("field %s: %v, want %v", f.Name, g, in.Field(i))
		}
	}
	if e.Error() != je.Error() || e.Where() != je.Where() {
		t.Errorf("%q / %q, want %q / %q", e.Error(), e.Where(), je.Error(), je.Where())
	}
}

// BenchmarkResultOf is the conversion alone, on the result of the README's
// example (two children, six violations), to set beside BenchmarkGate.
func BenchmarkResultOf(b *testing.B) {
	ctx := b.Context()
	g, err := New(ctx, WithPolicyFile("examples/policy.yaml"))
	if err != nil {
		b.Fatal(err)
	}
	doc, err := os.ReadFile("examples/refused-plan.json")
	if err != nil {
		b.Fatal(err)
	}
	r, err := g.g.JudgeBytes(ctx, "plan.json", doc, report.DefaultMaxListed)
	if err != nil || len(r.Children) != 2 {
		b.Fatalf("%+v %v", r, err)
	}
	for b.Loop() {
		if res := resultOf(r); len(res.Children) != 2 {
			b.Fatal("children lost")
		}
	}
}
