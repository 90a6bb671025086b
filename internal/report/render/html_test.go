package render_test

import (
	"bytes"
	"html"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/spawngate/spawngate/internal/report"
	"github.com/spawngate/spawngate/internal/report/render"
)

// refusedText is examples/refused-plan.yaml as it was when this test was
// written, with the violations spawngate check finds in it.
const refusedText = `# The plan from the seed essay.
plan:
  - role: home-cleaner
    brief: Free up space in the home directory.
    tools: [fs.write, "fs:*", shell.run]
    paths: ["~"]
    budget_tokens: 5000000
  - role: doc-reader
    tools: [fs.read, http.get]
    paths: [/repo/workspace/docs]
    budget_tokens: 40000
`

var builtinRules = []report.Rule{
	{ID: "budget.cap", Severity: "medium", Title: "Budgets stay under the cap"},
	{ID: "paths.escape", Severity: "critical", Title: "Paths stay inside the workspace"},
	{ID: "tools.allowlist", Severity: "high", Title: "Tools must be allowed"},
	{ID: "tools.write", Severity: "high", Title: "Writing needs allow_write"},
	{ID: "tree.tools", Severity: "high", Title: "A child holds only its parent's tools"},
	{ID: "tree.paths", Severity: "critical", Title: "A child touches only its parent's paths"},
}

