package plan

import (
	"context"
	"errors"
	"runtime"
	"sync/atomic"
	"testing"

	"github.com/spawngate/spawngate/internal/document"
	"github.com/spawngate/spawngate/internal/document/documenttest"
	"github.com/spawngate/spawngate/internal/memo"
)

// Each step of the loader stops when its context ends, also deep inside a
// large document. (Each reader does too: package document's own test.)
func TestLoadingStopsWhenTheContextEnds(t *testing.T) {
	jsonDoc, yamlDoc := documenttest.Children(3 * checkEvery)
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	l, err := NewLoader(document.DefaultLimits)
	if err != nil {
		t.Fatal(err)
	}
	for name, run := range map[string]func(context.Context) error{
		"plan json": func(ctx context.Context) error { _, err := l.Plan(ctx, "p.json", jsonDoc); return err },
		"plan yaml": func(ctx context.Context) error { _, err := l.Plan(ctx, "p.yaml", yamlDoc); return err },
		"grouping": func(ctx context.Context) error {
			_, _, _, err := (&grouper{}).group(ctx, make([]any, 2*checkEvery))
			return err
		},
		"validating": func(ctx context.Context) error { return validateAll(ctx, l, jsonDoc) },
		// Placing a document's problems reads it again: it stops too, and
		// a document refused after its context ended is not an answer.
		"placing a document's problems": func(ctx context.Context) error {
			err := documentError(ctx, "p.yaml", yamlDoc, document.DefaultLimits, []schemaError{{"/plan/0/role", "bad"}, {"/plan/1/x", "unknown key"}})
			if e := (*document.Error)(nil); errors.As(err, &e) {
				return nil // the document's own error: what a context that did not end gives
			}
			return err
		},
	} {
		if err := run(context.Background()); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if err := run(cancelled); !errors.Is(err, context.Canceled) {
			t.Errorf("%s with its context cancelled: %v, want context.Canceled", name, err)
		}
	}
}

// validateAll runs the schema step alone on every child of a document.
func validateAll(ctx context.Context, l *Loader, data []byte) error {
	doc, err := document.Decode(context.Background(), "p.json", data, document.JSON, document.DefaultLimits)
	if err != nil {
		return err
	}
	reps := doc.(map[string]any)["plan"].([]any)
	_, _, err = l.schemas.validatePlan(ctx, doc.(map[string]any), reps, nil, true, memo.View[[]schemaError]{}, nil, nil)
	return err
}

// The schema step validates a child in tens of microseconds, and a
// thousand times that on a loaded machine: it looks at its context
// before each one, or a server told to stop would answer seconds late.
func TestValidatingStopsAtTheNextChild(t *testing.T) {
	for _, n := range []int{checkEvery / 2, 4 * 512 * runtime.GOMAXPROCS(0)} {
		ctx, cancel := context.WithCancel(context.Background())
		var calls atomic.Int64
		err := onEveryCore(ctx, 0, n, func(int) {
			calls.Add(1)
			cancel()
		})
		if !errors.Is(err, context.Canceled) {
			t.Errorf("%d children, cancelled at the first: %v, want context.Canceled", n, err)
		}
		// Each worker may finish the child it started.
		if got, most := calls.Load(), int64(runtime.GOMAXPROCS(0)); got > most {
			t.Errorf("%d children, cancelled at the first: validated %d, want at most %d", n, got, most)
		}
	}
}
