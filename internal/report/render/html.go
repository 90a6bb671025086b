package render

import (
	"bufio"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"html"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/spawngate/spawngate/internal/report"
)

// HTML renders the report as one self-contained page for a person, to open
// from a CI artifact or a local run: the verdict at a glance, each plan and
// child with its verdict, every violation with its rule (linked to its
// documentation), pointer, line, column and reason, delegation trees drawn
// as trees, and each document's own text (Result.Text, which the front end
// fills for this format) with every refused value marked at its place.
//
// The page loads nothing: its one style sheet is inline, it has no script
// and no image, and a Content-Security-Policy meta tag forbids loading
// anything else, so even markup a document managed to smuggle in could
// neither run nor fetch. Everything that came from a document is escaped
// as the text report escapes it (control and format characters shown as
// \uXXXX) and then as HTML, and the same report gives the same bytes: ids
// are counted, never drawn at random, and nothing is dated.
type HTML struct{}

// RulesDocs is where a built-in rule's documentation is: the rule's anchor
// is added to it. A link is not a load: nothing is fetched until the
// reader follows one.
const RulesDocs = "https://github.com/spawngate/spawngate/blob/main/docs/rules.md"

// htmlStyle is the page's only style sheet. Every pair of colours it sets
// has a contrast of at least 7:1, and no verdict is told by colour alone:
// each is also written as a word.
const htmlStyle = `
:root{color:#1b1b1b;background:#fff;font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif}
body{margin:0 auto;max-width:80rem;padding:1rem 1.5rem 3rem}
a{color:#0645ad}
a:focus-visible{outline:3px solid #0645ad;outline-offset:2px}
code,pre{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:.9rem}
header{border-bottom:1px solid #6b6b6b;margin-bottom:1.5rem;padding-bottom:1rem}
h1{font-size:1.4rem;margin:.5rem 0}
h2{font-size:1.25rem;margin:2rem 0 .5rem;overflow-wrap:anywhere}
h3{font-size:1.05rem;margin:1.25rem 0 .5rem}
.verdict{font-size:1.3rem;margin:.5rem 0;padding:.75rem 1rem;border-left:.5rem solid}
.badge{display:inline-block;min-width:4.2em;text-align:center;font-weight:700;border:1px solid;border-radius:.25rem;padding:0 .35em;font-size:.85rem}
.v-pass{color:#0b4f1e;background:#e3f4e7;border-color:#0b4f1e}
.v-block{color:#8a0f1d;background:#fde8ea;border-color:#8a0f1d}
.v-error{color:#5c3b00;background:#fff1c7;border-color:#5c3b00}
.v-excused{color:#3d2f73;background:#eeeaff;border-color:#3d2f73}
.counts{display:flex;flex-wrap:wrap;gap:.25rem 1.5rem;list-style:none;padding:0;margin:.5rem 0}
.problem{border-left:.35rem solid #5c3b00;background:#fff1c7;color:#3a2500;padding:.5rem .75rem}
.note{border-left:.35rem solid #3d2f73;background:#eeeaff;padding:.5rem .75rem}
table{border-collapse:collapse;width:100%;margin:.5rem 0 1rem}
caption{text-align:left;font-weight:600;padding:.25rem 0}
th,td{border:1px solid #8c8c8c;padding:.3rem .5rem;text-align:left;vertical-align:top}
thead th{background:#ececec}
tbody th{font-weight:600}
td.reason{overflow-wrap:anywhere}
tr.excused td,tr.excused th{background:#f6f4ff}
tr:target td,tr:target th{outline:3px solid #0645ad}
.sev-critical,.sev-high{font-weight:700}
ul.tree,ul.tree ul{list-style:none;margin:0;padding:0}
ul.tree ul{margin-left:1rem;padding-left:1rem;border-left:2px solid #6b6b6b}
ul.tree li{margin:.3rem 0}
.node{display:inline-block;border:1px solid;border-left-width:.4rem;border-radius:.25rem;padding:.1rem .5rem}
.node code{color:inherit}
pre.src{border:1px solid #8c8c8c;background:#fafafa;color:#1b1b1b;padding:.5rem 0;overflow-x:auto;line-height:1.45}
pre.src .line{display:block;padding-right:1rem}
pre.src .line.hit{background:#fff6d6}
pre.src .ln{display:inline-block;width:4em;padding-right:1em;text-align:right;color:#575757;user-select:none}
a.mark{color:#8a0f1d;background:#fde8ea;text-decoration:underline wavy #8a0f1d;text-underline-offset:3px;font-weight:700}
a.mark.excused{color:#3d2f73;background:#eeeaff;text-decoration-color:#3d2f73}
a.mark:target{outline:3px solid #0645ad}
details>summary{cursor:pointer}
details>summary h3{display:inline}
@media (prefers-color-scheme:dark){
:root{color:#ececec;background:#121212}
a{color:#9cc3ff}
.v-pass{color:#b8f0c6;background:#0d2c16;border-color:#b8f0c6}
.v-block{color:#ffc4cb;background:#3b0b12;border-color:#ffc4cb}
.v-error{color:#ffe08a;background:#332400;border-color:#ffe08a}
.v-excused{color:#d9d1ff;background:#221a45;border-color:#d9d1ff}
.problem{background:#332400;color:#ffe08a}
.note{background:#221a45;color:#d9d1ff}
thead th{background:#2a2a2a}
tr.excused td,tr.excused th{background:#1c1830}
pre.src{background:#1b1b1b;color:#ececec}
pre.src .line.hit{background:#3a3000}
pre.src .ln{color:#a8a8a8}
a.mark{color:#ffc4cb;background:#3b0b12;text-decoration-color:#ffc4cb}
a.mark.excused{color:#d9d1ff;background:#221a45;text-decoration-color:#d9d1ff}
}
`

