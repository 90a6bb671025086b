package cli

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// TestDocsCommands runs every spawngate command that README.md and the
// pages under docs/ show, so that the documentation cannot drift from the
// program. The conventions it reads, which a writer of the docs follows:
//
//   - A documented command is a line of a fenced code block (no info
//     string, or sh, shell, console or text) that starts with "spawngate "
//     or "$ spawngate ", or that pipes into "| spawngate ". A line ending
//     in a backslash goes on on the next line. Blocks of YAML, JSON or TOML
//     (a host's settings, a CI workflow) hold configuration, not commands.
//   - A block in which a command line holds " [" is a synopsis (FLAG|FLAG,
//     [--flag X], [PATH...]): it documents a form, and none of its lines
//     runs.
//   - A block that holds exactly one command, "spawngate" and plain words
//     (no quotes, variables, pipes or redirections but a last "< FILE",
//     which is its stdin), runs: in-process with Run, from the repository
//     root, with HOME, XDG_STATE_HOME and the hosts' session variables
//     pointing at nothing of this machine. A path under /tmp/ is a path
//     under the test's own temporary folder, in the command and in its
//     output, so that a command that writes a file leaves nothing behind;
//     a command that writes into the repository fails the test.
//   - The block right after it, with nothing but blank lines between, is
//     its stdout, byte for byte. Where the text leading to the command says
//     "abridged", a line that is "..." alone (indented or not) stands for
//     one or more lines left out; nowhere else.
//   - The paragraph right after the command (after its output, when it has
//     one) states its exit code: "The exit code is N" or "exits N", the
//     first one it says.
//   - A block that shows a report (a line "FILE: BLOCK" or "verdict: ...",
//     or the "spawngate (devel)" of spawngate version) shows the command
//     that printed it: in the block right above, or on a "$ spawngate" line
//     of its own.
//   - Every other documented command is listed in docSkipped with the
//     reason it cannot run here; a command neither run nor listed, or a
//     listed one that no page shows any more, fails the test.
//
// go test ./internal/cli -run TestDocsCommands -update writes each output
// block that is not abridged again from what the command printed (after a
// change to a check, its digest in `spawngate version`); read the diff.
func TestDocsCommands(t *testing.T) {
	var pages []docPage
	for _, name := range docFiles(t) {
		b, err := os.ReadFile(filepath.Join(repoRoot, filepath.FromSlash(name)))
		if err != nil {
			t.Fatal(err)
		}
		pages = append(pages, docPage{name: name, text: string(b)})
	}
	cmds, problems := documentedCommands(pages, docSkipped)
	for _, p := range problems {
		t.Error(p)
	}
	if len(cmds) < 10 {
		t.Fatalf("the docs show %d commands that run, fewer than the ten they showed when this test was written: is the scan broken?", len(cmds))
	}

	// The hosts' variables and the state folders are the test's, so that
	// what runs on this machine cannot change an answer.
	tmp := t.TempDir()
	t.Setenv("HOME", filepath.Join(tmp, "home"))
	t.Setenv("XDG_STATE_HOME", filepath.Join(tmp, "state"))
	for _, v := range []string{
		"CLAUDE_PROJECT_DIR", "CLAUDE_PID", "CLAUDE_CONFIG_DIR", "CLAUDE_CODE_SAFE_MODE",
		"CLAUDE_CODE_SUBAGENT_MODEL", "CLAUDE_CODE_SUBAGENT_MODEL_FORCE",
		"CLAUDE_CODE_EXPERIMENTAL_OBSERVER_AGENTS", "CODEX_HOME",
		"SPAWNGATE_REDIS_URL", "SPAWNGATE_REDIS", "SPAWNGATE_TOKEN",
	} {
		t.Setenv(v, "")
		os.Unsetenv(v)
	}
	root, err := filepath.Abs(repoRoot)
	if err != nil {
		t.Fatal(err)
	}
	before := repoFiles(t, root)
	t.Chdir(root)

	updates := map[string][]docUpdate{}
	for _, c := range cmds {
		stdout, stderr, code := c.run(t, tmp)
		where := fmt.Sprintf("%s:%d: %s", c.page, c.line, c.text)
		if code != c.exit {
			t.Errorf("%s: exit %d, the page says %d; stderr:\n%s", where, code, c.exit, stderr)
		}
		if c.output == nil {
			continue
		}
		if c.output.matches(stdout) {
			continue
		}
		if *updateDocs && !c.output.abridged {
			updates[c.page] = append(updates[c.page], docUpdate{from: c.output.from, to: c.output.to, text: stdout})
			continue
		}
		t.Errorf("%s: %s\nit prints:\n%s(stderr: %q)\nfix the page (or, for a block that is not abridged, run go test ./internal/cli -run TestDocsCommands -update and read the diff)",
			where, c.output.firstDiff(c.page, stdout), stdout, stderr)
	}
	for _, f := range newFiles(before, repoFiles(t, root)) {
		t.Errorf("running the documented commands left %s in the repository: have the page write under /tmp/ instead", f)
	}
	for page, ups := range updates {
		if err := rewriteBlocks(filepath.Join(root, filepath.FromSlash(page)), ups); err != nil {
			t.Fatal(err)
		}
		t.Logf("rewrote %d output blocks of %s", len(ups), page)
	}
}

