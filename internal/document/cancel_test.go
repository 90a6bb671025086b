package document_test

import (
	"context"
	"errors"
	"testing"

	"github.com/spawngate/spawngate/internal/document"
	"github.com/spawngate/spawngate/internal/document/documenttest"
)

// Each reader stops when its context ends, also deep inside a large
// document.
func TestReadingStopsWhenTheContextEnds(t *testing.T) {
	jsonDoc, yamlDoc := documenttest.Children(3 * document.CheckEvery)
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	for name, run := range map[string]func(context.Context) error{
		"json": func(ctx context.Context) error {
			_, err := document.Decode(ctx, "p.json", jsonDoc, document.JSON, document.DefaultLimits)
			return err
		},
		"yaml": func(ctx context.Context) error {
			_, err := document.Decode(ctx, "p.yaml", yamlDoc, document.YAML, document.DefaultLimits)
			return err
		},
		// Placing problems reads the document again: it stops too, and a
		// document refused after its context ended is not an answer.
		"placing json": func(ctx context.Context) error {
			_, err := document.Locate(ctx, "p.json", jsonDoc, document.DefaultLimits, []string{"/plan/0/role"})
			return err
		},
		"placing yaml": func(ctx context.Context) error {
			_, err := document.Locate(ctx, "p.yaml", yamlDoc, document.DefaultLimits, []string{"/plan/0/role"})
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
