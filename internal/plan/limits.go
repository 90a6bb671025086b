package plan

// Limits bound what one document may cost to read. Every limit is checked
// while reading, so hostile input fails fast with an error that names the
// limit instead of exhausting the machine.
type Limits struct {
	// MaxBytes is the largest document, in bytes.
	MaxBytes int64
	// MaxDepth is the deepest nesting of objects and arrays.
	MaxDepth int
	// MaxAliasNodes is how many values YAML aliases may expand to, in total
	// over the document (a guard against "billion laughs").
	MaxAliasNodes int
}

// DefaultLimits fit plans of a few hundred thousand children.
var DefaultLimits = Limits{
	MaxBytes:      32 << 20,
	MaxDepth:      64,
	MaxAliasNodes: 10000,
}
