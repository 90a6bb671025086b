package document

import "fmt"

// Limits bound what one document may cost to read. Every limit is checked
// while reading, so hostile input fails fast with an error that names the
// limit instead of exhausting the machine. Decode applies all but
// MaxChildren and MaxChildEntries, which bound what a document lists once
// it is loaded as a plan: one set of limits goes wherever a document is
// read.
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

// MaxDepthCeiling caps MaxDepth: the readers recurse once per level, and a
// deeper document would overflow the stack (a crash that nothing can
// recover from) instead of being refused.
const MaxDepthCeiling = 10000

// LimitError is a limit no reader can work with, named both ways: Limit as
// Error.Limit names it ("max-depth"), Field as Limits does ("MaxDepth"), so
// that each front end says it in its own words.
type LimitError struct {
	Limit, Field string
	Rule         string // "must be positive"
}

func (e *LimitError) Error() string { return e.Field + " " + e.Rule }

// Check refuses limits that no document could be read under, or that would
// let the reader overflow its stack: each bound must be positive (the
// alias bounds may be 0, which refuses every alias), and MaxDepth at most
// MaxDepthCeiling. It is the one statement of that rule, for the command's
// flags and the Go API alike. An error is a *LimitError.
func (l Limits) Check() error {
	positive := "must be positive"
	switch {
	case l.MaxBytes <= 0:
		return &LimitError{"max-bytes", "MaxBytes", positive}
	case l.MaxYAMLBytes <= 0:
		return &LimitError{"max-yaml-bytes", "MaxYAMLBytes", positive}
	case l.MaxDepth <= 0 || l.MaxDepth > MaxDepthCeiling:
		return &LimitError{"max-depth", "MaxDepth", fmt.Sprintf("must be between 1 and %d", MaxDepthCeiling)}
	case l.MaxAliasNodes < 0:
		return &LimitError{"max-alias-nodes", "MaxAliasNodes", "must not be negative"}
	case l.MaxAliasBytes < 0:
		return &LimitError{"max-alias-bytes", "MaxAliasBytes", "must not be negative"}
	case l.MaxChildEntries <= 0:
		return &LimitError{"max-child-entries", "MaxChildEntries", positive}
	case l.MaxStringBytes <= 0:
		return &LimitError{"max-string-bytes", "MaxStringBytes", positive}
	case l.MaxValues <= 0:
		return &LimitError{"max-values", "MaxValues", positive}
	case l.MaxChildren <= 0:
		return &LimitError{"max-children", "MaxChildren", positive}
	}
	return nil
}
