package document

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"gopkg.in/yaml.v3"
)

// parseYAML reads exactly one YAML document into the same JSON-shaped value
// parseJSON gives, refusing whatever YAML parsers disagree on.
func parseYAML(ctx context.Context, source string, data []byte, lim Limits) (v any, err error) {
	return parseYAMLWith(ctx, source, data, lim, nil)
}

// parseYAMLWith is parseYAML, handing its walker to seen (for tests).
func parseYAMLWith(ctx context.Context, source string, data []byte, lim Limits, seen func(*yamlWalker)) (v any, err error) {
	defer func() {
		// yaml.v3 has panicked on hostile input before; a parser panic is
		// a document that cannot be read, never a crash of the gate.
		if r := recover(); r != nil {
			v, err = nil, &Error{Source: source, Msg: fmt.Sprintf("YAML parser failed: %v", r)}
		}
	}()
	if err := checkYAMLText(source, data); err != nil {
		return nil, err
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, &Error{Source: source, Msg: "empty document: nothing to check"}
		}
		return nil, yamlSyntaxError(source, data, err)
	}
	var next yaml.Node
	switch err := dec.Decode(&next); {
	case err == nil:
		return nil, &Error{Source: source, Line: next.Line, Column: next.Column, Msg: "more than one YAML document: a plan is one document"}
	case !errors.Is(err, io.EOF):
		return nil, yamlSyntaxError(source, data, err)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	w := &yamlWalker{source: source, lim: lim, text: newSourceText(data), ctx: ctx, anchors: map[*yaml.Node]*anchored{}}
	if seen != nil {
		seen(w)
	}
	return w.value(doc.Content[0])
}

// checkYAMLText refuses, before parsing, what YAML parsers split into lines
// differently: U+0085, U+2028 and U+2029 are line breaks to yaml.v3, libyaml
// and PyYAML and plain text to YAML 1.2 parsers, so a comment or a scalar
// ends in a different place for each; a lone CR is a line break to some and
// not to others. Directives (%YAML 1.1, %TAG) change how the rest is read.
func checkYAMLText(source string, data []byte) error {
	for i := 0; i < len(data); i++ {
		var what string
		switch {
		case data[i] == '\r' && (i+1 == len(data) || data[i+1] != '\n'):
			what = "a carriage return without a line feed"
		case data[i] == 0xC2 && i+1 < len(data) && data[i+1] == 0x85:
			what = "U+0085 NEXT LINE"
		case data[i] == 0xE2 && i+2 < len(data) && data[i+1] == 0x80 && (data[i+2] == 0xA8 || data[i+2] == 0xA9):
			what = map[byte]string{0xA8: "U+2028 LINE SEPARATOR", 0xA9: "U+2029 PARAGRAPH SEPARATOR"}[data[i+2]]
		case data[i] == '%' && (i == 0 || data[i-1] == '\n'):
			what = "a YAML directive (%YAML, %TAG)"
		default:
			continue
		}
		line, col := position(data, i)
		return &Error{Source: source, Line: line, Column: col, Msg: what + ": YAML parsers disagree on how it splits or reads the document"}
	}
	return nil
}

// sourceText gives the characters of a YAML document by line and column,
// to see the indicators yaml.v3 consumes without a trace in its nodes.
type sourceText struct {
	data  []byte
	lines []int          // offset of each line
	runes map[int][]rune // a line's characters, decoded when first asked for
	// looked counts the lines looked at beyond a node's own, so a test can
	// hold every pass over the source to the size of the document.
	looked int
}

func newSourceText(data []byte) *sourceText {
	t := &sourceText{data: data, lines: []int{0}, runes: map[int][]rune{}}
	for i, c := range data {
		if c == '\n' {
			t.lines = append(t.lines, i+1)
		}
	}
	return t
}

// line returns the characters of a 1-based line.
func (t *sourceText) line(n int) []rune {
	if n < 1 || n > len(t.lines) {
		return nil
	}
	if r, ok := t.runes[n]; ok {
		return r
	}
	end := len(t.data)
	if n < len(t.lines) {
		end = t.lines[n] - 1
	}
	r := []rune(string(t.data[t.lines[n-1]:end]))
	t.runes[n] = r
	return r
}

