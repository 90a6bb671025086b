package memo

import (
	"strconv"
	"sync"
	"testing"
)

func TestForgetsTheLeastRecentlyUsed(t *testing.T) {
	m := New[int](2)
	m.Put("a", 1)
	m.Put("b", 2)
	if v, ok := m.Get("a"); !ok || v != 1 { // a is now the most recent
		t.Fatalf("Get(a) = %d, %v; want 1, true", v, ok)
	}
	m.Put("c", 3) // forgets b, not a
	if _, ok := m.Get("b"); ok {
		t.Error("b is remembered after two more recent keys filled a memo of 2")
	}
	for key, want := range map[string]int{"a": 1, "c": 3} {
		if v, ok := m.Get(key); !ok || v != want {
			t.Errorf("Get(%s) = %d, %v; want %d, true", key, v, ok, want)
		}
	}
}

func TestPutReplaces(t *testing.T) {
	m := New[string](2)
	m.Put("a", "old")
	m.Put("b", "b")
	m.Put("a", "new") // a replaced and most recent: b goes next
	m.Put("c", "c")
	if v, ok := m.Get("a"); !ok || v != "new" {
		t.Errorf("Get(a) = %q, %v; want new, true", v, ok)
	}
	if _, ok := m.Get("b"); ok {
		t.Error("b is remembered; replacing a should have made b the least recent")
	}
	if len(m.items) != 2 || m.order.Len() != 2 {
		t.Errorf("holds %d keys, %d in order; want 2 and 2", len(m.items), m.order.Len())
	}
}

func TestMissIsZero(t *testing.T) {
	m := New[[]int](1)
	if v, ok := m.Get("nothing"); ok || v != nil {
		t.Errorf("Get on an empty memo = %v, %v; want nil, false", v, ok)
	}
}

// Under -race: many goroutines putting and getting never see a value of
// another key, and the memo never holds more than its size.
func TestConcurrent(t *testing.T) {
	m := New[int](64)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 2000 {
				k := (g*2000 + i) % 200
				key := strconv.Itoa(k)
				m.Put(key, k)
				if v, ok := m.Get(key); ok && v != k {
					t.Errorf("Get(%s) = %d", key, v)
					return
				}
			}
		}()
	}
	wg.Wait()
	if len(m.items) > 64 || m.order.Len() != len(m.items) {
		t.Errorf("holds %d keys, %d in order; want at most 64, equal", len(m.items), m.order.Len())
	}
}

// A view remembers under its prefix, and nothing at all when its job reads
// what its keys lack or would put more entries than the memo keeps.
func TestViewRemembersOnlyWhatItsKeysHold(t *testing.T) {
	m := New[int](2)
	on := m.For("p\x00", 2, nil)
	on.Put("a", 1)
	if v, ok := m.Get("p\x00a"); !ok || v != 1 {
		t.Fatalf("the view put %d, %v under its prefix; want 1, true", v, ok)
	}
	if v, ok := on.Get("a"); !ok || v != 1 || !on.On() {
		t.Fatalf("the view gets %d, %v; want 1, true", v, ok)
	}
	for name, off := range map[string]View[int]{
		"unkeyed":  m.For("p\x00", 1, []string{"the brief"}),
		"too many": m.For("p\x00", 3, nil),
		"nil memo": (*Memo[int])(nil).For("p\x00", 1, nil),
		"zero":     {},
	} {
		off.Put("b", 2)
		if v, ok := off.Get("a"); ok || off.On() {
			t.Errorf("%s: the view gets %d, %v; want nothing", name, v, ok)
		}
	}
	if m.Len() != 1 {
		t.Errorf("views that are off put entries: the memo holds %d, want 1", m.Len())
	}
}
