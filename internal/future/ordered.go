package future

import (
	"context"
	"runtime"
)

// InOrder runs f for every index from 0 to n-1, on every core, and hands
// each result to emit in index order, as soon as it and all before it are
// done: what emit builds is the same whichever core finished first. At
// most two results per core wait to be emitted, so that a slow first item
// bounds what the others hold in memory.
//
// The first error stops the work: one from f (for the index emit would
// have been handed next), one from emit, or ctx ending while a result is
// awaited. f is given a context that is cancelled once InOrder returns, so
// that work still under way stops. A panic in f is raised again here, on
// the caller's goroutine, where its recover sees it. With one core, or one
// index, every f runs on the caller's goroutine, one after the other.
func InOrder[T any](ctx context.Context, n int, f func(context.Context, int) (T, error), emit func(int, T) error) error {
	workers := min(runtime.GOMAXPROCS(0), n)
	if workers <= 1 {
		for i := range n {
			v, err := f(ctx, i)
			if err != nil {
				return err
			}
			if err := emit(i, v); err != nil {
				return err
			}
		}
		return nil
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	type result struct {
		v     T
		err   error
		panic any
	}
	results := make([]chan result, n)
	for i := range results {
		results[i] = make(chan result, 1) // a worker never waits for the caller
	}
	ahead := make(chan struct{}, 2*workers) // started and not yet emitted
	jobs := make(chan int)
	go func() {
		defer close(jobs)
		for i := range n {
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
	run := func(i int) (r result) {
		defer func() {
			if p := recover(); p != nil {
				r = result{panic: p}
			}
		}()
		r.v, r.err = f(ctx, i)
		return r
	}
	for range workers {
		go func() {
			for i := range jobs {
				results[i] <- run(i)
			}
		}()
	}
	for i := range n {
		var r result
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
		if err := emit(i, r.v); err != nil {
			return err
		}
	}
	return nil
}
