// Package memo is a small, bounded, concurrency-safe memory of values by
// key (the least recently used are forgotten first), for what the gate
// would otherwise work out again and again: what the schema and the checks
// said of a child they judged before.
//
// Every memo of the gate follows one rule: a key holds everything the
// decision reads. What a decision reads that its key lacks (a brief the
// keys of groups abstract, the filesystem) turns the memo off for that
// job, and so does a job of more kinds of entry than the memo keeps: in
// order, none would be found again, and what other jobs left would be
// pushed out. A job states both once, when it asks for its view (For);
// the view it gets remembers nothing when either holds, and the code that
// uses it has no exemption of its own.
package memo

import (
	"container/list"
	"sync"
)

// Size is how many entries a memo of children keeps: enough for the agent
// types and templates a gate sees again and again, small enough to cost a
// few megabytes at most.
const Size = 4096

// Memo remembers the last few thousand values computed for keys, safe for
// concurrent use. What it holds must never be changed by whoever gets it.
type Memo[V any] struct {
	mu    sync.Mutex
	max   int
	items map[string]*list.Element
	order *list.List // most recently used first
}

type memoEntry[V any] struct {
	key   string
	value V
}

func New[V any](max int) *Memo[V] {
	return &Memo[V]{max: max, items: make(map[string]*list.Element), order: list.New()}
}

// Cap is how many entries the memo keeps.
func (m *Memo[V]) Cap() int { return m.max }

// Len is how many entries it holds now.
func (m *Memo[V]) Len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.order.Len()
}

// Get returns the value of key, if it is remembered.
func (m *Memo[V]) Get(key string) (V, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	e, ok := m.items[key]
	if !ok {
		var zero V
		return zero, false
	}
	m.order.MoveToFront(e)
	return e.Value.(*memoEntry[V]).value, true
}

// Put remembers the value of key, forgetting the least recently used
// entry when the memo is full.
func (m *Memo[V]) Put(key string, value V) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if e, ok := m.items[key]; ok {
		e.Value.(*memoEntry[V]).value = value
		m.order.MoveToFront(e)
		return
	}
	m.items[key] = m.order.PushFront(&memoEntry[V]{key, value})
	if m.order.Len() > m.max {
		last := m.order.Back()
		m.order.Remove(last)
		delete(m.items, last.Value.(*memoEntry[V]).key)
	}
}

// View is one job's use of a memo: every key it gets or puts is the job's
// prefix (what all its keys share, such as the policies) followed by the
// key given. The zero View remembers nothing.
type View[V any] struct {
	m      *Memo[V]
	prefix string
}

// For is the view of m for a job whose keys start with prefix and which
// would put up to kinds entries. It remembers nothing when unkeyed names
// anything (what the job reads that its keys do not hold), when kinds is
// more than m keeps, or when m is nil.
func (m *Memo[V]) For(prefix string, kinds int, unkeyed []string) View[V] {
	if m == nil || len(unkeyed) > 0 || kinds > m.max {
		return View[V]{}
	}
	return View[V]{m: m, prefix: prefix}
}

// On tells whether the view remembers.
func (v View[V]) On() bool { return v.m != nil }

// Get returns the value of the job's key, if it is remembered.
func (v View[V]) Get(key string) (V, bool) {
	if v.m == nil {
		var zero V
		return zero, false
	}
	return v.m.Get(v.prefix + key)
}

// Put remembers the value of the job's key.
func (v View[V]) Put(key string, value V) {
	if v.m != nil {
		v.m.Put(v.prefix+key, value)
	}
}