// htmlPolicy is the page's Content-Security-Policy: nothing may be loaded
// from anywhere, and only the page's own style sheet (by its hash) applies.
var htmlPolicy = func() string {
	sum := sha256.Sum256([]byte(htmlStyle))
	return "default-src 'none'; style-src 'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'; img-src data:; base-uri 'none'; form-action 'none'"
}()

// Render writes the page.
func (HTML) Render(w io.Writer, r *report.Report) error {
	p := &page{b: bufio.NewWriter(w), rules: map[string]report.Rule{}}
	for _, rule := range r.Rules {
		if _, ok := p.rules[rule.ID]; !ok {
			p.rules[rule.ID] = rule
		}
	}
	p.write(r)
	return p.b.Flush()
}

type page struct {
	b     *bufio.Writer
	rules map[string]report.Rule
}

// esc is text from a document (or a message quoting one) made safe to
// show: escaped as the text report escapes it, then as HTML, for text and
// for quoted attribute values alike.
func esc(s string) string { return html.EscapeString(report.Clean(s)) }

func (p *page) printf(format string, args ...any) { fmt.Fprintf(p.b, format, args...) }
func (p *page) str(s string)                      { p.b.WriteString(s) }

// verdictWord is a verdict as the page says it, and its class.
func verdictWord(v report.Verdict) (word, class string) {
	switch v {
	case report.Pass:
		return "PASS", "v-pass"
	case report.Block:
		return "BLOCK", "v-block"
	}
	return "ERROR", "v-error"
}

func badge(v report.Verdict) string {
	word, class := verdictWord(v)
	return `<span class="badge ` + class + `">` + word + `</span>`
}