// tagged tells whether a node is written with a tag, including the
// non-specific "!" that yaml.v3 drops without marking the node. A tag may
// follow an anchor, also on a later line, after a comment.
func (t *sourceText) tagged(n *yaml.Node) bool {
	line, i := n.Line, n.Column-1
	text := t.line(line)
	if i < 0 || i >= len(text) {
		return false
	}
	if text[i] == '&' {
		for i < len(text) && text[i] != ' ' && text[i] != '\t' {
			i++
		}
		line, i = t.nextToken(line, i)
		text = t.line(line)
	}
	return i < len(text) && text[i] == '!'
}

// nextToken finds the next character that is not a space, a tab, a comment
// or a line break, from a position on a line.
func (t *sourceText) nextToken(line, i int) (int, int) {
	for line <= len(t.lines) {
		text := t.line(line)
		for i < len(text) && (text[i] == ' ' || text[i] == '\t' || text[i] == '\r') {
			i++
		}
		if i < len(text) && text[i] != '#' {
			return line, i
		}
		line, i = line+1, 0
		t.looked++
	}
	return line, 0
}

// explicitKey tells whether a key is written after the "?" indicator, which
// YAML parsers read differently in flow collections. The indicator may end
// an earlier line, before comments and blank lines.
func (t *sourceText) explicitKey(k *yaml.Node) bool {
	line, i := k.Line, k.Column-2
	for line >= 1 {
		text := t.line(line)
		if i >= len(text) {
			i = len(text) - 1
		}
		for i >= 0 && (text[i] == ' ' || text[i] == '\t' || text[i] == '\r') {
			i--
		}
		if i >= 0 {
			// An indicator starts a token: "?" after a space, a flow
			// indicator or nothing. "why?" is text.
			return text[i] == '?' && (i == 0 || strings.ContainsRune(" \t{[,", text[i-1]))
		}
		line--
		t.looked++
		i = commentStart(t.line(line)) - 1
	}
	return false
}

// commentStart is where a "#" comment starts on a line (a "#" at the start
// or after a space or tab), or the line's length. Quotes are not followed:
// a "#" inside quotes ends the search early, which only makes explicitKey
// look at less of the line.
func commentStart(text []rune) int {
	for i, r := range text {
		if r == '#' && (i == 0 || text[i-1] == ' ' || text[i-1] == '\t') {
			return i
		}
	}
	return len(text)
}

// startsWithItsFirstKey tells whether a block mapping begins where its first
// key does: then what is written there belongs to the key.
func startsWithItsFirstKey(n *yaml.Node) bool {
	return n.Kind == yaml.MappingNode && len(n.Content) > 0 &&
		n.Content[0].Line == n.Line && n.Content[0].Column == n.Column
}

var yamlLine = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// yamlParserProblems are the problems yaml.v3's parser (not its scanner)
// reports. For those it names the line, counted from 0 (none at all for
// the first), where the construct that holds the problem starts: a block
// mapping's first key, a flow sequence's '['. Its scanner errors name the
// problem's own line, counted from 1.
var yamlParserProblems = map[string]bool{
	"did not find expected ',' or ']'":       true,
	"did not find expected ',' or '}'":       true,
	"did not find expected '-' indicator":    true,
	"did not find expected <document start>": true,
	"did not find expected <stream-start>":   true,
	"did not find expected key":              true,
	"did not find expected node content":     true,
	"found duplicate %TAG directive":         true,
	"found duplicate %YAML directive":        true,
	"found incompatible YAML document":       true,
	"found undefined tag handle":             true,
}

