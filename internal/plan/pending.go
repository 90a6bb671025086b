package plan

import (
	"fmt"
	"maps"
	"slices"

	"github.com/spawngate/spawngate/internal/document"
)

// pending lists the policy keys the schema describes whose checks are not
// built yet. A key that no check reads must never be accepted: an operator
// who sets max_children and sees it ignored has been failed open. Each
// entry goes when the check that reads it lands.
var pending = map[string]bool{}

func refusePending(source, at string, pol map[string]any) *document.Error {
	for _, k := range slices.Sorted(maps.Keys(pol)) {
		if pending[k] {
			return &document.Error{Source: source, Pointer: at + "/" + k, Msg: fmt.Sprintf("%q is not supported by this build of spawngate yet", k)}
		}
	}
	return nil
}