func (p *page) write(r *report.Report) {
	word, class := verdictWord(r.Verdict)
	summary := closing(r)
	p.str("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n")
	p.printf("<meta http-equiv=\"Content-Security-Policy\" content=\"%s\">\n", htmlPolicy) // no " or & in it
	p.str("<meta name=\"referrer\" content=\"no-referrer\">\n<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n")
	// An empty icon of its own, or a browser that shows the page from a
	// server asks that server for /favicon.ico.
	p.str("<link rel=\"icon\" href=\"data:,\">\n")
	p.printf("<title>spawngate: %s</title>\n<style>%s</style>\n</head>\n<body>\n", esc(summary), htmlStyle)

	p.str("<header>\n<h1>spawngate report</h1>\n")
	rest := strings.TrimPrefix(strings.TrimPrefix(summary, word), ", ")
	p.printf("<p class=\"verdict %s\"><strong>%s</strong>: %s</p>\n", class, word, esc(rest))
	c := r.Count()
	if c.Plans > 0 {
		p.str("<ul class=\"counts\" aria-label=\"Counts\">\n")
		p.printf("<li>%s</li>\n", plans(c.Plans))
		p.printf("<li>%s: %d pass, %d refused</li>\n", capital(children(c.Children)), c.Passed, c.Blocked)
		p.printf("<li>%s</li>\n", capital(violations(c.Violations)))
		if c.Excepted > 0 {
			p.printf("<li>%d excused by an exception</li>\n", c.Excepted)
		}
		if c.PlansRefused > 0 {
			p.printf("<li>%s refused as a whole</li>\n", plans(c.PlansRefused))
		}
		if c.Errors > 0 {
			p.printf("<li>%s could not be evaluated</li>\n", plans(c.Errors))
		}
		p.str("</ul>\n")
	}
	if r.Note != "" {
		p.printf("<p class=\"note\">%s</p>\n", esc(r.Note))
	}
	p.str("</header>\n<main>\n")
	if r.Error != "" {
		p.str("<section aria-labelledby=\"run-error\">\n<h2 id=\"run-error\">The run could not evaluate</h2>\n")
		p.printf("<p class=\"problem\">%s</p>\n", esc(r.Error))
		p.problems(r.Problems)
		p.str("</section>\n")
	}
	if len(r.Results) > 1 {
		p.str("<nav aria-label=\"Plans\">\n<ul>\n")
		for i, res := range r.Results {
			p.printf("<li><a href=\"#p%d\">%s</a> %s</li>\n", i+1, esc(res.Source), badge(res.Verdict))
		}
		p.str("</ul>\n</nav>\n")
	}
	for i, res := range r.Results {
		p.result(i+1, res)
	}
	p.str("</main>\n</body>\n</html>\n")
}

func (p *page) problems(lines []string) {
	if len(lines) == 0 {
		return
	}
	p.str("<ul>\n")
	for _, l := range lines {
		p.printf("<li>%s</li>\n", esc(l))
	}
	p.str("</ul>\n")
}

// entry is one violation of a result, numbered in report order (the plan's
// own first, then each child's), with the child it belongs to (nil for the
// plan as a whole) and the mark that shows its value, if any.
type entry struct {
	v     report.Violation
	child *report.Child
	mark  string // the id of its mark in the document's text, or ""
}

func (p *page) result(n int, res report.Result) {
	id := "p" + strconv.Itoa(n)
	p.printf("<section id=\"%s\" aria-labelledby=\"%s-h\">\n", id, id)
	p.printf("<h2 id=\"%s-h\">%s <span class=\"source\">%s</span></h2>\n", id, badge(res.Verdict), esc(res.Source))

	var entries []entry
	for _, v := range res.Violations {
		entries = append(entries, entry{v: v})
	}
	for i := range res.Children {
		for _, v := range res.Children[i].Violations {
			entries = append(entries, entry{v: v, child: &res.Children[i]})
		}
	}
	text := p.markText(id, res, entries) // sets each entry's mark; written below

	if res.Verdict == report.NotJudged || res.Error != "" {
		p.printf("<p>ERROR: could not evaluate</p>\n<p class=\"problem\" id=\"%s-error\">", id)
		if res.Problem != nil && res.Problem.Line > 0 && text.problemMark != "" {
			p.printf("<a href=\"#%s\">%s</a>: ", text.problemMark, esc(position(res.Problem.Line, res.Problem.Column)))
			p.str(esc(problemAfterPlace(res)))
		} else {
			p.str(esc(problemDetail(res)))
		}
		p.str("</p>\n")
		p.problems(res.Problems)
	} else {
		p.printf("<p>%s</p>\n", esc(resultSummary(res)))
		p.children(id, res, entries)
		p.violationTable(id, res, entries)
		p.notes(res)
	}
	p.str(text.html)
	p.str("</section>\n")
}

