package document_test

import (
	"strings"
	"testing"

	"github.com/spawngate/spawngate/internal/document"
)

// notAValue is the end of the message for a character no JSON value starts with.
const notAValue = `: a JSON value starts with {, [, ", a digit, -, true, false or null`

func jsonOK(name, in string, want any) decodeCase {
	return decodeCase{name: name, in: in, syntax: document.JSON, want: want}
}

func jsonErr(name, in, err string) decodeCase {
	return decodeCase{name: name, in: in, syntax: document.JSON, err: err}
}

var jsonCases = []decodeCase{
	// values
	jsonOK("empty object", `{}`, obj{}),
	jsonOK("empty array", `[]`, list{}),
	jsonOK("surrounding whitespace", " \t\r\n{ \"a\" : 1 }\r\n\t ", obj{"a": num("1")}),
	jsonOK("string", `"x"`, "x"),
	jsonOK("true", `true`, true),
	jsonOK("false", `false`, false),
	jsonOK("null", `null`, nil),
	jsonOK("nested", `{"a":[1,{"b":null}],"c":{"d":[true,false,""]},"":{}}`,
		obj{"a": list{num("1"), obj{"b": nil}}, "c": obj{"d": list{true, false, ""}}, "": obj{}}),
	jsonOK("empty key", `{"":1}`, obj{"": num("1")}),

	// numbers keep their literal text
	jsonOK("exponent stays as written", `4e4`, num("4e4")),
	jsonOK("fraction stays as written", `40000.0`, num("40000.0")),
	jsonOK("minus zero", `-0`, num("-0")),
	jsonOK("zero fraction", `0.5`, num("0.5")),
	jsonOK("signed exponent", `[1E+2, -1.5e-3, 2E-0]`, list{num("1E+2"), num("-1.5e-3"), num("2E-0")}),
	jsonOK("huge integer keeps its digits", `123456789012345678901234567890`, num("123456789012345678901234567890")),
	jsonOK("beyond int64 in a budget", `{"budget_tokens": 9223372036854775808}`, obj{"budget_tokens": num("9223372036854775808")}),
	jsonOK("largest float64", `1.7976931348623157e308`, num("1.7976931348623157e308")),
	jsonOK("underflow is not overflow", `1e-400`, num("1e-400")),
	jsonOK("64-character number", "1"+strings.Repeat("0", 63), num("1"+strings.Repeat("0", 63))),

	// strings
	jsonOK("simple escapes", `"\"\\\/\b\f\n\r\t"`, "\"\\/\b\f\n\r\t"),
	jsonOK("escapes between text", `"a\nb\tc"`, "a\nb\tc"),
	jsonOK("unicode escape", `"caf\u00e9"`, "café"),
	jsonOK("unicode escape upper case", `"\u00C9\u00c9"`, "ÉÉ"),
	jsonOK("surrogate pair", `"\ud83d\ude00"`, "😀"),
	jsonOK("surrogate pair upper case", `"x\uD83D\uDE00y"`, "x😀y"),
	jsonOK("escaped NUL", `"\u0000"`, "\x00"),
	jsonOK("escaped line separator", `"\u2028"`, "\u2028"),
	jsonOK("raw multi-byte characters", `"é😀"`, "é😀"),
	jsonOK("raw DEL is not a control character for JSON", "\"\x7f\"", "\x7f"),
	jsonOK("escaped key", `{"\u0061\/b":1}`, obj{"a/b": num("1")}),

	// depth
	{name: "array at the depth limit", in: `[[[]]]`, syntax: document.JSON, lim: limits(1<<10, 3, 10), want: list{list{list{}}}},
	{name: "array over the depth limit", in: `[[[[]]]]`, syntax: document.JSON, lim: limits(1<<10, 3, 10),
		err: "doc:1:4: /0/0/0: nested deeper than 3 levels (limit max-depth)"},
	{name: "object over the depth limit", in: `{"a":{"b":{"c":{}}}}`, syntax: document.JSON, lim: limits(1<<10, 3, 10),
		err: "doc:1:16: /a/b/c: nested deeper than 3 levels (limit max-depth)"},
	{name: "siblings do not add up", in: `[[[]],[[]],{"a":[]}]`, syntax: document.JSON, lim: limits(1<<10, 3, 10),
		want: list{list{list{}}, list{list{}}, obj{"a": list{}}}},
	jsonErr("default depth limit", strings.Repeat("[", 65)+strings.Repeat("]", 65),
		"doc:1:65: "+strings.Repeat("/0", 64)+": nested deeper than 64 levels (limit max-depth)"),
	jsonErr("deep nesting fails before the end", strings.Repeat("[", 1000),
		"doc:1:65: "+strings.Repeat("/0", 64)+": nested deeper than 64 levels (limit max-depth)"),

	// duplicate keys
	jsonErr("duplicate key", `{"a":1,"a":2}`, `doc:1:8: duplicate key "a": consumers disagree on which value wins`),
	jsonErr("duplicate key with the same value", `{"a":1,"b":2,"a":1}`, `doc:1:14: duplicate key "a": consumers disagree on which value wins`),
	jsonErr("duplicate key nested", `{"x":{"a":1,"a":2}}`, `doc:1:13: /x: duplicate key "a": consumers disagree on which value wins`),
	jsonErr("duplicate key in an array", `[{}, {"k":1, "k":1}]`, `doc:1:14: /1: duplicate key "k": consumers disagree on which value wins`),
	jsonErr("duplicate key written with an escape", `{"a":1,"\u0061":2}`, `doc:1:8: duplicate key "a": consumers disagree on which value wins`),
	jsonErr("duplicate key on a later line", "{\n  \"plan\": [],\n  \"plan\": []\n}",
		`doc:3:3: duplicate key "plan": consumers disagree on which value wins`),
	jsonErr("duplicate key after multi-byte characters", `{"é": 1, "é": 2}`, `doc:1:10: duplicate key "é": consumers disagree on which value wins`),
	jsonErr("duplicate key under an escaped key", `{"a/b":{"~":0,"~":1}}`, `doc:1:15: /a~1b: duplicate key "~": consumers disagree on which value wins`),

	// structure
	jsonErr("trailing comma in an object", `{"a":1,}`, "doc:1:8: trailing comma before }"),
	jsonErr("trailing comma in an array", `[1,2,]`, "doc:1:6: trailing comma before ]"),
	jsonErr("trailing comma nested", `{"a":[1, ]}`, "doc:1:10: /a: trailing comma before ]"),
	jsonErr("trailing comma on its own line", "[\n1,\n2,\n]", "doc:4:1: trailing comma before ]"),
	jsonErr("leading comma", `[,1]`, "doc:1:2: /0: unexpected character ','"+notAValue),
	jsonErr("missing comma", `[1 2]`, "doc:1:4: unexpected character '2': expected ',' or ']' after an element"),
	jsonErr("missing colon", `{"a" 1}`, `doc:1:6: unexpected character '1': expected ':' after the key "a"`),
	jsonErr("missing value", `{"a":}`, "doc:1:6: /a: unexpected character '}'"+notAValue),
	jsonErr("key without value", `{"a"}`, `doc:1:5: unexpected character '}': expected ':' after the key "a"`),
	jsonErr("number key", `{1:2}`, "doc:1:2: unexpected character '1': expected a string key"),
	jsonErr("bare key", `{a:1}`, "doc:1:2: unexpected character 'a': expected a string key"),
	jsonErr("single-quoted key", `{'a':1}`, `doc:1:2: unexpected character '\'': expected a string key`),
	jsonErr("single-quoted value", `['a']`, `doc:1:2: /0: unexpected character '\''`+notAValue),
	jsonErr("line comment", "{\"a\":1 // note\n}", "doc:1:8: unexpected character '/': expected ',' or '}' after a member"),
	jsonErr("block comment first", "/* note */ {}", "doc:1:1: unexpected character '/'"+notAValue),
	jsonErr("hash comment", "{\"a\":1} # note", "doc:1:9: unexpected content after the document: a document holds one JSON value"),
	jsonErr("unclosed object", `{`, "doc:1:2: unexpected end of the document: expected a string key"),
	jsonErr("unclosed object after a member", `{"a":1`, "doc:1:7: unexpected end of the document: expected ',' or '}' after a member"),
	jsonErr("unclosed array", `[`, "doc:1:2: /0: unexpected end of the document: a value is missing"),
	jsonErr("unclosed array after an element", `[1`, "doc:1:3: unexpected end of the document: expected ',' or ']' after an element"),
	jsonErr("closing the wrong bracket", `[1}`, "doc:1:3: unexpected character '}': expected ',' or ']' after an element"),
	jsonErr("second document", `{} {}`, "doc:1:4: unexpected content after the document: a document holds one JSON value"),
	jsonErr("second value on a new line", "1\n2", "doc:2:1: unexpected content after the document: a document holds one JSON value"),
	jsonErr("extra bracket", `[1]]`, "doc:1:4: unexpected content after the document: a document holds one JSON value"),
	jsonErr("NUL after the document", "{}\x00", "doc:1:3: unexpected content after the document: a document holds one JSON value"),
	jsonErr("form feed is not JSON whitespace", "\f{}", `doc:1:1: unexpected character '\f'`+notAValue),
	jsonErr("non-breaking space is not JSON whitespace", "\u00a0{}", `doc:1:1: unexpected character '\u00a0'`+notAValue),
	jsonErr("misspelled true", `tru`, "doc:1:1: unexpected character 't'"+notAValue),
	jsonErr("capitalised true", `True`, "doc:1:1: unexpected character 'T'"+notAValue),
	jsonErr("null with a tail", `nullx`, "doc:1:5: unexpected content after the document: a document holds one JSON value"),
	jsonErr("NaN", `[NaN]`, "doc:1:2: /0: unexpected character 'N'"+notAValue),
	jsonErr("Infinity", `{"a": Infinity}`, "doc:1:7: /a: unexpected character 'I'"+notAValue),
	jsonErr("minus Infinity", `-Infinity`, "doc:1:1: invalid number: a digit must follow '-'"),

	// numbers
	jsonErr("leading zero", `01`, "doc:1:1: number with a leading zero: JSON does not allow it"),
	jsonErr("negative leading zero", `[-01]`, "doc:1:2: /0: number with a leading zero: JSON does not allow it"),
	jsonErr("double zero", `00`, "doc:1:1: number with a leading zero: JSON does not allow it"),
	jsonErr("minus alone", `-`, "doc:1:1: invalid number: a digit must follow '-'"),
	jsonErr("minus then space", `[- 1]`, "doc:1:2: /0: invalid number: a digit must follow '-'"),
	jsonErr("trailing dot", `1.`, "doc:1:1: invalid number: a digit must follow '.'"),
	jsonErr("dot then exponent", `1.e5`, "doc:1:1: invalid number: a digit must follow '.'"),
	jsonErr("leading dot", `.5`, "doc:1:1: unexpected character '.'"+notAValue),
	jsonErr("plus sign", `+1`, "doc:1:1: unexpected character '+'"+notAValue),
	jsonErr("empty exponent", `1e`, "doc:1:1: invalid number: a digit must follow the exponent"),
	jsonErr("signed empty exponent", `{"n":1E+}`, "doc:1:6: /n: invalid number: a digit must follow the exponent"),
	jsonErr("hex", `0x10`, "doc:1:2: unexpected content after the document: a document holds one JSON value"),
	jsonErr("beyond float64", `1e400`, "doc:1:1: number 1e400 is beyond the range of a 64-bit float"),
	jsonErr("beyond float64 negative", `{"a":[-1e400]}`, "doc:1:7: /a/0: number -1e400 is beyond the range of a 64-bit float"),
	jsonErr("just beyond the largest float64", `1.7976931348623159e308`, "doc:1:1: number 1.7976931348623159e308 is beyond the range of a 64-bit float"),
	jsonErr("65-character number", "1"+strings.Repeat("0", 64), "doc:1:1: number 10000000000000000000... has more than 64 characters: write longer values as strings"),
	jsonErr("long fraction", "[0."+strings.Repeat("1", 70)+"]", "doc:1:2: /0: number 0.111111111111111111... has more than 64 characters: write longer values as strings"),

	// strings
	jsonErr("unknown escape", `"\x41"`, `doc:1:2: invalid escape \x`),
	jsonErr("upper-case U escape", `"\U0041"`, `doc:1:2: invalid escape \U`),
	jsonErr("escaped single quote", `"\'"`, `doc:1:2: invalid escape \'`),
	jsonErr("escaped multi-byte character", `["ab\é"]`, `doc:1:5: /0: invalid escape \é`),
	jsonErr("escaped space", `"\ "`, `doc:1:2: invalid escape: a backslash before ' '`),
	jsonErr("escaped control character", "\"\\\x1b[2J\"", `doc:1:2: invalid escape: a backslash before '\x1b'`),
	jsonErr("escaped newline", "\"a\\\nb\"", `doc:1:3: invalid escape: a backslash before '\n'`),
	jsonErr("short unicode escape", `"\u12"`, `doc:1:2: invalid \u escape: it takes four hex digits`),
	jsonErr("unicode escape with a non-hex digit", `"\u12G4"`, `doc:1:2: invalid \u escape: it takes four hex digits`),
	jsonErr("unicode escape with a sign", `"\u+123"`, `doc:1:2: invalid \u escape: it takes four hex digits`),
	jsonErr("lone high surrogate", `"\ud800"`, `doc:1:2: lone UTF-16 surrogate \uD800: it is not a character`),
	jsonErr("lone high surrogate then text", `"a\udbffxyzxyz"`, `doc:1:3: lone UTF-16 surrogate \uDBFF: it is not a character`),
	jsonErr("low surrogate first", `"\udc00\ud800"`, `doc:1:2: lone UTF-16 surrogate \uDC00: it is not a character`),
	jsonErr("low surrogate alone", `{"k":"\uDFFF"}`, `doc:1:7: /k: lone UTF-16 surrogate \uDFFF: it is not a character`),
	jsonErr("high surrogate then a character", `"\ud800\u0041"`, `doc:1:2: lone UTF-16 surrogate \uD800: it is not a character`),
	jsonErr("high surrogate twice", `"\ud800\ud800"`, `doc:1:2: lone UTF-16 surrogate \uD800: it is not a character`),
	jsonErr("high surrogate then another escape", `"\ud800\n"`, `doc:1:2: lone UTF-16 surrogate \uD800: it is not a character`),
	jsonErr("high surrogate then a bad escape", `"\ud800\uZZZZ"`, `doc:1:2: lone UTF-16 surrogate \uD800: it is not a character`),
	jsonErr("high surrogate at the end", `"\ud800`, `doc:1:2: lone UTF-16 surrogate \uD800: it is not a character`),
	jsonErr("surrogate in a key", `{"\ud800":1}`, `doc:1:3: lone UTF-16 surrogate \uD800: it is not a character`),
	jsonErr("raw tab", "\"a\tb\"", `doc:1:3: control character '\t' in a string: escape it`),
	jsonErr("raw newline", "[\"a\nb\"]", `doc:1:4: /0: control character '\n' in a string: escape it`),
	jsonErr("raw NUL", "\"\x00\"", `doc:1:2: control character '\x00' in a string: escape it`),
	jsonErr("raw control character after an escape", "\"\\n\x1f\"", `doc:1:4: control character '\x1f' in a string: escape it`),
	jsonErr("unterminated string", `"abc`, "doc:1:1: string is not terminated"),
	jsonErr("unterminated string in an object", `{"a": "x`, "doc:1:7: /a: string is not terminated"),
	jsonErr("unterminated key", `{"a`, "doc:1:2: string is not terminated"),
	jsonErr("unterminated after an escape", `"ab\n`, "doc:1:1: string is not terminated"),
	jsonErr("backslash at the end", `"ab\`, "doc:1:1: string is not terminated"),
	jsonErr("escaped quote at the end", `"\"`, "doc:1:1: string is not terminated"),

	// positions count characters, and pointers escape keys
	jsonErr("column after multi-byte characters", `{"é😀": 1, "x": tru}`, "doc:1:16: /x: unexpected character 't'"+notAValue),
	jsonErr("line and column after multi-byte lines", "{\n\"é\": \"😀😀\",\n  \"ü\":\n    [1,\n    é]}",
		"doc:5:5: /ü/1: unexpected character 'é'"+notAValue),
	jsonErr("lines end at LF only", "{\r\n\"a\":1,\r\n}", "doc:3:1: trailing comma before }"),
	jsonErr("pointer escapes keys", `{"a/b":{"c~d":[0,tru]}}`, "doc:1:18: /a~1b/c~0d/1: unexpected character 't'"+notAValue),
	jsonErr("pointer with a newline is quoted", `{"a\nb": tru}`, `doc:1:10: "/a\nb": unexpected character 't'`+notAValue),
}

func TestDecodeJSON(t *testing.T) {
	runDecodeCases(t, jsonCases)
}
