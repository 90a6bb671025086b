package host

import (
	"fmt"
	"path/filepath"

	"github.com/spawngate/spawngate/internal/document"
)

// PayloadSource names a hook payload in messages.
const PayloadSource = "hook payload"

// Payload reads the fields of a hook payload strictly: a field that is
// present with the wrong type is an error naming it, never a value taken
// for absent.
type Payload struct {
	obj  map[string]any
	errs []error
}

// Read starts reading a decoded payload.
func Read(obj map[string]any) *Payload { return &Payload{obj: obj} }

// Field is a top-level field as it is, and whether it is present.
func (p *Payload) Field(key string) (any, bool) {
	v, ok := p.obj[key]
	return v, ok
}

// Bad is a payload error at a JSON pointer.
func Bad(pointer, format string, args ...any) error {
	return &document.Error{Source: PayloadSource, Pointer: pointer, Msg: fmt.Sprintf(format, args...)}
}

// Tool is the payload's tool_name, which must be a string.
func (p *Payload) Tool() (string, error) { return p.ToolAt("tool_name") }

// ToolAt is the tool's name under key (tool_name; a host with other field
// names, toolName), which must be a string.
func (p *Payload) ToolAt(key string) (string, error) {
	name, ok := p.obj[key].(string)
	if !ok {
		return "", Bad("/"+key, "%s is missing or not a string", key)
	}
	return name, nil
}

// Input is the payload's tool_input, which must be an object.
func (p *Payload) Input() (map[string]any, error) { return p.InputAt("tool_input") }

// InputAt is the tool's input under key (tool_input; toolArgs), which
// must be an object.
func (p *Payload) InputAt(key string) (map[string]any, error) {
	input, ok := p.obj[key].(map[string]any)
	if !ok {
		return nil, Bad("/"+key, "%s is missing or not an object", key)
	}
	return input, nil
}

// String reads a top-level string field; "" when absent or null.
func (p *Payload) String(key string) string { return p.str(p.obj, key, "/"+key) }

// InputString reads a string field of tool_input; "" when absent or null.
func (p *Payload) InputString(input map[string]any, key string) string {
	return p.StringIn(input, "/tool_input", key)
}

// StringIn reads a string field of an object of the payload found at the
// pointer at; "" when absent or null.
func (p *Payload) StringIn(obj map[string]any, at, key string) string {
	return p.str(obj, key, at+"/"+key)
}

func (p *Payload) str(obj map[string]any, key, at string) string {
	v, present := obj[key]
	if !present || v == nil {
		return ""
	}
	s, ok := v.(string)
	if !ok {
		p.errs = append(p.errs, Bad(at, "%s must be a string, not %s", key, Show(v)))
		return ""
	}
	return s
}

// Cwd reads cwd, which must be an absolute path.
func (p *Payload) Cwd() string {
	cwd := p.String("cwd")
	if len(p.errs) == 0 && (cwd == "" || !filepath.IsAbs(cwd)) {
		p.errs = append(p.errs, Bad("/cwd", "cwd must be the session's absolute working directory, not %s", Show(p.obj["cwd"])))
	}
	return cwd
}

// Err is the first error met, or nil.
func (p *Payload) Err() error {
	if len(p.errs) > 0 {
		return p.errs[0]
	}
	return nil
}

// Show writes a payload value shortly, for a message.
func Show(v any) string {
	switch v := v.(type) {
	case nil:
		return "null"
	case string:
		if len(v) > 60 {
			v = v[:60] + "..."
		}
		return fmt.Sprintf("%q", v)
	case map[string]any:
		return "an object"
	case []any:
		return "a list"
	}
	return fmt.Sprint(v)
}
