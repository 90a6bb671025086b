// Package mutate derives many inputs from a fuzz target's seeds, the way a
// fuzzer's mutator does, but deterministically and without coverage
// guidance. It lets go test run every fuzz property over thousands of
// nearby inputs on each run, without the instrumented build that go test
// -fuzz needs; the coverage-guided runs are on demand and in CI.
package mutate

import (
	"bytes"
	"math/rand/v2"
)

// tokens are the pieces of text that matter to the readers and the checks:
// structure, escapes, YAML indicators, numbers, encodings and path tricks.
var tokens = [][]byte{
	[]byte("{"), []byte("}"), []byte("["), []byte("]"), []byte(`"`), []byte(":"), []byte(","),
	[]byte(`\`), []byte(`\u`), []byte(`\ud800`), []byte("-"), []byte("0"), []byte("1e400"), []byte("4e4"),
	[]byte(".5"), []byte("null"), []byte("true"), []byte("&a "), []byte("*a"), []byte("<<: "), []byte("!!str "),
	[]byte("\n---\n"), []byte("\n"), []byte("\n  - "), []byte("\t"), []byte(" "), []byte("#"), []byte("~"),
	[]byte(".."), []byte("/"), []byte("%2e"), []byte("$HOME"), []byte("\xef\xbb\xbf"), []byte("\xff"),
	[]byte("\u2215"), []byte("\u202e"), []byte("\x1b[31m"), []byte("yes"), []byte("0x10"), []byte("2001-01-01"),
	[]byte(`"plan"`), []byte(`"policy"`), []byte(`"tools"`), []byte(`"paths"`), []byte(`"budget_tokens"`),
	[]byte(`"role"`), []byte(`"id"`), []byte("fs.write"), []byte("fs:*"), []byte("/repo/workspace"),
	[]byte("/repo/workspace-evil"), []byte("workspace_root"), []byte("allowed_tools"), []byte("**"),
}

// Bytes returns n inputs derived from seeds by one to four edits each:
// flipping, inserting, deleting or duplicating bytes, inserting a token,
// or splicing in part of another seed. The same seeds, n and seed give the
// same inputs.
func Bytes(seeds [][]byte, n int, seed uint64) [][]byte {
	if len(seeds) == 0 {
		seeds = [][]byte{nil}
	}
	r := rand.New(rand.NewPCG(seed, 0x6d757461))
	out := make([][]byte, 0, n)
	for range n {
		in := bytes.Clone(seeds[r.IntN(len(seeds))])
		for edits := 1 + r.IntN(4); edits > 0; edits-- {
			in = edit(r, in, seeds)
		}
		out = append(out, in)
	}
	return out
}

func edit(r *rand.Rand, in []byte, seeds [][]byte) []byte {
	at := func() int { return r.IntN(len(in) + 1) }
	switch r.IntN(7) {
	case 0: // flip a bit
		if len(in) > 0 {
			i := r.IntN(len(in))
			in[i] ^= 1 << r.IntN(8)
		}
	case 1: // insert a random byte
		i := at()
		in = append(in[:i], append([]byte{byte(r.IntN(256))}, in[i:]...)...)
	case 2: // delete a run
		if len(in) > 0 {
			i := r.IntN(len(in))
			j := min(len(in), i+1+r.IntN(8))
			in = append(in[:i], in[j:]...)
		}
	case 3: // duplicate a run
		if len(in) > 0 {
			i := r.IntN(len(in))
			j := min(len(in), i+1+r.IntN(16))
			k := at()
			run := bytes.Clone(in[i:j])
			in = append(in[:k], append(run, in[k:]...)...)
		}
	case 4, 5: // insert a token
		tok := tokens[r.IntN(len(tokens))]
		i := at()
		in = append(in[:i], append(bytes.Clone(tok), in[i:]...)...)
	case 6: // splice part of another seed
		other := seeds[r.IntN(len(seeds))]
		if len(other) > 0 {
			i := r.IntN(len(other))
			j := min(len(other), i+1+r.IntN(32))
			k := at()
			in = append(in[:k], append(bytes.Clone(other[i:j]), in[k:]...)...)
		}
	}
	return in
}
