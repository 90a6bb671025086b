package server

import (
	"context"
	"testing"
	"time"
)

// TestOnTimeAnswersWhateverTheWorkDoes: work that does not look at its
// context (the schema validator on a huge document) does not hold the
// answer past the deadline and a grace; it keeps its turn until it
// returns, and only then is the turn let go.
func TestOnTimeAnswersWhateverTheWorkDoes(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	unblock, released := make(chan struct{}), make(chan struct{})
	v, inTime, free := onTime(ctx, func() { close(released) }, func() int {
		<-unblock // ignores ctx
		return 1
	}, func(any) int { return -1 })
	if inTime || v != 0 {
		t.Fatalf("onTime = %d, %v: the work outran its deadline", v, inTime)
	}
	free()
	select {
	case <-released:
		t.Fatal("the turn was let go while the work still ran")
	default:
	}
	close(unblock)
	<-released // the work returned: its turn goes
}

// TestOnTimeReturnsTheWork: work that returns in time, or says itself
// that it ran out of time within the grace, is the answer; its turn goes
// when the answer is written (free), once.
func TestOnTimeReturnsTheWork(t *testing.T) {
	released := 0
	v, inTime, free := onTime(context.Background(), func() { released++ }, func() int { return 7 }, func(any) int { return -1 })
	if !inTime || v != 7 || released != 0 {
		t.Fatalf("onTime = %d, %v, released %d", v, inTime, released)
	}
	free()
	free()
	if released != 1 {
		t.Fatalf("released %d times", released)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if v, inTime, _ := onTime(ctx, func() {}, func() int { <-ctx.Done(); return 3 }, func(any) int { return -1 }); !inTime || v != 3 {
		t.Fatalf("work that stops on its context: %d, %v", v, inTime)
	}
	if v, inTime, _ := onTime(context.Background(), func() {}, func() int { panic("boom") }, func(any) int { return -1 }); !inTime || v != -1 {
		t.Fatalf("a panic: %d, %v", v, inTime)
	}
}