// resultSummary is a judged plan's verdict in words, as the text report
// heads it.
func resultSummary(res report.Result) string {
	blocked := 0
	for _, ch := range res.Children {
		if ch.Verdict != report.Pass {
			blocked++
		}
	}
	switch {
	case res.Verdict == report.Pass:
		return fmt.Sprintf("PASS: %s may be dispatched (%s)", allChildren(len(res.Children)), judgedBy(res))
	case res.PlanRefusals() > 0:
		return fmt.Sprintf("BLOCK: the plan is refused as a whole; %d of %s refused (%s)", blocked, children(len(res.Children)), judgedBy(res))
	}
	return fmt.Sprintf("BLOCK: %d of %s refused (%s)", blocked, children(len(res.Children)), judgedBy(res))
}

// problemAfterPlace is problemDetail without the line and column, which
// the page links to the place.
func problemAfterPlace(res report.Result) string {
	q := *res.Problem
	q.Line, q.Column = 0, 0
	res.Problem = &q
	return problemDetail(res)
}

// children lists the plan's children with their verdicts: a flat list, or
// a delegation tree drawn as one when descendants carry pointers.
func (p *page) children(id string, res report.Result, entries []entry) {
	if len(res.Children) == 0 {
		return
	}
	first := map[*report.Child]int{} // a child's first violation's number
	for k := len(entries) - 1; k >= 0; k-- {
		if entries[k].child != nil {
			first[entries[k].child] = k
		}
	}
	pointer := func(c *report.Child) string {
		if c.Pointer != "" {
			return c.Pointer
		}
		return "/plan/" + strconv.Itoa(c.Index)
	}
	// The tree: each descendant under the child whose pointer is its own
	// less its last "/children/N"; one whose parent is not listed stands
	// at the top, with its pointer saying where it is.
	index := map[string]int{}
	for i := range res.Children {
		index[pointer(&res.Children[i])] = i
	}
	kids := make([][]int, len(res.Children))
	var top []int
	nested := false
	for i := range res.Children {
		ptr := pointer(&res.Children[i])
		parent := -1
		if cut := strings.LastIndex(ptr, "/children/"); cut > 0 {
			if j, ok := index[ptr[:cut]]; ok && j != i {
				parent = j
			}
		}
		if parent < 0 {
			top = append(top, i)
			continue
		}
		kids[parent] = append(kids[parent], i)
		nested = true
	}
	if nested {
		p.str("<h3>Delegation tree</h3>\n")
	} else {
		p.str("<h3>Children</h3>\n")
	}
	var list func(is []int, class string)
	list = func(is []int, class string) {
		p.printf("<ul%s>\n", class)
		for _, i := range is {
			c := &res.Children[i]
			_, vclass := verdictWord(c.Verdict)
			role := "(no role)"
			if c.Role != "" {
				role = c.Role
			}
			p.printf("<li id=\"%s-c%d\"><span class=\"node %s\">%s <span class=\"role\">%s</span> <code>%s</code>", id, i, vclass, badge(c.Verdict), esc(role), esc(pointer(c)))
			if n := len(c.Violations); n > 0 {
				p.printf(": <a href=\"#%s-v%d\">%s</a>", id, first[c], violations(n))
				if x := report.Excepted(c.Violations); x > 0 {
					p.printf(", %d excused", x)
				}
			}
			switch {
			case c.Unlisted > 0 && len(c.Violations) == 0:
				p.printf(": %s not listed", violations(c.Unlisted))
			case c.Unlisted > 0:
				p.printf(", %d more not listed", c.Unlisted)
			}
			p.str("</span>")
			if len(kids[i]) > 0 {
				p.str("\n")
				list(kids[i], "")
			}
			p.str("</li>\n")
		}
		p.str("</ul>\n")
	}
	list(top, ` class="tree"`)
}

