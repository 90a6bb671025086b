package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"unicode"
)

// The documentation is README.md and the pages under docs/. These tests
// hold it to what a reader relies on: every relative link leads to a file
// that exists, and to a heading that is there; every command they show runs
// and prints what they say it prints (TestDocsCommands, in doccmds_test.go).

// repoRoot is the module root, seen from this package's folder.
var repoRoot = filepath.Join("..", "..")

// docFiles lists README.md and every page under docs/, as paths relative to
// the repository root, in order.
func docFiles(t *testing.T) []string {
	t.Helper()
	pages, err := filepath.Glob(filepath.Join(repoRoot, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	if len(pages) == 0 {
		t.Fatal("docs/ holds no page: the README links out to them")
	}
	files := []string{"README.md"}
	for _, p := range pages {
		rel, err := filepath.Rel(repoRoot, p)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, filepath.ToSlash(rel))
	}
	return files
}

var (
	headingLine = regexp.MustCompile(`^(#{1,6})[ \t]+(.*?)[ \t#]*$`)
	// mdLink is an inline link or image, [text](target), whose text may run
	// over lines; a title after the target is not used in these pages.
	mdLink     = regexp.MustCompile(`\[([^\]]*)\]\(([^)\s]*)\)`)
	codeSpan   = regexp.MustCompile("``[^`](?:.|\n)*?``|`[^`]*`")
	urlScheme  = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9+.-]*:`)
	linkInText = regexp.MustCompile(`\[([^\]]*)\]\([^)]*\)`)
)

// withoutFences blanks every line inside a fenced code block (and the
// fences), keeping the line count, so that nothing in a code sample is read
// as a heading or a link.
func withoutFences(doc string) string {
	lines := strings.Split(doc, "\n")
	fence := ""
	for i, l := range lines {
		trimmed := strings.TrimLeft(l, " ")
		switch {
		case fence != "":
			if strings.HasPrefix(trimmed, fence) {
				fence = ""
			}
			lines[i] = ""
		case strings.HasPrefix(trimmed, "```"), strings.HasPrefix(trimmed, "~~~"):
			fence = trimmed[:3]
			lines[i] = ""
		}
	}
	return strings.Join(lines, "\n")
}

// anchor is the fragment GitHub gives a heading: the text as rendered
// (links by their text, code without its backticks), lower case, every
// character but letters, digits, spaces, '-' and '_' dropped, each space a
// '-'.
func anchor(heading string) string {
	text := linkInText.ReplaceAllString(heading, "$1")
	var b strings.Builder
	for _, r := range strings.ToLower(text) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-', r == '_', unicode.IsLetter(r), unicode.IsDigit(r), unicode.Is(unicode.Mn, r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// anchors lists the fragments a document's headings produce; a heading
// whose fragment is taken already gets -1, -2, ... as on GitHub.
func anchors(doc string) map[string]bool {
	seen := map[string]int{}
	out := map[string]bool{}
	for _, l := range strings.Split(withoutFences(doc), "\n") {
		m := headingLine.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		a := anchor(m[2])
		if n := seen[a]; n > 0 {
			seen[a]++
			a = a + "-" + strconv.Itoa(n)
		} else {
			seen[a] = 1
		}
		out[a] = true
	}
	return out
}

// docLink is one relative link: where it is and where it points.
type docLink struct {
	line   int
	target string
}

// relativeLinks lists the links of a document that point into the
// repository (no scheme such as https: or mailto:), outside code.
func relativeLinks(doc string) []docLink {
	text := withoutFences(doc)
	// A code span becomes as many x's and line breaks, so that offsets keep
	// their line and nothing inside it reads as a link.
	text = codeSpan.ReplaceAllStringFunc(text, func(s string) string {
		return strings.Map(func(r rune) rune {
			if r == '\n' {
				return r
			}
			return 'x'
		}, s)
	})
	var links []docLink
	for _, m := range mdLink.FindAllStringSubmatchIndex(text, -1) {
		target := text[m[4]:m[5]]
		if urlScheme.MatchString(target) {
			continue
		}
		links = append(links, docLink{line: 1 + strings.Count(text[:m[0]], "\n"), target: target})
	}
	return links
}

// brokenLinks checks every relative link of the documents named (paths
// relative to root, with '/') and returns one line per link that leads to
// no file, or to an anchor its target has no heading for.
func brokenLinks(root string, files []string) ([]string, error) {
	docs := map[string]string{}
	read := func(name string) (string, error) {
		if d, ok := docs[name]; ok {
			return d, nil
		}
		b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(name)))
		if err != nil {
			return "", err
		}
		docs[name] = string(b)
		return docs[name], nil
	}
	var broken []string
	for _, name := range files {
		doc, err := read(name)
		if err != nil {
			return nil, err
		}
		for _, l := range relativeLinks(doc) {
			where := fmt.Sprintf("%s:%d: (%s)", name, l.line, l.target)
			path, frag, _ := strings.Cut(l.target, "#")
			target := name
			if path != "" {
				if strings.HasPrefix(path, "/") {
					broken = append(broken, where+": an absolute path, which does not resolve on GitHub; link relative to the page")
					continue
				}
				target = filepath.ToSlash(filepath.Clean(filepath.Join(filepath.Dir(filepath.FromSlash(name)), filepath.FromSlash(path))))
				if target == ".." || strings.HasPrefix(target, "../") {
					broken = append(broken, where+": leads out of the repository")
					continue
				}
				if _, err := os.Stat(filepath.Join(root, filepath.FromSlash(target))); err != nil {
					broken = append(broken, where+": no file "+target)
					continue
				}
			}
			if frag == "" {
				continue
			}
			if !strings.HasSuffix(target, ".md") {
				broken = append(broken, where+": an anchor into "+target+", which is not a Markdown page")
				continue
			}
			tdoc, err := read(target)
			if err != nil {
				broken = append(broken, where+": "+err.Error())
				continue
			}
			if !anchors(tdoc)[frag] {
				broken = append(broken, where+": no heading of "+target+" makes the anchor #"+frag)
			}
		}
	}
	return broken, nil
}

