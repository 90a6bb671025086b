package mutate

import (
	"bytes"
	"testing"
)

func TestBytesIsDeterministicAndVaried(t *testing.T) {
	seeds := [][]byte{[]byte(`{"plan": []}`), []byte("plan: []\n")}
	a, b := Bytes(seeds, 500, 7), Bytes(seeds, 500, 7)
	if len(a) != 500 {
		t.Fatalf("%d inputs, want 500", len(a))
	}
	distinct := map[string]bool{}
	for i := range a {
		if !bytes.Equal(a[i], b[i]) {
			t.Fatalf("input %d differs between two runs with one seed", i)
		}
		distinct[string(a[i])] = true
	}
	if len(distinct) < 400 {
		t.Fatalf("only %d distinct inputs of 500", len(distinct))
	}
	if bytes.Equal(Bytes(seeds, 1, 8)[0], a[0]) && bytes.Equal(Bytes(seeds, 2, 8)[1], a[1]) {
		t.Fatal("another seed gives the same inputs")
	}
	if !bytes.Equal(seeds[0], []byte(`{"plan": []}`)) {
		t.Fatal("the seeds were modified")
	}
}
