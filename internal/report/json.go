package report

import (
	"encoding/json"
	"io"
)

// JSON renders the report as one JSON document (see Report for its
// fields), indented, with HTML characters left as they are.
type JSON struct{}

// Render writes the report.
func (JSON) Render(w io.Writer, r *Report) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}
