package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spawngate/spawngate/internal/judge"
)

// A large operator policy switches the collector as a large plan does:
// read under the 64 MiB ceiling, a policy of 300,000 unknown keys had the
// collector run without pause, and cost four times the CPU of the same
// policy read with the collector on. A small one leaves it alone.
func TestALargePolicySwitchesTheCollector(t *testing.T) {
	var keys strings.Builder
	keys.WriteString("allowed_tools: [fs.read]\nworkspace_root: /w\nbudget_cap_tokens: 10\n")
	for i := 0; keys.Len() <= largeDocument; i++ {
		fmt.Fprintf(&keys, "k%06d: x\n", i)
	}
	for _, tc := range []struct {
		name, doc string
		switched  bool
	}{
		{"small", "allowed_tools: [fs.read]\nworkspace_root: /w\nbudget_cap_tokens: 10\n", false},
		{"large", keys.String(), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			policy := filepath.Join(t.TempDir(), "policy.yaml")
			if err := os.WriteFile(policy, []byte(tc.doc), 0o644); err != nil {
				t.Fatal(err)
			}
			switched := false
			defer func(was func()) { largeDocumentSeen = was }(largeDocumentSeen)
			largeDocumentSeen = func() { switched = true }
			newGate(context.Background(), "check", judge.DefaultOptions(), policy)
			if switched != tc.switched {
				t.Errorf("a policy of %d bytes: collector switched %v, want %v", len(tc.doc), switched, tc.switched)
			}
		})
	}
}
