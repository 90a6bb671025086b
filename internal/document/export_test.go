package document

import "context"

// What the external tests (package document_test, which use
// internal/document/documenttest and so cannot be inside the package) need
// of the package's inside.

// CheckEvery is how many values a reader reads between two looks at its
// context.
const CheckEvery = checkEvery

// PlaceYAML places the pointers in a YAML document as Locate does, and
// says how many keys it looked at doing so.
func PlaceYAML(data []byte, pointers []string) (map[string]Position, int, error) {
	p := &yamlPlacer{ctx: context.Background()}
	at, err := p.locate(data, pointers)
	return at, p.steps, err
}
