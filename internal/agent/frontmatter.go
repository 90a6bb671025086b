package agent

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"

	"github.com/spawngate/spawngate/internal/document"
	"gopkg.in/yaml.v3"
)

// Frontmatter is the text between a first line "---" and the next line
// "---" of a Markdown definition (line ends read as \n), read exactly:
// no byte-order mark, nothing after a ---.
func Frontmatter(data []byte) ([]byte, bool) {
	data = bytes.ReplaceAll(data, []byte("\r\n"), []byte("\n"))
	if !bytes.HasPrefix(data, []byte("---\n")) {
		return nil, false
	}
	rest := data[4:]
	if bytes.HasPrefix(rest, []byte("---\n")) || bytes.Equal(rest, []byte("---")) {
		return []byte{}, true
	}
	end := bytes.Index(rest, []byte("\n---\n"))
	if end < 0 {
		if !bytes.HasSuffix(rest, []byte("\n---")) {
			return nil, false
		}
		end = len(rest) - 4
	}
	return rest[:end+1], true
}

// KeyLines records the line of each top-level key of a YAML mapping, and of
// each entry of a block list under one, shifted by offset lines.
func KeyLines(front []byte, offset int, lines map[string]int) {
	var doc yaml.Node
	if yaml.Unmarshal(front, &doc) != nil || len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		return
	}
	m := doc.Content[0]
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, v := m.Content[i], m.Content[i+1]
		lines[k.Value] = k.Line + offset
		if v.Kind == yaml.SequenceNode {
			for j, item := range v.Content {
				lines[fmt.Sprintf("%s/%d", k.Value, j)] = item.Line + offset
			}
		}
	}
}

// DecodeFrontmatter reads a definition's frontmatter with the gate's
// strict YAML reader. An error is placed in the file (the frontmatter
// starts on its second line); ofText is false when the error is not the
// text's (the deadline ran out), and nothing more should be read.
func DecodeFrontmatter(ctx context.Context, file string, front []byte, lim document.Limits) (v any, err *document.Error, ofText bool) {
	v, derr := document.Decode(ctx, file, front, document.YAML, lim)
	if derr == nil {
		return v, nil, true
	}
	var pe *document.Error
	if !errors.As(derr, &pe) {
		return nil, &document.Error{Source: file, Msg: document.OneLine(derr.Error())}, false
	}
	shifted := *pe
	if shifted.Line > 0 {
		shifted.Line++
	}
	return nil, &shifted, true
}

// LooseName is the name a definition whose frontmatter the strict reader
// refuses goes by, read as leniently as YAML allows (a key given twice,
// say): its name setting, "" when it has none; mapping is false when the
// text is no YAML mapping at all, so that it may define any name.
func LooseName(front []byte) (name string, mapping bool) {
	var doc yaml.Node
	if yaml.Unmarshal(front, &doc) != nil || len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		return "", false
	}
	m := doc.Content[0]
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == "name" && m.Content[i+1].Kind == yaml.ScalarNode {
			return m.Content[i+1].Value, true
		}
	}
	return "", true
}

// OpenMarkdown starts reading a Markdown definition as the hosts that
// check frontmatter against a schema do: the frontmatter, read strictly
// into the definition's Fields with the line of each key. With fields
// nil the definition is settled and d is all there is: skipped when the
// file has no frontmatter or it is no mapping (the host loads nothing),
// broken when the strict reader refuses its YAML, under the name a
// lenient reading finds (fallback when the frontmatter names none; "",
// so that it may be any name, when it is no mapping at all). title is
// the host's name in the reasons.
func OpenMarkdown(ctx context.Context, file string, data []byte, lim document.Limits, title, fallback string) (d *Definition, fields map[string]any) {
	d = &Definition{File: file, Lines: map[string]int{}}
	front, ok := Frontmatter(data)
	if !ok {
		d.Skipped = "it does not start with YAML frontmatter between --- lines, so " + title + " does not load it"
		return d, nil
	}
	v, perr, ofText := DecodeFrontmatter(ctx, file, front, lim)
	if perr != nil {
		d.Err = perr
		if name, mapping := LooseName(front); ofText && mapping {
			d.Name = cmp.Or(name, fallback)
		}
		return d, nil
	}
	fields, ok = v.(map[string]any)
	if !ok {
		d.Skipped = "its frontmatter is not a mapping of settings, so " + title + " does not load it"
		return d, nil
	}
	d.Fields = fields
	KeyLines(front, 1, d.Lines)
	return d, fields
}
