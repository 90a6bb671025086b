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
// document.Limits.MaxChildEntries tools and as many paths.
const batchWeight = 2048

// batch is the representatives, by group, that one evaluation judges.
type batch []int

// batches splits the representatives to evaluate (need, in order) into
// batches of about batchWeight; child gives a representative as written.
func batches(child func(k int) any, need []int) []batch {
	var out []batch
	var cur batch
	weight := 0
	for _, k := range need {
		weight++
		if obj, ok := child(k).(map[string]any); ok {
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

// completer gives each group of a batch all it was found to have (see
// evaluation.complete); it runs on the worker that judged the batch.
type completer func(ctx context.Context, ks []int, found [][]report.Violation) ([][]report.Violation, error)

// judgedBatch is what one batch gave: the child checks' violations, and
// all of them after complete.
type judgedBatch struct{ found, all [][]report.Violation }

// evaluateBatches runs the child checks over every batch, on every core,
// then complete on the same core, and hands each batch's violations (by
// their place in the batch; found as the checks found them, all after
// complete) to done in batch order, so that what done builds does not
// depend on which core finished first (future.InOrder). The first error,
// from a batch or from done, or the context ending, stops the rest. A
// panic in a worker is raised again here, where the caller's recover sees
// it. A worker asks judged for each representative of its batch as the
// checks see it, once.
func (e *Engine) evaluateBatches(ctx context.Context, in *inputs, judged func(k int) any, bs []batch, complete completer, done func(b batch, found, all [][]report.Violation) error) error {
	return future.InOrder(ctx, len(bs), func(ctx context.Context, i int) (judgedBatch, error) {
		children := make([]any, len(bs[i]))
		for j, k := range bs[i] {
			children[j] = judged(k)
		}
		found, err := e.evaluate(ctx, e.childQuery, in, children, nil)
		if err != nil {
			return judgedBatch{}, err
		}
		all, err := complete(ctx, bs[i], found)
		return judgedBatch{found, all}, err
	}, func(i int, r judgedBatch) error {
		return done(bs[i], r.found, r.all)
	})
}
