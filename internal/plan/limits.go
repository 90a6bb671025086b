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
	// MaxAliasBytes is how many bytes of strings and keys YAML aliases may
	// expand to, in total over the document. Aliases share one copy of a
	// value in memory, but everything that shows or compares the document
	// (the grouping of children, the report) handles each expansion again:
	// a 1 MiB role aliased 10,000 times is 10 GB of report.
	MaxAliasBytes int
	// MaxStringBytes is the longest string or key, in bytes.
	MaxStringBytes int
	// MaxValues is how many values (objects, lists, strings, numbers,
	// booleans, nulls) a document may hold in all. It bounds the memory of
	// everything after parsing, the checks' findings included.
	MaxValues int
	// MaxChildren is how many children one plan may list.
	MaxChildren int
	// MaxChildEntries is how many entries one child's tools, and one
	// child's paths, may list. The checks report each entry on its own, so
	// this bounds what one child can cost to judge.
	MaxChildEntries int
}

// DefaultLimits fit a JSON plan of 100,000 children and keep the peak
// memory of any document within a few hundred megabytes. With them, a
// YAML document expands to at most twice its largest size.
var DefaultLimits = Limits{
	MaxBytes:        32 << 20,
	MaxYAMLBytes:    4 << 20,
	MaxDepth:        64,
	MaxAliasNodes:   10000,
	MaxAliasBytes:   4 << 20,
	MaxStringBytes:  1 << 20,
	MaxValues:       2_000_000,
	MaxChildren:     100_000,
	MaxChildEntries: 1000,
}
