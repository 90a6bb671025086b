package document

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"gopkg.in/yaml.v3"

	"github.com/spawngate/spawngate/internal/jsonpointer"
)

// Position is where a value is written in its document: 1-based line and
// column (in characters, as every error message counts them).
type Position struct {
	Line, Column int
}

// Locate finds where the values at the pointers are written in a document
// Decode has already read, so that a report can name a line and a
// column and not only a JSON pointer. It reads the document again, once
// for all the pointers, and only when a report has something to place. A
// pointer to nothing (a key that is missing) gets the place of the nearest
// value above it that exists; a value reached through a YAML alias gets the
// alias's place where the pointer ends there, and the anchored value's
// place inside it. It costs time linear in the document and the pointers
// (one problem per key of a mapping of 50,000 keys reads each key once),
// and when ctx ends first it stops and returns ctx.Err().
func Locate(ctx context.Context, source string, data []byte, lim Limits, pointers []string) (map[string]Position, error) {
	if len(pointers) == 0 {
		return nil, nil
	}
	syntax, err := SyntaxOf(source)
	if err != nil {
		return nil, err
	}
	if syntax == Sniff {
		syntax = YAML
		if t := bytes.TrimLeft(data, " \t\r\n"); len(t) > 0 && (t[0] == '{' || t[0] == '[') {
			syntax = JSON
		}
	}
	if syntax == JSON {
		at, err := locateJSON(source, data, pointers)
		if err != nil {
			return nil, err
		}
		// The skim is one pass, a few milliseconds a megabyte: it looks
		// at its context once, when it is done.
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		return at, nil
	}
	return locateYAML(ctx, data, pointers)
}

// A trie of the wanted pointers, by segment.
type pointerTrie struct {
	kids []trieKid               // in the order added; searched in turn while few
	many map[string]*pointerTrie // the same, by segment, once there are more
	at   int                     // offset of the value, -1 until seen
}

type trieKid struct {
	seg  string
	node *pointerTrie
}

// manyKids is how many children a node searches in turn before it looks
// them up in a map: a report places a few pointers per child.
const manyKids = 8

func (n *pointerTrie) child(seg string) *pointerTrie {
	if n.many != nil {
		return n.many[seg]
	}
	for _, k := range n.kids {
		if k.seg == seg {
			return k.node
		}
	}
	return nil
}

func (n *pointerTrie) add(seg string, c *pointerTrie) {
	n.kids = append(n.kids, trieKid{seg, c})
	switch {
	case n.many != nil:
		n.many[seg] = c
	case len(n.kids) > manyKids:
		n.many = make(map[string]*pointerTrie, 2*len(n.kids))
		for _, k := range n.kids {
			n.many[k.seg] = k.node
		}
	}
}

func newTrie(pointers []string) *pointerTrie {
	// Every node from one slab: a report places a few pointers per
	// decision, and a node each would be most of what placing allocates.
	size := 1
	for _, ptr := range pointers {
		size += strings.Count(ptr, "/") + 1
	}
	slab := make([]pointerTrie, 1, size)
	slab[0].at = -1
	root := &slab[0]
	for _, ptr := range pointers {
		n := root
		for seg := range segmentsOf(ptr) {
			c := n.child(seg)
			if c == nil {
				slab = append(slab, pointerTrie{at: -1}) // within size: no node moves
				c = &slab[len(slab)-1]
				n.add(seg, c)
			}
			n = c
		}
	}
	return root
}

// segmentsOf yields a JSON pointer's segments, unescaped.
func segmentsOf(ptr string) iter.Seq[string] {
	return func(yield func(string) bool) {
		if ptr == "" {
			return
		}
		for seg := range strings.SplitSeq(strings.TrimPrefix(ptr, "/"), "/") {
			if !yield(jsonpointer.Unescape(seg)) {
				return
			}
		}
	}
}

