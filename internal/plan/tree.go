package plan

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"math/big"
	"regexp"
	"strconv"

	"github.com/spawngate/spawngate/internal/document"
)

// A child may carry children of its own: the plan it may dispatch in turn.
// The gate judges every child of the tree as it judges the plan's own, so
// the loader flattens the tree: Plan.Children holds the plan's own children
// first, in order (child i is /plan/i), then every descendant in pre-order,
// each without its children list. Node says where each one sits, and
// Plan.Parents holds what the checks may read of each parent: a child can
// hold no more than its parent (checks tree.*), and the plan's own parent
// block bounds its top-level children the same way.

// Node places a child in the plan tree.
type Node struct {
	// Pointer is where the child is in the document: /plan/0 or
	// /plan/0/children/2.
	Pointer string
	// Parent is the index of the child's parent in Plan.Children, or -1
	// for a child of the plan itself.
	Parent int
	// Depth is 1 for the plan's own children, plus the depth of the plan's
	// parent block when it has one.
	Depth int
	// Spawns counts the child's own children; Descendants every child
	// below it.
	Spawns, Descendants int
}

// ParentBlock is where the plan's parent block is, as children name their
// parent.
const ParentBlock = "/parent"

// flatten lists the children of the tree below the plan's own, after them,
// and places each. It returns nil nodes when no child has a children key
// and the plan has no parent block: then nothing is nested, and the checks
// see the children exactly as before.
func flatten(ctx context.Context, source string, top []any, parent map[string]any, lim document.Limits) ([]any, []Node, error) {
	nested := parent != nil
	for _, c := range top {
		if obj, ok := c.(map[string]any); ok {
			if _, ok := obj["children"]; ok {
				nested = true
				break
			}
		}
	}
	if !nested {
		return top, nil, nil
	}
	base := 0
	if parent != nil {
		if d, ok := parent["depth"].(json.Number); ok {
			if n, err := strconv.Atoi(string(d)); err == nil && n >= 0 {
				base = n
			}
		}
	}
	flat := make([]any, 0, len(top))
	nodes := make([]Node, 0, len(top))
	for i, c := range top {
		flat = append(flat, c)
		nodes = append(nodes, Node{Pointer: "/plan/" + strconv.Itoa(i), Parent: -1, Depth: base + 1})
	}
	// Descendants in pre-order, with an explicit stack: the readers bound
	// the depth, but a stack keeps the order obvious.
	type frame struct{ at, next int }
	for i := range top {
		stack := []frame{{at: i}}
		for len(stack) > 0 {
			if err := ctxErr(ctx, len(flat)); err != nil {
				return nil, nil, err
			}
			f := &stack[len(stack)-1]
			kids := childList(flat[f.at])
			if f.next >= len(kids) {
				stack = stack[:len(stack)-1]
				continue
			}
			j := f.next
			f.next++
			if len(flat) >= lim.MaxChildren {
				return nil, nil, &document.Error{Source: source, Pointer: nodes[f.at].Pointer + "/children/" + strconv.Itoa(j),
					Msg: fmt.Sprintf("more than %d children in the plan tree", lim.MaxChildren), Limit: "max-children"}
			}
			flat = append(flat, kids[j])
			nodes = append(nodes, Node{Pointer: nodes[f.at].Pointer + "/children/" + strconv.Itoa(j), Parent: f.at, Depth: nodes[f.at].Depth + 1})
			nodes[f.at].Spawns++
			stack = append(stack, frame{at: len(flat) - 1})
		}
	}
	// Descendants counted from the deepest up: a child comes after its
	// parent in pre-order.
	for k := len(nodes) - 1; k >= 0; k-- {
		if p := nodes[k].Parent; p >= 0 {
			nodes[p].Descendants += nodes[k].Descendants + 1
		}
	}
	// Every child is judged without its children list; a list stays as an
	// empty one so that the schema still sees that it is a list (and a
	// value that is not stays, to be refused).
	for k, c := range flat {
		obj, ok := c.(map[string]any)
		if !ok {
			continue
		}
		if _, isList := obj["children"].([]any); !isList {
			continue
		}
		own := make(map[string]any, len(obj))
		for key, v := range obj {
			own[key] = v
		}
		own["children"] = []any{}
		flat[k] = own
	}
	return flat, nodes, nil
}

// childList is the children list of a child as written, or nil.
func childList(c any) []any {
	obj, _ := c.(map[string]any)
	kids, _ := obj["children"].([]any)
	return kids
}