// violationTable lists every violation of a plan, the plan's own first,
// each with its place and whether it refuses or an exception excuses it.
func (p *page) violationTable(id string, res report.Result, entries []entry) {
	unlisted := 0
	for _, c := range res.Children {
		unlisted += c.Unlisted
	}
	if len(entries) == 0 && unlisted == 0 {
		return
	}
	p.str("<h3>Violations</h3>\n<table>\n")
	p.printf("<caption>Every violation of %s, with the value it points at</caption>\n", esc(res.Source))
	p.str("<thead><tr><th scope=\"col\">Child</th><th scope=\"col\">Rule</th><th scope=\"col\">Severity</th><th scope=\"col\">Pointer</th><th scope=\"col\">Line</th><th scope=\"col\">Column</th><th scope=\"col\">Reason</th><th scope=\"col\">Verdict</th></tr></thead>\n<tbody>\n")
	// The plan's own violations come first, then each child's, each
	// child's count of those not listed after them.
	k := 0
	row := func(e entry) {
		v := e.v
		class := ""
		if !v.Blocks() {
			class = ` class="excused"`
		}
		who := "the plan"
		if e.child != nil {
			who = childName(e.child)
		}
		p.printf("<tr id=\"%s-v%d\"%s><th scope=\"row\">%s</th>", id, k, class, esc(who))
		k++
		p.printf("<td>%s</td>", p.ruleLink(v.Rule))
		p.printf("<td class=\"sev-%s\">%s</td>", severityClass(v.Severity), esc(v.Severity))
		p.printf("<td><code>%s</code></td>", esc(v.Path))
		line, column := "—", "—"
		if v.Line > 0 {
			line = strconv.Itoa(v.Line)
			if e.mark != "" {
				line = `<a href="#` + e.mark + `" title="the value in the document's text">` + line + `</a>`
			}
		}
		if v.Column > 0 {
			column = strconv.Itoa(v.Column)
		}
		p.printf("<td>%s</td><td>%s</td><td class=\"reason\">%s</td>", line, column, esc(v.Message))
		if v.Excepted != nil {
			p.printf("<td><span class=\"badge v-excused\">EXCUSED</span> %s</td></tr>\n", esc(exceptedBy(*v.Excepted)))
		} else {
			p.str("<td><span class=\"badge v-block\">REFUSES</span></td></tr>\n")
		}
	}
	for range res.Violations {
		row(entries[k])
	}
	for i := range res.Children {
		c := &res.Children[i]
		for range c.Violations {
			row(entries[k])
		}
		if c.Unlisted > 0 {
			p.printf("<tr><th scope=\"row\">%s</th><td colspan=\"7\">%s</td></tr>\n", esc(childName(c)), esc(unlistedText(*c)))
		}
	}
	p.str("</tbody>\n</table>\n")
}

func childName(c *report.Child) string {
	if c.Role == "" {
		return "[" + c.Name() + "]"
	}
	return "[" + c.Name() + "] " + showRole(c.Role)
}

// severityClass keeps a class name to the severities it styles.
func severityClass(s string) string {
	switch s {
	case "critical", "high", "medium", "low":
		return s
	}
	return "other"
}

// ruleLink is a rule's ID, linked to its documentation when it is a
// built-in rule the report describes; an operator's own rule has no page.
func (p *page) ruleLink(id string) string {
	rule, ok := p.rules[id]
	if !ok || rule.Custom {
		return "<code>" + esc(id) + "</code>"
	}
	return `<a href="` + RulesDocs + "#" + anchor(id) + `" title="` + esc(rule.Title) + `"><code>` + esc(id) + "</code></a>"
}

// anchor is the fragment GitHub gives a heading that reads `id`: lower
// case, letters, digits, '-' and '_' kept, spaces turned to '-', all else
// left out.
func anchor(id string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(id) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '-', r == '_':
			b.WriteRune(r)
		case r == ' ':
			b.WriteByte('-')
		}
	}
	return b.String()
}

func (p *page) notes(res report.Result) {
	if len(res.Exceptions) == 0 {
		return
	}
	p.str("<h3>Exceptions that did not apply</h3>\n<ul>\n")
	for _, n := range res.Exceptions {
		word, class := "NOTE", "v-excused"
		if n.Blocks {
			word, class = "BLOCK", "v-block"
		}
		p.printf("<li><span class=\"badge %s\">%s</span> %s</li>\n", class, word, esc(noteText(n)))
	}
	p.str("</ul>\n")
}

// markedText is a document's text as the page shows it, and the id of the
// mark at an unevaluated document's problem, if any.
type markedText struct {
	html        string
	problemMark string
}

// target is what a range of the text is marked for: violation k, or (k
// -1) the problem that kept the document from being evaluated.
type target struct {
	k          int
	start, end int // bytes of the line's text
}

