package doctor

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spawngate/spawngate/internal/document"
)

// File is one configuration file a doctor read: a settings or hooks file,
// JSON or TOML.
type File struct {
	Path string
	Data []byte
	// TOML says the file is TOML; else it is JSON.
	TOML bool
	// Tree is what the file sets, nil when the host does not read it (it
	// does not parse, or has a shape the host drops whole).
	Tree map[string]any
	// TOMLLines are a TOML file's keys and tables by JSON pointer, which
	// the host's doctor records when it parses the file; a JSON file's
	// lines are found when asked for.
	TOMLLines map[string]int

	lines map[string]int // the JSON lines found so far, by pointer
}

// Line is the line a setting is written on, 0 when it is not in the file
// (or the file was not read).
func (f *File) Line(ptr string) int {
	if f == nil || f.Tree == nil {
		return 0
	}
	if f.TOML {
		return f.TOMLLines[ptr]
	}
	f.locate([]string{ptr})
	return f.lines[ptr]
}

// locate finds the lines of JSON pointers not found yet, in one pass.
func (f *File) locate(ptrs []string) {
	if f.lines == nil {
		f.lines = map[string]int{}
	}
	var want []string
	for _, p := range ptrs {
		if _, done := f.lines[p]; !done && p != "" {
			want = append(want, p)
			f.lines[p] = 0
		}
	}
	if len(want) == 0 {
		return
	}
	pos, err := document.Locate(context.Background(), f.Path, f.Data, document.DefaultLimits, want)
	if err != nil {
		return
	}
	for p, at := range pos {
		f.lines[p] = at.Line
	}
}

// Place writes where a setting is: FILE:LINE, or FILE when its line is
// not known.
func (f *File) Place(ptr string) string {
	if line := f.Line(ptr); line > 0 {
		return fmt.Sprintf("%s:%d", f.Path, line)
	}
	return f.Path
}

// Key writes a key and its separator as the file does: timeout = in
// TOML, "timeout": in JSON.
func (f *File) Key(name string) string {
	if f != nil && f.TOML {
		return name + " ="
	}
	return `"` + name + `":`
}

// FileNamesSpawngate tells whether the file at path mentions spawngate; a
// file that cannot be read, or is larger than a doctor reads, does not.
func FileNamesSpawngate(path string) bool {
	data, found, err := ReadConfig(path)
	return found && err == nil && (&File{Data: data}).NamesSpawngate()
}

// NamesSpawngate tells whether the file mentions spawngate anywhere: a
// shape the host drops matters there, since it can take a spawngate hook
// with it.
func (f *File) NamesSpawngate() bool {
	return bytes.Contains(bytes.ToLower(f.Data), []byte("spawngate"))
}

// DecodeJSON reads a JSON file as a host does, numbers kept as written.
// An error is one line for a finding, with the line of a syntax error
// (0 when it has none) and its place in words ("line 3, column 7: ...").
func DecodeJSON(data []byte) (v any, line int, problem string) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	err := dec.Decode(&v)
	if err == nil && dec.More() {
		err = errors.New("more than one JSON value")
	}
	if err == nil {
		return v, 0, ""
	}
	offset := int64(-1)
	var syn *json.SyntaxError
	switch {
	case errors.As(err, &syn):
		offset = syn.Offset
	case errors.Is(err, io.ErrUnexpectedEOF):
		offset, err = int64(len(data)), errors.New("unexpected end of JSON input")
	}
	if offset < 0 {
		return nil, 0, document.OneLine(err.Error())
	}
	line, col := LineCol(data, offset)
	return nil, line, fmt.Sprintf("line %d, column %d: %s", line, col, document.OneLine(err.Error()))
}

// LineCol turns a byte offset into a 1-based line and column (in
// characters).
func LineCol(data []byte, offset int64) (int, int) {
	offset = min(max(offset, 0), int64(len(data)))
	before := data[:offset]
	line := bytes.Count(before, []byte{'\n'}) + 1
	col := max(len([]rune(string(before[bytes.LastIndexByte(before, '\n')+1:]))), 1)
	return line, col
}

// SettingName writes a pointer as a person names the setting:
// /hooks/PreToolUse/0/matcher is hooks.PreToolUse[0].matcher.
func SettingName(ptr string) string {
	var b strings.Builder
	for _, seg := range strings.Split(strings.TrimPrefix(ptr, "/"), "/") {
		seg = strings.NewReplacer("~1", "/", "~0", "~").Replace(seg)
		if isIndex(seg) {
			b.WriteString("[" + seg + "]")
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(seg)
	}
	return b.String()
}

func isIndex(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// EscapePointer escapes one segment of a JSON pointer.
func EscapePointer(s string) string {
	return strings.NewReplacer("~", "~0", "/", "~1").Replace(s)
}

// PointerOf is the JSON pointer of a path of keys.
func PointerOf(parts ...string) string {
	var b strings.Builder
	for _, p := range parts {
		b.WriteString("/" + EscapePointer(p))
	}
	return b.String()
}

// OrList writes names as a person lists alternatives: a, b or c.
func OrList(s []string) string {
	if len(s) == 1 {
		return s[0]
	}
	return strings.Join(s[:len(s)-1], ", ") + " or " + s[len(s)-1]
}

// ShowJSON writes a setting's value as it is written in a JSON file.
func ShowJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}
