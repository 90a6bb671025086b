package engine

import (
	"context"
	"runtime"

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

// batchResult is what one batch's evaluation gave: the child checks'
// violations, and all of them after complete.
type batchResult struct {
	found, all [][]report.Violation
	err        error
	panic      any
}

// completer gives each group of a batch all it was found to have (see
// evaluation.complete); it runs on the worker that judged the batch.
type completer func(ctx context.Context, ks []int, found [][]report.Violation) ([][]report.Violation, error)

// evaluateBatches runs the child checks over every batch, on every core,
// then complete on the same core, and hands each batch's violations (by
// their place in the batch; found as the checks found them, all after
// complete) to done in batch order, so that what done builds does not depend on which core
// finished first. At most two batches per core are evaluated and not yet
// done. A panic in a worker is raised again here, where the caller's
// recover sees it.
func (e *Engine) evaluateBatches(ctx context.Context, in *inputs, judged []any, bs []batch, complete completer, done func(b batch, found, all [][]report.Violation) error) error {
	children := func(b batch) []any {
		out := make([]any, len(b))
		for j, k := range b {
			out[j] = judged[k]
		}
		return out
	}
	workers := min(runtime.GOMAXPROCS(0), len(bs))
	if workers <= 1 {
		for _, b := range bs {
			found, err := e.evaluate(ctx, e.childQuery, in, children(b), nil)
			if err != nil {
				return err
			}
			all, err := complete(ctx, b, found)
			if err != nil {
				return err
			}
			if err := done(b, found, all); err != nil {
				return err
			}
		}
		return nil
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	results := make([]chan batchResult, len(bs))
	for i := range results {
		results[i] = make(chan batchResult, 1)
	}
	ahead := make(chan struct{}, 2*workers) // batches started and not yet done
	jobs := make(chan int)
	go func() {
		defer close(jobs)
		for i := range bs {
			select {
			case ahead <- struct{}{}:
			case <-ctx.Done():
				return
			}
			select {
			case jobs <- i:
			case <-ctx.Done():
				return
			}
		}
	}()
	for range workers {
		go func() {
			for i := range jobs {
				results[i] <- e.evaluateBatch(ctx, in, bs[i], children(bs[i]), complete)
			}
		}()
	}
	for i, b := range bs {
		var r batchResult
		select {
		case r = <-results[i]:
		case <-ctx.Done():
			return ctx.Err()
		}
		<-ahead
		if r.panic != nil {
			panic(r.panic)
		}
		if r.err != nil {
			return r.err
		}
		if err := done(b, r.found, r.all); err != nil {
			return err
		}
	}
	return nil
}

func (e *Engine) evaluateBatch(ctx context.Context, in *inputs, b batch, children []any, complete completer) (r batchResult) {
	defer func() {
		if p := recover(); p != nil {
			r = batchResult{panic: p}
		}
	}()
	if r.found, r.err = e.evaluate(ctx, e.childQuery, in, children, nil); r.err == nil {
		r.all, r.err = complete(ctx, b, r.found)
	}
	return r
}
