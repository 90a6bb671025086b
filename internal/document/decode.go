package document

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"unicode/utf8"
)

// Syntax is how a document is written.
type Syntax int

const (
	// Sniff decides by the first character: '{' or '[' is JSON, anything
	// else YAML. It is used for standard input and names without an
	// extension, such as /dev/fd/63 from a shell's process substitution.
	Sniff Syntax = iota
	// JSON is RFC 8259, read by parseJSON.
	JSON
	// YAML is one YAML document, read through yaml.v3 by parseYAML.
	YAML
)

// SyntaxOf tells the syntax of a document from its name.
func SyntaxOf(name string) (Syntax, error) {
	if name == Stdin {
		return Sniff, nil
	}
	switch ext := strings.ToLower(filepath.Ext(name)); ext {
	case ".json":
		return JSON, nil
	case ".yaml", ".yml":
		return YAML, nil
	case "":
		return Sniff, nil
	default:
		return 0, &Error{Source: name, Msg: fmt.Sprintf("unknown document type %s: use .yaml, .yml or .json", Quote(ext))}
	}
}

// Sniffed is the syntax Sniff decides for data: JSON when its first
// character but blanks is '{' or '[', else YAML.
func Sniffed(data []byte) Syntax {
	if t := bytes.TrimLeft(data, " \t\r\n"); len(t) > 0 && (t[0] == '{' || t[0] == '[') {
		return JSON
	}
	return YAML
}

// Decode parses one document into a JSON-shaped value: map[string]any,
// []any, string, json.Number (as written), bool or nil. Anything that is
// not exactly one well-formed document within the limits is an *Error.
// When ctx ends first, Decode stops and returns ctx.Err().
func Decode(ctx context.Context, source string, data []byte, syntax Syntax, lim Limits) (any, error) {
	if err := CheckSize(source, int64(len(data)), lim.MaxBytes); err != nil {
		return nil, err
	}
	if err := checkEncoding(source, data); err != nil {
		return nil, err
	}
	if len(bytes.TrimLeft(data, " \t\r\n")) == 0 {
		return nil, &Error{Source: source, Msg: "empty document: nothing to check"}
	}
	if syntax == Sniff {
		syntax = Sniffed(data)
	}
	if syntax == JSON {
		return parseJSON(ctx, source, data, lim)
	}
	if int64(len(data)) > lim.MaxYAMLBytes {
		return nil, &Error{Source: source, Msg: fmt.Sprintf("YAML document is larger than %d bytes; a JSON document may be larger", lim.MaxYAMLBytes), Limit: "max-yaml-bytes"}
	}
	return parseYAML(ctx, source, data, lim)
}

// checkEncoding refuses anything but UTF-8 without a byte-order mark: a BOM
// is read as content by some parsers and skipped by others.
func checkEncoding(source string, data []byte) error {
	switch {
	case bytes.HasPrefix(data, []byte{0xEF, 0xBB, 0xBF}):
		return &Error{Source: source, Line: 1, Column: 1, Msg: "byte-order mark at the start: save the document as UTF-8 without a BOM"}
	case bytes.HasPrefix(data, []byte{0xFE, 0xFF}), bytes.HasPrefix(data, []byte{0xFF, 0xFE}):
		return &Error{Source: source, Line: 1, Column: 1, Msg: "UTF-16 byte-order mark: save the document as UTF-8 without a BOM"}
	}
	if utf8.Valid(data) {
		return nil
	}
	for i := 0; i < len(data); {
		r, size := utf8.DecodeRune(data[i:])
		if r == utf8.RuneError && size <= 1 {
			line, col := position(data, i)
			return &Error{Source: source, Line: line, Column: col, Msg: fmt.Sprintf("invalid UTF-8 (byte 0x%02X)", data[i])}
		}
		i += size
	}
	return nil
}

// position turns a byte offset into a 1-based line and column, counting
// columns in characters.
func position(data []byte, offset int) (line, col int) {
	if offset > len(data) {
		offset = len(data)
	}
	before := data[:offset]
	line = bytes.Count(before, []byte{'\n'}) + 1
	start := bytes.LastIndexByte(before, '\n') + 1
	return line, utf8.RuneCount(before[start:]) + 1
}
