package cli

import "runtime"

// inOrder runs f for every index from 0 to n-1, on every core, and hands
// each result to emit in index order, as soon as it and all before it are
// done: the output of a run over many plans is the same bytes whichever
// core finished first. At most two results per core wait to be emitted. A
// panic in f is raised again here, where Run's recover sees it.
func inOrder[T any](n int, f func(int) T, emit func(int, T)) {
	workers := min(runtime.GOMAXPROCS(0), n)
	if workers <= 1 {
		for i := range n {
			emit(i, f(i))
		}
		return
	}
	type result struct {
		v     T
		panic any
	}
	results := make([]chan result, n)
	for i := range results {
		results[i] = make(chan result, 1)
	}
	ahead := make(chan struct{}, 2*workers)
	jobs := make(chan int)
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		defer close(jobs)
		for i := range n {
			select {
			case ahead <- struct{}{}:
			case <-stop:
				return
			}
			select {
			case jobs <- i:
			case <-stop:
				return
			}
		}
	}()
	for range workers {
		go func() {
			for i := range jobs {
				func() {
					defer func() {
						if p := recover(); p != nil {
							results[i] <- result{panic: p}
						}
					}()
					results[i] <- result{v: f(i)}
				}()
			}
		}()
	}
	for i := range n {
		r := <-results[i]
		<-ahead
		if r.panic != nil {
			panic(r.panic)
		}
		emit(i, r.v)
	}
}