// markText writes the document's text with each violation's value marked
// and linked to its row (and back: entries[k].mark is set), or "" when
// the front end gave no text. Ranges that overlap are cut where any one
// starts or ends, so marks never nest and each piece says every violation
// it belongs to.
func (p *page) markText(id string, res report.Result, entries []entry) markedText {
	if res.Text == nil {
		return markedText{}
	}
	doc := indexLines(res.Text)
	byLine := map[int][]target{}
	place := func(k, line, column int) {
		start, end, ok := doc.span(line, column)
		switch {
		case column <= 0:
			start, end, ok = doc.lineSpan(line)
		case k < 0 && !(ok && doc.text(line)[start] == '"'):
			// A problem's place is a point, not always a value's start
			// (where YAML stops parsing, a tab where indentation goes):
			// one character, or a quoted key.
			start, end, ok = doc.point(line, column)
		}
		if ok {
			byLine[line] = append(byLine[line], target{k, start, end})
		}
	}
	for k, e := range entries {
		if e.v.Line > 0 {
			place(k, e.v.Line, e.v.Column)
		}
	}
	if res.Problem != nil && res.Problem.Line > 0 && (res.Verdict == report.NotJudged || res.Error != "") {
		place(-1, res.Problem.Line, res.Problem.Column)
	}
	var out markedText
	var b strings.Builder
	what := "plan"
	if strings.HasSuffix(strings.ToLower(res.Source), ".md") {
		what = "definition"
	}
	fmt.Fprintf(&b, "<details open>\n<summary><h3>The %s's text</h3></summary>\n<pre class=\"src\"><code>", what)
	marks := 0
	for n := 1; n <= doc.count(); n++ {
		text := doc.text(n)
		ts := byLine[n]
		class := "line"
		if len(ts) > 0 {
			class = "line hit"
		}
		fmt.Fprintf(&b, "<span class=\"%s\" id=\"%s-L%d\"><span class=\"ln\" aria-hidden=\"true\">%d</span>", class, id, n, n)
		cuts := []int{0, len(text)}
		for _, t := range ts {
			cuts = append(cuts, t.start, t.end)
		}
		slices.Sort(cuts)
		cuts = slices.Compact(cuts)
		// A sweep over the pieces: the ranges begun and not yet ended
		// cover the piece, so a one-line plan of thousands of refused
		// values is marked in n log n, not n².
		slices.SortFunc(ts, func(a, c target) int { return a.start - c.start })
		var active []target
		next := 0
		for i := 0; i+1 < len(cuts); i++ {
			from, to := cuts[i], cuts[i+1]
			piece := esc(string(text[from:to]))
			for next < len(ts) && ts[next].start <= from {
				active = append(active, ts[next])
				next++
			}
			active = slices.DeleteFunc(active, func(t target) bool { return t.end <= from })
			over := slices.Clone(active)
			if len(over) == 0 {
				b.WriteString(piece)
				continue
			}
			slices.SortFunc(over, func(a, c target) int { return a.k - c.k })
			marks++
			markID := id + "-m" + strconv.Itoa(marks)
			var titles []string
			excused := true
			for _, t := range over {
				if t.k < 0 {
					excused = false
					titles = append(titles, "could not evaluate: "+problemAfterPlace(res))
					if t.start == from && out.problemMark == "" {
						out.problemMark = markID
					}
					continue
				}
				e := &entries[t.k]
				if e.v.Blocks() {
					excused = false
				}
				title := e.v.Rule + ": " + e.v.Message
				if e.v.Excepted != nil {
					title += " (" + exceptedBy(*e.v.Excepted) + ")"
				}
				titles = append(titles, title)
				if t.start == from && e.mark == "" {
					e.mark = markID
				}
			}
			href := id + "-error"
			if over[0].k >= 0 {
				href = id + "-v" + strconv.Itoa(over[0].k)
			}
			mclass := "mark"
			if excused {
				mclass = "mark excused"
			}
			for i := range titles {
				titles[i] = esc(titles[i])
			}
			fmt.Fprintf(&b, "<a class=\"%s\" id=\"%s\" href=\"#%s\" title=\"%s\">%s</a>", mclass, markID, href, strings.Join(titles, "&#10;"), piece)
		}
		b.WriteString("\n</span>")
	}
	b.WriteString("</code></pre>\n</details>\n")
	out.html = b.String()
	return out
}

func capital(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
