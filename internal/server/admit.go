package server

import (
	"context"
	"sync"
)

// admission bounds what the server holds at once, whatever arrives. A
// request is admitted first: at most MaxConcurrent evaluating and
// MaxWaiting waiting, beyond that it is answered busy at once, before a
// byte of its body is read. An admitted request then reserves the bytes
// its body may take, from a budget of MaxConcurrent bodies of the largest
// size, before it reads them, and gives them back once answered. So the
// bodies held at once never exceed the budget, and the requests held at
// once (each with its headers) never exceed the two bounds; a body the
// server cannot take yet stays with the client (a client that sent
// "Expect: 100-continue" is told to go on only once its bytes are
// reserved).
type admission struct {
	mu        sync.Mutex
	inside    int   // requests admitted and not yet answered
	maxInside int   // MaxConcurrent + MaxWaiting
	free      int64 // bytes of the budget not reserved
	queue     []*reservation
}

// reservation is a request waiting for bytes of the budget, first come
// first served: a large body is not passed over for ever by small ones.
type reservation struct {
	n     int64
	ready chan struct{} // closed once the bytes are the request's
}

func newAdmission(maxInside int, budget int64) *admission {
	return &admission{maxInside: maxInside, free: budget}
}

// admit lets a request in, unless as many are inside as may be.
func (a *admission) admit() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.inside >= a.maxInside {
		return false
	}
	a.inside++
	return true
}

// leave is an admitted request answered.
func (a *admission) leave() {
	a.mu.Lock()
	a.inside--
	a.mu.Unlock()
}

// reserve waits, while ctx lasts, until n bytes of the budget are the
// request's. n is never more than the budget (one body of the largest
// size), so every reservation is granted in its turn.
func (a *admission) reserve(ctx context.Context, n int64) error {
	a.mu.Lock()
	if len(a.queue) == 0 && n <= a.free {
		a.free -= n
		a.mu.Unlock()
		return nil
	}
	r := &reservation{n: n, ready: make(chan struct{})}
	a.queue = append(a.queue, r)
	a.mu.Unlock()
	select {
	case <-r.ready:
		return nil
	case <-ctx.Done():
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	select {
	case <-r.ready: // granted as the wait ended: give it back
		a.free += n
	default:
		for i, q := range a.queue {
			if q == r {
				a.queue = append(a.queue[:i], a.queue[i+1:]...)
				break
			}
		}
	}
	a.grant() // the one behind it may fit now
	return ctx.Err()
}

// release gives n reserved bytes back.
func (a *admission) release(n int64) {
	a.mu.Lock()
	a.free += n
	a.grant()
	a.mu.Unlock()
}

// grant hands bytes to the waiting reservations in order, while the
// first one fits. Under a.mu.
func (a *admission) grant() {
	for len(a.queue) > 0 && a.queue[0].n <= a.free {
		r := a.queue[0]
		a.queue = a.queue[1:]
		a.free -= r.n
		close(r.ready)
	}
}