// docSkipped lists the documented commands this test does not run, each
// with the reason, as the command line reads once its continuation lines
// are joined.
var docSkipped = []struct {
	reason   string
	commands []string
}{
	{"it names the reader's own files (their policy, their plans), which the repository does not hold", []string{
		"spawngate check --policy .github/spawngate/plans.yaml plans/",
		"spawngate agents --policy .github/spawngate/agents.yaml --cwd /workspace",
		"spawngate check --policy .github/spawngate/plans.yaml --format json plans/ > spawngate.json",
		`if ! printf '%s' "$PLAN_JSON" | spawngate check --policy /etc/spawngate/policy.yaml --format json - > verdict.json; then`,
	}},
	{"it belongs to a bundle built with the opa binary, from the reader's own folder", []string{
		"spawngate rules --write-rego release-bundle/spawngate-builtins",
		"spawngate verify release-bundle                       # the tests, as the gate will run them",
		"spawngate check --bundle bundle.tar.gz plan.yaml",
		"spawngate check --bundle bundle.tar.gz --bundle-verification-key public.pem plan.yaml",
	}},
	{"it starts a server (the transcripts of testdata/script and the server's tests hold what it answers)", []string{
		"spawngate serve --policy /etc/spawngate/policy.yaml            # listens on 127.0.0.1:8321",
	}},
	{"it starts a server for a browser (internal/playground's tests and the browser tests of internal/e2e/browser hold what it answers)", []string{
		"spawngate playground              # then open http://127.0.0.1:8322/",
	}},
	{"it reads this machine's installation (/etc, the user's home, /usr/local/bin/spawngate); testdata/script/doctor_*.txtar hold the same findings under --root and --home", []string{
		"spawngate doctor claude-code --project ~/src/repo",
		"$ spawngate doctor claude-code --project repo",
		"$ spawngate doctor codex --project repo",
	}},
}

// docPage is one page of the documentation: its path from the repository
// root, with '/', and its text.
type docPage struct{ name, text string }

// docBlock is one fenced code block of a page.
type docBlock struct {
	info     string
	from, to int      // the lines of its content, 1-based: from up to, not including, to
	lines    []string // its content, each line with its line break
	before   string   // the text between the block before it (or the page's start) and it
	after    string   // the text between it and the next block (or the page's end)
}