// htmlReports are the reports the HTML page is tested on beyond the ones
// every format is: each with the documents' own text, as check gives it.
func htmlReports() map[string]func() *report.Report {
	finished := func(r *report.Report) *report.Report { r.Finish(); return r }
	refused := func() *report.Report {
		op := []string{"operator"}
		return finished(&report.Report{Rules: builtinRules, Results: []report.Result{{
			Source: "examples/refused-plan.yaml", Verdict: report.Block, Policies: op, Text: []byte(refusedText),
			Children: []report.Child{
				{Index: 0, Role: "home-cleaner", Verdict: report.Block, Violations: []report.Violation{
					{Rule: "budget.cap", Severity: "medium", Message: "budget_tokens 5000000 exceeds the cap of 200000 tokens set by the operator policy", Path: "/plan/0/budget_tokens", Line: 7, Column: 20, Policies: op},
					{Rule: "paths.escape", Severity: "critical", Message: `path "~" contains '~' (home directory expansion)`, Path: "/plan/0/paths/0", Line: 6, Column: 13},
					{Rule: "tools.write", Severity: "high", Message: `tool "fs.write" writes, and allow_write: true is not set by the operator policy`, Path: "/plan/0/tools/0", Line: 5, Column: 13, Policies: op},
					{Rule: "tools.allowlist", Severity: "high", Message: `tool "fs:*" is a pattern`, Path: "/plan/0/tools/1", Line: 5, Column: 23, Policies: op},
					{Rule: "tools.allowlist", Severity: "high", Message: `tool "shell.run" is not allowed by the operator policy`, Path: "/plan/0/tools/2", Line: 5, Column: 31, Policies: op},
					{Rule: "tools.write", Severity: "high", Message: `tool "shell.run" writes, and allow_write: true is not set by the operator policy`, Path: "/plan/0/tools/2", Line: 5, Column: 31, Policies: op},
				}},
				{Index: 1, Role: "doc-reader", Verdict: report.Pass, Violations: []report.Violation{}},
			},
		}}})
	}
	tree := func() *report.Report {
		text := "plan:\r\n  - id: lead\r\n    role: lead\r\n    tools: [fs.read, Agent]\r\n    children:\r\n      - role: worker\r\n        tools: [fs.read, http.get]\r\n        paths: [\"dé/ploy\"]\r\n        children:\r\n          - role: helper\r\n            tools: [fs.read]\r\n"
		return finished(&report.Report{Rules: builtinRules, Results: []report.Result{{
			Source: "plans/tree.yaml", Verdict: report.Block, Policies: []string{"operator"}, Text: []byte(text),
			Children: []report.Child{
				{Index: 0, Role: "lead", Verdict: report.Pass, Violations: []report.Violation{}},
				{Index: 1, Pointer: "/plan/0/children/0", Role: "worker", Verdict: report.Block, Violations: []report.Violation{
					{Rule: "tree.paths", Severity: "critical", Message: `path "dé/ploy" is not inside any path of its parent /plan/0`, Path: "/plan/0/children/0/paths/0", Line: 8, Column: 17},
					{Rule: "tree.tools", Severity: "high", Message: `tool "http.get" is not held by its parent /plan/0`, Path: "/plan/0/children/0/tools/1", Line: 7, Column: 26},
				}},
				{Index: 2, Pointer: "/plan/0/children/0/children/0", Role: "helper", Verdict: report.Pass, Violations: []report.Violation{}},
			},
		}}})
	}
	hostile := func() *report.Report {
		script := "<script>alert(1)</script>"
		img := `"><img src=x onerror=alert(1)>`
		text := "plan:\n  - role: \"" + script + "\"\n    paths: [\"" + strings.ReplaceAll(img, `"`, `\"`) + "\"]\n    brief: </code></pre><script>alert(2)</script>\u202e\x1b[2J\n"
		e := report.Exception{Index: 0, Pointer: "/exceptions/0", Rule: "acme<b>", Reason: "<iframe src=//evil>", Expires: `2099-01-01"><a href=//evil>`}
		return finished(&report.Report{
			Rules: []report.Rule{{ID: `<a href="javascript:alert(3)">`, Title: `"><script>alert(4)</script>`}, {ID: "acme<b>", Title: "<i>", Custom: true}},
			Note:  "<meta http-equiv=refresh content=0;url=//evil>",
			Results: []report.Result{
				{
					Source: `<b>plan</b>".yaml`, Verdict: report.Block, Policies: []string{"<u>op</u>"}, Text: []byte(text),
					Children: []report.Child{{Index: 0, Role: script, Verdict: report.Block, Violations: []report.Violation{
						{Rule: `<a href="javascript:alert(3)">`, Severity: "<i>high</i>", Message: "role " + script, Path: "/plan/0/role", Line: 2, Column: 11},
						{Rule: "acme<b>", Severity: "low", Message: "path " + img, Path: "/plan/0/paths/0" + img, Line: 3, Column: 13, Excepted: &e},
						{Rule: "acme<b>", Severity: "low", Message: "brief </td></tr></table><style>*{background:url(//evil)}</style>", Path: "/plan/0/brief", Line: 4, Column: 12},
					}}},
					Exceptions: []report.ExceptionNote{{Exception: e, Status: "<blink>"}},
				},
				report.Failed(script+".yaml", "cannot read "+img, &report.Problem{Line: 1, Column: 1, Pointer: "/" + img, Msg: script}),
			},
		})
	}
	docError := func() *report.Report {
		return finished(&report.Report{Results: []report.Result{
			{
				Source: "plans/dup.json", Verdict: report.NotJudged, Children: []report.Child{}, Text: []byte("{\"plan\": [{\"role\": \"a\", \"tools\": [\"x\"], \"tools\": []}]}\n"),
				Error:   `plans/dup.json:1:41: /plan/0: duplicate key "tools": consumers disagree on which value wins`,
				Problem: &report.Problem{Line: 1, Column: 41, Pointer: "/plan/0", Msg: `duplicate key "tools": consumers disagree on which value wins`},
			},
			{
				Source: "plans/bad.yaml", Verdict: report.NotJudged, Children: []report.Child{}, Text: []byte("plan:\n  - role: a\n   tools: [x]\n"),
				Error:    "plans/bad.yaml: 2 problems",
				Problem:  &report.Problem{Line: 3, Column: 4, Msg: "mapping values are not allowed in this context"},
				Problems: []string{"plans/bad.yaml:3:4: mapping values are not allowed in this context", "plans/bad.yaml:3:9: and another"},
			},
		}})
	}
	return map[string]func() *report.Report{"refused": refused, "tree": tree, "hostile text": hostile, "document errors with text": docError}
}

// allHTMLReports are the reports every format is tested on (the samples
// render_test.go holds as goldens in every format are among them, as
// "document errors" and "block"), and the ones above.
func allHTMLReports() map[string]func() *report.Report {
	all := ciReports()
	for name, build := range htmlReports() {
		all[name] = build
	}
	return all
}