// A block's problem (a key or an item out of place) is placed on its own
// line by parsing the document cut after a line: a cut fails the same way
// once it holds that line, and not before (a cut inside a block ends it
// cleanly), so a binary search over the cuts finds it in a few parses. A
// flow collection's problem (an unclosed '[' or '{') is where the parser
// says: the line that opens it.
func yamlSyntaxError(source string, data []byte, err error) error {
	msg := err.Error()
	line, problem := 0, trimYAMLPrefix(msg)
	if m := yamlLine.FindStringSubmatch(msg); m != nil {
		line, _ = strconv.Atoi(m[1])
		problem = m[2]
	}
	if !yamlParserProblems[problem] {
		return yamlScannerError(source, data, line, problem)
	}
	line++ // from 0
	e := &Error{Source: source, Line: line, Msg: problem}
	if last, end := position(data, len(data)); line > last {
		// yaml.v3 starts a new line at the end of a document that does
		// not end with one: the problem is at the end.
		e.Line, e.Column = last, end
		return e
	}
	if strings.HasPrefix(problem, "did not find expected key") || strings.HasPrefix(problem, "did not find expected '-'") ||
		strings.HasPrefix(problem, "did not find expected node content") {
		e.Line = problemLine(data, line, problem)
		if problem != "did not find expected node content" {
			// A token out of place in a block: where it starts.
			e.Column = firstColumn(data, e.Line)
		}
	}
	return e
}

