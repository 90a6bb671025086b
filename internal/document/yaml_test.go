package document_test

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/spawngate/spawngate/internal/document"
)

func yamlOK(name, in string, want any) decodeCase {
	return decodeCase{name: name, in: in, syntax: document.YAML, want: want}
}

func yamlErr(name, in, err string) decodeCase {
	return decodeCase{name: name, in: in, syntax: document.YAML, err: err}
}

const (
	tagRefused = ": tags are not supported, because parsers give them different meanings"
	notDecimal = " is not written in plain decimal, and YAML versions read it differently: write it in decimal, or quote it"
	notJSONNum = " is not written as JSON writes numbers, and YAML versions read it differently: write it as a JSON number, or quote it"
)

var yamlCases = []decodeCase{
	// values
	yamlOK("mapping", "a: x\nb: [1, z]\nc: {d: true}\n", obj{"a": "x", "b": list{num("1"), "z"}, "c": obj{"d": true}}),
	yamlOK("sequence", "- 1\n- x\n", list{num("1"), "x"}),
	yamlOK("empty flow collections", "a: {}\nb: []\n", obj{"a": obj{}, "b": list{}}),
	yamlOK("JSON is YAML", `{"plan": [{"budget_tokens": 40000, "tools": ["fs.read"]}]}`,
		obj{"plan": list{obj{"budget_tokens": num("40000"), "tools": list{"fs.read"}}}}),
	yamlOK("explicit document markers", "---\na: 1\n...\n", obj{"a": num("1")}),
	yamlOK("comments around the document", "# head\na: 1 # line\n# foot\n", obj{"a": num("1")}),
	// Syntax errors on the line that holds the problem: yaml.v3's parser
	// counts from 0 and names the construct's start instead.
	yamlErr("an unclosed [ on line 3", "a: 1\nb: 2\nc: [x, y\nd: 4\n", "doc:3: did not find expected ',' or ']'"),
	yamlErr("an unclosed [ on the only line, without a break", "[a, b", "doc:1:6: did not find expected ',' or ']'"),
	yamlErr("an unclosed { on line 2", "a: 1\nb: {x: 1\n", "doc:2: did not find expected ',' or '}'"),
	yamlErr("a key indented short, line 3", "plan:\n  - role: a\n   tools: [fs.read]\n", "doc:3:4: did not find expected '-' indicator"),
	yamlErr("a key indented wrong deep in a mapping", "a:\n  b: 1\n  c: 2\n  d: 3\n e: 4\n", "doc:5:2: did not find expected key"),
	yamlErr("a mapping key after a nested item, line 4", "version: 1\nchildren:\n   - id: a\n  role: x\n", "doc:4:3: did not find expected key"),
	yamlErr("a block entry in a flow sequence", "plan: [\n  - role: r\n", "doc:2: did not find expected node content"),
	yamlErr("YAML directive", "%YAML 1.1\n---\na: 1\n", "doc:1:1: a YAML directive (%YAML, %TAG): YAML parsers disagree on how it splits or reads the document"),
	yamlErr("directive after a comment", "# c\n%YAML 1.2\n---\na: 1\n", "doc:2:1: a YAML directive (%YAML, %TAG): YAML parsers disagree on how it splits or reads the document"),
	yamlErr("U+2028 in a comment", "a: 1 # x\u2028b: 2\n", "doc:1:9: U+2028 LINE SEPARATOR: YAML parsers disagree on how it splits or reads the document"),
	yamlErr("U+2029 in a value", "a: x\u2029y\n", "doc:1:5: U+2029 PARAGRAPH SEPARATOR: YAML parsers disagree on how it splits or reads the document"),
	yamlErr("U+0085 in a quoted value", "a: \"x\u0085y\"\n", "doc:1:6: U+0085 NEXT LINE: YAML parsers disagree on how it splits or reads the document"),
	yamlErr("a lone carriage return", "a: 1\rb: 2\n", "doc:1:5: a carriage return without a line feed: YAML parsers disagree on how it splits or reads the document"),
	yamlOK("CRLF line ends", "a: 1\r\nb: 2\r\n", obj{"a": num("1"), "b": num("2")}),
	yamlErr("non-specific tag", "a: ! 40000\n", "doc:1:4: /a: YAML tag !: tags are not supported, because parsers give them different meanings"),
	yamlErr("non-specific tag after an anchor", "a: &x ! 40000\n", "doc:1:4: /a: YAML tag !: tags are not supported, because parsers give them different meanings"),
	yamlErr("non-specific tag on a key", "! k: 1\n", "doc:1:1: YAML tag ! on a key: tags are not supported"),
	yamlErr("explicit key in a flow mapping", "{a: 1, ?b: 2}\n", "doc:1:9: explicit key indicator ? before \"b\": parsers read it differently; write the key plainly"),
	yamlErr("explicit block key", "? a\n: 1\n", "doc:1:3: explicit key indicator ? before \"a\": parsers read it differently; write the key plainly"),
	yamlErr("plain scalar ending in a colon", "t: [fs.read, fs.write:]\n", "doc:1:14: /t/1: unquoted \"fs.write:\" ends with ':', which other YAML parsers read as a mapping: quote it"),
	yamlOK("quoted scalar ending in a colon", "t: ['fs.write:']\n", obj{"t": list{"fs.write:"}}),
	yamlOK("a question mark inside a value", "a: why?\nb: x ? y\n", obj{"a": "why?", "b": "x ? y"}),
	yamlOK("an anchored plain value", "a: &x 5\nb: *x\n", obj{"a": num("5"), "b": num("5")}),
	yamlOK("null document", "---\n", nil),
	yamlOK("non-ASCII text", "é: 😀\n", obj{"é": "😀"}),
	yamlOK("quoted merge key is a plain key", "'<<': 1\n", obj{"<<": num("1")}),
	yamlOK("quoted keys", "'yes': 1\n\"1\": 2\n\"null\": 3\n'2001-12-14': 4\n",
		obj{"yes": num("1"), "1": num("2"), "null": num("3"), "2001-12-14": num("4")}),
	yamlErr("block scalar key", "? |\n  k\n: v\n", "doc:1:3: explicit key indicator ? before \"k\\n\": parsers read it differently; write the key plainly"),
	yamlOK("literal block is a string", "a: |\n  yes\n", obj{"a": "yes\n"}),
	yamlOK("folded block is a string", "a: >-\n  on\n", obj{"a": "on"}),
	yamlOK("plain strings that are not ambiguous", "- yess\n- 1.2.3\n- x1\n- 1a\n- 0xZZ\n- tRUE\n- nO\n- =\n- 'y'\n",
		list{"yess", "1.2.3", "x1", "1a", "0xZZ", "tRUE", "nO", "=", "y"}),
	yamlOK("long plain string", "a: 1"+strings.Repeat(" x1", 40)+"\n", obj{"a": "1" + strings.Repeat(" x1", 40)}),

	// numbers in JSON form keep their literal
	yamlOK("integers", "[0, -0, 12, -12, 40000]", list{num("0"), num("-0"), num("12"), num("-12"), num("40000")}),
	yamlOK("floats", "[1.0, 3.10, 0.5, -0.0, 4e4, 1E5, 1.5e3, 12e+03, 1e-400]",
		list{num("1.0"), num("3.10"), num("0.5"), num("-0.0"), num("4e4"), num("1E5"), num("1.5e3"), num("12e+03"), num("1e-400")}),
	yamlOK("integer beyond int64 keeps its digits", "a: 99999999999999999999\n", obj{"a": num("99999999999999999999")}),
	yamlOK("budget as a decimal", "budget_tokens: 40000\n", obj{"budget_tokens": num("40000")}),

	// booleans and nulls
	yamlOK("booleans", "[true, True, TRUE, false, False, FALSE]", list{true, true, true, false, false, false}),
	yamlOK("nulls", "a: ~\nb: null\nc: Null\nd: NULL\ne:\n", obj{"a": nil, "b": nil, "c": nil, "d": nil, "e": nil}),

	// the quoted forms of ambiguous scalars are strings
	yamlOK("quoted ambiguous scalars", `["yes", 'no', "on", 'off', "y", "n", "0x10", "010", "0o17", "0b101", "1_000", "+12", "1:20", ".inf", ".nan", ".5", "1.", "1e400", "2001-12-14", "true", "null", "~", "1"]`,
		list{"yes", "no", "on", "off", "y", "n", "0x10", "010", "0o17", "0b101", "1_000", "+12", "1:20", ".inf", ".nan", ".5", "1.", "1e400", "2001-12-14", "true", "null", "~", "1"}),

	// anchors and aliases
	yamlOK("alias of a mapping", "a: &x {k: [1, 2]}\nb: *x\n", obj{"a": obj{"k": list{num("1"), num("2")}}, "b": obj{"k": list{num("1"), num("2")}}}),
	yamlOK("alias of a scalar", "a: &s hello\nb: *s\nc: [*s]\n", obj{"a": "hello", "b": "hello", "c": list{"hello"}}),
	yamlOK("anchor on a key", "&k a: 1\n", obj{"a": num("1")}),
	yamlOK("anchor redefined", "a: &x 1\nb: *x\nc: &x 2\nd: *x\n", obj{"a": num("1"), "b": num("1"), "c": num("2"), "d": num("2")}),
	{name: "aliases at the limit", in: "a: &x [1, 2]\nb: *x\n", syntax: document.YAML, lim: limits(1<<10, 8, 3),
		want: obj{"a": list{num("1"), num("2")}, "b": list{num("1"), num("2")}}},
	{name: "aliases over the limit", in: "a: &x [1, 2]\nb: *x\nc: *x\n", syntax: document.YAML, lim: limits(1<<10, 8, 3),
		err: "doc:3:4: /c: aliases expand to more than 3 values (limit max-alias-nodes)"},
	{name: "aliases over the limit inside the expansion", in: "a: &x\n  k: [1, 2]\nb: *x\n", syntax: document.YAML, lim: limits(1<<10, 8, 3),
		err: "doc:3:4: /b: aliases expand to more than 3 values (limit max-alias-nodes)"},
	{name: "aliases count over the whole document", in: "s: &s x\nl: [*s, *s, *s, *s]\n", syntax: document.YAML, lim: limits(1<<10, 8, 3),
		err: "doc:2:17: /l/3: aliases expand to more than 3 values (limit max-alias-nodes)"},
	yamlErr("alias of itself", "a: &a [*a]\n", "doc:1:8: /a/0: alias *a is used inside the value it names"),
	yamlErr("alias inside what it names, deeper", "a: &a {b: [1, {c: *a}]}\n", "doc:1:19: /a/b/1/c: alias *a is used inside the value it names"),
	{name: "alias bytes at the limit", in: "a: &x [abc, de]\nb: *x\n", syntax: document.YAML, lim: aliasBytes(5),
		want: obj{"a": list{"abc", "de"}, "b": list{"abc", "de"}}},
	{name: "alias bytes over the limit", in: "a: &x [abc, de]\nb: *x\nc: *x\n", syntax: document.YAML, lim: aliasBytes(5),
		err: "doc:3:4: /c: aliases expand to more than 5 bytes of text (limit max-alias-bytes)"},
	{name: "alias bytes count keys", in: "a: &x {key: v}\nb: *x\n", syntax: document.YAML, lim: aliasBytes(3),
		err: "doc:2:4: /b: aliases expand to more than 3 bytes of text (limit max-alias-bytes)"},
	{name: "alias bytes count nested aliases", in: "s: &s abcd\nl: &l [*s, *s]\nm: *l\n", syntax: document.YAML, lim: aliasBytes(15),
		err: "doc:3:4: /m: aliases expand to more than 15 bytes of text (limit max-alias-bytes)"},
	yamlOK("alias of an anchored key", "{&k a: 1, b: *k}", obj{"a": num("1"), "b": "a"}),
	yamlErr("undefined alias", "a: *nope\n", "doc: YAML: unknown anchor 'nope' referenced"),

	// depth
	{name: "mapping at the depth limit", in: "a:\n  b: 1\n", syntax: document.YAML, lim: limits(1<<10, 2, 10),
		want: obj{"a": obj{"b": num("1")}}},
	{name: "mapping over the depth limit", in: "a:\n  b:\n    c: 1\n", syntax: document.YAML, lim: limits(1<<10, 2, 10),
		err: "doc:3:5: /a/b: nested deeper than 2 levels (limit max-depth)"},
	{name: "sequence over the depth limit", in: "[[[1]]]", syntax: document.YAML, lim: limits(1<<10, 2, 10),
		err: "doc:1:3: /0/0: nested deeper than 2 levels (limit max-depth)"},
	{name: "depth through an alias", in: "a: &x [[1]]\nb: [*x]\n", syntax: document.YAML, lim: limits(1<<10, 3, 10),
		err: "doc:2:5: /b/0: nested deeper than 3 levels (limit max-depth)"},
	yamlErr("default depth limit", strings.Repeat("[", 65)+strings.Repeat("]", 65),
		"doc:1:65: "+strings.Repeat("/0", 64)+": nested deeper than 64 levels (limit max-depth)"),

	// several documents
	yamlErr("two documents", "a: 1\n---\nb: 2\n", "doc:2:1: more than one YAML document: a plan is one document"),
	yamlErr("empty second document", "---\na: 1\n---\n", "doc:3:1: more than one YAML document: a plan is one document"),
	yamlErr("second document on the marker line", "a: 1\n--- b\n", "doc:2:1: more than one YAML document: a plan is one document"),

	// tags
	yamlErr("str tag", "a: !!str x\n", "doc:1:4: /a: YAML tag !!str"+tagRefused),
	yamlErr("str tag on a number", "a: !!str 12\n", "doc:1:4: /a: YAML tag !!str"+tagRefused),
	yamlErr("binary tag", "a: !!binary aGk=\n", "doc:1:4: /a: YAML tag !!binary"+tagRefused),
	yamlErr("custom tag", "plan:\n  - !custom x\n", "doc:2:5: /plan/0: YAML tag !custom"+tagRefused),
	yamlErr("tag on a mapping", "a: !!map {b: 1}\n", "doc:1:4: /a: YAML tag !!map"+tagRefused),
	yamlErr("tag on a sequence", "a: !!seq [1]\n", "doc:1:4: /a: YAML tag !!seq"+tagRefused),
	yamlErr("tag on the document", "!!map\na: 1\n", "doc:1:1: YAML tag !!map"+tagRefused),
	yamlErr("verbatim tag", "a: !<tag:yaml.org,2002:str> x\n", "doc:1:4: /a: YAML tag !!str"+tagRefused),
	yamlErr("tag from a directive", "%TAG ! tag:x,2000:\n---\na: !foo b\n", "doc:1:1: a YAML directive (%YAML, %TAG): YAML parsers disagree on how it splits or reads the document"),
	yamlErr("tag with escaped control characters is quoted", "a: !<tag:%0A%1B> x\n", `doc:1:4: /a: YAML tag "tag:\n\x1b"`+tagRefused),
	yamlErr("long tag is cut short", "a: !<tag:"+strings.Repeat("x", 100)+"> x\n", `doc:1:4: /a: YAML tag "tag:`+strings.Repeat("x", 76)+`"...`+tagRefused),
	yamlErr("tag on a key", "!!str a: 1\n", "doc:1:1: YAML tag !!str on a key: tags are not supported"),
	yamlErr("custom tag on a nested key", "a:\n  !k b: 1\n", "doc:2:3: /a: YAML tag !k on a key: tags are not supported"),
	yamlErr("tag on an explicit key", "? !!str\n: 1\n", "doc:1:3: YAML tag !!str on a key: tags are not supported"),

	// keys
	yamlErr("merge key", "base: &b {x: 1}\nc:\n  <<: *b\n", "doc:3:3: /c: merge key <<: parsers disagree on merges; write the keys out"),
	yamlErr("merge key with a list", "<<: [{a: 1}]\n", "doc:1:1: merge key <<: parsers disagree on merges; write the keys out"),
	yamlErr("merge marker as a value", "a: <<\n", "doc:1:4: /a: unsupported YAML type !!merge"),
	yamlErr("alias as a key", "a: &x k\n*x : 2\n", "doc:2:1: alias *x used as a key"),
	yamlErr("integer key", "1: a\n", `doc:1:1: key "1" is read as a number, not a string: quote it`),
	yamlErr("float key", "x:\n  1.5: a\n", `doc:2:3: /x: key "1.5" is read as a number, not a string: quote it`),
	yamlErr("hex key", "0x10: a\n", `doc:1:1: key "0x10" is read as a number, not a string: quote it`),
	yamlErr("underscore key", "1_000: a\n", `doc:1:1: key "1_000" is read as a number, not a string: quote it`),
	yamlErr("boolean key", "true: a\n", `doc:1:1: key "true" is read as a boolean, not a string: quote it`),
	yamlErr("null key", "null: a\n", `doc:1:1: key "null" is read as null, not a string: quote it`),
	yamlErr("tilde key", "~: a\n", `doc:1:1: key "~" is read as null, not a string: quote it`),
	yamlErr("empty key", "? \n: v\n", `doc:1:2: key "" is read as null, not a string: quote it`),
	yamlErr("date key", "2001-12-14: a\n", `doc:1:1: key "2001-12-14" is read as a timestamp, not a string: quote it`),
	yamlErr("YAML 1.1 boolean key", "yes: a\n", `doc:1:1: key "yes" is a boolean to YAML 1.1 parsers: quote it`),
	yamlErr("YAML 1.1 boolean key on", "- On: a\n", `doc:1:3: /0: key "On" is a boolean to YAML 1.1 parsers: quote it`),
	yamlErr("YAML 1.1 sexagesimal key", "1:20: a\n", `doc:1:1: key "1:20" is a number to some YAML parsers: quote it`),
	yamlErr("sequence key", "[a]: b\n", "doc:1:1: a key must be a string, not a YAML sequence"),
	yamlErr("explicit sequence key", "? [a]\n: b\n", "doc:1:3: a key must be a string, not a YAML sequence"),
	yamlErr("mapping key", "{a: 1}: b\n", "doc:1:1: a key must be a string, not a YAML mapping"),

	// duplicate keys
	yamlErr("duplicate key", "a: 1\na: 2\n", `doc:2:1: duplicate key "a": consumers disagree on which value wins`),
	yamlErr("duplicate key quoted differently", "a: 1\n'a': 2\n", `doc:2:1: duplicate key "a": consumers disagree on which value wins`),
	yamlErr("duplicate key nested", "x:\n  a: 1\n  a: 2\n", `doc:3:3: /x: duplicate key "a": consumers disagree on which value wins`),
	yamlErr("duplicate key in a list", "- a: 1\n  a: 2\n", `doc:2:3: /0: duplicate key "a": consumers disagree on which value wins`),
	yamlErr("duplicate key in a flow mapping", "{a: 1, a: 2}\n", `doc:1:8: duplicate key "a": consumers disagree on which value wins`),
	yamlErr("duplicate key after multi-byte characters", "é: 1\nx: {😀: 1, 😀: 2}\n", `doc:2:11: /x: duplicate key "😀": consumers disagree on which value wins`),

	// syntax errors: at the character, where yaml.v3 gives only a line
	yamlErr("a scanner error at its character", "a: 1\nb: c: d\n", "doc:2:5: mapping values are not allowed in this context"),
	yamlErr("character that cannot start a token", "a:\n  b: @\n", `doc:2:6: "@" cannot start unquoted text: YAML reserves it; quote the text`),
	yamlErr("backquote on the first line", "a: `x`\n", "doc:1:4: \"`\" cannot start unquoted text: YAML reserves it; quote the text"),
	yamlErr("percent sign starting a value", "a: %x\n", `doc:1:4: "%" cannot start unquoted text: YAML reserves it; quote the text`),
	yamlOK("reserved characters inside text", "a: x@y`%\nb: 'q@'\n# @\n", obj{"a": "x@y`%", "b": "q@"}),
	yamlErr("reserved character after text that holds one", "a: x@y\nb: [c, @d]\n", `doc:2:8: "@" cannot start unquoted text: YAML reserves it; quote the text`),
	yamlErr("reserved character after multi-byte characters", "é😀: {k: @}\n", `doc:1:9: "@" cannot start unquoted text: YAML reserves it; quote the text`),
	yamlErr("reserved character, CRLF line ends", "a: 1\r\nb: @\r\n", `doc:2:4: "@" cannot start unquoted text: YAML reserves it; quote the text`),
	yamlErr("unterminated quote", "a: 'x\n", "doc:1:4: a quoted string opens here and is never closed"),
	yamlErr("unterminated double quote after closed ones", "a: \"x\"\nb: 'y'\nc: \"it's \\\"z\\\"\n", "doc:3:4: a quoted string opens here and is never closed"),
	yamlErr("unterminated single quote holding quotes", "a: \"x\"\nb: 'it''s \"z\"\nc: d\n", "doc:2:4: a quoted string opens here and is never closed"),
	yamlErr("unterminated quote after multi-byte characters", "é: [😀, 'x]\n", "doc:1:8: a quoted string opens here and is never closed"),
	yamlErr("unterminated quote, CRLF line ends", "a: 1\r\nb: \"x\r\n", "doc:2:4: a quoted string opens here and is never closed"),
	yamlErr("bad indentation", "a: 1\n b: 2\n", "doc:2:3: mapping values are not allowed in this context"),
	yamlErr("value indicator after a colon inside text", "a: b::c y: z\n", "doc:1:10: mapping values are not allowed in this context"),
	yamlErr("unknown escape", `a: "\q"`, `doc:1:5: unknown escape \q in a double-quoted string`),
	yamlErr("unknown escape after valid ones", `a: "\"\\\t\x41é\é"`, `doc:1:16: unknown escape \é in a double-quoted string`),
	yamlErr("unknown escape on a later line of its string", "a: \"x\n  y \\q\"\n", `doc:2:5: unknown escape \q in a double-quoted string`),
	yamlOK("backslashes outside double quotes", "a: C:\\q\nb: 'C:\\q'\n# \\q\n", obj{"a": `C:\q`, "b": `C:\q`}),

	// tabs: refused where yaml.v3 refuses them, at the tab
	yamlErr("tab indentation on the first line", "\t- a\n", "doc:1:1: a tab indents this line: YAML indents with spaces"),
	yamlErr("tab indentation", "a:\n\tb: 1\n", "doc:2:1: a tab indents this line: YAML indents with spaces"),
	yamlErr("tab after spaces of indentation", "a:\n  \tb: 1\n", "doc:2:3: a tab indents this line: YAML indents with spaces"),
	yamlErr("tab indentation after multi-byte characters", "é: 😀\n\tb: 1\n", "doc:2:1: a tab indents this line: YAML indents with spaces"),
	yamlErr("tab indentation, CRLF line ends", "a:\r\n\tb: 1\r\n", "doc:2:1: a tab indents this line: YAML indents with spaces"),
	yamlErr("tab indenting a continued plain scalar", "a: b\n\tc\n", "doc:2:1: a tab indents this line: YAML indents with spaces"),
	yamlErr("tab indenting a block scalar", "a: |\n  x\n\ty\n", "doc:3:1: a tab indents this line: YAML indents with spaces"),
	yamlErr("tab after a block entry", "- a\n-\tb\n", "doc:2:2: a tab where YAML wants a space: a tab after an indicator indents what follows, and YAML indents with spaces"),
	yamlOK("tab inside a quoted string", "a: 'x\ty'\nb: \"\t\"\n", obj{"a": "x\ty", "b": "\t"}),
	yamlOK("tab after a value indicator", "a:\tb\n", obj{"a": "b"}),
	yamlOK("tab before a comment", "a: b\t# c\n", obj{"a": "b"}),
	yamlOK("tab inside text", "a: x \ty\n", obj{"a": "x \ty"}),
	yamlOK("tab in a flow sequence", "a: [\tb,\tc]\n", obj{"a": list{"b", "c"}}),
	yamlOK("tab on a blank line", "a: b\n  \t  \nc: d\n", obj{"a": "b", "c": "d"}),
}