// parentFacts is what the checks may read of each parent, by the pointer
// its children name: the tools, paths, budget, brief and role it was
// given, how deep it is, and the sum of its own children's budgets (when
// every one of them is a positive whole number written as one; the checks
// refuse a sum they are not given). The plan's parent block goes in as
// written, under /parent.
func parentFacts(children []any, nodes []Node, parent map[string]any) map[string]any {
	facts := map[string]any{}
	sums := map[int][]any{} // the budgets of each parent's children, by parent (-1: the block)
	for k, n := range nodes {
		if n.Parent < 0 && parent == nil {
			continue
		}
		obj, _ := children[k].(map[string]any)
		sums[n.Parent] = append(sums[n.Parent], obj["budget_tokens"])
	}
	if parent != nil {
		block := make(map[string]any, len(parent)+1)
		for k, v := range parent {
			block[k] = v
		}
		if s, ok := sum(sums[-1]); ok {
			block["children_budget_tokens"] = s
		}
		facts[ParentBlock] = block
	}
	for k, n := range nodes {
		if n.Spawns == 0 {
			continue
		}
		obj, _ := children[k].(map[string]any)
		f := map[string]any{"depth": json.Number(strconv.Itoa(n.Depth))}
		for _, key := range []string{"role", "tools", "paths", "budget_tokens", "brief"} {
			if v, ok := obj[key]; ok {
				f[key] = v
			}
		}
		if s, ok := sum(sums[k]); ok {
			f["children_budget_tokens"] = s
		}
		facts[n.Pointer] = f
	}
	return facts
}

var positiveWhole = regexp.MustCompile(`^[1-9][0-9]*$`)

// sum adds budgets written as positive whole numbers, exactly; it says no
// when any is not one.
func sum(budgets []any) (json.Number, bool) {
	total := new(big.Int)
	for _, b := range budgets {
		n, ok := b.(json.Number)
		if !ok || !positiveWhole.MatchString(string(n)) {
			return "", false
		}
		v, _ := new(big.Int).SetString(string(n), 10)
		total.Add(total, v)
	}
	return json.Number(total.String()), true
}

// treeKey is what the grouping must add to a child's own key: where it
// sits, and what its parent holds (hashed, so that a child of a large
// parent does not carry the parent's lists in its key). Children whose own
// keys and tree keys are equal are judged alike.
func treeKey(n Node, parent string, parentHash [sha256.Size]byte) string {
	return fmt.Sprintf("\x00t%d.%d.%d:%s:%x", n.Depth, n.Spawns, n.Descendants, parent, parentHash[:16])
}

// TreeOf is the tree object the checks see in a nested plan's child
// (input.children[i].tree): its depth, its parent's pointer, and how many
// children and descendants it has.
func (p *Plan) TreeOf(i int) map[string]any {
	n := p.Tree[i]
	t := map[string]any{
		"depth":       json.Number(strconv.Itoa(n.Depth)),
		"spawns":      json.Number(strconv.Itoa(n.Spawns)),
		"descendants": json.Number(strconv.Itoa(n.Descendants)),
	}
	if ptr := p.ParentPointer(i); ptr != "" {
		t["parent"] = ptr
	}
	return t
}

// ParentPointer is the pointer a child names its parent by: a child's
// pointer, /parent for a top-level child of a plan with a parent block, or
// "" for one without.
func (p *Plan) ParentPointer(i int) string {
	if p.Tree == nil {
		return ""
	}
	if q := p.Tree[i].Parent; q >= 0 {
		return p.Tree[q].Pointer
	}
	if p.Parent != nil {
		return ParentBlock
	}
	return ""
}

// Pointer is where child i is in the document.
func (p *Plan) Pointer(i int) string {
	if p.Tree == nil {
		return "/plan/" + strconv.Itoa(i)
	}
	return p.Tree[i].Pointer
}

// treeKeys is the tree key of every child, each parent's facts written out
// once.
func (p *Plan) treeKeys() []string {
	parentKeys := make(map[string][sha256.Size]byte, len(p.Parents))
	for ptr, f := range p.Parents {
		parentKeys[ptr] = sha256.Sum256([]byte(Key(f))) // once per parent: a parent's brief may be long
	}
	out := make([]string, len(p.Tree))
	for i, n := range p.Tree {
		ptr := p.ParentPointer(i)
		out[i] = treeKey(n, ptr, parentKeys[ptr])
	}
	return out
}

// Order lists the children in document order: each of the plan's own
// children followed by its descendants, in pre-order. (The flat order puts
// every descendant after the plan's own children, so that child i of the
// plan keeps index i.) Nil when nothing is nested.
func (p *Plan) Order() []int {
	if p.Tree == nil {
		return nil
	}
	top := 0
	for top < len(p.Tree) && p.Tree[top].Parent < 0 {
		top++
	}
	order := make([]int, 0, len(p.Tree))
	next := top // descendants of the plan's own children are contiguous, in their order
	for i := 0; i < top; i++ {
		order = append(order, i)
		for ; next < len(p.Tree) && topOf(p.Tree, next) == i; next++ {
			order = append(order, next)
		}
	}
	return order
}

// topOf is the plan's own child that child k descends from.
func topOf(nodes []Node, k int) int {
	for nodes[k].Parent >= 0 {
		k = nodes[k].Parent
	}
	return k
}
