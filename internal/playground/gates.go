package playground

import (
	"container/list"
	"context"
	"crypto/sha256"
	"sync"

	"github.com/spawngate/spawngate/internal/judge"
	"github.com/spawngate/spawngate/policy"
)

// gates keeps the gates of the policies judged lately, by the digest of
// everything a gate is built from here (the policy's source name and text,
// and each check module's name and text; the options are the
// playground's, the same for all), the least recently used dropped first:
// an operator editing a plan under one policy builds its gate once, and a
// page sending a new policy with every keystroke holds at most max.
type gates struct {
	mu    sync.Mutex
	max   int
	order *list.List // of *gateEntry, the most recently used first
	byKey map[[sha256.Size]byte]*list.Element
}

type gateEntry struct {
	key  [sha256.Size]byte
	gate *judge.Gate
}

func newGates(max int) *gates {
	return &gates{max: max, order: list.New(), byKey: map[[sha256.Size]byte]*list.Element{}}
}

// gateKey is the digest of what a gate is built from.
func gateKey(source string, pol []byte, mods []policy.Module) [sha256.Size]byte {
	h := sha256.New()
	for _, part := range append([]string{source, string(pol)}, modulesParts(mods)...) {
		h.Write([]byte(part))
		h.Write([]byte{0})
	}
	var k [sha256.Size]byte
	h.Sum(k[:0])
	return k
}

func modulesParts(mods []policy.Module) []string {
	var parts []string
	for _, m := range mods {
		parts = append(parts, m.Name, m.Source)
	}
	return parts
}

// get returns the gate for the policy and modules, building it with opts
// when none is kept. A policy that builds no gate is not kept: it is
// built, and refused, again. Two requests for one new policy may both
// build it; the second kept wins, and both judge alike.
func (c *gates) get(ctx context.Context, opts judge.Options, source string, pol []byte, mods []policy.Module) (*judge.Gate, error) {
	key := gateKey(source, pol, mods)
	c.mu.Lock()
	if e, ok := c.byKey[key]; ok {
		c.order.MoveToFront(e)
		g := e.Value.(*gateEntry).gate
		c.mu.Unlock()
		return g, nil
	}
	c.mu.Unlock()
	opts.Modules = mods
	g, err := judge.NewWithPolicy(ctx, opts, source, pol)
	if err != nil {
		return nil, err
	}
	if ctx.Err() != nil {
		// Built after its request was answered (a timeout, a shutdown):
		// not kept, or what was too costly to build in time would be
		// served from the cache to the next request, in no time.
		return nil, judge.AsError(source, ctx.Err())
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.byKey[key]; ok {
		c.order.MoveToFront(e)
		e.Value.(*gateEntry).gate = g
		return g, nil
	}
	c.byKey[key] = c.order.PushFront(&gateEntry{key: key, gate: g})
	for c.order.Len() > c.max {
		last := c.order.Back()
		c.order.Remove(last)
		delete(c.byKey, last.Value.(*gateEntry).key)
	}
	return g, nil
}

// len is how many gates are kept.
func (c *gates) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.order.Len()
}