func locateJSON(source string, data []byte, pointers []string) (map[string]Position, error) {
	root := newTrie(pointers)
	sk := &skimmer{src: data}
	sk.walk(root)
	if sk.bad {
		return nil, fmt.Errorf("%s: the document no longer reads as it did", source)
	}
	offsets := make(map[string]int, len(pointers))
	for _, ptr := range pointers {
		at, n := root.at, root
		for seg := range segmentsOf(ptr) {
			if n = n.child(seg); n == nil || n.at < 0 {
				break
			}
			at = n.at
		}
		if at >= 0 {
			offsets[ptr] = at
		}
	}
	return positions(data, offsets), nil
}

// positions turns byte offsets into lines and columns in one pass over the
// document, however many there are and however long its lines (a plan
// written on one line, as JSON.stringify writes it, is one line of
// megabytes): each column is counted on from the one before.
func positions(data []byte, offsets map[string]int) map[string]Position {
	sorted := make([]int, 0, len(offsets))
	for _, at := range offsets {
		sorted = append(sorted, at)
	}
	slices.Sort(sorted)
	sorted = slices.Compact(sorted)
	at := make(map[int]Position, len(sorted))
	line, col, from := 1, 1, 0 // col is the column at from
	for _, off := range sorted {
		for {
			i := bytes.IndexByte(data[from:off], '\n')
			if i < 0 {
				break
			}
			line, col = line+1, 1
			from += i + 1
		}
		col += utf8.RuneCount(data[from:off])
		at[off] = Position{line, col}
		from = off
	}
	out := make(map[string]Position, len(offsets))
	for ptr, off := range offsets {
		out[ptr] = at[off]
	}
	return out
}

// skimmer reads a JSON document Decode has already read (so it is
// strict JSON within the limits) only as far as the wanted pointers go:
// what no pointer enters is skipped, without building a value.
type skimmer struct {
	src []byte
	pos int
	bad bool // the document is not the one Decode read
}

func (s *skimmer) space() {
	for s.pos < len(s.src) {
		switch s.src[s.pos] {
		case ' ', '\t', '\n', '\r':
			s.pos++
		default:
			return
		}
	}
}

// walk records where the value at the skimmer's position starts, and goes
// into it as far as the trie wants.
func (s *skimmer) walk(n *pointerTrie) {
	s.space()
	if s.pos >= len(s.src) {
		s.bad = true
		return
	}
	n.at = s.pos
	if len(n.kids) == 0 {
		s.skip()
		return
	}
	switch s.src[s.pos] {
	case '{':
		s.pos++
		for !s.bad {
			s.space()
			if s.pos < len(s.src) && s.src[s.pos] == '}' {
				s.pos++
				return
			}
			c := s.member(n)
			s.space()
			if s.pos >= len(s.src) || s.src[s.pos] != ':' {
				s.bad = true
				return
			}
			s.pos++
			if c != nil {
				s.walk(c)
			} else {
				s.space()
				s.skip()
			}
			s.comma()
		}
	case '[':
		s.pos++
		var num [20]byte
		for i := 0; !s.bad; i++ {
			s.space()
			if s.pos < len(s.src) && s.src[s.pos] == ']' {
				s.pos++
				return
			}
			if c := n.child(string(strconv.AppendInt(num[:0], int64(i), 10))); c != nil {
				s.walk(c)
			} else {
				s.space()
				s.skip()
			}
			s.comma()
		}
	default:
		s.skip()
	}
}

// comma steps over the comma between two members or elements, if any.
func (s *skimmer) comma() {
	s.space()
	if s.pos < len(s.src) && s.src[s.pos] == ',' {
		s.pos++
	}
}

// member reads an object key and returns the trie node it leads to, if
// any; escapes are decoded only in a key that has some.
func (s *skimmer) member(n *pointerTrie) *pointerTrie {
	start := s.pos
	s.skipString()
	if s.bad {
		return nil
	}
	raw := s.src[start+1 : s.pos-1]
	if bytes.IndexByte(raw, '\\') < 0 {
		return n.child(string(raw)) // no copy: the key does not escape
	}
	var k string
	if err := json.Unmarshal(s.src[start:s.pos], &k); err != nil {
		s.bad = true
		return nil
	}
	return n.child(k)
}