func TestHTMLMatchesGoldenPages(t *testing.T) {
	for name, build := range allHTMLReports() {
		t.Run(name, func(t *testing.T) {
			got := renderAs(t, "html", build())
			golden := filepath.Join("testdata", "html", strings.NewReplacer(" ", "-", ",", "").Replace(name)+".html")
			if *update {
				if err := os.MkdirAll(filepath.Dir(golden), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(golden, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("the page differs from %s (run go test ./internal/report/render -update to accept, and read the diff)", golden)
			}
			if again := renderAs(t, "html", build()); !bytes.Equal(got, again) {
				t.Error("two renderings of the same report differ")
			}
		})
	}
}

// The page's markup, all of it: the elements and attributes the renderer
// writes. Anything else in a page came from a document and was not
// escaped.
var (
	htmlElements = []string{"html", "head", "meta", "title", "style", "body", "header", "h1", "h2", "h3", "p", "strong",
		"ul", "li", "main", "nav", "section", "a", "span", "code", "table", "caption", "thead", "tbody", "tr", "th", "td",
		"details", "summary", "pre", "link"}
	htmlAttributes = []string{"lang", "charset", "http-equiv", "content", "name", "class", "id", "href", "title",
		"aria-label", "aria-labelledby", "aria-hidden", "scope", "colspan", "open", "rel"}
	tagPattern  = regexp.MustCompile(`^<(/?)([a-z][a-z0-9]*)((?: [a-z-]+(?:="[^"<>]*")?)*)>`)
	attrPattern = regexp.MustCompile(` ([a-z-]+)(?:="([^"<>]*)")?`)
	docsHref    = regexp.MustCompile(`^` + regexp.QuoteMeta(render.RulesDocs) + `#[a-z0-9_-]+$`)
)

type htmlTag struct {
	name  string
	close bool
	attrs map[string]string
}

// htmlTags reads a page the renderer wrote, strictly: every "<" opens a
// tag of the page's own markup with quoted attributes (or is the doctype),
// text holds no "<" or ">" (the style sheet's aside), and a tag that does
// not read so fails the test.
func htmlTags(t *testing.T, page string) []htmlTag {
	t.Helper()
	const doctype = "<!DOCTYPE html>\n"
	if !strings.HasPrefix(page, doctype) {
		t.Fatalf("the page does not start with %q", doctype)
	}
	var tags []htmlTag
	rest := page[len(doctype):]
	for rest != "" {
		i := strings.IndexByte(rest, '<')
		if i < 0 {
			i = len(rest)
		}
		if text := rest[:i]; strings.ContainsAny(text, "<>") {
			t.Fatalf("text holds a bracket: %q", text)
		}
		rest = rest[i:]
		if rest == "" {
			break
		}
		m := tagPattern.FindStringSubmatch(rest)
		if m == nil {
			t.Fatalf("not a tag of the page's markup: %.80q", rest)
		}
		tag := htmlTag{name: m[2], close: m[1] == "/", attrs: map[string]string{}}
		if !slices.Contains(htmlElements, tag.name) || (tag.close && m[3] != "") {
			t.Fatalf("element <%s> is not the page's", tag.name)
		}
		for _, a := range attrPattern.FindAllStringSubmatch(m[3], -1) {
			if !slices.Contains(htmlAttributes, a[1]) {
				t.Fatalf("attribute %s of <%s> is not the page's", a[1], tag.name)
			}
			if _, dup := tag.attrs[a[1]]; dup {
				t.Fatalf("attribute %s twice in <%s>", a[1], tag.name)
			}
			tag.attrs[a[1]] = a[2]
		}
		tags = append(tags, tag)
		rest = rest[len(m[0]):]
		if tag.name == "style" && !tag.close {
			end := strings.Index(rest, "</style>")
			if end < 0 {
				t.Fatal("the style sheet does not end")
			}
			if css := rest[:end]; strings.Contains(css, "url(") || strings.Contains(css, "@import") || strings.Contains(css, "@font-face") {
				t.Fatal("the style sheet loads something")
			}
			rest = rest[end:]
		}
	}
	return tags
}

// TestHTMLLoadsNothingAndEscapesEverything reads every test page back: only
// the page's own elements and attributes, no src at all, every href a
// fragment of the page or a rule's documentation, ids unique and every
// fragment an id of the page, the Content-Security-Policy first in the
// head. A hostile plan's script, image and style are text.
func TestHTMLLoadsNothingAndEscapesEverything(t *testing.T) {
	for name, build := range allHTMLReports() {
		t.Run(name, func(t *testing.T) {
			page := string(renderAs(t, "html", build()))
			tags := htmlTags(t, page)
			ids := map[string]bool{}
			var fragments []string
			for _, tag := range tags {
				if id, ok := tag.attrs["id"]; ok {
					if ids[id] {
						t.Errorf("id %q twice", id)
					}
					ids[id] = true
				}
				if _, ok := tag.attrs["src"]; ok {
					t.Errorf("<%s> has a src", tag.name)
				}
				if href, ok := tag.attrs["href"]; ok {
					switch {
					case strings.HasPrefix(href, "#"):
						fragments = append(fragments, href[1:])
					case tag.name == "link":
						if href != "data:," || tag.attrs["rel"] != "icon" {
							t.Errorf("<link> %v: the page links only its empty icon", tag.attrs)
						}
					case !docsHref.MatchString(href):
						t.Errorf("href %q is neither a fragment of the page nor a rule's documentation", href)
					}
				}
			}
			for _, f := range fragments {
				if !ids[f] {
					t.Errorf("a link to #%s, which the page does not hold", f)
				}
			}
			if len(tags) < 4 || tags[2].name != "meta" || tags[2].attrs["charset"] != "utf-8" || tags[3].name != "meta" || tags[3].attrs["http-equiv"] != "Content-Security-Policy" {
				t.Fatalf("the head does not open with the charset and the Content-Security-Policy: %+v", tags[:min(4, len(tags))])
			}
			csp := html.UnescapeString(tags[3].attrs["content"])
			if !strings.HasPrefix(csp, "default-src 'none'; style-src 'sha256-") || !strings.Contains(csp, "; img-src data:;") {
				t.Errorf("Content-Security-Policy %q", csp)
			}
			if tags[0].name != "html" || tags[0].attrs["lang"] != "en" {
				t.Errorf("<html> has no lang: %+v", tags[0])
			}
		})
	}
	page := string(renderAs(t, "html", htmlReports()["hostile text"]()))
	for _, shown := range []string{
		"&lt;script&gt;alert(1)&lt;/script&gt;",
		"&#34;&gt;&lt;img src=x onerror=alert(1)&gt;",
		"&lt;/code&gt;&lt;/pre&gt;&lt;script&gt;alert(2)&lt;/script&gt;\\u202e\\u001b[2J",
		"&lt;iframe src=//evil&gt;",
		"&lt;meta http-equiv=refresh content=0;url=//evil&gt;",
		"&lt;b&gt;plan&lt;/b&gt;&#34;.yaml",
	} {
		if !strings.Contains(page, shown) {
			t.Errorf("the page does not show %s as text", shown)
		}
	}
	if strings.ContainsAny(page, "\u202e\x1b\x00") {
		t.Error("a control or format character reached the page")
	}
}

// TestHTMLMarksEachRefusedValue: each value a violation points at is
// marked in the plan's text, exactly, linked to its row and back; a value
// two violations point at is one mark that names both.
func TestHTMLMarksEachRefusedValue(t *testing.T) {
	page := string(renderAs(t, "html", htmlReports()["refused"]()))
	marks := regexp.MustCompile(`<a class="mark" id="(p1-m\d+)" href="#(p1-v\d+)" title="([^"]*)">([^<]*)</a>`).FindAllStringSubmatch(page, -1)
	var got []string
	for _, m := range marks {
		got = append(got, m[4]+" -> "+m[2])
	}
	want := []string{"fs.write -> p1-v2", "&#34;fs:*&#34; -> p1-v3", "shell.run -> p1-v4", "&#34;~&#34; -> p1-v1", "5000000 -> p1-v0"}
	if !slices.Equal(got, want) {
		t.Errorf("marks\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if title := marks[2][3]; title != "tools.allowlist: tool &#34;shell.run&#34; is not allowed by the operator policy&#10;tools.write: tool &#34;shell.run&#34; writes, and allow_write: true is not set by the operator policy" {
		t.Errorf("the mark of two violations has title %q", title)
	}
	// Each row links back to its mark.
	for row, mark := range map[string]string{"p1-v0": "p1-m5", "p1-v4": "p1-m3", "p1-v5": "p1-m3", "p1-v1": "p1-m4"} {
		if !regexp.MustCompile(`<tr id="` + row + `"><th scope="row">[^<]*</th>.*<a href="#` + mark + `"`).MatchString(page) {
			t.Errorf("row %s does not link to mark %s", row, mark)
		}
	}
	// In a CRLF plan with multi-byte characters, the nested child's values.
	tree := string(renderAs(t, "html", htmlReports()["tree"]()))
	for _, m := range []string{`>&#34;dé/ploy&#34;</a>`, `>http.get</a>`} {
		if !strings.Contains(tree, m) {
			t.Errorf("the tree's page does not mark %s", m)
		}
	}
	if strings.Contains(tree, "\r") {
		t.Error("a CR reached the page")
	}
	// The place of a problem is marked and linked to it.
	errs := string(renderAs(t, "html", htmlReports()["document errors with text"]()))
	if !strings.Contains(errs, `<a class="mark" id="p1-m1" href="#p1-error" title="could not evaluate: /plan/0: duplicate key &#34;tools&#34;: consumers disagree on which value wins">&#34;tools&#34;</a>`) {
		t.Errorf("the duplicate key is not marked:\n%s", errs)
	}
	// A problem on a blank (a tab where indentation goes) is marked there.
	tab := &report.Report{Results: []report.Result{report.Failed("plan.yaml", "plan.yaml:2:1: a tab indents this line: YAML indents with spaces",
		&report.Problem{Line: 2, Column: 1, Msg: "a tab indents this line: YAML indents with spaces"})}}
	tab.Results[0].Text = []byte("plan:\n\t- role: r\n")
	tab.Finish()
	if page := string(renderAs(t, "html", tab)); !strings.Contains(page, "href=\"#p1-error\" title=\"could not evaluate: a tab indents this line: YAML indents with spaces\">\\u0009</a>") {
		t.Errorf("the tab is not marked:\n%s", page)
	}
}

// TestHTMLListsWhatItCannotMark: a violation with no line, or with a place
// outside the text, is listed and marks nothing; a report without texts
// shows none.
func TestHTMLListsWhatItCannotMark(t *testing.T) {
	r := htmlReports()["refused"]()
	vs := r.Results[0].Children[0].Violations
	vs[0].Line, vs[0].Column = 0, 0  // budget.cap: no place
	vs[1].Line, vs[1].Column = 99, 1 // paths.escape: past the end
	page := string(renderAs(t, "html", r))
	if strings.Contains(page, ">5000000</a>") || strings.Contains(page, `>&#34;~&#34;</a>`) {
		t.Error("a value is marked without its place")
	}
	for _, row := range []string{`<tr id="p1-v0">`, `<tr id="p1-v1">`} {
		if !strings.Contains(page, row) {
			t.Errorf("row %s is not listed", row)
		}
	}
	if page := string(renderAs(t, "html", findings())); strings.Contains(page, "<details") || strings.Contains(page, `class="mark`) {
		t.Error("a report without texts shows one")
	}
}

// TestHTMLSaysTheVerdictInWords: the verdict is a word at the top, never a
// colour alone.
func TestHTMLSaysTheVerdictInWords(t *testing.T) {
	for name, want := range map[string]string{
		"pass":            `<p class="verdict v-pass"><strong>PASS</strong>: the only child of 1 plan may be dispatched</p>`,
		"block":           `<p class="verdict v-block"><strong>BLOCK</strong>: 3 of 5 children refused in 2 plans, 1 plan refused as a whole, 3 violations excepted (6 of 10 violations listed)</p>`,
		"run error":       `<p class="verdict v-error"><strong>ERROR</strong>: --policy policy.yaml: cannot read: no such file or directory</p>`,
		"nothing checked": `<p class="verdict v-error"><strong>ERROR</strong>: nothing was checked</p>`,
	} {
		if page := string(renderAs(t, "html", ciReports()[name]())); !strings.Contains(page, want) {
			t.Errorf("%s: no %s", name, want)
		}
	}
}
