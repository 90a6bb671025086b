// Package memo is a small, bounded, concurrency-safe memory of values by
// key (the least recently used are forgotten first), for the decisions the
// gate makes again and again: what the schema and the checks said of a
// child they judged before.
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