func (s *skimmer) skipString() {
	if s.pos >= len(s.src) || s.src[s.pos] != '"' {
		s.bad = true
		return
	}
	for i := s.pos + 1; i < len(s.src); i++ {
		switch s.src[i] {
		case '\\':
			i++
		case '"':
			s.pos = i + 1
			return
		}
	}
	s.bad = true
}

// skip steps over one value.
func (s *skimmer) skip() {
	if s.pos >= len(s.src) {
		s.bad = true
		return
	}
	switch s.src[s.pos] {
	case '"':
		s.skipString()
	case '{', '[':
		depth := 0
		for s.pos < len(s.src) {
			switch s.src[s.pos] {
			case '"':
				s.skipString()
				if s.bad {
					return
				}
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					s.pos++
					return
				}
			}
			s.pos++
		}
		s.bad = true
	default: // a number or a literal
		for s.pos < len(s.src) {
			switch s.src[s.pos] {
			case ',', '}', ']', ' ', '\t', '\n', '\r':
				return
			}
			s.pos++
		}
	}
}

func locateYAML(ctx context.Context, data []byte, pointers []string) (map[string]Position, error) {
	return (&yamlPlacer{ctx: ctx}).locate(data, pointers)
}

// yamlPlacer finds pointers in a YAML node tree. A pointer is followed
// segment by segment; a key is looked for by reading a small mapping's keys
// in turn and a large mapping's from an index of its keys, built the first
// time a pointer goes into it, so that placing one problem per key of a
// mapping of 50,000 keys reads each key once, not once per problem.
type yamlPlacer struct {
	ctx   context.Context
	index map[*yaml.Node]map[string]*yaml.Node // by mapping, its keys' values
	// steps counts the keys looked at, so that a test can hold placing to
	// the size of the document and the pointers.
	steps int
}

// smallMapping is how many keys a mapping may have and still be searched
// in turn: a child's few keys cost less to read than to index.
const smallMapping = 16

func (p *yamlPlacer) locate(data []byte, pointers []string) (map[string]Position, error) {
	if err := p.ctx.Err(); err != nil {
		return nil, err
	}
	var doc yaml.Node
	if err := yaml.NewDecoder(bytes.NewReader(data)).Decode(&doc); err != nil || len(doc.Content) == 0 {
		return nil, fmt.Errorf("the document no longer reads as it did")
	}
	out := make(map[string]Position, len(pointers))
	for k, ptr := range pointers {
		if err := ctxErr(p.ctx, k); err != nil {
			return nil, err
		}
		n := doc.Content[0]
		at := n
		for seg := range segmentsOf(ptr) {
			if n.Kind == yaml.AliasNode && n.Alias != nil {
				n = n.Alias
			}
			var next *yaml.Node
			switch n.Kind {
			case yaml.MappingNode:
				next = p.member(n, seg)
			case yaml.SequenceNode:
				if i, err := strconv.Atoi(seg); err == nil && i >= 0 && i < len(n.Content) && strconv.Itoa(i) == seg {
					next = n.Content[i]
				}
			}
			if next == nil {
				break
			}
			n, at = next, next
		}
		out[ptr] = Position{at.Line, at.Column}
	}
	if err := p.ctx.Err(); err != nil {
		return nil, err
	}
	return out, nil
}

// member is the value of a mapping's key, or nil. Decode has refused
// duplicate keys; were there any, the first would win, as it always has.
func (p *yamlPlacer) member(m *yaml.Node, key string) *yaml.Node {
	if len(m.Content) <= 2*smallMapping {
		for i := 0; i+1 < len(m.Content); i += 2 {
			p.steps++
			if m.Content[i].Value == key {
				return m.Content[i+1]
			}
		}
		return nil
	}
	keys, ok := p.index[m]
	if !ok {
		keys = make(map[string]*yaml.Node, len(m.Content)/2)
		for i := 0; i+1 < len(m.Content); i += 2 {
			p.steps++
			if _, dup := keys[m.Content[i].Value]; !dup {
				keys[m.Content[i].Value] = m.Content[i+1]
			}
		}
		if p.index == nil {
			p.index = map[*yaml.Node]map[string]*yaml.Node{}
		}
		p.index[m] = keys
	}
	p.steps++
	return keys[key]
}
