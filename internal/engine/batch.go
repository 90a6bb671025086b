package engine

import (
	"context"

	"github.com/spawngate/spawngate/internal/future"
	"github.com/spawngate/spawngate/internal/report"
)

// batchWeight is how much one evaluation of the child checks is given:
// representatives are added to a batch until their weight (one for the
// child, one for each tool and path it lists) reaches it. Each entry can
// give a violation or two, so this bounds what one evaluation holds in
// memory, however many children a plan has; a child alone lists at most
// plan.Limits.MaxChildEntries tools and as many paths.
const batchWeight = 2048

// batch is the representatives, by group, that one evaluation judges.
type batch []int

// batches splits the representatives to evaluate (need, in order) into
// batches of about batchWeight.
func batches(judged []any, need []int) []batch {
	var out []batch
	var cur batch
	weight := 0
	for _, k := range need {
		weight++
		if obj, ok := judged[k].(map[string]any); ok {
			for _, key := range []string{"tools", "paths"} {
				if list, ok := obj[key].([]any); ok {
					weight += len(list)
				}
			}
		}
		cur = append(cur, k)
		if weight >= batchWeight {
			out = append(out, cur)
			cur, weight = nil, 0
		}
	}
	if len(cur) > 0 {
		out = append(out, cur)
	}
	return out
}

// evaluateBatches runs the child checks over every batch, on every core,
// and hands each batch's violations (by its place in the batch) to done in
// batch order, so that what done builds does not depend on which core
// finished first (future.InOrder). The first error, from a batch or from
// done, or the context ending, stops the rest. A panic in a worker is
// raised again here, where the caller's recover sees it.
func (e *Engine) evaluateBatches(ctx context.Context, in *inputs, judged []any, bs []batch, done func(batch, [][]report.Violation) error) error {
	return future.InOrder(ctx, len(bs), func(ctx context.Context, i int) ([][]report.Violation, error) {
		children := make([]any, len(bs[i]))
		for j, k := range bs[i] {
			children[j] = judged[k]
		}
		return e.evaluate(ctx, e.childQuery, in, children, nil)
	}, func(i int, found [][]report.Violation) error {
		return done(bs[i], found)
	})
}