// problemLine is the first line from start whose cut of the document fails
// with problem (start when the whole document does not).
func problemLine(data []byte, start int, problem string) int {
	// ends[i] is the offset just past line i+1.
	var ends []int
	for i, b := range data {
		if b == '\n' {
			ends = append(ends, i+1)
		}
	}
	if len(ends) == 0 || ends[len(ends)-1] != len(data) {
		ends = append(ends, len(data))
	}
	lo, hi := start, len(ends) // the answer lies in [lo, hi]
	if lo < 1 || lo > hi || !failsWith(data, problem) {
		return start
	}
	for lo < hi {
		mid := lo + (hi-lo)/2
		if failsWith(data[:ends[mid-1]], problem) {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return lo
}

// failsWith tells whether the documents of data fail to parse with
// problem.
func failsWith(data []byte, problem string) (fails bool) {
	defer func() {
		if recover() != nil {
			fails = false
		}
	}()
	dec := yaml.NewDecoder(bytes.NewReader(data))
	for {
		var n yaml.Node
		err := dec.Decode(&n)
		if err == nil {
			continue
		}
		return !errors.Is(err, io.EOF) && strings.HasSuffix(err.Error(), problem)
	}
}

// firstColumn is the column of the first character on line that is not a
// blank, 0 when there is none.
func firstColumn(data []byte, line int) int {
	lines := bytes.SplitN(data, []byte("\n"), line+1)
	if line < 1 || line > len(lines) {
		return 0
	}
	text := lines[line-1]
	if i := bytes.IndexFunc(text, func(r rune) bool { return r != ' ' && r != '\t' }); i >= 0 {
		return utf8.RuneCount(text[:i]) + 1
	}
	return 0
}

func trimYAMLPrefix(s string) string {
	const p = "yaml: "
	if len(s) >= len(p) && s[:len(p)] == p {
		return s[len(p):]
	}
	return s
}

type yamlWalker struct {
	source     string
	lim        Limits
	path       []segment
	depth      int
	deepest    int // the deepest level reached so far
	aliasNodes int // values produced by alias expansion so far
	aliasBytes int // bytes of strings and keys produced by alias expansion so far
	values     int // values produced so far
	bytes      int // bytes of strings and keys produced so far
	text       *sourceText
	ctx        context.Context
	// anchors holds every anchored value once it has been read, so that an
	// alias costs one lookup however large the value it names: each part
	// of the document is read, and its text looked at, exactly once.
	anchors map[*yaml.Node]*anchored
}

// anchored is an anchored value and what reading it cost, which every
// alias of it costs again against the limits.
type anchored struct {
	value  any
	values int // values it holds, nested alias expansions included
	bytes  int // bytes of strings and keys it holds
	height int // levels of nesting it adds
}

func (w *yamlWalker) fail(n *yaml.Node, format string, args ...any) error {
	return &Error{Source: w.source, Line: n.Line, Column: n.Column, Pointer: segmentsPointer(w.path), Msg: fmt.Sprintf(format, args...)}
}

// overLimit reports the document going over a limit at a node.
func (w *yamlWalker) overLimit(n *yaml.Node, limit, format string, args ...any) error {
	err := w.fail(n, format, args...).(*Error)
	err.Limit = limit
	return err
}

func (w *yamlWalker) value(n *yaml.Node) (any, error) {
	if n.Kind == yaml.AliasNode {
		return w.alias(n)
	}
	startValues, startBytes := w.values, w.bytes
	w.values++
	if w.values > w.lim.MaxValues {
		return nil, w.overLimit(n, "max-values", "more than %d values in the document", w.lim.MaxValues)
	}
	if w.values%checkEvery == 0 {
		if err := w.ctx.Err(); err != nil {
			return nil, err
		}
	}
	if n.Kind == yaml.ScalarNode {
		if len(n.Value) > w.lim.MaxStringBytes {
			return nil, w.overLimit(n, "max-string-bytes", "string longer than %d bytes", w.lim.MaxStringBytes)
		}
		w.bytes += len(n.Value)
	}
	if n.Style&yaml.TaggedStyle != 0 {
		return nil, w.fail(n, "YAML tag %s: tags are not supported, because parsers give them different meanings", showTag(n.Tag))
	}
	if !startsWithItsFirstKey(n) && w.text.tagged(n) {
		return nil, w.fail(n, "YAML tag !: tags are not supported, because parsers give them different meanings")
	}
	if n.Anchor == "" {
		return w.content(n)
	}
	// Read an anchored value once, and remember what it cost.
	deepest := w.deepest
	w.deepest = w.depth
	v, err := w.content(n)
	if err != nil {
		return nil, err
	}
	w.anchors[n] = &anchored{value: v, values: w.values - startValues, bytes: w.bytes - startBytes, height: w.deepest - w.depth}
	w.deepest = max(w.deepest, deepest)
	return v, nil
}

// alias expands an alias to the value its anchor names, which was read
// before it, and counts it against the limits as if it were written out:
// values, alias values and bytes, and nesting.
func (w *yamlWalker) alias(n *yaml.Node) (any, error) {
	a := w.anchors[n.Alias]
	if a == nil {
		// yaml.v3 refuses an alias to an anchor not yet complete, so this
		// cannot happen; if it did, the document is not one to judge.
		return nil, w.fail(n, "alias *%s is used inside the value it names", n.Value)
	}
	w.values += a.values
	w.aliasNodes += a.values
	w.aliasBytes += a.bytes
	w.bytes += a.bytes
	switch {
	case w.values > w.lim.MaxValues:
		return nil, w.overLimit(n, "max-values", "more than %d values in the document", w.lim.MaxValues)
	case w.aliasNodes > w.lim.MaxAliasNodes:
		return nil, w.overLimit(n, "max-alias-nodes", "aliases expand to more than %d values", w.lim.MaxAliasNodes)
	case w.aliasBytes > w.lim.MaxAliasBytes:
		return nil, w.overLimit(n, "max-alias-bytes", "aliases expand to more than %d bytes of text", w.lim.MaxAliasBytes)
	case w.depth+a.height > w.lim.MaxDepth:
		return nil, w.overLimit(n, "max-depth", "nested deeper than %d levels", w.lim.MaxDepth)
	}
	w.deepest = max(w.deepest, w.depth+a.height)
	return a.value, nil
}

// content reads a node that is not an alias.
func (w *yamlWalker) content(n *yaml.Node) (any, error) {
	switch n.Kind {
	case yaml.ScalarNode:
		return w.scalar(n)
	case yaml.MappingNode:
		return w.mapping(n)
	case yaml.SequenceNode:
		return w.sequence(n)
	default:
		return nil, w.fail(n, "unexpected YAML node")
	}
}

func (w *yamlWalker) enter(n *yaml.Node) error {
	w.depth++
	w.deepest = max(w.deepest, w.depth)
	if w.depth > w.lim.MaxDepth {
		return w.overLimit(n, "max-depth", "nested deeper than %d levels", w.lim.MaxDepth)
	}
	return nil
}

func (w *yamlWalker) mapping(n *yaml.Node) (any, error) {
	if err := w.enter(n); err != nil {
		return nil, err
	}
	obj := make(map[string]any, len(n.Content)/2)
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, val := n.Content[i], n.Content[i+1]
		key, err := w.key(k)
		if err != nil {
			return nil, err
		}
		if _, dup := obj[key]; dup {
			return nil, w.fail(k, "duplicate key %s: consumers disagree on which value wins", Quote(key))
		}
		w.path = append(w.path, segment{key: key, index: -1})
		v, err := w.value(val)
		if err != nil {
			return nil, err
		}
		w.path = w.path[:len(w.path)-1]
		obj[key] = v
	}
	w.depth--
	return obj, nil
}

// key reads a mapping key, which must be a string written as one.
func (w *yamlWalker) key(k *yaml.Node) (string, error) {
	switch {
	case len(k.Value) > w.lim.MaxStringBytes:
		return "", w.overLimit(k, "max-string-bytes", "key longer than %d bytes", w.lim.MaxStringBytes)
	case k.Kind == yaml.AliasNode:
		return "", w.fail(k, "alias *%s used as a key", k.Value)
	case k.Style&yaml.TaggedStyle != 0:
		return "", w.fail(k, "YAML tag %s on a key: tags are not supported", showTag(k.Tag))
	case w.text.tagged(k):
		return "", w.fail(k, "YAML tag ! on a key: tags are not supported")
	case k.Kind != yaml.ScalarNode:
		return "", w.fail(k, "a key must be a string, not a YAML %s", kindName(k.Kind))
	case k.ShortTag() == "!!merge":
		return "", w.fail(k, "merge key <<: parsers disagree on merges; write the keys out")
	case k.ShortTag() != "!!str":
		return "", w.fail(k, "key %s is read as %s, not a string: quote it", Quote(k.Value), tagName(k.ShortTag()))
	}
	if w.text.explicitKey(k) {
		return "", w.fail(k, "explicit key indicator ? before %s: parsers read it differently; write the key plainly", Quote(k.Value))
	}
	if isPlain(k) {
		if why := ambiguous(k.Value); why != "" {
			return "", w.fail(k, "key %s %s: quote it", Quote(k.Value), why)
		}
	}
	w.bytes += len(k.Value)
	if k.Anchor != "" {
		// A key may be anchored, and its alias used as a value.
		w.anchors[k] = &anchored{value: k.Value, values: 1, bytes: len(k.Value)}
	}
	return k.Value, nil
}

func (w *yamlWalker) sequence(n *yaml.Node) (any, error) {
	if err := w.enter(n); err != nil {
		return nil, err
	}
	arr := make([]any, len(n.Content))
	for i, item := range n.Content {
		w.path = append(w.path, segment{index: i})
		v, err := w.value(item)
		if err != nil {
			return nil, err
		}
		w.path = w.path[:len(w.path)-1]
		arr[i] = v
	}
	w.depth--
	return arr, nil
}

var (
	// A YAML integer the way JSON writes one. Hex, octal, binary, leading
	// zeros, underscores and a + sign are read differently by YAML 1.1 and
	// 1.2 parsers.
	decimalInteger = regexp.MustCompile(`^-?(0|[1-9][0-9]*)$`)
	// A YAML float the way JSON writes one. .5, 1., .inf and .nan are not.
	jsonNumber = regexp.MustCompile(`^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)?$`)
)

func (w *yamlWalker) scalar(n *yaml.Node) (any, error) {
	switch tag := n.ShortTag(); tag {
	case "!!str":
		if isPlain(n) {
			if why := ambiguous(n.Value); why != "" {
				return nil, w.fail(n, "unquoted %s %s: quote it", Quote(n.Value), why)
			}
		}
		return n.Value, nil
	case "!!int":
		if !decimalInteger.MatchString(n.Value) {
			return nil, w.fail(n, "integer %s is not written in plain decimal, and YAML versions read it differently: write it in decimal, or quote it", Quote(n.Value))
		}
		return checkNumber(n.Value, func(msg string) error { return w.fail(n, "%s", msg) })
	case "!!float":
		if !jsonNumber.MatchString(n.Value) {
			return nil, w.fail(n, "number %s is not written as JSON writes numbers, and YAML versions read it differently: write it as a JSON number, or quote it", Quote(n.Value))
		}
		return checkNumber(n.Value, func(msg string) error { return w.fail(n, "%s", msg) })
	case "!!bool":
		return n.Value == "true" || n.Value == "True" || n.Value == "TRUE", nil
	case "!!null":
		return nil, nil
	case "!!timestamp":
		return nil, w.fail(n, "unquoted date %s: YAML 1.1 parsers read it as a timestamp; quote it", Quote(n.Value))
	default:
		return nil, w.fail(n, "unsupported YAML type %s", tag)
	}
}

func isPlain(n *yaml.Node) bool {
	return n.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle|yaml.LiteralStyle|yaml.FoldedStyle) == 0
}

