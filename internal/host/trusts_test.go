//go:build unix

package host

import (
	"os"
	"path/filepath"
	"testing"
)

// TestOwnersTrusts: a file is trusted when one of Trusted owns it, and a
// file given to another user is not.
func TestOwnersTrusts(t *testing.T) {
	operator, _, giveAway := ownersFor(t)
	p := filepath.Join(t.TempDir(), "f")
	write(t, p, "x", 0o644)
	fi, err := os.Lstat(p)
	if err != nil {
		t.Fatal(err)
	}
	if !operator.Trusts(fi) {
		t.Errorf("a file of uid %d is not trusted by %v", os.Geteuid(), operator.Trusted)
	}
	if (Owners{Trusted: []int{4243}}).Trusts(fi) {
		t.Errorf("a file of uid %d is trusted by uid 4243 alone", os.Geteuid())
	}
	giveAway(p)
	if fi, err = os.Lstat(p); err != nil {
		t.Fatal(err)
	}
	if operator.Trusts(fi) {
		t.Errorf("a file given to uid 4242 is still trusted")
	}
}
