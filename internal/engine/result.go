package engine

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/spawngate/spawngate/internal/plan"
	"github.com/spawngate/spawngate/internal/report"
)

// resultBuilder collects, by group of children, what the checks and the schema
// step found, and turns it into a result. A group's violations are kept
// once for all its members, and only while the report could still list
// them: past the bound, a group is only counted. So a plan of 100,000
// identical children with 40 violations each holds 40 violations and
// 100,000 counts, not four million violations.
type resultBuilder struct {
	p         *plan.Plan
	reps      []int
	group     []int                    // each child's group
	sizes     []int                    // each group's members, counted when first needed
	issues    [][]plan.SchemaViolation // each group's schema issues (plan.Plan.GroupIssues, as grouped here)
	maxListed int

	count    []int                // each group's violations, listed or not
	blocking []int                // each group's violations that no exception lets through
	list     [][]report.Violation // each group's violations in report order, fields relative to the child; nil when not kept
	kept     []bool
	// stored is how many violations the groups folded so far keep. A group
	// is kept while the groups before it keep fewer than maxListed: the
	// report lists children in order, every group's first member comes
	// after the first members of the groups before it, and so a group
	// that is not kept is never reached before the listing is full.
	stored int
	folded int

	// planFound holds what the plan checks found, by group, when there are
	// any; it is folded in with the child checks' findings.
	planFound [][]report.Violation
	// whole holds what the plan checks found of the plan as a whole, at
	// pointers into the document.
	whole []report.Violation
	// alone holds the fields where one child alone has an issue (an id
	// that another child also uses), and covers[k][j] whether a violation
	// of group k already reports at or above alone[j].
	alone  []string
	covers [][]bool
}

func newResultBuilder(p *plan.Plan, reps, group []int, issues [][]plan.SchemaViolation, maxListed int) *resultBuilder {
	f := &resultBuilder{
		p: p, reps: reps, group: group, issues: issues, maxListed: maxListed,
		count: make([]int, len(reps)), blocking: make([]int, len(reps)), list: make([][]report.Violation, len(reps)), kept: make([]bool, len(reps)),
	}
	seen := map[string]bool{}
	for _, is := range p.OwnViolations {
		if !seen[is.Field] {
			seen[is.Field] = true
			f.alone = append(f.alone, is.Field)
		}
	}
	if len(f.alone) > 0 {
		f.covers = make([][]bool, len(reps))
	}
	return f
}

// addPlan records what the plan checks found, before any batch is folded.
func (f *resultBuilder) addPlan(found [][]report.Violation, whole []report.Violation) {
	f.planFound, f.whole = found, whole
}

// fold takes the violations of group k, the child checks' and the plan
// checks' with the exceptions applied (evaluation.complete): it merges
// them with the schema step's, counts them, and keeps them if the report
// could list them. Groups must come in order; vs becomes the findings'.
func (f *resultBuilder) fold(ctx context.Context, k int, vs []report.Violation) error {
	if k != f.folded {
		return fmt.Errorf("internal error: findings of group %d folded after group %d", k, f.folded)
	}
	{
		// vs holds the plan checks' findings too, and the operator's
		// exceptions are applied (complete): a schema issue at or under a
		// place a check already reported adds nothing and is left out, but
		// only while that finding blocks. An excepted finding covers
		// nothing, so an exception of budget.invalid never lets a budget of
		// "abc" through: no exception reaches the schema step.
		reported := make(map[string]bool, len(vs))
		for _, v := range vs {
			if v.Blocks() {
				reported[v.Path] = true
			}
		}
		var issues []plan.SchemaViolation
		if k < len(f.issues) {
			issues = f.issues[k]
		}
		for _, is := range issues {
			if !coveredBy(reported, is.Field) {
				vs = append(vs, report.Violation{Rule: SchemaCheck.ID, Severity: SchemaCheck.Severity, Message: is.Message, Path: is.Field})
			}
		}
		if f.covers != nil {
			f.covers[k] = make([]bool, len(f.alone))
			for a, field := range f.alone {
				f.covers[k][a] = coveredBy(reported, field)
			}
		}
		f.count[k] = len(vs)
		for _, v := range vs {
			if v.Blocks() {
				f.blocking[k]++
			}
		}
		if f.stored < f.maxListed && len(vs) > 0 {
			report.SortViolations(vs)
			f.list[k], f.kept[k] = vs, true
			f.stored += len(vs)
		} else if len(vs) == 0 {
			f.kept[k] = true
		}
	}
	f.folded++
	return nil
}

