// Package future runs work beside its caller (a compile while a document
// is read) and hands its result to whoever waits for it. A panic in the
// work is raised again in each waiter, where the front end's recover turns
// it into an internal error: a panic in a goroutine of its own would end
// the process, server and all.
package future

// Future is work under way in its own goroutine, or already done.
type Future[T any] struct {
	done  chan struct{}
	v     T
	err   error
	panic any
}

// Go starts f in a goroutine of its own.
func Go[T any](f func() (T, error)) *Future[T] {
	fu := &Future[T]{done: make(chan struct{})}
	go func() {
		defer close(fu.done)
		defer func() { fu.panic = recover() }() // raised again by Wait, where the caller recovers it
		fu.v, fu.err = f()
	}()
	return fu
}

// Done is a future whose work is done already: what a cache had.
func Done[T any](v T, err error) *Future[T] {
	fu := &Future[T]{done: make(chan struct{}), v: v, err: err}
	close(fu.done)
	return fu
}

// Wait waits for the work and gives what it returned. A panic in the work
// is raised again here, in every caller.
func (fu *Future[T]) Wait() (T, error) {
	<-fu.done
	if fu.panic != nil {
		panic(fu.panic)
	}
	return fu.v, fu.err
}
