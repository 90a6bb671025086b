package document_test

import (
	"fmt"
	"testing"

	"github.com/spawngate/spawngate/internal/document"
	"github.com/spawngate/spawngate/internal/document/documenttest"
)

// Placing a YAML document's problems is linear in the document and the
// problems: a report of one problem per key of a mapping of n keys (a
// report lists up to --max-listed of them) reads each key about once. It
// read every key before it once per problem (50,000 unknown keys: 7.4 s).
// The work is counted, not timed: the keys looked at for 4n keys are about
// four times those for n, where reading them once per problem is sixteen
// times.
func TestPlacingProblemsIsLinearInTheKeys(t *testing.T) {
	const n = 2000
	for _, shape := range documenttest.UnknownKeysShapes {
		t.Run(shape, func(t *testing.T) {
			var steps [2]int
			for i, keys := range []int{n, 4 * n} {
				data := documenttest.UnknownKeys(shape, keys, true)
				ptrs := make([]string, keys)
				for k := range ptrs {
					ptrs[k] = fmt.Sprintf("%s/k%06d", documenttest.KeysAt[shape], k)
				}
				at, looked, err := document.PlaceYAML(data, ptrs)
				if err != nil {
					t.Fatal(err)
				}
				if first, last := at[ptrs[0]], at[ptrs[keys-1]]; last.Line-first.Line != keys-1 {
					t.Fatalf("%d keys: the first at %v, the last at %v; want a key a line", keys, first, last)
				}
				steps[i] = looked
			}
			if ratio := float64(steps[1]) / float64(steps[0]); ratio > 6 {
				t.Errorf("placing the problems of %d unknown keys looked at %d keys, of %d keys %d: %.1f times for 4 times the keys, want about 4",
					n, steps[0], 4*n, steps[1], ratio)
			}
		})
	}
}
