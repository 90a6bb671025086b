package plan

import (
	"container/heap"
	"fmt"
	"maps"
	"slices"

	"github.com/spawngate/spawngate/internal/jsonpointer"
)

// MaxSchemaProblems is how many schema problems are listed for one
// document, and for one child: the first in pointer order, and besides
// them the first problem of the document and of the child, should they
// come later. The others are counted, in one problem more at the top of
// the document, or of the child, that holds them. Each listed problem
// costs a message, a place in the document and a line of report, so a
// document of a million unknown keys, or of a million values of the wrong
// type, would cost a report many times its size and seconds that no
// deadline interrupts. It is refused all the same: a problem that is
// counted refuses as one that is listed.
const MaxSchemaProblems = 1000

// problems collects what the schema says of one document: the first max
// problems in pointer order, whatever order the validator finds them in,
// the first of each region (the document, or a child: see region), and
// how many others there are in each region. A problem that cannot be
// listed is counted without its message ever being written.
type problems struct {
	max      int
	first    problemHeap             // the first found so far; the last of them on top
	firstIn  map[string]schemaError  // the first found so far in each region
	unlisted map[string]int          // by region, the problems not in first
	region   func(ptr string) string // "" for the document
}

func newProblems(max int, region func(string) string) *problems {
	if region == nil {
		region = func(string) string { return "" }
	}
	return &problems{max: max, firstIn: map[string]schemaError{}, unlisted: map[string]int{}, region: region}
}

// skip tells whether the problems at ptr, and below it in its region, can
// only be counted: the first max come before ptr, and so does the first of
// its region. (A pointer below ptr orders after it.)
func (p *problems) skip(ptr string) bool {
	if len(p.first) < p.max || jsonpointer.Compare(ptr, p.first[0].pointer) <= 0 {
		return false
	}
	f, ok := p.firstIn[p.region(ptr)]
	return ok && jsonpointer.Compare(ptr, f.pointer) > 0
}

// count counts n problems at ptr, or below it in its region, that are not
// listed.
func (p *problems) count(ptr string, n int) {
	if n > 0 {
		p.unlisted[p.region(ptr)] += n
	}
}

// offer adds a problem at ptr, whose message msg writes when it may be
// listed.
func (p *problems) offer(ptr string, msg func() string) {
	if p.skip(ptr) {
		p.count(ptr, 1)
		return
	}
	e := schemaError{ptr, msg()}
	r := p.region(ptr)
	if f, ok := p.firstIn[r]; !ok || compareProblems(e, f) < 0 {
		p.firstIn[r] = e
	}
	switch {
	case len(p.first) < p.max:
		heap.Push(&p.first, e)
	case compareProblems(e, p.first[0]) < 0:
		p.count(p.first[0].pointer, 1)
		p.first[0] = e
		heap.Fix(&p.first, 0)
	default:
		p.count(ptr, 1)
	}
}

// list is the problems listed, in order, two at one value merged (dedupe),
// after one problem for each region whose others are only counted, at the
// region's top. A region with problems has one listed at least, so a
// document whose own come after a child's many is refused naming its own.
func (p *problems) list() []schemaError {
	kept := slices.Clone([]schemaError(p.first))
	in := map[string]bool{}
	for _, e := range kept {
		in[p.region(e.pointer)] = true
	}
	for r := range p.unlisted {
		if !in[r] {
			kept = append(kept, p.firstIn[r])
			p.unlisted[r]--
		}
	}
	sortSchemaErrors(kept)
	kept = dedupe(kept)
	var out []schemaError
	for _, r := range slices.SortedFunc(maps.Keys(p.unlisted), jsonpointer.Compare) {
		if n := p.unlisted[r]; n > 0 {
			out = append(out, schemaError{r, fmt.Sprintf("%d more schema problems, not listed: at most %d are", n, p.max)})
		}
	}
	return append(out, kept...)
}

// compareProblems orders problems by pointer, then message.
func compareProblems(a, b schemaError) int {
	if c := jsonpointer.Compare(a.pointer, b.pointer); c != 0 {
		return c
	}
	switch {
	case a.msg < b.msg:
		return -1
	case a.msg > b.msg:
		return 1
	}
	return 0
}

// problemHeap is a max-heap of problems: the last in order on top.
type problemHeap []schemaError

func (h problemHeap) Len() int           { return len(h) }
func (h problemHeap) Less(i, j int) bool { return compareProblems(h[i], h[j]) > 0 }
func (h problemHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *problemHeap) Push(x any)        { *h = append(*h, x.(schemaError)) }
func (h *problemHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// firstKeys returns the first max keys of obj that known does not hold, in
// the order of their pointers, and how many such keys there are: an
// object of a million unknown keys costs a comparison per key, and a
// pointer and a message for the few that can be listed.
func firstKeys[V any](obj map[string]any, known map[string]V, max int) (first []string, n int) {
	var h keyHeap
	for k := range obj {
		if _, ok := known[k]; ok {
			continue
		}
		n++
		seg := jsonpointer.Escape(k)
		switch {
		case len(h) < max:
			heap.Push(&h, escapedKey{k, seg})
		case jsonpointer.CompareSegments(seg, h[0].seg) < 0:
			h[0] = escapedKey{k, seg}
			heap.Fix(&h, 0)
		}
	}
	slices.SortFunc(h, func(a, b escapedKey) int { return jsonpointer.CompareSegments(a.seg, b.seg) })
	for _, k := range h {
		first = append(first, k.key)
	}
	return first, n
}

type escapedKey struct{ key, seg string }

// keyHeap is a max-heap of keys by their pointer segments.
type keyHeap []escapedKey

func (h keyHeap) Len() int           { return len(h) }
func (h keyHeap) Less(i, j int) bool { return jsonpointer.CompareSegments(h[i].seg, h[j].seg) > 0 }
func (h keyHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *keyHeap) Push(x any)        { *h = append(*h, x.(escapedKey)) }
func (h *keyHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
