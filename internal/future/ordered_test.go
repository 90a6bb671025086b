package future_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/spawngate/spawngate/internal/future"
)

// withProcs runs the test body with n cores, so that both the pool and the
// one-goroutine path are exercised on any machine.
func withProcs(t *testing.T, n int) {
	prev := runtime.GOMAXPROCS(n)
	t.Cleanup(func() { runtime.GOMAXPROCS(prev) })
}

// Results are emitted in index order even when a later index finishes
// first: index 0 waits until index 1 is done.
func TestInOrderEmitsInIndexOrder(t *testing.T) {
	for _, procs := range []int{1, 4} {
		t.Run(fmt.Sprint(procs, " cores"), func(t *testing.T) {
			withProcs(t, procs)
			oneDone := make(chan struct{})
			var got []int
			err := future.InOrder(context.Background(), 40, func(_ context.Context, i int) (int, error) {
				switch {
				case i == 0 && procs > 1:
					<-oneDone // finishes after index 1
				case i == 1 && procs > 1:
					defer close(oneDone)
				}
				return i * i, nil
			}, func(i, v int) error {
				if v != i*i {
					t.Errorf("emit(%d, %d): the value of another index", i, v)
				}
				got = append(got, i)
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			want := make([]int, 40)
			for i := range want {
				want[i] = i
			}
			if !slices.Equal(got, want) {
				t.Fatalf("emitted %v, want 0..39 in order", got)
			}
		})
	}
}

// The first error stops the work: nothing after it is emitted, and no
// more than two items per core beyond what was emitted are ever started.
func TestInOrderStopsAtTheFirstError(t *testing.T) {
	bad := errors.New("bad")
	for _, tc := range []struct {
		name            string
		failIn, failOut int // the index whose f, or whose emit, fails
	}{
		{"from f", 3, -1},
		{"from emit", -1, 3},
	} {
		for _, procs := range []int{1, 4} {
			t.Run(fmt.Sprint(tc.name, ", ", procs, " cores"), func(t *testing.T) {
				withProcs(t, procs)
				var started atomic.Int64
				var emitted []int
				err := future.InOrder(context.Background(), 1000, func(_ context.Context, i int) (int, error) {
					started.Add(1)
					if i == tc.failIn {
						return 0, bad
					}
					return i, nil
				}, func(i, _ int) error {
					if i == tc.failOut {
						return bad
					}
					emitted = append(emitted, i)
					return nil
				})
				if err != bad {
					t.Fatalf("err %v, want bad", err)
				}
				if !slices.Equal(emitted, []int{0, 1, 2}) {
					t.Fatalf("emitted %v, want 0, 1, 2", emitted)
				}
				if n, most := started.Load(), int64(4+2*procs); n > most {
					t.Fatalf("%d items started, want at most %d", n, most)
				}
			})
		}
	}
}

// The caller's context ending stops the wait, and the context f is given
// ends with it.
func TestInOrderStopsWhenTheContextEnds(t *testing.T) {
	for _, procs := range []int{1, 4} {
		t.Run(fmt.Sprint(procs, " cores"), func(t *testing.T) {
			withProcs(t, procs)
			ctx, cancel := context.WithCancel(context.Background())
			err := future.InOrder(ctx, 10, func(ctx context.Context, i int) (int, error) {
				if i == 0 {
					cancel()
					<-ctx.Done()
					return 0, ctx.Err()
				}
				return i, nil
			}, func(i, _ int) error {
				t.Errorf("emit(%d) after the context ended", i)
				return nil
			})
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("err %v, want context.Canceled", err)
			}
		})
	}
}

// A panic in f is raised again on the caller's goroutine, where a recover
// sees it, not in a worker, where it would end the process.
func TestInOrderRaisesThePanicAgain(t *testing.T) {
	for _, procs := range []int{1, 4} {
		t.Run(fmt.Sprint(procs, " cores"), func(t *testing.T) {
			withProcs(t, procs)
			defer func() {
				if p := recover(); p != "boom" {
					t.Fatalf("recovered %v, want boom", p)
				}
			}()
			future.InOrder(context.Background(), 10, func(_ context.Context, i int) (int, error) {
				if i == 2 {
					panic("boom")
				}
				return i, nil
			}, func(int, int) error { return nil })
			t.Fatal("InOrder returned")
		})
	}
}