// ambiguousScalars are plain scalars YAML 1.1 and 1.2 parsers read
// differently; each is refused as a value with the message given.
var ambiguousScalars = []struct{ in, msg string }{
	{"y", `unquoted "y" is a boolean to YAML 1.1 parsers: quote it`},
	{"Y", `unquoted "Y" is a boolean to YAML 1.1 parsers: quote it`},
	{"yes", `unquoted "yes" is a boolean to YAML 1.1 parsers: quote it`},
	{"Yes", `unquoted "Yes" is a boolean to YAML 1.1 parsers: quote it`},
	{"YES", `unquoted "YES" is a boolean to YAML 1.1 parsers: quote it`},
	{"n", `unquoted "n" is a boolean to YAML 1.1 parsers: quote it`},
	{"N", `unquoted "N" is a boolean to YAML 1.1 parsers: quote it`},
	{"no", `unquoted "no" is a boolean to YAML 1.1 parsers: quote it`},
	{"No", `unquoted "No" is a boolean to YAML 1.1 parsers: quote it`},
	{"NO", `unquoted "NO" is a boolean to YAML 1.1 parsers: quote it`},
	{"on", `unquoted "on" is a boolean to YAML 1.1 parsers: quote it`},
	{"On", `unquoted "On" is a boolean to YAML 1.1 parsers: quote it`},
	{"ON", `unquoted "ON" is a boolean to YAML 1.1 parsers: quote it`},
	{"off", `unquoted "off" is a boolean to YAML 1.1 parsers: quote it`},
	{"Off", `unquoted "Off" is a boolean to YAML 1.1 parsers: quote it`},
	{"OFF", `unquoted "OFF" is a boolean to YAML 1.1 parsers: quote it`},
	{"0x10", `integer "0x10"` + notDecimal},
	{"0X10", `integer "0X10"` + notDecimal},
	{"-0x1F", `integer "-0x1F"` + notDecimal},
	{"010", `integer "010"` + notDecimal},
	{"-010", `integer "-010"` + notDecimal},
	{"00", `integer "00"` + notDecimal},
	{"0o17", `integer "0o17"` + notDecimal},
	{"0b101", `integer "0b101"` + notDecimal},
	{"-0b101", `integer "-0b101"` + notDecimal},
	{"1_000", `integer "1_000"` + notDecimal},
	{"+12", `integer "+12"` + notDecimal},
	{"+0", `integer "+0"` + notDecimal},
	{".inf", `number ".inf"` + notJSONNum},
	{".Inf", `number ".Inf"` + notJSONNum},
	{".INF", `number ".INF"` + notJSONNum},
	{"-.inf", `number "-.inf"` + notJSONNum},
	{"+.inf", `number "+.inf"` + notJSONNum},
	{".nan", `number ".nan"` + notJSONNum},
	{".NaN", `number ".NaN"` + notJSONNum},
	{".NAN", `number ".NAN"` + notJSONNum},
	{".5", `number ".5"` + notJSONNum},
	{"-.5", `number "-.5"` + notJSONNum},
	{"1.", `number "1."` + notJSONNum},
	{"+1.5", `number "+1.5"` + notJSONNum},
	{"+1e5", `number "+1e5"` + notJSONNum},
	{"1.e5", `number "1.e5"` + notJSONNum},
	{"1_000.5", `number "1_000.5"` + notJSONNum},
	{"1:20", `unquoted "1:20" is a number to some YAML parsers: quote it`},
	{"-1:20", `unquoted "-1:20" is a number to some YAML parsers: quote it`},
	{"190:20:30.15", `unquoted "190:20:30.15" is a number to some YAML parsers: quote it`},
	{"1e400", `unquoted "1e400" is a number to some YAML parsers: quote it`},
	{"-1e400", `unquoted "-1e400" is a number to some YAML parsers: quote it`},
	{"2001-12-14", `unquoted date "2001-12-14": YAML 1.1 parsers read it as a timestamp; quote it`},
	{"2002-1-1", `unquoted date "2002-1-1": YAML 1.1 parsers read it as a timestamp; quote it`},
	{"2001-12-14t21:59:43.10-05:00", `unquoted date "2001-12-14t21:59:43.10-05:00": YAML 1.1 parsers read it as a timestamp; quote it`},
	{"2001-12-14T21:59:43Z", `unquoted date "2001-12-14T21:59:43Z": YAML 1.1 parsers read it as a timestamp; quote it`},
	{"2001-12-14 21:59:43.10 -5", `unquoted "2001-12-14 21:59:43.10 -5" is a timestamp to YAML 1.1 parsers: quote it`},
	// long ones too: a YAML 1.1 parser reads each of these as a number or a date
	{"0x" + strings.Repeat("f", 41), `unquoted "0x` + strings.Repeat("f", 41) + `" is a number to some YAML parsers: quote it`},
	{"0b" + strings.Repeat("1", 70), `unquoted "0b` + strings.Repeat("1", 70) + `" is a number to some YAML parsers: quote it`},
	{strings.Repeat("1", 41) + ":00", `unquoted "` + strings.Repeat("1", 41) + `:00" is a number to some YAML parsers: quote it`},
	{"1" + strings.Repeat(":00", 14), `unquoted "1` + strings.Repeat(":00", 14) + `" is a number to some YAML parsers: quote it`},
	{"2001-12-14 21:59:43." + strings.Repeat("1", 30) + " -5", `unquoted "2001-12-14 21:59:43.` + strings.Repeat("1", 30) + ` -5" is a timestamp to YAML 1.1 parsers: quote it`},
}

