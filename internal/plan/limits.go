package plan

// Limits bound what one document may cost to read. Every limit is checked
// while reading, so hostile input fails fast with an error that names the
// limit instead of exhausting the machine.
type Limits struct {
	// MaxBytes is the largest document, in bytes.
	MaxBytes int64
	// MaxYAMLBytes is the largest YAML document, in bytes. YAML is parsed
	// into a node tree that takes about forty times the document's size,
	// so it gets a lower limit than JSON, which is read directly.
	MaxYAMLBytes int64
	// MaxDepth is the deepest nesting of objects and arrays.
	MaxDepth int
	// MaxAliasNodes is how many values YAML aliases may expand to, in total
	// over the document (a guard against "billion laughs").
	MaxAliasNodes int
	// MaxStringBytes is the longest string or key, in bytes.
	MaxStringBytes int
	// MaxValues is how many values (objects, lists, strings, numbers,
	// booleans, nulls) a document may hold in all. It bounds the memory of
	// everything after parsing, the checks' findings included.
	MaxValues int
	// MaxChildren is how many children one plan may list.
	MaxChildren int
}

// DefaultLimits fit a JSON plan of 100,000 children and keep the peak
// memory of any document within a few hundred megabytes.
var DefaultLimits = Limits{
	MaxBytes:       32 << 20,
	MaxYAMLBytes:   4 << 20,
	MaxDepth:       64,
	MaxAliasNodes:  10000,
	MaxStringBytes: 1 << 20,
	MaxValues:      2_000_000,
	MaxChildren:    100_000,
}