// codeBlocks returns the fenced code blocks of a page, in order. A fence is
// a line that starts with ``` (after indentation); the block ends at the
// next one.
func codeBlocks(text string) []docBlock {
	lines := strings.SplitAfter(text, "\n")
	var blocks []docBlock
	var prose strings.Builder
	for i := 0; i < len(lines); i++ {
		l := strings.TrimLeft(lines[i], " ")
		if !strings.HasPrefix(l, "```") {
			prose.WriteString(lines[i])
			continue
		}
		b := docBlock{info: strings.TrimSpace(strings.TrimPrefix(l, "```")), from: i + 2, before: prose.String()}
		if n := len(blocks); n > 0 {
			blocks[n-1].after = b.before
		}
		prose.Reset()
		for i++; i < len(lines) && !strings.HasPrefix(strings.TrimLeft(lines[i], " "), "```"); i++ {
			b.lines = append(b.lines, lines[i])
		}
		b.to = i + 1
		blocks = append(blocks, b)
	}
	if n := len(blocks); n > 0 {
		blocks[n-1].after = prose.String()
	}
	return blocks
}

// shellInfo are the info strings of blocks that may hold commands.
var shellInfo = map[string]bool{"": true, "sh": true, "shell": true, "console": true, "text": true}

// commandLines joins a block's continuation lines and returns each logical
// line with the line of the block it starts on.
func commandLines(b docBlock) (texts []string, lines []int) {
	cur, start := "", 0
	for i, l := range b.lines {
		l = strings.TrimRight(l, "\n")
		if cur == "" {
			start = b.from + i
		}
		if strings.HasSuffix(l, `\`) {
			cur += strings.TrimSpace(strings.TrimSuffix(l, `\`)) + " "
			continue
		}
		texts = append(texts, strings.TrimSpace(cur+strings.TrimSpace(l)))
		lines = append(lines, start)
		cur = ""
	}
	if cur != "" {
		texts = append(texts, strings.TrimSpace(cur))
		lines = append(lines, start)
	}
	return texts, lines
}

func isCommand(line string) bool {
	if strings.HasPrefix(line, "spawngate (") {
		return false // the first line of spawngate version's output
	}
	return strings.HasPrefix(line, "spawngate ") || strings.HasPrefix(line, "$ spawngate ") || strings.Contains(line, "| spawngate ")
}

var (
	// plainCommand is a command this test runs as it is: plain words, and
	// at most a last "< FILE".
	plainCommand = regexp.MustCompile(`^spawngate( [^\s'"$|<>;&\\#*?` + "`" + `]+)+( < [^\s'"$|<>;&\\#*?` + "`" + `]+)?$`)
	// reportLine is a line of spawngate's text report (a plan's or a
	// definition's heading, or the closing verdict), or the first line of
	// spawngate version's.
	reportLine = regexp.MustCompile(`(?m)^(?:verdict: (?:PASS|BLOCK|FAIL)\b|\S+\.(?:ya?ml|json|md|toml): (?:PASS|BLOCK)\b|spawngate \((?:devel)\)$|spawngate v\d)`)
	// statedExit is how a page says a command's exit code.
	statedExit = regexp.MustCompile(`(?i)(?:exit code is|exits) (\d)\b`)
)

// docCommand is a documented command this test runs.
type docCommand struct {
	page   string
	line   int
	text   string
	exit   int
	output *docOutput
}

// docOutput is the output a page shows for a command.
type docOutput struct {
	from, to int
	want     []string // its lines, each with its line break
	abridged bool
}

// documentedCommands reads the pages' commands: those to run, and one
// problem for each command neither runnable nor skipped, each runnable one
// whose exit code the page does not state, each "..." outside an abridged
// output, and each skipped command no page shows.
func documentedCommands(pages []docPage, skipped []struct {
	reason   string
	commands []string
}) (cmds []docCommand, problems []string) {
	skip := map[string]bool{}
	seen := map[string]bool{}
	for _, s := range skipped {
		for _, c := range s.commands {
			skip[c] = true
		}
	}
	for _, p := range pages {
		blocks := codeBlocks(p.text)
		output := -1 // the block that is the output of the command before it
		for bi, b := range blocks {
			if !shellInfo[b.info] || bi == output {
				continue
			}
			texts, lines := commandLines(b)
			var found []int
			synopsis := false
			for i, l := range texts {
				if isCommand(l) {
					found = append(found, i)
					synopsis = synopsis || strings.Contains(l, " [")
				}
			}
			if len(found) == 0 && reportLine.MatchString(strings.Join(texts, "\n")) {
				problems = append(problems, fmt.Sprintf("%s:%d: a report with no command before it: show the command that prints it, in a block of its own right above", p.name, b.from))
			}
			if len(found) == 0 || synopsis {
				continue
			}
			var nonBlank []string
			for _, l := range texts {
				if l != "" {
					nonBlank = append(nonBlank, l)
				}
			}
			for _, i := range found {
				where := fmt.Sprintf("%s:%d: %s", p.name, lines[i], texts[i])
				if skip[texts[i]] {
					seen[texts[i]] = true
					continue
				}
				if len(nonBlank) != 1 || !plainCommand.MatchString(texts[i]) {
					problems = append(problems, where+": neither run nor skipped: give it a block of its own with plain words (and at most a last < FILE), or list it in docSkipped with the reason")
					continue
				}
				c := docCommand{page: p.name, line: lines[i], text: texts[i]}
				after := b.after
				if bi+1 < len(blocks) && strings.TrimSpace(b.after) == "" {
					o := blocks[bi+1]
					output = bi + 1
					abridged := strings.Contains(strings.ToLower(b.before), "abridged")
					c.output = &docOutput{from: o.from, to: o.to, want: o.lines, abridged: abridged}
					for j, l := range o.lines {
						if strings.TrimSpace(l) == "..." && !abridged {
							problems = append(problems, fmt.Sprintf("%s:%d: a line of \"...\" in the output of %s, whose page does not say it is abridged", p.name, o.from+j, texts[i]))
						}
					}
					after = o.after
				}
				m := statedExit.FindStringSubmatch(firstParagraph(after))
				if m == nil {
					problems = append(problems, where+`: the paragraph after it does not state its exit code ("The exit code is N.")`)
					continue
				}
				c.exit, _ = strconv.Atoi(m[1])
				cmds = append(cmds, c)
			}
		}
	}
	for _, s := range skipped {
		for _, c := range s.commands {
			if !seen[c] {
				problems = append(problems, fmt.Sprintf("docSkipped lists %q, which no page shows any more", c))
			}
		}
	}
	return cmds, problems
}

// firstParagraph returns a text's first paragraph: up to its first blank
// line after some words.
func firstParagraph(text string) string {
	text = strings.TrimLeft(text, " \n")
	if i := strings.Index(text, "\n\n"); i >= 0 {
		return text[:i]
	}
	return text
}

// matches reports whether what a command printed is the output shown: the
// same bytes, or, in an abridged output, the same lines with each "..."
// line standing for one or more.
func (o *docOutput) matches(got string) bool {
	want := strings.Join(o.want, "")
	if !o.abridged {
		return got == want
	}
	return linesMatch(o.want, splitLines(got))
}

// splitLines splits a text after each line break; a last line without one
// is a line too.
func splitLines(text string) []string {
	lines := strings.SplitAfter(text, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}

// firstDiff says where the output shown first differs from what the
// command printed.
func (o *docOutput) firstDiff(page, got string) string {
	if o.abridged {
		return fmt.Sprintf("what it prints is not the abridged output of %s:%d-%d (each \"...\" one or more lines)", page, o.from, o.to-1)
	}
	g := splitLines(got)
	for i, w := range o.want {
		if i >= len(g) || g[i] != w {
			have := "nothing"
			if i < len(g) {
				have = fmt.Sprintf("%q", g[i])
			}
			return fmt.Sprintf("%s:%d shows %q, it prints %s", page, o.from+i, w, have)
		}
	}
	return fmt.Sprintf("%s:%d: the output goes on past the block's end, with %q", page, o.to, g[len(o.want)])
}

func linesMatch(want, got []string) bool {
	if len(want) == 0 {
		return len(got) == 0
	}
	if strings.TrimSpace(want[0]) != "..." {
		return len(got) > 0 && got[0] == want[0] && linesMatch(want[1:], got[1:])
	}
	for n := 1; n <= len(got); n++ {
		if linesMatch(want[1:], got[n:]) {
			return true
		}
	}
	return false
}

// run runs the command in-process and returns its stdout and stderr, with
// the temporary folder standing as /tmp again, and its exit code.
func (c docCommand) run(t *testing.T, tmp string) (stdout, stderr string, code int) {
	t.Helper()
	args := strings.Fields(c.text)[1:]
	var stdin io.Reader = strings.NewReader("")
	if n := len(args); n >= 2 && args[n-2] == "<" {
		b, err := os.ReadFile(inTmp(args[n-1], tmp))
		if err != nil {
			t.Fatalf("%s:%d: %v", c.page, c.line, err)
		}
		stdin, args = bytes.NewReader(b), args[:n-2]
	}
	for i, a := range args {
		args[i] = inTmp(a, tmp)
	}
	var out, errb bytes.Buffer
	code = Run(context.Background(), args, stdin, &out, &errb)
	back := strings.NewReplacer(tmp+string(filepath.Separator), "/tmp/")
	return back.Replace(out.String()), back.Replace(errb.String()), code
}

// inTmp maps a path under /tmp/ to the same path under tmp.
func inTmp(arg, tmp string) string {
	if rest, ok := strings.CutPrefix(arg, "/tmp/"); ok {
		return filepath.Join(tmp, filepath.FromSlash(rest))
	}
	return arg
}

// repoFiles lists the files of the repository, but .git's.
func repoFiles(t *testing.T, root string) map[string]bool {
	t.Helper()
	files := map[string]bool{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == ".git" {
			return filepath.SkipDir
		}
		if !d.IsDir() {
			rel, _ := filepath.Rel(root, path)
			files[filepath.ToSlash(rel)] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

func newFiles(before, after map[string]bool) []string {
	var added []string
	for f := range after {
		if !before[f] {
			added = append(added, f)
		}
	}
	sort.Strings(added)
	return added
}

// docUpdate is an output block to write again.
type docUpdate struct {
	from, to int
	text     string
}

// rewriteBlocks replaces the content lines of the blocks named.
func rewriteBlocks(path string, ups []docUpdate) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	lines := strings.SplitAfter(string(b), "\n")
	sort.Slice(ups, func(i, j int) bool { return ups[i].from > ups[j].from })
	for _, u := range ups {
		text := u.text
		if text != "" && !strings.HasSuffix(text, "\n") {
			text += "\n"
		}
		repl := strings.SplitAfter(text, "\n")
		repl = repl[:len(repl)-1]
		lines = append(lines[:u.from-1], append(repl, lines[u.to-1:]...)...)
	}
	return os.WriteFile(path, []byte(strings.Join(lines, "")), 0o644)
}

// TestDocumentedCommandsFindsEachKind reads a page of its own that holds
// one command of every kind the convention names, and each mistake it
// must report.
func TestDocumentedCommandsFindsEachKind(t *testing.T) {
	page := "# P\n\n" +
		"Runs, with its output:\n\n```\nspawngate check --policy p.yaml plan.yaml\n```\n\n```\nplan.yaml: PASS\n```\n\nThe exit code is 0.\n\n" + // 6, 10
		"Abridged:\n\n```sh\nspawngate hook codex --policy p.yaml \\\n  --agents-dir a < payload.json\n```\n\n```json\n{\n  ...\n}\n```\n\nIt exits 0, and the other one exits 2.\n\n" + // 18, 23
		"```\nspawngate version\n```\n\nThe exit code is 2.\n\n" + // 31
		"```\nspawngate rules [--policy FILE]\nspawngate version\n```\n\n" + // synopsis: nothing
		"```yaml\nrun: spawngate check x\n```\n\n" + // configuration: nothing
		"```\nspawngate check a.yaml\n```\n\n```\n...\n```\n\nThe exit code is 1.\n\n" + // 46, 50: ... not abridged
		"```\nspawngate check b.yaml\n```\n\nNo code here.\n\n" + // 56: no exit code
		"```sh\nspawngate check c.yaml > out.json\nspawngate check d.yaml\n```\n\n" + // 62, 63: neither
		"```\n$ spawngate doctor codex --project repo\nverdict: PASS\n```\n\n" + // skipped
		"```\nverdict: BLOCK, 1 of 1 child refused in 1 plan\n```\n" // 72: a report with no command
	skipped := []struct {
		reason   string
		commands []string
	}{
		{"a machine", []string{"$ spawngate doctor codex --project repo"}},
		{"gone", []string{"spawngate serve"}},
	}
	cmds, problems := documentedCommands([]docPage{{name: "p.md", text: page}}, skipped)
	var got []string
	for _, c := range cmds {
		s := fmt.Sprintf("%s:%d: %s exits %d", c.page, c.line, c.text, c.exit)
		if c.output != nil {
			s += fmt.Sprintf(", prints lines %d-%d", c.output.from, c.output.to-1)
			if c.output.abridged {
				s += " (abridged)"
			}
		}
		got = append(got, s)
	}
	want := []string{
		"p.md:6: spawngate check --policy p.yaml plan.yaml exits 0, prints lines 10-10",
		"p.md:18: spawngate hook codex --policy p.yaml --agents-dir a < payload.json exits 0, prints lines 23-25 (abridged)",
		"p.md:31: spawngate version exits 2",
		"p.md:46: spawngate check a.yaml exits 1, prints lines 50-50",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("commands:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	wantProblems := []string{
		`p.md:50: a line of "..." in the output of spawngate check a.yaml, whose page does not say it is abridged`,
		`p.md:56: spawngate check b.yaml: the paragraph after it does not state its exit code ("The exit code is N.")`,
		"p.md:62: spawngate check c.yaml > out.json: neither run nor skipped: give it a block of its own with plain words (and at most a last < FILE), or list it in docSkipped with the reason",
		"p.md:63: spawngate check d.yaml: neither run nor skipped: give it a block of its own with plain words (and at most a last < FILE), or list it in docSkipped with the reason",
		"p.md:72: a report with no command before it: show the command that prints it, in a block of its own right above",
		`docSkipped lists "spawngate serve", which no page shows any more`,
	}
	if strings.Join(problems, "\n") != strings.Join(wantProblems, "\n") {
		t.Errorf("problems:\n%s\nwant:\n%s", strings.Join(problems, "\n"), strings.Join(wantProblems, "\n"))
	}
}

func TestLinesMatch(t *testing.T) {

	for _, tc := range []struct {
		want, got string
		ok        bool
	}{
		{"a\nb\n", "a\nb\n", true},
		{"a\n...\nd\n", "a\nb\nc\nd\n", true},
		{"a\n  ...\nd\n", "a\nb\nd\n", true},
		{"a\n...\nd\n", "a\nd\n", false}, // "..." stands for one line at least
		{"...\nc\n...\n", "a\nb\nc\nd\n", true},
		{"a\n...\n", "a\n", false},
		{"a\nb\n", "a\nb\nc\n", false},
		{"a\nc\n", "a\nb\n", false},
	} {
		if got := linesMatch(splitLines(tc.want), splitLines(tc.got)); got != tc.ok {
			t.Errorf("linesMatch(%q, %q) = %v, want %v", tc.want, tc.got, got, tc.ok)
		}
	}
}