var (
	// Plain scalars that yaml.v3 reads as strings but a YAML 1.1 parser
	// (PyYAML, the most common one beside an orchestrator) reads as a
	// boolean, a number or a date, or that yaml.v3 gave up parsing as a
	// number (1e400).
	yaml11Bool   = regexp.MustCompile(`^(y|Y|yes|Yes|YES|n|N|no|No|NO|on|On|ON|off|Off|OFF)$`)
	yaml11Number = regexp.MustCompile(`^([-+]?0b[0-1_]+|[-+]?0[0-7_]+|[-+]?(0|[1-9][0-9_]*)|[-+]?0x[0-9a-fA-F_]+|[-+]?[1-9][0-9_]*(:[0-5]?[0-9])+|[-+]?[0-9][0-9_]*\.[0-9_]*([eE][-+][0-9]+)?|[-+]?\.[0-9][0-9_]*([eE][-+][0-9]+)?|[-+]?[0-9][0-9_]*(:[0-5]?[0-9])+\.[0-9_]*|[-+]?\.(inf|Inf|INF)|\.(nan|NaN|NAN)|[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?)$`)
	yaml11Date   = regexp.MustCompile(`^[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}([Tt ]|$)`)
)

// ambiguous says why a plain string could be read as something else, or ""
// when it cannot.
func ambiguous(s string) string {
	switch {
	case s == "":
		return ""
	case strings.HasSuffix(s, ":"):
		return "ends with ':', which other YAML parsers read as a mapping"
	case !strings.ContainsRune("-+.0123456789yYnNoO", rune(s[0])):
		// No boolean, number or date starts otherwise: skip the patterns,
		// which cost a third of reading a document of many keys.
		return ""
	case strings.HasSuffix(s, ":"):
		return "ends with ':', which other YAML parsers read as a mapping"
	case yaml11Bool.MatchString(s):
		return "is a boolean to YAML 1.1 parsers"
	case yaml11Number.MatchString(s):
		return "is a number to some YAML parsers"
	case yaml11Date.MatchString(s):
		return "is a timestamp to YAML 1.1 parsers"
	}
	return ""
}

// showTag shows a tag as written, unless it is long or holds characters a
// tag is rarely made of (a %-escape in a tag can decode to anything): then it
// is quoted and cut short, like any other text of the document.
func showTag(tag string) string {
	if len(tag) > 80 {
		return Quote(tag)
	}
	for i := 0; i < len(tag); i++ {
		if tag[i] <= ' ' || tag[i] >= 0x7F {
			return Quote(tag)
		}
	}
	return tag
}

func kindName(k yaml.Kind) string {
	switch k {
	case yaml.MappingNode:
		return "mapping"
	case yaml.SequenceNode:
		return "sequence"
	case yaml.AliasNode:
		return "alias"
	}
	return "node"
}

func tagName(tag string) string {
	switch tag {
	case "!!int", "!!float":
		return "a number"
	case "!!bool":
		return "a boolean"
	case "!!null":
		return "null"
	case "!!timestamp":
		return "a timestamp"
	}
	return tag
}