func init() {
	for _, a := range ambiguousScalars {
		yamlCases = append(yamlCases,
			yamlErr("plain "+a.in, "a: "+a.in+"\n", "doc:1:4: /a: "+a.msg),
			yamlErr("plain "+a.in+" in a list", "a:\n  - ok\n  - "+a.in+"\n", "doc:3:5: /a/1: "+a.msg),
			yamlOK("double-quoted "+a.in, "a: \""+a.in+"\"\n", obj{"a": a.in}),
			yamlOK("single-quoted "+a.in, "a: '"+a.in+"'\n", obj{"a": a.in}),
		)
	}
}

func TestDecodeYAML(t *testing.T) {
	runDecodeCases(t, yamlCases)
}

// billionLaughs is the classic alias bomb: ten levels, each nine aliases of
// the one before, 9^9 strings once expanded.
func billionLaughs() string {
	var b strings.Builder
	b.WriteString(`a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]` + "\n")
	for c := 'b'; c <= 'j'; c++ {
		prev := "*" + string(c-1)
		fmt.Fprintf(&b, "%c: &%c [%s]\n", c, c, strings.Repeat(prev+",", 8)+prev)
	}
	return b.String()
}

// TestYAMLProblemFarFromItsBlock: a key out of place thousands of lines
// into a mapping is reported on its own line, not the mapping's first.
func TestYAMLProblemFarFromItsBlock(t *testing.T) {
	var b strings.Builder
	b.WriteString("top:\n")
	for i := range 5000 {
		fmt.Fprintf(&b, "  k%d: %d\n", i, i)
	}
	b.WriteString(" bad: 1\nlast: 2\n")
	_, err := document.Decode(context.Background(), "doc", []byte(b.String()), document.YAML, document.DefaultLimits)
	if err == nil || err.Error() != "doc:5002:2: did not find expected key" {
		t.Fatalf("err = %v", err)
	}
}

func TestDecodeYAMLBillionLaughs(t *testing.T) {
	in := []byte(billionLaughs())
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := document.Decode(context.Background(), src, in, document.YAML, document.DefaultLimits)
	runtime.ReadMemStats(&after)

	const want = ": aliases expand to more than 10000 values (limit max-alias-nodes)"
	if err == nil || !strings.HasPrefix(err.Error(), "doc:") || !strings.HasSuffix(err.Error(), want) {
		t.Fatalf("Decode(billion laughs) error\n got %v\nwant doc:...%s", err, want)
	}
	if used := after.TotalAlloc - before.TotalAlloc; used > 32<<20 {
		t.Errorf("Decode(billion laughs) allocated %d MiB before failing, want under 32 MiB", used>>20)
	}
}