func TestAnchor(t *testing.T) {
	for _, tc := range []struct{ heading, want string }{
		{"Use it from Codex", "use-it-from-codex"},
		{"Test your checks: `spawngate verify`", "test-your-checks-spawngate-verify"},
		{"Symlinks (`--resolve-paths`)", "symlinks---resolve-paths"},
		{"Nested spawns, briefs and the session ledger (both hooks)", "nested-spawns-briefs-and-the-session-ledger-both-hooks"},
		{"How documents are read (parser decisions)", "how-documents-are-read-parser-decisions"},
		{"`agent.definition`", "agentdefinition"},
		{"The [path rules](security-model.md#path-rules)", "the-path-rules"},
		{"max_children and `tree_depth`", "max_children-and-tree_depth"},
	} {
		if got := anchor(tc.heading); got != tc.want {
			t.Errorf("anchor(%q) = %q, want %q", tc.heading, got, tc.want)
		}
	}
}

// TestBrokenLinksFindsEachKind runs the link check on a small tree of its
// own, holding one link of every kind it must refuse beside good ones.
func TestBrokenLinksFindsEachKind(t *testing.T) {
	root := t.TempDir()
	write := func(name, text string) {
		t.Helper()
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("README.md", "# Top\n\n## Try it\n\n"+
		"[fine](#try-it), [fine](docs/a.md#read-a-refusal), [fine](examples/p.yaml), [fine](https://example.com/#x)\n"+
		"[gone](#nothing-here)\n"+
		"[no page](docs/b.md)\n"+
		"[over\nlines](docs/a.md#missing)\n"+
		"`[in code](docs/none.md)` and\n```\n[in a fence](docs/none.md)\n```\n")
	write("docs/a.md", "# A\n\n## Read a refusal\n\n## Read a refusal\n\n"+
		"[fine](../README.md#try-it), [fine](#read-a-refusal-1)\n"+
		"[up](../../outside.md)\n"+
		"[abs](/README.md)\n"+
		"[anchor in yaml](../examples/p.yaml#L3)\n")
	write("examples/p.yaml", "plan: []\n")

	got, err := brokenLinks(root, []string{"README.md", "docs/a.md"})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"README.md:6: (#nothing-here): no heading of README.md makes the anchor #nothing-here",
		"README.md:7: (docs/b.md): no file docs/b.md",
		"README.md:8: (docs/a.md#missing): no heading of docs/a.md makes the anchor #missing",
		"docs/a.md:8: (../../outside.md): leads out of the repository",
		"docs/a.md:9: (/README.md): an absolute path, which does not resolve on GitHub; link relative to the page",
		"docs/a.md:10: (../examples/p.yaml#L3): an anchor into examples/p.yaml, which is not a Markdown page",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("broken links:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestDocsLinks: every relative link in README.md and docs/*.md leads to a
// file of the repository, and every anchor to a heading of its page.
func TestDocsLinks(t *testing.T) {
	broken, err := brokenLinks(repoRoot, docFiles(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range broken {
		t.Error(b)
	}
}

// TestDocsPagesListed: the README's "Documentation" section lists every
// page under docs/, so that none is reachable only by browsing the folder.
func TestDocsPagesListed(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join(repoRoot, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	section := readmeSection(t, string(readme), "Documentation")
	var missing []string
	for _, f := range docFiles(t)[1:] {
		if !strings.Contains(section, "]("+f+")") {
			missing = append(missing, f)
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Errorf("the README's Documentation section does not link %s", strings.Join(missing, ", "))
	}
}

// readmeSection returns the text under the README's "## title" heading, up
// to the next heading of that level.
func readmeSection(t *testing.T, readme, title string) string {
	t.Helper()
	_, rest, ok := strings.Cut(readme, "\n## "+title+"\n")
	if !ok {
		t.Fatalf("the README has no section %q", title)
	}
	if i := strings.Index(rest, "\n## "); i >= 0 {
		rest = rest[:i]
	}
	return rest
}

var (
	// pageCitation is a page of docs/ named in code, a help text or a
	// transcript, with its anchor when one follows.
	pageCitation = regexp.MustCompile("(?:^|[\\s(`])docs/([A-Za-z0-9_-]+\\.md)(#[a-z0-9_-]+)?")
	// readmeCitation is a README section cited by name: the README's "X",
	// or (README, "X").
	readmeCitation = regexp.MustCompile(`README(?:'s|,)\s+"([^"]+)"`)
	// commentBreak joins a quotation that runs over comment lines.
	commentBreak = regexp.MustCompile(`\n[ \t]*(?://|#)?[ \t]*`)
)

// TestCodeCitesDocsThatExist: Go code, help texts and transcripts that
// send a reader to the documentation name a page that exists, an anchor
// its headings make, and only README sections the README still has.
func TestCodeCitesDocsThatExist(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join(repoRoot, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	readmeAnchors := anchors(string(readme))
	var cited int
	err = filepath.WalkDir(repoRoot, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); name == ".git" || name == "fuzz" {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") && !strings.HasSuffix(path, ".txtar") || d.Name() == "docs_test.go" {
			return nil // this file's own examples are broken on purpose
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		text := string(b)
		rel, _ := filepath.Rel(repoRoot, path)
		for _, m := range pageCitation.FindAllStringSubmatch(text, -1) {
			cited++
			page, err := os.ReadFile(filepath.Join(repoRoot, "docs", m[1]))
			if err != nil {
				t.Errorf("%s cites docs/%s, which does not exist", rel, m[1])
				continue
			}
			if m[2] != "" && !anchors(string(page))[m[2][1:]] {
				t.Errorf("%s cites docs/%s%s, and no heading of the page makes that anchor", rel, m[1], m[2])
			}
		}
		for _, m := range readmeCitation.FindAllStringSubmatch(commentBreak.ReplaceAllString(text, " "), -1) {
			if !readmeAnchors[anchor(m[1])] {
				t.Errorf("%s cites the README's %q, which the README has no section of: name the page of docs/ that has it", rel, m[1])
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if cited == 0 {
		t.Fatal("no code cites a page of docs/: the walk found nothing to check")
	}
}

var updateDocs = flag.Bool("update", false, "rewrite the generated part of docs/rules.md, and the output blocks of the docs' commands")

// rulesMarker ends the hand-written part of docs/rules.md; what follows it
// is generated from the built-in checks' METADATA.
const rulesMarker = "<!-- Generated from the checks' METADATA by `go test ./internal/cli -run TestRulesPage -update`: edit the checks, not what follows. -->\n"

// ruleExplained is the page that explains a family of rules at length.
func ruleExplained(id string) string {
	switch {
	case strings.HasPrefix(id, "tree."):
		return "[Delegation trees](plans.md#delegation-trees)"
	case strings.HasPrefix(id, "brief."), strings.HasPrefix(id, "task."):
		return "[Brief hygiene](plans.md#brief-hygiene)"
	case strings.HasPrefix(id, "plan."), id == "roles.unknown":
		return "[Role profiles and plan limits](policy.md#role-profiles-and-plan-limits)"
	case id == "paths.escape":
		return "[Path rules](security-model.md#path-rules)"
	case id == "agent.sandbox":
		return "[Use it from Codex](codex.md)"
	case strings.HasPrefix(id, "agent."):
		return "[Use it from Claude Code](claude-code.md#what-is-judged), [Use it from Codex](codex.md)"
	}
	return "[The checks](checks.md)"
}

// listedRule is one built-in rule as spawngate rules --format json lists it.
type listedRule struct{ ID, Severity, Title, Description string }

// builtinRules returns the built-in rules, as spawngate rules lists them.
func builtinRules(t *testing.T) (listed struct{ Rules []listedRule }) {
	t.Helper()
	var out, errb bytes.Buffer
	if code := Run(context.Background(), []string{"rules", "--format", "json"}, nil, &out, &errb); code != 0 {
		t.Fatalf("spawngate rules --format json: exit %d: %s", code, errb.String())
	}
	if err := json.Unmarshal(out.Bytes(), &listed); err != nil {
		t.Fatal(err)
	}
	if len(listed.Rules) == 0 {
		t.Fatal("spawngate rules lists no rule")
	}
	return listed
}

// checksRow is a row of the table of docs/checks.md: | `ID` | severity | ...
var checksRow = regexp.MustCompile("(?m)^\\| `([^`]+)` \\| (\\w+) \\|")

// TestChecksTable: the table of docs/checks.md, which docs/rules.md says
// has every rule side by side, has a row for each rule spawngate rules
// lists, with its severity, and none for a rule it does not list.
func TestChecksTable(t *testing.T) {
	page, err := os.ReadFile(filepath.Join(repoRoot, "docs", "checks.md"))
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string]string{}
	for _, m := range checksRow.FindAllStringSubmatch(string(page), -1) {
		if _, dup := rows[m[1]]; dup {
			t.Errorf("docs/checks.md has two rows for %s", m[1])
		}
		rows[m[1]] = m[2]
	}
	for _, r := range builtinRules(t).Rules {
		sev, ok := rows[r.ID]
		switch {
		case !ok:
			t.Errorf("docs/checks.md's table has no row for rule %s (%s): %s", r.ID, r.Severity, r.Title)
		case sev != r.Severity:
			t.Errorf("docs/checks.md gives %s the severity %s; its METADATA says %s", r.ID, sev, r.Severity)
		}
		delete(rows, r.ID)
	}
	for id := range rows {
		t.Errorf("docs/checks.md's table has a row for %s, which spawngate rules does not list", id)
	}
}

// TestRulesPage: docs/rules.md lists every built-in rule `spawngate rules`
// lists, each under a heading of its own (its anchor is the ID without
// dots: #pathsescape), with its severity, title and description as the
// checks' METADATA has them. -update writes the list again.
func TestRulesPage(t *testing.T) {
	listed := builtinRules(t)
	var gen strings.Builder
	for _, r := range listed.Rules {
		fmt.Fprintf(&gen, "\n### `%s`\n\n**%s**: %s. Explained in %s.\n\n%s\n", r.ID, r.Severity, strings.TrimSuffix(r.Title, "."), ruleExplained(r.ID), r.Description)
	}

	path := filepath.Join(repoRoot, "docs", "rules.md")
	page, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	head, _, ok := strings.Cut(string(page), rulesMarker)
	if !ok {
		t.Fatalf("docs/rules.md lacks the line that starts its generated part:\n%s", rulesMarker)
	}
	want := head + rulesMarker + gen.String()
	if *updateDocs {
		if err := os.WriteFile(path, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if string(page) != want {
		t.Error("docs/rules.md does not list the rules spawngate rules lists: run go test ./internal/cli -run TestRulesPage -update, and read the diff")
	}
	anchorsOf := anchors(string(page))
	for _, r := range listed.Rules {
		if a := anchor("`" + r.ID + "`"); !anchorsOf[a] {
			t.Errorf("docs/rules.md has no anchor #%s for rule %s", a, r.ID)
		}
	}
}

// synopsisGroups are the words of docs/cli.md's synopsis that stand for
// several flags, each spelled out in the paragraph under it.
var synopsisGroups = map[string][]string{
	"[limits]": {"max-bytes", "max-yaml-bytes", "max-depth", "max-alias-nodes", "max-alias-bytes", "max-string-bytes", "max-values", "max-children", "max-child-entries"},
	"[key]":    {"bundle-verification-key", "bundle-verification-key-id", "bundle-signing-alg"},
}

var (
	synopsisFlag = regexp.MustCompile(`--([a-z0-9][a-z0-9-]*)`)
	helpFlag     = regexp.MustCompile(`(?m)^  --([a-z0-9][a-z0-9-]*)`)
)

// TestCLISynopsis: the synopsis at the top of docs/cli.md names every flag
// of each command, as the command's --help lists it (once for each host of
// hook and doctor), and no flag the command does not have.
func TestCLISynopsis(t *testing.T) {
	page, err := os.ReadFile(filepath.Join(repoRoot, "docs", "cli.md"))
	if err != nil {
		t.Fatal(err)
	}
	blocks := codeBlocks(string(page))
	if len(blocks) == 0 {
		t.Fatal("docs/cli.md has no code block: where is its synopsis?")
	}
	synopsis := blocks[0]
	for group, flags := range synopsisGroups {
		for _, f := range flags {
			if !strings.Contains(synopsis.after, "--"+f) {
				t.Errorf("the paragraph under docs/cli.md's synopsis does not say that %s holds --%s", group, f)
			}
		}
	}
	documented := map[string]map[string]bool{} // by the command line that asks for its help
	texts, _ := commandLines(synopsis)
	for _, l := range texts {
		words := strings.Fields(l)
		if len(words) < 2 || words[0] != "spawngate" {
			continue
		}
		flags := map[string]bool{}
		for _, m := range synopsisFlag.FindAllStringSubmatch(l, -1) {
			flags[m[1]] = true
		}
		for group, fs := range synopsisGroups {
			if strings.Contains(l, group) {
				for _, f := range fs {
					flags[f] = true
				}
			}
		}
		cmds := []string{words[1]}
		if words[1] == "hook" || words[1] == "doctor" {
			cmds = nil
			for _, h := range strings.Split(words[2], "|") {
				cmds = append(cmds, words[1]+" "+h)
			}
		}
		for _, c := range cmds {
			if documented[c] == nil {
				documented[c] = map[string]bool{}
			}
			for f := range flags {
				documented[c][f] = true
			}
		}
	}
	for _, c := range []string{"check", "agents", "serve", "playground", "verify", "rules", "version", "hook claude-code", "doctor claude-code"} {
		if documented[c] == nil {
			t.Errorf("docs/cli.md's synopsis has no line for spawngate %s", c)
		}
	}
	var names []string
	for c := range documented {
		names = append(names, c)
	}
	sort.Strings(names)
	for _, c := range names {
		flags := documented[c]
		// A hook's help goes to stderr, with exit 2: its stdout and exit
		// code are its host's protocol.
		var help bytes.Buffer
		Run(context.Background(), append(strings.Fields(c), "--help"), nil, &help, &help)
		has := map[string]bool{}
		for _, m := range helpFlag.FindAllStringSubmatch(help.String(), -1) {
			has[m[1]] = true
		}
		if len(has) == 0 && c != "version" {
			t.Errorf("spawngate %s --help lists no flag:\n%s", c, help.String())
			continue
		}
		var missing, extra []string
		for f := range has {
			if !flags[f] {
				missing = append(missing, "--"+f)
			}
		}
		for f := range flags {
			if !has[f] {
				extra = append(extra, "--"+f)
			}
		}
		sort.Strings(missing)
		sort.Strings(extra)
		if len(missing) > 0 {
			t.Errorf("docs/cli.md's synopsis of spawngate %s lacks %s", c, strings.Join(missing, ", "))
		}
		if len(extra) > 0 {
			t.Errorf("docs/cli.md's synopsis of spawngate %s names %s, which it does not have", c, strings.Join(extra, ", "))
		}
	}
}

// TestDocsNameHelperPrograms: docs/development.md and docs/ARCHITECTURE.md,
// which map the repository, name every helper program of internal/cmd.
func TestDocsNameHelperPrograms(t *testing.T) {
	dirs, err := os.ReadDir(filepath.Join(repoRoot, "internal", "cmd"))
	if err != nil {
		t.Fatal(err)
	}
	for _, page := range []string{"development.md", "ARCHITECTURE.md"} {
		b, err := os.ReadFile(filepath.Join(repoRoot, "docs", page))
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range dirs {
			if d.IsDir() && !regexp.MustCompile(`\b`+regexp.QuoteMeta(d.Name())+`\b`).Match(b) {
				t.Errorf("docs/%s does not name internal/cmd/%s", page, d.Name())
			}
		}
	}
}