// coveredBy tells whether a field, or a place above it, is among the
// reported fields. ("" is the child itself, above everything.)
func coveredBy(reported map[string]bool, field string) bool {
	if len(reported) == 0 {
		return false
	}
	for at := field; ; {
		if reported[at] {
			return true
		}
		i := strings.LastIndexByte(at, '/')
		if i < 0 {
			return false
		}
		at = at[:i]
	}
}

// assemble settles each child's verdict and lists its violations, in child
// order, while the listing has room; past it, a child's violations are only
// counted.
func (f *resultBuilder) assemble(ctx context.Context, policies []string, group []int) (report.Result, error) {
	if f.folded != len(f.reps) {
		return report.Result{}, fmt.Errorf("internal error: %d of %d groups judged", f.folded, len(f.reps))
	}
	p := f.p
	res := report.Result{Source: p.Source, Verdict: report.Pass, Policies: policies, Children: make([]report.Child, len(p.Children))}
	if len(f.whole) > 0 {
		res.Violations = slices.Clone(f.whole)
		report.SortViolations(res.Violations)
		res.Verdict = report.Block
	}
	left := f.maxListed
	next := 0 // the next issue of one child alone, in p.Issues (sorted by child)
	for i, k := range group {
		if i%4096 == 0 {
			if err := ctx.Err(); err != nil {
				return report.Result{}, err
			}
		}
		var own []report.Violation
		for ; next < len(p.OwnViolations) && p.OwnViolations[next].Child == i; next++ {
			is := p.OwnViolations[next]
			if !f.covered(k, is.Field) {
				own = append(own, report.Violation{Rule: SchemaCheck.ID, Severity: SchemaCheck.Severity, Message: is.Message, Path: is.Field})
			}
		}
		n := f.count[k] + len(own)
		ch := report.Child{Index: i, Verdict: report.Pass, Violations: []report.Violation{}}
		if p.Tree != nil && p.Tree[i].Parent >= 0 {
			ch.Pointer = p.Tree[i].Pointer
		}
		if obj, ok := p.Children[i].(map[string]any); ok {
			ch.Role, _ = obj["role"].(string)
		}
		if f.blocking[k]+len(own) > 0 {
			ch.Verdict, res.Verdict = report.Block, report.Block
		}
		switch {
		case n == 0:
		case left > 0 && f.kept[k]:
			vs := make([]report.Violation, 0, min(n, left+len(own)))
			prefix := p.Pointer(i)
			for _, v := range f.list[k] {
				if len(vs) == left+len(own) {
					break
				}
				v.Path = prefix + v.Path
				vs = append(vs, v)
			}
			for _, v := range own {
				v.Path = prefix + v.Path
				vs = append(vs, v)
			}
			report.SortViolations(vs)
			if len(vs) > left {
				vs = vs[:left:left]
			}
			ch.Violations = vs
			ch.Unlisted = n - len(vs)
			left -= len(vs)
		default:
			ch.Unlisted = n
		}
		res.Children[i] = ch
	}
	return res, nil
}

// members is how many children group k stands for.
func (f *resultBuilder) members(k int) int {
	if f.sizes == nil {
		f.sizes = make([]int, len(f.reps))
		for _, g := range f.group {
			f.sizes[g]++
		}
	}
	return f.sizes[k]
}

func (f *resultBuilder) covered(k int, field string) bool {
	if f.covers == nil {
		return false
	}
	for a, fd := range f.alone {
		if fd == field {
			return f.covers[k][a]
		}
	}
	return false
}
