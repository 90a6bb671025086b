package future_test

import (
	"errors"
	"testing"

	"github.com/spawngate/spawngate/internal/future"
)

func TestWaitGivesWhatTheWorkReturned(t *testing.T) {
	bad := errors.New("bad")
	for _, fu := range []*future.Future[int]{
		future.Go(func() (int, error) { return 7, bad }),
		future.Done(7, bad),
	} {
		for range 2 { // every waiter gets the same
			if v, err := fu.Wait(); v != 7 || err != bad {
				t.Fatalf("Wait() = %d, %v; want 7, bad", v, err)
			}
		}
	}
}

// A panic in the work is raised again in each waiter, not in the work's
// own goroutine, where nothing could recover it.
func TestWaitRaisesThePanicAgain(t *testing.T) {
	fu := future.Go(func() (int, error) { panic("boom") })
	for range 2 {
		func() {
			defer func() {
				if p := recover(); p != "boom" {
					t.Fatalf("recovered %v, want boom", p)
				}
			}()
			fu.Wait()
			t.Fatal("Wait returned")
		}()
	}
}
